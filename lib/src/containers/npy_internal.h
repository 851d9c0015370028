// Pieces of the .npy reader shared with the .npz and .safetensors readers
// (private to lib/src).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/npy.h"

namespace attn {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the .npy/.npz/.safetensors readers assume a little-endian machine");

// A checked .npy header: the data of count * dtype_size(dtype) bytes starts
// at data_offset and ends exactly at the end of the image.
struct NpyHeader {
  std::string descr;
  DType dtype = DType::f4;
  bool big_endian = false;
  bool fortran_order = false;
  std::vector<std::size_t> shape;
  std::size_t count = 0;
  std::size_t data_offset = 0;
};

NpyHeader parse_npy_header(const std::uint8_t* data, std::size_t size, const std::string& name);

// The same from the first `size` bytes of a `total`-byte image (an .npz
// member of which only the start is inflated): the header must lie within
// `size`, the data fill the rest of `total` exactly.
NpyHeader parse_npy_header_prefix(const std::uint8_t* data, std::size_t size, std::size_t total,
                                  const std::string& name);

// The header in the first `size` bytes of a .npy image, its data not looked
// at (Exit::data for a malformed one).
NpyHeader parse_npy_header_only(const std::uint8_t* data, std::size_t size,
                                const std::string& name);

// Bytes of the whole .npy image whose header lies in the first `size` bytes:
// header and declared data (to bound the read of a stream). Exit::data for a
// malformed header.
std::size_t npy_image_size(const std::uint8_t* data, std::size_t size, const std::string& name);

// "<f4", "|b1", ">i8", ... -> dtype and byte order; false for anything else.
bool parse_descr_string(const std::string& descr, DType& dtype, bool& big_endian);

// Element count of `shape`; Exit::data naming `name` when count * elem_size
// does not fit in size_t.
std::size_t checked_count(const std::vector<std::size_t>& shape, std::size_t elem_size,
                          const std::string& name);

// Exit::data unless every byte is 0 or 1 (NumPy bools).
void check_bool_bytes(const std::uint8_t* p, std::size_t n, const std::string& name);

}  // namespace attn

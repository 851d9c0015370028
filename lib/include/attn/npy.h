// .npy files: a strict reader (numpy/lib/format.py is the reference) and an
// encoder. The reader returns a typed array before any conversion, so the
// caller decides whether it wants values (float32) or a mask.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attn/dtype.h"
#include "attn/tensor.h"

namespace attn {

// A typed array as read from a file: bytes are in native byte order and C
// (row-major) order whatever the file had.
struct RawArray {
  DType dtype = DType::f4;
  std::vector<std::size_t> shape;
  std::vector<std::uint8_t> bytes;  // count(shape) * dtype_size(dtype)

  std::size_t count() const { return Tensor::count(shape); }
};

// Parse a whole .npy image. `name` (a file or key) starts every error message.
// Errors: Exit::data.
RawArray parse_npy(const std::uint8_t* data, std::size_t size, const std::string& name);

// Read a .npy file from disk. Exit::no_input when missing, unreadable or not
// a regular file; Exit::data when malformed.
RawArray read_npy(const std::string& path);

// A .npy file's values as float32, converted in one pass from the mapped
// file straight into the tensor (to_float32's rules and errors).
Tensor read_npy_f32(const std::string& path, bool allow_nonfinite);

// Values as float32 (f2/bf16/f4/f8 converted exactly as NumPy's astype would).
// Other dtypes: Exit::data naming `name`. Non-finite values: Exit::data naming
// `name` and the first index, unless allow_nonfinite.
Tensor to_float32(const RawArray& a, const std::string& name, bool allow_nonfinite);

// Mask values: b1/u1/i*/u* (and floats that are exactly 0 or 1); nonzero = true.
Mask to_mask(const RawArray& a, const std::string& name);

// A .npy file of N stacked arrays, (N, ...), read one index of its first
// axis at a time: --layer all's (layers, B, S, C) hidden states, so memory
// holds one layer's. The header is checked when opened (Exit::no_input when
// missing, Exit::data when malformed or not of a float dtype).
class NpyStack {
 public:
  explicit NpyStack(const std::string& path);
  const std::string& path() const { return path_; }
  const std::vector<std::size_t>& shape() const { return shape_; }  // (N, ...)
  // Entry i as float32 of shape shape()[1:] (to_float32's rules and errors).
  Tensor at(std::size_t i, bool allow_nonfinite) const;

 private:
  std::string path_;
  std::vector<std::size_t> shape_;
  std::shared_ptr<const void> stored_;  // the opened file (lib/src/containers/stored.h)
};

// The bytes of a version 1.0 .npy file holding `t` as little-endian float32.
std::string encode_npy(const Tensor& t);

// The header alone (magic..newline, 64-byte aligned) for a float32 array of
// this shape; the data of count(shape)*4 bytes follows it in the file.
std::string npy_header_f32(const std::vector<std::size_t>& shape);
// The same for another little-endian dtype: descr "<i8" (int64), "<f4", ...
std::string npy_header(const std::vector<std::size_t>& shape, const std::string& descr);

}  // namespace attn

// One tensor as the containers' readers index it: what its header says,
// how its bytes are laid out, and where to get them (private to lib/src).
// The conversion engine (convert.cpp) turns such bytes into float32 rows or
// a native typed copy in one pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "attn/tensor_info.h"

namespace attn::detail {

// A pointer to bytes, valid while `hold` lives.
struct ByteView {
  const std::uint8_t* p = nullptr;
  std::size_t n = 0;
  std::shared_ptr<const void> hold;
};

// One positioned read: [offset, offset + length) of a region into dst.
struct ReadSpan {
  std::size_t offset, length;
  void* dst;
};

// Where one tensor's data bytes (exactly count * dtype size) come from: a
// span of a mapped file, an inflated .npz member, an in-memory array.
class Region {
 public:
  virtual ~Region() = default;
  // The tensor's data. `name` ("<source>:<key>") starts every error.
  virtual ByteView bytes(const std::string& name) const = 0;
  // The caller is done with [offset, offset + length) of bytes(): a mapped
  // file drops those pages from memory. Default: nothing to do.
  virtual void done(std::size_t offset, std::size_t length) const { (void)offset, (void)length; }
  // Copy [offset, offset + length) of the data into dst by a positioned read
  // of the file, without mapping it: on this VM faulting a mapping in costs
  // about 3x the copy (12.6 MB: 8 ms against 2.5). False when this region
  // cannot (not a plain file span, or the file was replaced or shortened
  // since it was opened); the caller then uses bytes().
  virtual bool read(std::size_t offset, std::size_t length, void* dst,
                    const std::string& name) const {
    (void)offset, (void)length, (void)dst, (void)name;
    return false;
  }
  // read() of each span, the file opened once for all of them where it is one
  // (an embedding's rows, one token at a time). False as read() is.
  virtual bool read_spans(const ReadSpan* spans, std::size_t n, const std::string& name) const {
    for (std::size_t i = 0; i < n; ++i)
      if (!read(spans[i].offset, spans[i].length, spans[i].dst, name)) return false;
    return true;
  }
  // After the bytes were read: Exit::no_input naming `name` when the file
  // they came from was truncated meanwhile (mapped_file.h), so what was read
  // is not used. Default: nothing can change under the reader.
  virtual void check_read(const std::string& name) const { (void)name; }
};

struct Stored {
  TensorInfo info;
  bool big_endian = false;     // bytes are big-endian (.npy '>')
  bool fortran_order = false;  // bytes are in Fortran (column-major) order
  // Non-empty: this tensor's header is malformed or unreadable; the whole
  // Exit::data message ("<file>[:<key>]: ..."), raised when the tensor is used.
  std::string problem;
  std::shared_ptr<const Region> region;
  // GGUF: the ggml type id of a quantized tensor (base/ggml_types.h):
  // its bytes are blocks of that type, read as float32 bit for bit as ggml's
  // dequantize_row_* computes them. kNotGgml for every other tensor.
  static constexpr std::uint32_t kNotGgml = 0xffffffffu;
  std::uint32_t ggml_type = kNotGgml;
  // Non-zero: the rows are stored as llama.cpp's converter permutes the Q and
  // K projections of llama-family models (LlamaModel.permute in
  // convert_hf_to_gguf.py), for this many heads of R / heads rows each, and
  // are read back in Hugging Face's order: view row h*D + t*D/2 + j is stored
  // row h*D + 2j + t (t in {0, 1}, j < D/2). A pure row reordering, exact.
  std::size_t unpermute_heads = 0;
};

// One tensor a container holds, under its name in the file.
struct StoredEntry {
  std::string key;
  std::shared_ptr<const Stored> stored;
};
using StoredEntries = std::vector<StoredEntry>;  // in file order

// An in-memory array (native byte order, C order) as a Stored.
std::shared_ptr<const Stored> stored_in_memory(DType dtype, std::vector<std::size_t> shape,
                                               std::vector<std::uint8_t> bytes);

// Rows of / the whole of a stored tensor as float32 (StateDict::read_rows
// and read_f32 without the lookup); `name` starts every error.
void read_stored_rows(const Stored& s, std::size_t row0, std::size_t rows, bool transposed,
                      float* dst, bool allow_nonfinite, const std::string& name);
// Rows ids[0..n) of the (R, K) view, one after the other into dst (n, K): an
// embedding's rows for token ids. As read_stored_rows row by row, the file
// opened once per batch of rows where the rows can be read without mapping,
// the batches on `threads` workers (kernels::parallel_for's count).
void read_stored_row_list(const Stored& s, const std::size_t* ids, std::size_t n, float* dst,
                          bool allow_nonfinite, const std::string& name, int threads = 1);
Tensor read_stored_f32(const Stored& s, bool allow_nonfinite, const std::string& name);
RawArray read_stored_raw(const Stored& s, const std::string& name);

// A .npy file, mapped, its header checked (npy_folder.cpp): Exit::data when
// malformed.
class MappedFile;
std::shared_ptr<const Stored> open_npy(const std::string& path);
std::shared_ptr<const Stored> open_npy(const std::shared_ptr<const MappedFile>& f);

// ---- conversion (convert.cpp) ----------------------------------------------

// Rows [row0, row0 + rows) of the tensor whose data is `p` (laid out as
// `s` says) into dst as float32; see StateDict::read_rows. `name` starts
// every error. The caller checked the row range.
void convert_rows(const std::uint8_t* p, const Stored& s, std::size_t row0, std::size_t rows,
                  bool transposed, float* dst, bool allow_nonfinite, const std::string& name);

// Rows and row length of the (R, K) view read_rows uses. Exit::data naming
// `name` when transposed and the tensor is not 2-D.
void row_view(const TensorInfo& info, bool transposed, std::size_t& R, std::size_t& K,
              const std::string& name);

// A native-order, C-order typed copy (bools checked to be 0 or 1).
RawArray to_native(const std::uint8_t* p, const Stored& s, const std::string& name);

// Exit::data unless `info` holds values attn-run converts to float32.
void require_float(const TensorInfo& info, const std::string& name);

// Value of element i of native-order bytes as double (f2, bf16, f4, f8).
double float_value(const std::uint8_t* p, DType t, std::size_t i);
float half_to_float(std::uint16_t h);
float bf16_to_float(std::uint16_t h);
std::string index_str(std::size_t flat, const std::vector<std::size_t>& shape);
std::string value_str(double v);

}  // namespace attn::detail

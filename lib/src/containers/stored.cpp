// Stored tensors (stored.h): arrays held in memory, and the reads that hand a
// tensor's bytes to the conversion engine (convert.cpp) as float32 rows, a
// whole float32 tensor or a native typed copy.
#include "containers/stored.h"

#include <algorithm>
#include <cstring>

#include "attn/error.h"

namespace attn::detail {
namespace {

// An array held in memory (native byte order, C order).
class MemoryRegion final : public Region {
 public:
  explicit MemoryRegion(std::vector<std::uint8_t> b)
      : bytes_(std::make_shared<std::vector<std::uint8_t>>(std::move(b))) {}
  ByteView bytes(const std::string&) const override {
    return {bytes_->data(), bytes_->size(), bytes_};
  }

 private:
  std::shared_ptr<std::vector<std::uint8_t>> bytes_;
};

}  // namespace

std::shared_ptr<const Stored> stored_in_memory(DType dtype, std::vector<std::size_t> shape,
                                               std::vector<std::uint8_t> bytes) {
  auto s = std::make_shared<Stored>();
  s->info.dtype = dtype;
  s->info.shape = std::move(shape);
  s->region = std::make_shared<MemoryRegion>(std::move(bytes));
  return s;
}

void read_stored_rows(const Stored& s, std::size_t row0, std::size_t rows, bool transposed,
                      float* dst, bool allow_nonfinite, const std::string& name) {
  require_float(s.info, name);
  std::size_t R, K;
  row_view(s.info, transposed, R, K, name);
  if (row0 > R || rows > R - row0)
    throw Error(Exit::data, name + ": rows [" + std::to_string(row0) + ", " +
                                std::to_string(row0 + rows) + ") asked of shape " +
                                shape_str(s.info.shape));
  // Little-endian float32 rows lying contiguous in a file are read straight
  // into dst; a non-finite value among them goes the converting way below,
  // whose error names it.
  const bool plain_rows = s.info.dtype == DType::f4 && !s.big_endian && !transposed &&
                          !(s.fortran_order && s.info.shape.size() >= 2);
  if (plain_rows && rows > 0 && K > 0 &&
      s.region->read(row0 * K * sizeof(float), rows * K * sizeof(float), dst, name) &&
      (allow_nonfinite || first_nonfinite(dst, rows * K) == rows * K))
    return;
  const ByteView v = s.region->bytes(name);
  convert_rows(v.p, s, row0, rows, transposed, dst, allow_nonfinite, name);
  // Drop what this read touched and no later read of other rows needs: the
  // whole tensor when all of it was read, the rows' bytes when they are
  // contiguous. A strided part (transposed or Fortran) stays mapped for the
  // next block.
  const std::size_t es = dtype_size(s.info.dtype);
  if (rows == R)
    s.region->done(0, v.n);
  else if (!transposed && !(s.fortran_order && s.info.shape.size() >= 2))
    s.region->done(row0 * K * es, rows * K * es);
}

Tensor read_stored_f32(const Stored& s, bool allow_nonfinite, const std::string& name) {
  require_float(s.info, name);
  Tensor t;
  t.shape = s.info.shape;
  t.data.resize(s.info.count());
  std::size_t R, K;
  row_view(s.info, false, R, K, name);
  read_stored_rows(s, 0, R, false, t.ptr(), allow_nonfinite, name);
  return t;
}

RawArray read_stored_raw(const Stored& s, const std::string& name) {
  const ByteView v = s.region->bytes(name);
  RawArray a = to_native(v.p, s, name);
  s.region->done(0, v.n);
  return a;
}

}  // namespace attn::detail

// Stored tensors (stored.h): arrays held in memory, and the reads that hand a
// tensor's bytes to the conversion engine (convert.cpp) as float32 rows, a
// whole float32 tensor or a native typed copy.
#include "containers/stored.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "attn/error.h"
#include "containers/fail.h"
#include "kernels/ggml_dequant.h"
#include "kernels/kernels.h"

namespace attn::detail {

// The longest row read_stored_row_list reads by pread into its batch buffer
// (an embedding's row: 8 KiB at Llama's 4096 bf16); longer rows go row by row.
constexpr std::size_t kListRowBytes = 1 << 16;
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

// Runs f, which reads the region's bytes; a file truncated meanwhile is the
// error (Region::check_read), not what f made of what it read.
template <class F>
void reading_region(const Region& region, const std::string& name, F&& f) {
  try {
    f();
  } catch (const Error&) {
    region.check_read(name);
    throw;
  }
  region.check_read(name);
}

// The stored row holding view row r of R (Stored::unpermute_heads).
std::size_t stored_row(const Stored& s, std::size_t r, std::size_t R) {
  if (s.unpermute_heads == 0) return r;
  const std::size_t D = R / s.unpermute_heads, half = D / 2;
  const std::size_t h = r / D, i = r % D;
  return h * D + 2 * (i % half) + i / half;
}

void read_gguf_bytes(const Stored& s, std::size_t row0, std::size_t rows, std::size_t R,
                     std::size_t K, float* dst, const std::string& name);

// Rows of a GGUF tensor: dequantized (a quantized type) and/or un-permuted
// (Stored::unpermute_heads), one row of the (R, K) view at a time, or all at
// once when they are contiguous blocks.
void read_gguf_rows(const Stored& s, std::size_t row0, std::size_t rows, std::size_t R,
                    std::size_t K, float* dst, bool allow_nonfinite, const std::string& name) {
  if (s.unpermute_heads != 0 && (R % s.unpermute_heads != 0 || (R / s.unpermute_heads) % 2 != 0))
    fail(name, std::to_string(R) + " rows cannot be un-permuted as " +
                   std::to_string(s.unpermute_heads) + " heads of an even number of rows");
  if (rows == 0 || K == 0) return;
  reading_region(*s.region, name, [&] { read_gguf_bytes(s, row0, rows, R, K, dst, name); });
  if (allow_nonfinite) return;
  const std::size_t i = first_nonfinite(dst, rows * K);
  if (i == rows * K) return;
  const std::size_t at = stored_row(s, row0 + i / K, R) * K + i % K;
  fail(name, "non-finite value " + value_str(dst[i]) + " at index " + index_str(at, s.info.shape) +
                 " of the stored " + s.info.gguf_type +
                 " tensor (expected finite values; --allow-nonfinite accepts them)");
}

void read_gguf_bytes(const Stored& s, std::size_t row0, std::size_t rows, std::size_t R,
                     std::size_t K, float* dst, const std::string& name) {
  const ByteView v = s.region->bytes(name);
  if (s.ggml_type == Stored::kNotGgml) {
    for (std::size_t r = 0; r < rows; ++r)
      convert_rows(v.p, s, stored_row(s, row0 + r, R), 1, false, dst + r * K, true, name);
  } else {
    const GgmlTypeTraits* t = ggml_type_traits(s.ggml_type);
    if (K % t->block_size == 0) {
      const std::size_t row_bytes = K / t->block_size * t->block_bytes;
      if (s.unpermute_heads == 0) {
        kernels::dequantize_row(s.ggml_type, v.p + row0 * row_bytes, dst, rows * K);
      } else {
        for (std::size_t r = 0; r < rows; ++r)
          kernels::dequantize_row(s.ggml_type, v.p + stored_row(s, row0 + r, R) * row_bytes,
                                  dst + r * K, K);
      }
    } else {  // a view row is not whole blocks (1-D): the tensor, then its rows
      std::vector<float> all(R * K);
      kernels::dequantize_row(s.ggml_type, v.p, all.data(), all.size());
      for (std::size_t r = 0; r < rows; ++r)
        std::memcpy(dst + r * K, all.data() + stored_row(s, row0 + r, R) * K, K * sizeof(float));
    }
  }
  if (rows == R) s.region->done(0, v.n);
}

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
  if (s.ggml_type != Stored::kNotGgml || s.unpermute_heads != 0) {
    if (transposed) fail(name, "a GGUF tensor is not read transposed");
    read_gguf_rows(s, row0, rows, R, K, dst, allow_nonfinite, name);
    return;
  }
  // Little-endian float32 rows lying contiguous in a file are read straight
  // into dst; a non-finite value among them goes the converting way below,
  // whose error names it.
  const bool plain_rows = s.info.dtype == DType::f4 && !s.big_endian && !transposed &&
                          !(s.fortran_order && s.info.shape.size() >= 2);
  if (plain_rows && rows > 0 && K > 0 &&
      s.region->read(row0 * K * sizeof(float), rows * K * sizeof(float), dst, name) &&
      (allow_nonfinite || first_nonfinite(dst, rows * K) == rows * K))
    return;
  reading_region(*s.region, name, [&] {
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
  });
}

void read_stored_row_list(const Stored& s, const std::size_t* ids, std::size_t n, float* dst,
                          bool allow_nonfinite, const std::string& name, int threads) {
  require_float(s.info, name);
  std::size_t R, K;
  row_view(s.info, false, R, K, name);
  const std::size_t es = dtype_size(s.info.dtype), row_bytes = K * es;
  const bool readable = s.ggml_type == Stored::kNotGgml && s.unpermute_heads == 0 &&
                        !(s.fortran_order && s.info.shape.size() >= 2) && row_bytes > 0 &&
                        row_bytes <= kListRowBytes;
  std::size_t done = 0;  // rows in dst
  if (readable) {
    // Batches of rows (about a MiB each) read in one go into a buffer, each
    // then converted as one (m, K) block: the same values as row by row. On
    // `threads` workers: a pread a row costs more than the bytes it copies.
    // A batch that fails (a read, a row out of range, a non-finite value)
    // leaves it and what follows to the row-by-row path below, which names
    // the error.
    const std::size_t batch = std::max<std::size_t>(1, (std::size_t(1) << 20) / row_bytes);
    const std::size_t batches = (n + batch - 1) / batch;
    std::vector<char> ok(batches, 0);
    kernels::parallel_for(batches, threads, [&](std::size_t t, int) {
      const std::size_t first = t * batch, m = std::min(batch, n - first);
      thread_local std::vector<std::uint8_t> bytes;
      thread_local std::vector<ReadSpan> spans;
      bytes.resize(m * row_bytes);
      spans.clear();
      for (std::size_t i = 0; i < m; ++i) {
        if (ids[first + i] >= R) return;
        spans.push_back({ids[first + i] * row_bytes, row_bytes, bytes.data() + i * row_bytes});
      }
      if (!s.region->read_spans(spans.data(), m, name)) return;
      float* out = dst + first * K;
      convert_rows(bytes.data(), s, 0, m, false, out, true, name);
      ok[t] = allow_nonfinite || first_nonfinite(out, m * K) == m * K;
    });
    while (done < n && ok[done / batch]) done = std::min(n, done + batch);
  }
  // The rest row by row (GGUF, Fortran order, a region that cannot be read so, an error).
  for (; done < n; ++done)
    read_stored_rows(s, ids[done], 1, false, dst + done * K, allow_nonfinite, name);
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
  if (s.ggml_type != Stored::kNotGgml || s.unpermute_heads != 0) {  // values: float32
    const Tensor t = read_stored_f32(s, true, name);
    RawArray a;
    a.dtype = DType::f4;
    a.shape = t.shape;
    a.bytes.resize(t.size() * sizeof(float));
    if (!a.bytes.empty()) std::memcpy(a.bytes.data(), t.ptr(), a.bytes.size());
    return a;
  }
  RawArray a;
  reading_region(*s.region, name, [&] {
    const ByteView v = s.region->bytes(name);
    a = to_native(v.p, s, name);
    s.region->done(0, v.n);
  });
  return a;
}

}  // namespace attn::detail

// The two small products of an attention tile, register-blocked with xsimd
// instead of a BLAS call per tile: at these sizes (128 x 256 x 64) OpenBLAS
// spends a good part of each call packing both operands, and its kernel for
// this machine's OpenBLAS core type is 8 lanes wide where the CPU has 16.
//
//   scores:  C (n, m) = scale * q (n, D) k^T (D, m)      (k^T: the keys transposed
//                                                        once per chunk, forward_stages.h)
//   P v:     C (n, D) = P (n, m) v (m, D) + beta * C
//
// Both are C = alpha * A B + beta * C with B's rows contiguous along C's
// columns, so one micro-kernel (kernel_micro.h) serves both. B is read in
// place, NR columns at a time; only a last partial panel is copied,
// zero-padded.
#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernel_micro.h"
#include "kernels.h"

namespace attn::kernels {
namespace {

using micro::Batch;
using micro::kLanes;
using micro::kMR;
using micro::kNR;

// c[r][0..cols) = alpha * (lo | hi) + beta * c[r][..] for one row of a block.
inline void store_row(float* row, std::size_t cols, Batch lo, Batch hi, float alpha, float beta) {
  const Batch al(alpha);
  if (cols == kNR) {
    Batch v0 = lo * al, v1 = hi * al;
    if (beta != 0.0f) {
      v0 = xsimd::fma(Batch(beta), Batch::load_unaligned(row), v0);
      v1 = xsimd::fma(Batch(beta), Batch::load_unaligned(row + kLanes), v1);
    }
    v0.store_unaligned(row);
    v1.store_unaligned(row + kLanes);
    return;
  }
  alignas(64) float out[kNR];
  (lo * al).store_aligned(out);
  (hi * al).store_aligned(out + kLanes);
  for (std::size_t j = 0; j < cols; ++j) row[j] = out[j] + (beta != 0.0f ? beta * row[j] : 0.0f);
}

// Of m columns (or depth entries), those row block [r0, r0+mr) needs when
// entries past column r + offset of row r are not: its last row's.
std::size_t needed(std::size_t r0, std::size_t mr, std::ptrdiff_t offset, std::size_t m) {
  const std::ptrdiff_t last = static_cast<std::ptrdiff_t>(r0 + mr - 1) + offset;
  if (last < 0) return 0;
  return std::min(m, static_cast<std::size_t>(last) + 1);
}

// Per-thread buffer for packed panels, grown on demand and reused.
float* panel_buffer(std::size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

}  // namespace

void tile_gemm(std::size_t n, std::size_t N, std::size_t K, float alpha, const float* a,
               std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
               std::size_t ldc, Diagonal diag) {
  if constexpr (!micro::kOwnTiles) {  // every entry computed: the diagonal only saves work
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(N),
                static_cast<int>(K), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
                beta, c, static_cast<int>(ldc));
    return;
  }
  const std::size_t full = N / kNR, rest = N - full * kNR;
  float* tail = nullptr;  // (K, NR): the last partial panel of b, zero-padded
  if (rest) {
    tail = panel_buffer(K * kNR);
    for (std::size_t k = 0; k < K; ++k) {
      std::memcpy(tail + k * kNR, b + k * ldb + full * kNR, rest * sizeof(float));
      std::memset(tail + k * kNR + rest, 0, (kNR - rest) * sizeof(float));
    }
  }
  // Panel by panel (it stays in L1), the row blocks of a streaming past it.
  for (std::size_t p = 0; p < full + (rest ? 1 : 0); ++p) {
    const std::size_t j0 = p * kNR, cols = p == full ? rest : kNR;
    const float* panel = p == full ? tail : b + j0;
    const std::size_t ldp = p == full ? kNR : ldb;
    for (std::size_t r0 = 0; r0 < n; r0 += kMR) {
      const std::size_t mr = std::min(kMR, n - r0);
      float* out = c + r0 * ldc + j0;
      std::size_t depth = K;
      if (diag.kind == Diagonal::columns && needed(r0, mr, diag.offset, N) <= j0) {
        // Wholly past the diagonal: defined values for the causal mask to overwrite.
        for (std::size_t r = 0; r < mr; ++r) std::memset(out + r * ldc, 0, cols * sizeof(float));
        continue;
      }
      if (diag.kind == Diagonal::depth) depth = needed(r0, mr, diag.offset, K);
      micro::with_rows(mr, [&](auto rows) {
        micro::block<rows>(a + r0 * lda, lda, panel, ldp, depth,
                           [&](std::size_t r, Batch lo, Batch hi) {
                             store_row(out + r * ldc, cols, lo, hi, alpha, beta);
                           });
      });
    }
  }
}

}  // namespace attn::kernels

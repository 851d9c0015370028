// The two small products of an attention tile, register-blocked with xsimd
// instead of a BLAS call per tile: at these sizes (128 x 256 x 64) OpenBLAS
// spends a good part of each call packing both operands, and on AVX-512 its
// kernel for OpenBLAS's core type there is 8 lanes wide where the CPU has 16.
//
//   scores:  C (n, m) = scale * q (n, D) k^T (D, m)      (k^T and v packed once
//                                                        per chunk, forward/stages.h)
//   P v:     C (n, D) = P (n, m) v (m, D) + beta * C
//
// Both are C = alpha * A B + beta * C with B's rows contiguous along C's
// columns, so one micro-kernel (kernels/micro.h) serves both. B comes packed
// in panels NR columns wide (pack_panels, once per batch row and KV head),
// read in place; only a view starting inside a panel (keys from a padding
// or window bound) gathers its panels, per call.
#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/micro.h"
#include "kernels/transpose.h"

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

// A per-thread buffer (on 64-byte lines) grown to at least `floats` and reused.
float* grown(FloatBuffer& buffer, std::size_t floats) {
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

// This thread's buffers: gathered panels, and a sliced product's block sums.
thread_local FloatBuffer gathered_panels, carried_sums;

// The panel width of this build's tiles for b with N columns.
std::size_t panel_width(std::size_t N) {
  return micro::kOwnTiles ? kNR : std::max<std::size_t>(N, 1);
}

// Columns [j, j + cols) of b (K rows) as one (K, NR) panel, zero-padded: in
// place when j starts a panel, else gathered from the two it straddles.
const float* panel_at(const Panels& b, std::size_t K, std::size_t j, std::size_t cols,
                      float* gather) {
  const std::size_t p = j / kNR, o = j % kNR;
  const float* first = b.data + p * b.stride;
  if (o == 0) return first;
  const std::size_t head = std::min(cols, kNR - o);
  for (std::size_t k = 0; k < K; ++k) {
    float* row = gather + k * kNR;
    std::memcpy(row, first + k * kNR + o, head * sizeof(float));
    if (cols > head)
      std::memcpy(row + head, first + b.stride + k * kNR, (cols - head) * sizeof(float));
    std::memset(row + cols, 0, (kNR - cols) * sizeof(float));
  }
  return gather;
}

}  // namespace

std::size_t query_block(std::size_t T, std::size_t D) {
  return micro::kOwnTiles && T * D >= (std::size_t(1) << 20) ? kLongQueryBlock : kQueryBlock;
}

std::size_t depth_read(Diagonal d, std::size_t r, std::size_t K) {
  // OpenBLAS's tiles read all of a (tile_gemm's cblas_sgemm).
  if (!micro::kOwnTiles || d.kind != Diagonal::depth) return K;
  return needed(r - r % kMR, kMR, d.offset, K);
}

std::size_t panels_floats(std::size_t K, std::size_t N) {
  const std::size_t w = panel_width(N);
  return (N + w - 1) / w * K * w;
}

Panels panels_view(const float* data, std::size_t K, std::size_t N) {
  const std::size_t w = panel_width(N);
  return {data, w, K * w, 0};
}

Panels pack_panels(const float* src, std::size_t row_stride, std::size_t col_stride, std::size_t K,
                   std::size_t N, float* out) {
  const std::size_t w = panel_width(N), stride = K * w;
  for (std::size_t j0 = 0; j0 < N; j0 += w) {
    const std::size_t cols = std::min(w, N - j0);
    float* panel = out + j0 / w * stride;  // (K, w)
    if (col_stride == 1) {
      for (std::size_t k = 0; k < K; ++k)
        std::memcpy(panel + k * w, src + k * row_stride + j0, cols * sizeof(float));
    } else {
      // Column by column, each source column (a key's row, a row of x) read
      // straight, 64 k at a time so the panel lines being filled stay in L1
      // (x of a projection: K = 768, a 48 KiB panel; the out projection went
      // 168 -> 173 GFLOP/s on AVX2 with this blocking). Contiguous columns
      // go 8 x 8 through registers where AVX has the shuffles (and the depth
      // block is whole 8s: the rest, a few columns or an odd K, go one by one).
      for (std::size_t k0 = 0; k0 < K; k0 += 64) {
        const std::size_t k1 = std::min(K, k0 + 64);
        std::size_t j = 0;
#if defined(__AVX__)
        if (row_stride == 1 && (k1 - k0) % 8 == 0)
          for (; j + 8 <= cols; j += 8)
            for (std::size_t k = k0; k < k1; k += 8)
              transpose_8x8(src + (j0 + j) * col_stride + k, col_stride, panel + k * w + j, w);
#endif
        for (; j < cols; ++j) {
          const float* col = src + (j0 + j) * col_stride;
          for (std::size_t k = k0; k < k1; ++k) panel[k * w + j] = col[k * row_stride];
        }
      }
    }
    if (cols < w)
      for (std::size_t k = 0; k < K; ++k)
        std::memset(panel + k * w + cols, 0, (w - cols) * sizeof(float));
  }
  return panels_view(out, K, N);
}

void tile_gemm(std::size_t n, std::size_t N, std::size_t K, float alpha, const float* a,
               std::size_t lda, const Panels& b, float beta, float* c, std::size_t ldc,
               Diagonal diag) {
  if constexpr (!micro::kOwnTiles) {  // one row-major panel; the diagonal only saves work
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(N),
                static_cast<int>(K), alpha, a, static_cast<int>(lda), b.data + b.col0,
                static_cast<int>(b.width), beta, c, static_cast<int>(ldc));
    return;
  }
  float* gather = b.col0 % kNR ? grown(gathered_panels, K * kNR) : nullptr;
  // A deep product (P v over a tile of keys) in depth slices where the CPU's
  // cut asks for them (depth_slicing: on Intel 256, so a v panel's slice, 32
  // KiB, stays in L1 across the row blocks; P v alone 1.03x faster at 512 keys). The
  // block sums carry over in `sums` through the micro-kernel's init: the same
  // FMAs in the same order, so the same bits as one pass.
  const DepthSlicing cut = depth_slicing();
  const std::size_t slice = cut.cuts(K) ? cut.slice : std::max<std::size_t>(K, 1);
  float* sums = slice < K ? grown(carried_sums, (n + kMR - 1) / kMR * kMR * kNR) : nullptr;
  // Panel by panel (it stays in L1), the row blocks of a streaming past it.
  for (std::size_t j0 = 0; j0 < N; j0 += kNR) {
    const std::size_t cols = std::min(kNR, N - j0);
    const float* panel = panel_at(b, K, b.col0 + j0, cols, gather);
    for (std::size_t k0 = 0; k0 < std::max<std::size_t>(K, 1); k0 += slice) {
      for (std::size_t r0 = 0; r0 < n; r0 += kMR) {
        const std::size_t mr = std::min(kMR, n - r0);
        float* out = c + r0 * ldc + j0;
        std::size_t depth = K;
        if (diag.kind == Diagonal::columns && needed(r0, mr, diag.offset, N) <= j0) {
          // Wholly past the diagonal: defined values for the causal mask to overwrite.
          if (diag.zero_past && k0 == 0)
            for (std::size_t r = 0; r < mr; ++r)
              std::memset(out + r * ldc, 0, cols * sizeof(float));
          continue;
        }
        if (diag.kind == Diagonal::depth) depth = needed(r0, mr, diag.offset, K);
        if (k0 > 0 && k0 >= depth) continue;  // this block's depth ended in an earlier slice
        const std::size_t k1 = std::min(k0 + slice, depth);
        const bool last = k1 == depth;
        float* t = sums ? sums + r0 * kNR : nullptr;  // this block's carried sums (mr x NR)
        micro::with_rows(mr, [&](auto rows) {
          micro::block<rows>(
              a + r0 * lda + k0, lda, panel + k0 * kNR, kNR, k1 - k0, nullptr,
              [&](std::size_t r, Batch lo, Batch hi) {
                if (last) return store_row(out + r * ldc, cols, lo, hi, alpha, beta);
                lo.store_unaligned(t + r * kNR);
                hi.store_unaligned(t + r * kNR + micro::kLanes);
              },
              k0 ? t : nullptr);
        });
      }
    }
  }
}

}  // namespace attn::kernels

// Streaming attention for one (batch, head, query block): online softmax
// over key blocks, so the S x S weights never exist (FlashAttention's loop,
// Dao et al. 2022, on the CPU). Memory per task: an n x kKeyBlock score tile
// (128 x 256 floats = 128 KiB, stays in L2) and an n x D accumulator.
//
// Letters: S sequence, D head size; n query rows in the block, mb keys in a
// key block.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels.h"

namespace attn::kernels {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// Masks one score tile (n, mb) in place: causal keys after each query row
// (only tiles crossing the diagonal reach here) and padded keys inside the
// unpadded range (holes).
void mask_tile(const HeadView& hv, std::size_t i0, std::size_t n, std::size_t j0, std::size_t mb,
               bool diagonal, float* tile /* (n, mb) */) {
  for (std::size_t r = 0; r < n; ++r) {
    float* row = tile + r * mb;
    if (diagonal) {
      const std::size_t first = std::max(j0, i0 + r + 1);  // first key after row i0+r
      for (std::size_t j = first; j < j0 + mb; ++j) row[j - j0] = kNegInf;
    }
    if (hv.holes)
      for (std::size_t j = 0; j < mb; ++j)
        if (hv.padding[j0 + j]) row[j] = kNegInf;
  }
}

}  // namespace

void attend_stream(const HeadView& hv, std::size_t i0, std::size_t n, Scratch& scratch) {
  const std::size_t D = hv.D;
  // Causal: keys past the block's last row are never computed.
  const std::size_t kb = hv.key_begin;
  const std::size_t ke = hv.causal ? std::min(hv.key_end, i0 + n) : hv.key_end;

  scratch.acc.assign(n * D, 0.0f);
  scratch.m.assign(n, kNegInf);
  scratch.l.assign(n, 0.0f);
  if (scratch.scores.size() < n * kKeyBlock) scratch.scores.resize(n * kKeyBlock);
  float* acc = scratch.acc.data();  // (n, D)
  float* m = scratch.m.data();      // (n) running max of scaled scores
  float* l = scratch.l.data();      // (n) running sum of exp(score - m)
  float* tile = scratch.scores.data();

  for (std::size_t j0 = kb; j0 < ke; j0 += kKeyBlock) {
    const std::size_t mb = std::min(kKeyBlock, ke - j0);
    // tile = scale * q[i0:i0+n] k[j0:j0+mb]^T   (n, mb)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(mb),
                static_cast<int>(D), hv.scale, hv.q + i0 * hv.ld, static_cast<int>(hv.ld),
                hv.k + j0 * hv.ld, static_cast<int>(hv.ld), 0.0f, tile, static_cast<int>(mb));
    const bool diagonal = hv.causal && j0 + mb - 1 > i0;  // some key after some row
    if (diagonal || hv.holes) mask_tile(hv, i0, n, j0, mb, diagonal, tile);

    // Online softmax: rescale what was accumulated to the new running max.
    for (std::size_t r = 0; r < n; ++r) {
      float* row = tile + r * mb;
      const float m_new = std::max(m[r], row_max(row, mb));
      if (m_new == kNegInf) {  // nothing allowed yet for this row
        std::memset(row, 0, mb * sizeof(float));
        continue;
      }
      const float factor = std::exp(m[r] - m_new);  // 0 when m[r] was -inf
      const float s = exp_shift_sum(row, mb, m_new);
      check_row_sum(hv, i0 + r, s);
      if (factor != 1.0f) {
        scale_row(acc + r * D, D, factor);
        l[r] *= factor;
      }
      l[r] += s;
      m[r] = m_new;
    }
    // acc += P v[j0:j0+mb]   (n, D)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(D),
                static_cast<int>(mb), 1.0f, tile, static_cast<int>(mb), hv.v + j0 * hv.ld,
                static_cast<int>(hv.ld), 1.0f, acc, static_cast<int>(D));
  }

  // y = acc / l; a row with no allowed key (l == 0) gets zeros, never NaN.
  for (std::size_t r = 0; r < n; ++r) {
    float* y = hv.y + (i0 + r) * hv.ld_y;
    if (l[r] > 0.0f) {
      const float inv = 1.0f / l[r];
      for (std::size_t d = 0; d < D; ++d) y[d] = acc[r * D + d] * inv;
    } else {
      std::memset(y, 0, D * sizeof(float));
    }
  }
  check_output_rows(hv, i0, n);
}

}  // namespace attn::kernels

// Maps path for one (batch, head, query block): the exact softmax rows
// (what torch.nn.MultiheadAttention returns with need_weights=True,
// average_attn_weights=False) for n query rows at a time, so only an
// n x S block is ever held, then y = P v by one GEMM.
//
// Letters: S sequence, D head size; n query rows in the block.
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels.h"

namespace attn::kernels {

void attend_maps(const HeadView& hv, std::size_t i0, std::size_t n, Scratch& /*scratch*/,
                 float* rows /* (n, S) */) {
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const std::size_t S = hv.S, D = hv.D;
  const std::size_t kb = hv.key_begin;
  // Causal: columns past the block's last row are zeros, filled not computed.
  const std::size_t ke = std::max(kb, hv.causal ? std::min(hv.key_end, i0 + n) : hv.key_end);
  const std::size_t len = ke - kb;

  for (std::size_t r = 0; r < n; ++r) {
    float* row = rows + r * S;
    std::memset(row, 0, kb * sizeof(float));
    std::memset(row + ke, 0, (S - ke) * sizeof(float));
  }
  float* y0 = hv.y + i0 * hv.ld_y;
  if (len == 0) {  // every key of every row masked: zero weights, zero output
    for (std::size_t r = 0; r < n; ++r) std::memset(y0 + r * hv.ld_y, 0, D * sizeof(float));
    return;
  }

  // rows[:, kb:ke] = scale * q[i0:i0+n] k[kb:ke]^T
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(len),
              static_cast<int>(D), hv.scale, hv.q + i0 * hv.ld, static_cast<int>(hv.ld),
              hv.k + kb * hv.ld, static_cast<int>(hv.ld), 0.0f, rows + kb, static_cast<int>(S));

  for (std::size_t r = 0; r < n; ++r) {
    float* row = rows + r * S;
    if (hv.causal)  // only the diagonal part of the block: keys after row i0+r
      for (std::size_t j = std::max(kb, i0 + r + 1); j < ke; ++j) row[j] = kNegInf;
    if (hv.holes)
      for (std::size_t j = kb; j < ke; ++j)
        if (hv.padding[j]) row[j] = kNegInf;
    // Exact softmax over the row (pass 1: max, pass 2: exp and sum, pass 3: normalize).
    const float mx = row_max(row + kb, len);
    if (mx == kNegInf) {  // fully masked row
      std::memset(row + kb, 0, len * sizeof(float));
      continue;
    }
    const float sum = exp_shift_sum(row + kb, len, mx);
    check_row_sum(hv, i0 + r, sum);
    scale_row(row + kb, len, 1.0f / sum);
  }

  // y[i0:i0+n] = P v[kb:ke]   (n, D); y may alias q, which is no longer read.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(D),
              static_cast<int>(len), 1.0f, rows + kb, static_cast<int>(S), hv.v + kb * hv.ld,
              static_cast<int>(hv.ld), 0.0f, y0, static_cast<int>(hv.ld_y));
  check_output_rows(hv, i0, n);
}

}  // namespace attn::kernels

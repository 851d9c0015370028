// Maps path for one (batch, head, query block): the exact softmax rows
// (what torch.nn.MultiheadAttention returns with need_weights=True,
// average_attn_weights=False) for n query rows at a time, so only an
// n x T' block is ever held, then y = P v by GEMM.
//
// Letters: L queries, T keys, T' = T plus torch MHA's extra columns, Dv v's
// head size; n query rows in the block.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/kernels.h"

namespace attn::kernels {
namespace {

// y[i0:i0+n] (+)= P[:, j0:j0+len] v[j0:j0+len]   (n, Dv)
void weights_times_v(const HeadView& hv, std::size_t i0, std::size_t n, const float* rows,
                     std::size_t ldr, std::size_t j0, std::size_t len, float beta) {
  tile_gemm(n, hv.value_width(), len, 1.0f, rows + j0, ldr, hv.v.rows_from(j0), beta,
            hv.y + i0 * hv.ld_y, hv.ld_y,
            hv.causal && j0 < hv.T ? causal_diagonal(Diagonal::depth, i0, j0) : Diagonal{});
}

}  // namespace

std::size_t attend_maps(const HeadView& hv, std::size_t i0, std::size_t n, Scratch& scratch,
                        float* rows /* (n, T') */) {
  const std::size_t Tx = hv.T_ext, Dv = hv.value_width();
  const KeySpan keys = block_keys(hv, i0, n);
  const std::size_t kb = keys.begin, ke = keys.end, len = ke - kb;
  const std::size_t extra = Tx - hv.T;  // bias_kv / zero_attn columns at [T, T')

  // Keys outside [kb, ke) are zeros, filled not computed.
  for (std::size_t r = 0; r < n; ++r) {
    float* row = rows + r * Tx;
    std::memset(row, 0, kb * sizeof(float));
    std::memset(row + ke, 0, (hv.T - ke) * sizeof(float));
  }
  const HeadView scored = queries_packed(hv, i0, n, scratch.q);
  if (len) score_tile(scored, i0, n, kb, len, rows + kb, Tx);
  if (extra) score_tile(scored, i0, n, hv.T, extra, rows + hv.T, Tx);

  // Exact softmax over each row's allowed keys (pass 1: max, pass 2: exp and
  // sum, pass 3: normalize); the sink joins the max and the sum, then is dropped.
  std::size_t masked_rows = 0;
  for (std::size_t r = 0; r < n; ++r) {
    float* row = rows + r * Tx;
    const float keys_max = std::max(row_max(row + kb, len), row_max(row + hv.T, extra));
    if (keys_max == kNegInf && !any_nan(row + kb, len) &&
        !any_nan(row + hv.T, extra)) {  // no allowed key: zero weights (NaN scores: NaN)
      std::memset(row + kb, 0, len * sizeof(float));
      std::memset(row + hv.T, 0, extra * sizeof(float));
      ++masked_rows;
      continue;
    }
    const float mx = hv.has_sink ? std::max(keys_max, hv.sink) : keys_max;
    float sum = exp_shift_sum(row + kb, len, mx) + exp_shift_sum(row + hv.T, extra, mx);
    if (hv.has_sink) sum += std::exp(hv.sink - mx);
    check_row_sum(hv, i0 + r, sum);
    const float inv = 1.0f / sum;
    scale_row(row + kb, len, inv);
    scale_row(row + hv.T, extra, inv);
  }

  // y = P v over the computed columns; y may alias q, which is no longer read.
  if (len) weights_times_v(hv, i0, n, rows, Tx, kb, len, 0.0f);
  if (extra) weights_times_v(hv, i0, n, rows, Tx, hv.T, extra, len ? 1.0f : 0.0f);
  if (!len && !extra)
    for (std::size_t r = 0; r < n; ++r)
      std::memset(hv.y + (i0 + r) * hv.ld_y, 0, Dv * sizeof(float));
  check_output_rows(hv, i0, n);
  return masked_rows;
}

}  // namespace attn::kernels

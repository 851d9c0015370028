// Per-key column sums of a query block, by a second sweep (key_sums.h).
//
// Letters: n rows of the block, mb keys of a tile, T' keys of a row.
#include "kernels/key_sums.h"

#include <algorithm>
#include <limits>

#include "kernels/kernels.h"

namespace attn::kernels {

void KeyColumnSums::sweep(const HeadView& hv, std::size_t i0, std::size_t n,
                          const std::uint8_t* key_rows /* (L) */, const Scratch& sc,
                          float* tile /* (n, kKeyBlock) */) {
  const KeySpan keys = block_keys(hv, i0, n);
  const std::size_t extra = hv.T_ext - hv.T;  // bias_kv / zero_attn columns at [T, T')
  bool counted = false;
  for (std::size_t r = 0; r < n; ++r) counted = counted || (key_rows[i0 + r] && sc.allowed[r]);
  // The block's columns: its key span, and up to T' with the extra columns.
  begin_ = keys.begin;
  count_ = counted ? (extra ? hv.T_ext : keys.end) - keys.begin : 0;
  sum_.assign(count_, 0.0);
  votes_.assign(count_, 0.0);
  max_.assign(count_, 0.0f);
  if (!count_) return;

  // One tile (n, mb) of keys j0..: each counted row's weights into the columns.
  const auto add_tile = [&](std::size_t j0, std::size_t mb) {
    score_tile(hv, i0, n, j0, mb, tile, mb);
    double* sum = sum_.data() + (j0 - begin_);
    double* votes = votes_.data() + (j0 - begin_);
    float* mx = max_.data() + (j0 - begin_);
    for (std::size_t r = 0; r < n; ++r) {
      const std::uint8_t how = key_rows[i0 + r];
      if (!how || !sc.allowed[r]) continue;  // a row with no allowed key has no weight
      float* p = tile + r * mb;
      // Past the causal diagonal the scores were not computed: weight 0.
      const std::size_t cols = causal_prefix(hv, i0 + r, j0, mb);
      // p = exp(s - m) * (1 / l), as the maps path normalizes its rows.
      exp_shift_sum(p, cols, sc.m[r]);
      scale_row(p, cols, 1.0f / sc.l[r]);
      for (std::size_t j = 0; j < cols; ++j) {
        sum[j] += double(p[j]);
        mx[j] = std::max(mx[j], p[j]);
      }
      if (how == kKeyRowVotes)
        for (std::size_t j = 0; j < cols; ++j) votes[j] += double(p[j]);
    }
  };
  for (std::size_t j0 = keys.begin; j0 < keys.end; j0 += kKeyBlock)
    add_tile(j0, std::min(kKeyBlock, keys.end - j0));
  if (extra) add_tile(hv.T, extra);
}

KeySums KeyColumnSums::result() const {
  KeySums k;
  k.begin = begin_;
  k.count = count_;
  k.sum = sum_.data();
  k.max = max_.data();
  k.votes = votes_.data();
  return k;
}

}  // namespace attn::kernels

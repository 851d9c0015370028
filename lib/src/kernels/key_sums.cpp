// Per-key column sums of a query block from the first sweep's exponentials
// (key_sums.h).
//
// Letters: n rows of the block, mb keys of a tile, T' keys of a row.
#include "kernels/key_sums.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/kernels.h"

namespace attn::kernels {

void KeyColumnSums::begin(const HeadView& hv, std::size_t i0, std::size_t n,
                          const std::uint8_t* key_rows /* (L) */) {
  const KeySpan keys = block_keys(hv, i0, n);
  const std::size_t extra = hv.T_ext - hv.T;  // bias_kv / zero_attn columns at [T, T')
  rows_ = key_rows + i0;
  n_ = n;
  bool counted = false;
  for (std::size_t r = 0; r < n; ++r) counted = counted || rows_[r];
  // The block's columns: its key span, and up to T' with the extra columns.
  begin_ = keys.begin;
  count_ = counted ? (extra ? hv.T_ext : keys.end) - keys.begin : 0;
  tiles_.clear();
  e_.resize(n * count_);  // tile j0.. at n * (j0 - begin): no fill, each tile is copied in
  m_at_.clear();
}

void KeyColumnSums::record(std::size_t j0, std::size_t mb, const float* tile /* (n, mb) */,
                           const float* m /* (n) */) {
  if (!count_) return;
  std::memcpy(e_.data() + n_ * (j0 - begin_), tile, n_ * mb * sizeof(float));
  m_at_.insert(m_at_.end(), m, m + n_);
  tiles_.push_back({j0, mb});
}

void KeyColumnSums::sweep(const Scratch& sc) {
  sum_.assign(count_, 0.0);
  votes_.assign(count_, 0.0);
  max_.assign(count_, 0.0f);
  for (std::size_t t = 0; t < tiles_.size(); ++t) {
    const Tile& tile = tiles_[t];
    double* sum = sum_.data() + (tile.j0 - begin_);
    double* votes = votes_.data() + (tile.j0 - begin_);
    float* mx = max_.data() + (tile.j0 - begin_);
    for (std::size_t r = 0; r < n_; ++r) {
      const std::uint8_t how = rows_[r];
      if (!how || !sc.allowed[r]) continue;  // a row with no allowed key has no weight
      // p = e * (exp(m(t) - m) * (1 / l)); exactly e * (1 / l) when m(t) is the final max.
      // (A tile the row had no key of holds zeros: its m(t) may be -inf, the factor 0.)
      const float mt = m_at_[t * n_ + r];
      const float inv_l = 1.0f / sc.l[r];
      const float factor = mt == sc.m[r] ? inv_l : std::exp(mt - sc.m[r]) * inv_l;
      const float* e = e_.data() + n_ * (tile.j0 - begin_) + r * tile.mb;
      for (std::size_t j = 0; j < tile.mb; ++j) {
        const float p = e[j] * factor;
        sum[j] += double(p);
        mx[j] = std::max(mx[j], p);
      }
      if (how == kKeyRowVotes)
        for (std::size_t j = 0; j < tile.mb; ++j) votes[j] += double(e[j] * factor);
    }
  }
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

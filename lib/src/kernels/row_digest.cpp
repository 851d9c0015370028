// Online map reductions per query row (row_digest.h).
//
// Letters: n rows of the block, i a query's index, j a key's, K kept per
// row, T key positions, T' keys of a row, W the recent window.
#include "kernels/row_digest.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kernels/kernels.h"
#include "kernels/row_scan.h"
#include "kernels/top_k_list.h"
#include "kernels/vec_exp.h"

namespace attn::kernels {
namespace {

// top_k_list.h's slots (4 bytes) in a 64-byte cache line.
constexpr std::size_t kListAlign = 16;
template <class T>
T* aligned(T* p) {
  static_assert(sizeof(T) * kListAlign == 64);
  return reinterpret_cast<T*>((reinterpret_cast<std::uintptr_t>(p) + 63) / 64 * 64);
}

// As the maps' SummarySink: a row summing below this is renormalized for its entropy.
constexpr double kSummaryRowSumOne = 0.999;

// The distance bin of d: 0 for 0, k for [2^(k-1), 2^k) (attn/digest.h).
std::size_t bin_of(std::size_t d) {
  std::size_t k = 0;
  while (d) ++k, d >>= 1;
  return k;
}

}  // namespace

void RowDigest::begin(const DigestRequest& req, const HeadView& hv, std::size_t i0, std::size_t n) {
  n_ = n;
  i0_ = i0;
  T_ = hv.T;
  Tx_ = hv.T_ext;
  W_ = req.recent;
  K_ = req.top_k;
  summary_ = req.summary || req.head;
  head_ = req.head;
  N_ = req.sink_keys;
  // The summary's argmax is the top 1 (6.9% of a Llama layer's time at S = 8192 with
  // --head-stats, where nothing reads it: not kept then).
  keep_ = std::max<std::size_t>(K_, summary_ && req.argmax ? 1 : 0);
  bins_ = summary_ ? distance_bins(std::max({hv.T, hv.L, std::size_t(1)}) - 1) : 0;
  has_sink_ = hv.has_sink;
  sink_ = hv.sink;
  fallback = false;
  key_rows = req.key_rows.empty() ? nullptr : req.key_rows.data();
  if (key_rows) key_sums.begin(hv, i0, n, key_rows);
  width_ = top_k_list_width(keep_);
  // Each row's list on whole cache lines: an insertion's vector loads then
  // take the previous insertion's stores straight from the store queue.
  top_s_.assign(n * width_ + kListAlign, kNegInf);
  top_j_.assign(n * width_ + kListAlign, 0);
  top_values_ = aligned(top_s_.data());
  top_keys_ = aligned(top_j_.data());
  if (!summary_) return;
  for (auto* v : {&l_keys_, &plogp_, &l_pos_, &dist_, &recent_}) v->assign(n, 0.0);
  hist_.assign(n * bins_, 0.0);
  first_.assign(n, kNegInf);
  sink_sum_.assign(head_ ? n : 0, 0.0);
  recent_after_sink_.assign(head_ ? n : 0, 0.0);
}

void RowDigest::scores(std::size_t r, std::size_t j0, const float* s, std::size_t cols, float max) {
  if (j0 == 0 && cols && summary_) first_[r] = s[0];
  if (!keep_) return;
  float* values = top_values_ + r * width_;
  if (!(max > values[keep_ - 1])) return;  // most tiles of a long row
  std::int32_t* keys = top_keys_ + r * width_;
  top_k_list_add(s, cols, std::int32_t(j0), keep_, width_, values, keys);
}

void RowDigest::rescale(std::size_t r, float m_old, float m_new) {
  if (!summary_ || l_keys_[r] == 0.0) return;  // nothing summed yet (m_old may be -inf)
  const double f = std::exp(double(m_old) - double(m_new));
  // sum e^(s - m_new) (s - m_new) = f (A + (m_old - m_new) l_keys)
  plogp_[r] = f * (plogp_[r] + (double(m_old) - double(m_new)) * l_keys_[r]);
  for (auto* v : {&l_keys_, &l_pos_, &dist_, &recent_}) (*v)[r] *= f;
  if (head_) sink_sum_[r] *= f, recent_after_sink_[r] *= f;
  for (std::size_t k = 0; k < bins_; ++k) hist_[r * bins_ + k] *= f;
}

float RowDigest::exp_tile(std::size_t r, std::size_t j0, float* row, std::size_t cols, float m) {
  if (!summary_) {  // top-k alone needs only the scores
    const float s = exp_shift_sum(row, cols, m);
    if (!(s >= 0.0f) || std::isinf(s)) fallback = true;
    return s;
  }
  alignas(64) static const float kIota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  static_assert(kLanes <= 16, "kIota covers a batch");
  const Batch shift(m), under(kUnder);
  // i - j of each lane, exact in float below 2^24.
  Batch to_query = Batch(float(i0_ + r) - float(j0)) - Batch::load_aligned(kIota);
  Batch sum(0.0f), plogp(0.0f), dist(0.0f);
  // One lane step: e = exp(s - m), and its terms of A and the distance. A NaN
  // score (or +inf - +inf) gives d = NaN, whose e carries it into the sum.
  const auto step = [&](const Batch& s) {
    const Batch d = s - shift;
    const Batch e = exp_shifted(d);
    plogp = xsimd::fma(e, xsimd::max(d, under), plogp);  // e = 0 below kUnder: -inf * 0 avoided
    dist = xsimd::fma(e, xsimd::abs(to_query), dist);
    to_query -= Batch(float(kLanes));
    return e;
  };
  // The row's sum in exp_shift_sum's order (lanes, then the tail one by one),
  // so l and the context are those of the run without digests, bit for bit.
  std::size_t j = 0;
  for (; j + kLanes <= cols; j += kLanes) {
    const Batch e = step(Batch::load_unaligned(row + j));
    e.store_unaligned(row + j);
    sum += e;
  }
  float total = xsimd::hadd(sum);
  if (j < cols) {  // the tail through a padded lane buffer: -inf gives e = 0
    alignas(64) float tail[kLanes];
    const std::size_t left = cols - j;
    for (std::size_t t = 0; t < kLanes; ++t) tail[t] = t < left ? row[j + t] : kNegInf;
    step(Batch::load_aligned(tail)).store_aligned(tail);
    for (std::size_t t = 0; t < left; ++t) {
      row[j + t] = tail[t];
      total += tail[t];
    }
  }
  if (std::isnan(total)) {
    fallback = true;
    return std::numeric_limits<float>::quiet_NaN();
  }
  l_keys_[r] += total;
  plogp_[r] += xsimd::hadd(plogp);
  if (j0 < T_) {  // key positions (the extra columns have none)
    l_pos_[r] += total;
    dist_[r] += xsimd::hadd(dist);
    add_position_sums(r, j0, row, cols, total);
  }
  return total;
}

void RowDigest::add_position_sums(std::size_t r, std::size_t j0, const float* e, std::size_t cols,
                                  float total) {
  const std::size_t i = i0_ + r, end = j0 + cols;
  // recent: keys i - W < j <= i
  const std::size_t lo = std::max(j0, i + 1 >= W_ ? i + 1 - W_ : 0), hi = std::min(end, i + 1);
  if (lo < hi) recent_[r] += sum_range(e, lo - j0, hi - j0);
  if (head_) {
    // the first N keys; the recent ones from N on
    const std::size_t sink_hi = std::min(end, N_);
    if (j0 < sink_hi) sink_sum_[r] += sum_range(e, 0, sink_hi - j0);
    const std::size_t lo_after = std::max(lo, N_);
    if (lo_after < hi) recent_after_sink_[r] += sum_range(e, lo_after - j0, hi - j0);
  }
  // The bins as sums of ranges: before the query the distance falls with j,
  // after it it grows.
  double* hist = hist_.data() + r * bins_;
  for (std::size_t j = j0; j < end;) {
    const std::size_t k = bin_of(j <= i ? i - j : j - i);
    const std::size_t stop =
        j <= i ? std::min(end, i - distance_bin_lo(k) + 1) : std::min(end, i + distance_bin_hi(k));
    // A tile inside one bin (every tile past distance 2 x 512) adds its sum.
    hist[k] += j == j0 && stop == end ? double(total) : sum_range(e, j - j0, stop - j0);
    j = stop;
  }
}

RowDigests RowDigest::finish(const float* m, const float* l, const std::uint8_t* allowed) {
  values_.assign(n_ * keep_, 0.0f);
  indices_.assign(n_ * keep_, 0);
  summary_out_.assign(summary_ ? n_ * kSummaryColumns : 0, 0.0f);
  hist_out_.assign(n_ * bins_, 0.0);
  head_out_.assign(head_ ? n_ * kHeadColumns : 0, 0.0f);
  std::vector<std::pair<float, std::int64_t>> top;  // (weight, key) of a row
  std::vector<std::int64_t> taken;
  for (std::size_t r = 0; r < n_; ++r) {
    // A row with no allowed key: zero weights, keys 0.. in the top-k (the
    // assigns above), zero summary.
    top.clear();
    if (allowed[r]) {
      // p = e (1 / l) as the maps path scales its rows; weights 0 (underflow) drop out.
      const float inv = 1.0f / l[r];
      for (std::size_t k = 0; k < keep_ && top_values_[r * width_ + k] != kNegInf; ++k) {
        const float w = exp_approx(top_values_[r * width_ + k] - m[r]) * inv;
        if (w > 0.0f) top.emplace_back(w, top_keys_[r * width_ + k]);
      }
      // Rounding may tie weights of distinct scores: the maps order them by
      // index. The list comes in order but for such ties (or an exp that is
      // not monotonic by an ulp): an insertion sort, one compare per entry
      // when nothing moves.
      const auto before = [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      };
      for (std::size_t k = 1; k < top.size(); ++k)
        for (std::size_t at = k; at > 0 && before(top[at], top[at - 1]); --at)
          std::swap(top[at], top[at - 1]);
    }
    // Then the keys of zero weight, lowest index first.
    if (top.size() < keep_) {
      taken.clear();
      for (const auto& t : top) taken.push_back(t.second);
      std::sort(taken.begin(), taken.end());
      for (std::int64_t j = 0, at = 0; top.size() < keep_ && std::size_t(j) < Tx_; ++j) {
        while (std::size_t(at) < taken.size() && taken[std::size_t(at)] < j) ++at;
        if (std::size_t(at) < taken.size() && taken[std::size_t(at)] == j) continue;
        top.emplace_back(0.0f, j);
      }
    }
    for (std::size_t k = 0; k < top.size(); ++k) {
      values_[r * keep_ + k] = top[k].first;
      indices_[r * keep_ + k] = top[k].second;
    }
    if (summary_ && allowed[r]) finish_summary(r, m[r], top.empty() ? 0 : top[0].second);
  }
  RowDigests d;
  d.n = n_;
  d.K = keep_;
  d.topk_values = values_.data();
  d.topk_indices = indices_.data();
  d.columns = summary_ ? std::size_t(kSummaryColumns) : 0;
  d.summary = summary_out_.data();
  d.bins = bins_;
  d.histogram = hist_out_.data();
  d.head = head_ ? head_out_.data() : nullptr;
  return d;
}

void RowDigest::finish_summary(std::size_t r, float m, std::int64_t argmax) {
  // l in double from the keys' own sum: the entropy's renormalization needs
  // l_keys apart from the sink's share.
  const double lk = l_keys_[r];
  const double l = lk + (has_sink_ ? std::exp(double(sink_) - double(m)) : 0.0);
  float* out = summary_out_.data() + r * kSummaryColumns;
  const double total = lk / l;  // the row's sum of weights
  double entropy = 0.0;         // every weight 0 (a sink took all): 0, as the maps give
  if (total > 0.0)
    entropy = total < kSummaryRowSumOne ? std::log(lk) - plogp_[r] / lk
                                        : std::log(l) * total - plogp_[r] / l;
  out[kEntropy] = float(entropy);
  out[kFirstKey] = float(double(exp_approx(first_[r] - m)) / l);
  out[kRecent] = float(recent_[r] / l);
  out[kMeanDist] = l_pos_[r] > 0.0 ? float(dist_[r] / l_pos_[r]) : 0.0f;
  out[kArgmax] = float(argmax);
  for (std::size_t k = 0; k < bins_; ++k) hist_out_[r * bins_ + k] = hist_[r * bins_ + k] / l;
  if (head_) {
    float* h = head_out_.data() + r * kHeadColumns;
    h[kRowTotal] = float(total);
    h[kSinkKeys] = float(sink_sum_[r] / l);
    h[kRecentKeys] = float(recent_after_sink_[r] / l);
  }
}

}  // namespace attn::kernels

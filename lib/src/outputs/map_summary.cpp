// --summary as the rows stream (attn/map_summary.h).
//
// Letters: B batch, H heads, L query rows, T key positions, T' keys of a row.
#include "attn/map_summary.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "kernels/row_scan.h"
#include "outputs/csv_text.h"

namespace attn {
namespace {

// As --stats (stats.cpp): softmax rows sum to 1 within rounding; below this
// a sink took a share and the entropy is that of the renormalized row.
constexpr double kSummaryRowSumOne = 0.999;

// Sum of p over keys [lo, hi) (clamped to [0, n)).
double range_sum(const float* p, std::ptrdiff_t lo, std::ptrdiff_t hi, std::size_t n) {
  lo = std::max<std::ptrdiff_t>(lo, 0);
  hi = std::min<std::ptrdiff_t>(hi, std::ptrdiff_t(n));
  return lo < hi ? kernels::sum_range(p, std::size_t(lo), std::size_t(hi)) : 0.0;
}

}  // namespace

const std::vector<std::string>& summary_column_names() {
  static const std::vector<std::string> names = {"entropy", "first_key", "recent", "mean_distance",
                                                 "argmax"};
  return names;
}

SummarySink::SummarySink(std::size_t B, std::size_t H, std::size_t T, std::size_t T_row,
                         std::size_t recent, std::vector<std::size_t> query_position)
    : H_(H),
      L_(query_position.size()),
      T_(T),
      Tr_(T_row),
      W_(recent),
      pos_(std::move(query_position)),
      rows_({B, H, L_, kSummaryColumns}) {
  if (T > T_row) throw Error(Exit::software, "summary: more key positions than row columns");
  std::size_t max_distance = T ? T - 1 : 0;
  for (std::size_t i : pos_) max_distance = std::max(max_distance, i);
  bins_ = distance_bins(max_distance);
}

void SummarySink::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                             const float* rows /* (n, T') */) {
  std::vector<double> hist(bins_, 0.0);
  float* out = rows_.ptr() + ((b * H_ + h) * L_ + i0) * kSummaryColumns;
  for (std::size_t r = 0; r < n; ++r, out += kSummaryColumns) {
    const float* p = rows + r * Tr_;
    const std::size_t i = pos_.at(i0 + r);
    // One vectorized pass over the key positions (entropy, argmax,
    // distance), then torch MHA's extra columns, which have no position;
    // then the bins as sums of ranges.
    const kernels::RowScan scan = kernels::scan_row(p, T_, i);
    double total = scan.total, entropy = -scan.plogp, weight = scan.total, distance = scan.distance;
    std::size_t argmax = scan.argmax;
    for (std::size_t j = T_; j < Tr_; ++j) {
      total += p[j];
      if (p[j] > 0.0f) entropy -= double(p[j]) * double(std::log(p[j]));
      if (p[j] > p[argmax]) argmax = j;
    }
    if (!(total > 0.0)) {
      entropy = 0.0;  // fully masked: every weight 0
    } else if (total < kSummaryRowSumOne) {
      entropy = entropy / total + std::log(total);
    }
    const std::ptrdiff_t ii = std::ptrdiff_t(i);
    for (std::size_t k = 0; k < bins_; ++k) {
      const std::ptrdiff_t lo = std::ptrdiff_t(distance_bin_lo(k)),
                           hi = std::ptrdiff_t(distance_bin_hi(k));
      double s = range_sum(p, ii + lo, ii + hi, T_);               // keys after the query
      if (k > 0) s += range_sum(p, ii - hi + 1, ii - lo + 1, T_);  // keys before it
      hist[k] += s;
    }
    out[kEntropy] = float(entropy);
    out[kFirstKey] = Tr_ ? p[0] : 0.0f;
    out[kRecent] = float(range_sum(p, ii - std::ptrdiff_t(W_) + 1, ii + 1, T_));
    out[kMeanDist] = weight > 0.0 ? float(distance / weight) : 0.0f;
    out[kArgmax] = float(argmax);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  blocks_[{b, h, i0}] = std::move(hist);
}

DigestRequest SummarySink::digest_request() const {
  DigestRequest r;
  r.rows = false;
  r.summary = true;
  r.recent = W_;
  return r;
}

void SummarySink::write_digests(std::size_t b, std::size_t h, std::size_t i0, const RowDigests& d) {
  if (d.columns != kSummaryColumns || d.bins < bins_)
    throw Error(Exit::software, "summary: digests without the summary");
  std::copy(d.summary, d.summary + d.n * kSummaryColumns,
            rows_.ptr() + ((b * H_ + h) * L_ + i0) * kSummaryColumns);
  // The rows' bins summed in row order, as write_rows sums them; a row's
  // bins past bins_ hold no weight (its distances stay below them).
  std::vector<double> hist(bins_, 0.0);
  for (std::size_t r = 0; r < d.n; ++r)
    for (std::size_t k = 0; k < bins_; ++k) hist[k] += d.histogram[r * d.bins + k];
  std::lock_guard<std::mutex> lock(mutex_);
  blocks_[{b, h, i0}] = std::move(hist);
}

std::vector<std::vector<double>> SummarySink::histograms() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::vector<double>> out(H_, std::vector<double>(bins_, 0.0));
  for (const auto& [key, hist] : blocks_)  // in (b, h, row) order: the same sums every run
    for (std::size_t k = 0; k < bins_; ++k) out[std::get<1>(key)][k] += hist[k];
  return out;
}

std::string summary_csv(const SummarySink& s, const std::vector<std::size_t>& heads,
                        const std::vector<std::size_t>& queries) {
  const Tensor& t = s.rows();
  const std::size_t B = t.shape[0], H = t.shape[1], L = t.shape[2];
  std::string header = "batch,head,query";
  for (const std::string& c : summary_column_names()) header += "," + c;
  std::string out = detail::csv_table(header, B * H * L);
  detail::CsvLine line;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < L; ++i) {
        const float* v = t.ptr() + ((b * H + h) * L + i) * kSummaryColumns;
        // %.9g: every float32 reads back exactly.
        line.whole((long long)b).whole((long long)heads.at(h)).whole((long long)queries.at(i));
        line.g9(v[kEntropy]).g9(v[kFirstKey]).g9(v[kRecent]).g9(v[kMeanDist]);
        line.whole((long long)v[kArgmax]).end(out);
      }
  return out;
}

nlohmann::json summary_json(const SummarySink& s, const std::vector<std::size_t>& heads) {
  nlohmann::json j;
  j["columns"] = summary_column_names();
  j["recent"] = s.recent();
  j["columns_note"] =
      "per (batch, head, query) row of summary.npy: entropy in nats (natural log; a row summing "
      "below 0.999, as with sinks, renormalized first), weight on key 0, weight on the keys j "
      "with query - recent < j <= query, mean |query - key| weighted by the row's weights over "
      "the key positions, index of the largest weight (the first one)";
  const auto hists = s.histograms();
  nlohmann::json bins = nlohmann::json::array();
  for (std::size_t k = 0; k < (hists.empty() ? 0 : hists[0].size()); ++k)
    bins.push_back({{"from", distance_bin_lo(k)}, {"to", distance_bin_hi(k)}});
  j["distance_bins"] = bins;
  j["histogram_note"] =
      "per head, the attention weight at each distance |query - key| summed over every "
      "(batch, query) row (weight) and as a share of the head's total (fraction); bin k "
      "holds distances from <= d < to";
  nlohmann::json per_head = nlohmann::json::array();
  for (std::size_t h = 0; h < hists.size(); ++h) {
    double total = 0.0;
    for (double v : hists[h]) total += v;
    std::vector<double> fraction;
    for (double v : hists[h]) fraction.push_back(total > 0.0 ? v / total : 0.0);
    per_head.push_back({{"head", heads.at(h)}, {"weight", hists[h]}, {"fraction", fraction}});
  }
  j["heads"] = per_head;
  return j;
}

}  // namespace attn

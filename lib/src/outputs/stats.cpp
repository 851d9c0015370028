// Per-head attention diagnostics (attn/stats.h).
//
// Letters: B batch, H heads, S sequence.
#include "attn/stats.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "attn/error.h"

namespace attn {
namespace {

// Softmax rows sum to 1 within float rounding; below this a sink took a share.
constexpr double kRowSumOne = 0.999;

}  // namespace

void add_row_stats(const float* row, std::size_t n, HeadStats& acc) {
  // Softmax rows are non-negative; a row with no positive weight is one the
  // forward pass zeroed because every key was masked (CONTRACT.md "Outputs").
  double entropy = 0.0, max_w = 0.0, total = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    const double p = row[j];
    total += p;
    if (p > max_w) max_w = p;
    if (p > 0.0) entropy -= p * std::log(p);
  }
  if (!(total > 0.0)) {
    ++acc.fully_masked_rows;
    return;
  }
  // A row with a sink (gpt-oss) sums to less than 1: its entropy is that of
  // the weights the keys got, renormalized (H(p / t) = H_raw / t + ln t); the
  // sink's share shows in the row sum. Softmax rows sum to 1 up to rounding,
  // and stay untouched.
  if (total < kRowSumOne) entropy = entropy / total + std::log(total);
  acc.mean_row_sum += total;
  acc.mean_entropy += entropy;
  acc.mean_max_weight += max_w;
  acc.first_token_share += n > 0 ? double(row[0]) : 0.0;
  ++acc.rows;
}

void finish_head_stats(HeadStats& acc) {
  if (acc.rows == 0) return;
  const double r = double(acc.rows);
  acc.mean_entropy /= r;
  acc.mean_row_sum /= r;
  acc.mean_max_weight /= r;
  acc.first_token_share /= r;
}

std::vector<HeadStats> attention_stats(const Tensor& maps) {
  // maps: (B, H, L, T) or (H, L, T)
  if (maps.ndim() != 3 && maps.ndim() != 4)
    throw Error(Exit::software, "attention_stats: expected (B, H, L, T) or (H, L, T), found " +
                                    shape_str(maps.shape));
  const std::size_t T = maps.shape.back(), L = maps.shape[maps.ndim() - 2];
  const std::size_t H = maps.shape[maps.ndim() - 3];
  const std::size_t B = maps.ndim() == 4 ? maps.shape[0] : 1;
  std::vector<HeadStats> out(H);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < L; ++i)
        add_row_stats(maps.ptr() + ((b * H + h) * L + i) * T, T, out[h]);
  for (auto& s : out) finish_head_stats(s);
  return out;
}

StatsSink::StatsSink(std::size_t H, std::size_t S, AttentionSink* next)
    : S_(S), next_(next), sums_(H) {}

void StatsSink::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                           const float* rows) {
  HeadStats local;
  for (std::size_t i = 0; i < n; ++i) add_row_stats(rows + i * S_, S_, local);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    HeadStats& s = sums_.at(h);
    s.mean_entropy += local.mean_entropy;
    s.mean_max_weight += local.mean_max_weight;
    s.first_token_share += local.first_token_share;
    s.mean_row_sum += local.mean_row_sum;
    s.rows += local.rows;
    s.fully_masked_rows += local.fully_masked_rows;
  }
  if (next_) next_->write_rows(b, h, i0, n, rows);
}

std::vector<HeadStats> StatsSink::result() const {
  std::vector<HeadStats> out;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    out = sums_;
  }
  for (auto& s : out) finish_head_stats(s);
  return out;
}

nlohmann::json stats_to_json(const std::vector<HeadStats>& stats) {
  nlohmann::json heads = nlohmann::json::array();
  for (std::size_t h = 0; h < stats.size(); ++h) {
    const HeadStats& s = stats[h];
    heads.push_back({{"head", h},
                     {"mean_entropy", s.mean_entropy},
                     {"mean_max_weight", s.mean_max_weight},
                     {"first_token_share", s.first_token_share},
                     {"mean_row_sum", s.mean_row_sum},
                     {"rows", s.rows},
                     {"fully_masked_rows", s.fully_masked_rows}});
  }
  return heads;
}

std::string format_stats_table(const std::vector<HeadStats>& stats) {
  // The row-sum column only when some head's rows sum to less than 1 (sinks).
  bool sums = false;
  for (const HeadStats& s : stats) sums |= s.rows > 0 && s.mean_row_sum < kRowSumOne;
  std::string out = "head  entropy(nats)  max weight  first-token share  rows  fully masked";
  out += sums ? "  row sum\n" : "\n";
  char line[160];
  for (std::size_t h = 0; h < stats.size(); ++h) {
    const HeadStats& s = stats[h];
    std::snprintf(line, sizeof line, "%4zu  %13.4f  %10.4f  %17.4f  %4lld  %12lld", h,
                  s.mean_entropy, s.mean_max_weight, s.first_token_share,
                  static_cast<long long>(s.rows), static_cast<long long>(s.fully_masked_rows));
    out += line;
    if (sums) {
      std::snprintf(line, sizeof line, "  %7.4f", s.mean_row_sum);
      out += line;
    }
    out += "\n";
  }
  return out;
}

}  // namespace attn

// --key-stats as the rows stream (attn/key_stats.h).
//
// Letters: B batch, H heads, L query rows, T' keys of a row, W voting rows,
// K pooling kernel.
#include "attn/key_stats.h"

#include <algorithm>
#include <cmath>

#include "attn/error.h"
#include "outputs/csv_text.h"

namespace attn {
namespace {

// The fixed point's unit: 2^-kFractionBits. A sum of L <= 2^30 rows of
// weights <= 1 stays below 2^(30 + 96) < 2^128.
constexpr int kFractionBits = 96;

}  // namespace

const std::vector<std::string>& key_stats_column_names() {
  static const std::vector<std::string> names = {"sum", "max", "votes", "pooled_votes"};
  return names;
}

KeyStatsSink::KeyStatsSink(std::size_t B, std::size_t H, std::size_t L, std::size_t T_row,
                           std::size_t window, std::size_t pool)
    : H_(H), L_(L), Tr_(T_row), W_(window), K_(pool) {
  if (W_ < 1 || K_ < 1 || K_ % 2 == 0)
    throw Error(Exit::software, "key statistics: window >= 1 and an odd pool >= 1");
  sum_.assign(B * H * Tr_, 0);
  votes_.assign(B * H * Tr_, 0);
  max_.assign(B * H * Tr_, 0.0f);
}

DigestRequest KeyStatsSink::digest_request() const {
  DigestRequest req;
  req.rows = false;
  req.key_rows.assign(L_, kKeyRowCounted);
  for (std::size_t i = L_ > W_ ? L_ - W_ : 0; i < L_; ++i) req.key_rows[i] = kKeyRowVotes;
  return req;
}

void KeyStatsSink::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                              const float* rows /* (n, T') */) {
  // The block's column sums in row order, then added as one block.
  std::vector<double> sum(Tr_, 0.0), votes(Tr_, 0.0);
  std::vector<float> mx(Tr_, 0.0f);
  for (std::size_t r = 0; r < n; ++r) {
    const float* p = rows + r * Tr_;
    for (std::size_t j = 0; j < Tr_; ++j) {
      sum[j] += double(p[j]);
      mx[j] = std::max(mx[j], p[j]);
    }
    if (i0 + r + W_ >= L_)  // one of the last W rows
      for (std::size_t j = 0; j < Tr_; ++j) votes[j] += double(p[j]);
  }
  KeySums k;
  k.begin = 0;
  k.count = Tr_;
  k.sum = sum.data();
  k.max = mx.data();
  k.votes = votes.data();
  add(b, h, k);
}

void KeyStatsSink::write_key_sums(std::size_t b, std::size_t h, const KeySums& k) { add(b, h, k); }

void KeyStatsSink::add(std::size_t b, std::size_t h, const KeySums& k) {
  if (k.begin + k.count > Tr_)
    throw Error(Exit::software, "key statistics: key sums past the row's " + std::to_string(Tr_));
  // Each block's double sums rounded to the fixed point once, outside the lock.
  std::vector<Fixed> sum(k.count), votes(k.count);
  for (std::size_t j = 0; j < k.count; ++j) {
    // NaN weights (--allow-nonfinite) count as nothing rather than undefined bits.
    sum[j] = k.sum[j] > 0.0 ? Fixed(std::ldexp(k.sum[j], kFractionBits)) : 0;
    votes[j] = k.votes[j] > 0.0 ? Fixed(std::ldexp(k.votes[j], kFractionBits)) : 0;
  }
  const std::size_t at = (b * H_ + h) * Tr_ + k.begin;
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t j = 0; j < k.count; ++j) {
    sum_[at + j] += sum[j];
    votes_[at + j] += votes[j];
    max_[at + j] = std::max(max_[at + j], k.max[j]);
  }
}

Tensor KeyStatsSink::result() const {
  const std::size_t BH = sum_.size() / std::max<std::size_t>(Tr_, 1);
  Tensor t({BH / std::max<std::size_t>(H_, 1), H_, Tr_, 4});
  const std::size_t half = K_ / 2;
  for (std::size_t bh = 0; bh < BH; ++bh) {
    float* out = t.ptr() + bh * Tr_ * 4;
    const std::size_t at = bh * Tr_;
    for (std::size_t j = 0; j < Tr_; ++j) {
      out[j * 4 + 0] = float(std::ldexp(double(sum_[at + j]), -kFractionBits));
      out[j * 4 + 1] = max_[at + j];
      out[j * 4 + 2] = float(std::ldexp(double(votes_[at + j]), -kFractionBits));
    }
    // max_pool1d(votes, K, stride 1, padding K // 2): the max over the keys
    // within K / 2 of j (the padding is -inf, so only real keys count).
    for (std::size_t j = 0; j < Tr_; ++j) {
      const std::size_t lo = j > half ? j - half : 0, hi = std::min(Tr_, j + half + 1);
      float m = out[lo * 4 + 2];
      for (std::size_t c = lo + 1; c < hi; ++c) m = std::max(m, out[c * 4 + 2]);
      out[j * 4 + 3] = m;
    }
  }
  return t;
}

std::string key_stats_csv(const Tensor& stats, const std::vector<std::size_t>& heads) {
  const std::size_t B = stats.shape[0], H = stats.shape[1], T = stats.shape[2];
  std::string header = "batch,head,key";
  for (const std::string& c : key_stats_column_names()) header += "," + c;
  std::string out = detail::csv_table(header, B * H * T);
  detail::CsvLine line;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t j = 0; j < T; ++j) {
        const float* v = stats.ptr() + ((b * H + h) * T + j) * 4;
        // %.9g: every float32 reads back exactly.
        line.whole((long long)b).whole((long long)heads.at(h)).whole((long long)j);
        line.g9(v[0]).g9(v[1]).g9(v[2]).g9(v[3]).end(out);
      }
  return out;
}

}  // namespace attn

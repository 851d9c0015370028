// --top-k and --summary from the streaming kernel's online pass (attn/digest.h,
// kernels/row_digest.cpp) against the same sinks fed the exact softmax rows
// of the maps path (a wrapper that needs rows forces that path), on shapes
// of several query blocks and key tiles (L = 700: 6 blocks of 128 rows, 2
// tiles of 512 keys), so the running max rescales the sums. Top-k: the same
// keys, values within float rounding, where two weights tie within rounding
// either key; summary columns and histograms within float rounding.
//
// Letters: B batch, S sequence, C hidden, H heads, Hkv key/value heads, D
// head size, K kept per row, T' keys of a row.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/map_select.h"
#include "attn/map_summary.h"
#include "attn/map_topk.h"
#include "test_util.h"

using namespace attn;

namespace {

constexpr std::size_t B = 2, S = 700, C = 32, H = 4, D = 8, K = 8, W = 40;

struct Case {
  std::string name;
  bool causal = false;
  std::size_t window = 0;
  bool padding = false;
  bool sinks = false;
  std::size_t Hkv = 4;  // of H = 4
  bool alibi = false;
  bool extra_keys = false;  // torch MHA's bias_kv and zero_attn: T' = S + 2
  float sharp = 1.0f;       // scale of the weights: larger, sharper rows (underflowing weights)
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"plain"},
      {"causal", true},
      {"causal window 100", true, 100},
      {"window 60 both ways", false, 60},
      {"padding with holes", false, 0, true},
      {"causal padding sinks", true, 0, true, true},
      {"GQA causal", true, 0, false, false, 2},
      {"MQA window padding", true, 300, true, false, 1},
      {"ALiBi causal", true, 0, false, false, 4, true},
      {"bias_kv zero_attn", false, 0, true, false, 4, false, true},
      {"sharp causal sinks (weights underflow)", true, 0, false, true, 4, false, false, 6.0f},
  };
  return all;
}

Weights weights_for(const Case& c) {
  Weights w;
  w.C = C;
  w.H = H;
  w.D = D;
  w.Hkv = c.Hkv;
  w.O = H * D;
  w.w_qkv = test::random_tensor({w.geometry().qkv_rows(), C}, 7);
  for (float& v : w.w_qkv.data) v *= 0.6f * c.sharp;
  w.has_out_proj = false;
  if (c.sinks) w.sinks = test::random_tensor({H}, 9);
  if (c.extra_keys) {
    w.bias_k = test::random_tensor({c.Hkv * D}, 11);
    w.bias_v = test::random_tensor({c.Hkv * D}, 12);
  }
  return w;
}

AttentionSpec spec_for(const Case& c) {
  AttentionSpec s = AttentionSpec::plain(0.35f, c.causal);
  if (c.window) s.sliding_window = c.window;
  s.sinks = c.sinks;
  s.add_zero_attn = c.extra_keys;
  if (c.alibi) {
    s.alibi = AlibiSpec{};
    for (std::size_t h = 0; h < H; ++h) s.alibi->slopes.push_back(std::pow(2.0f, -float(h + 1)));
  }
  return s;
}

Mask padding_for() {
  Mask m;
  m.shape = {B, S};
  m.data.assign(B * S, 0);
  for (std::size_t j = 0; j < S; ++j) {
    m.data[j] = j >= S - 90;              // batch 0: right padding
    m.data[S + j] = j % 7 == 1 || j < 5;  // batch 1: holes, and key 0 padded
  }
  return m;
}

// Both reductions at once (what the front end's tee does): one merged request.
class Both : public AttentionSink {
 public:
  Both(AttentionSink& a, AttentionSink& b) : a_(a), b_(b) {}
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override {
    a_.write_rows(b, h, i0, n, rows);
    b_.write_rows(b, h, i0, n, rows);
  }
  DigestRequest digest_request() const override {
    return merge(a_.digest_request(), b_.digest_request());
  }
  void write_digests(std::size_t b, std::size_t h, std::size_t i0, const RowDigests& d) override {
    a_.write_digests(b, h, i0, d);
    b_.write_digests(b, h, i0, d);
  }

 private:
  AttentionSink &a_, &b_;
};

struct Inputs {
  Weights w;
  AttentionSpec spec;
  Tensor x;
  Mask pad;
  const Mask* kp = nullptr;
  std::size_t Tx = S;
};

Inputs inputs_for(const Case& c) {
  Inputs in{weights_for(c), spec_for(c), test::random_tensor({B, S, C}, 3), padding_for()};
  in.kp = c.padding ? &in.pad : nullptr;
  in.Tx = map_keys(in.w, in.spec, S);
  return in;
}

Tensor run(const Inputs& in, AttentionSink* sink, int threads) {
  ForwardOptions opt;
  opt.threads = threads;
  opt.attention = sink;
  Tensor ctx;
  forward(in.w, in.spec, in.x, in.kp, ctx, opt);
  return ctx;
}

constexpr float kTol = 2e-6f;  // weights are <= 1: float rounding of e / l, both ways

// The selection every case reduces: heads and queries out of order, with runs
// and gaps, the first rows (one key under causal) and the last.
MapSelection selection() {
  MapSelection sel;
  sel.heads = {3, 0, 1};
  sel.queries = {0, 1, 2, 127, 128, 129, 300, 299, 511, 512, 650, 698, 699};
  return sel;
}

}  // namespace

TEST_CASE("map digests: top-k and summary of the online pass equal the maps' reductions") {
  const MapSelection sel = selection();
  const std::size_t Hs = sel.heads.size(), Ls = sel.queries.size();
  // K = 8 fills part of one vector of the kept list (top_k_list.h), 37 three.
  for (const Case& c : cases())
    for (const auto& [threads, K] : {std::pair<int, std::size_t>{1, 8}, {3, 8}, {2, 37}}) {
      CAPTURE(c.name);
      CAPTURE(threads);
      CAPTURE(K);
      const Inputs in = inputs_for(c);
      // The full maps, to judge ties.
      TensorSink full(B, H, S, in.Tx);
      const Tensor ctx_maps = run(in, &full, threads);

      TopKSink top_online(B, Hs, Ls, in.Tx, K), top_rows(B, Hs, Ls, in.Tx, K);
      SummarySink sum_online(B, Hs, S, in.Tx, W, sel.queries),
          sum_rows(B, Hs, S, in.Tx, W, sel.queries);
      Both both_online(top_online, sum_online), both_rows(top_rows, sum_rows);
      SelectSink select_online(H, S, in.Tx, sel, both_online),
          select_rows(H, S, in.Tx, sel, both_rows);
      test::RowsOnly rows_only(select_rows);
      REQUIRE_FALSE(select_online.digest_request().rows);
      REQUIRE(rows_only.digest_request().rows);
      const Tensor ctx_online = run(in, &select_online, threads);
      const Tensor ctx_rows = run(in, &rows_only, threads);
      const Tensor ctx_stream = run(in, nullptr, threads);
      // The digest path is the streaming kernel: the same context as without maps.
      CHECK(test::compare(ctx_online, ctx_stream).max_abs == 0.0);
      CHECK(test::compare(ctx_rows, ctx_maps).max_abs == 0.0);

      std::size_t bad_values = 0, bad_keys = 0, swapped_ties = 0, bad_summary = 0;
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < Hs; ++h)
          for (std::size_t q = 0; q < Ls; ++q) {
            const float* p =
                full.maps.ptr() + ((b * H + sel.heads[h]) * S + sel.queries[q]) * in.Tx;
            const std::size_t at = ((b * Hs + h) * Ls + q) * K;
            for (std::size_t k = 0; k < K; ++k) {
              const float want = top_rows.values.data[at + k], got = top_online.values.data[at + k];
              const std::int64_t j_want = top_rows.indices[at + k],
                                 j_got = top_online.indices[at + k];
              bad_values += !(std::abs(got - want) <= 1e-5f * want + 1e-9f);
              if (j_got == j_want) continue;
              // Another key only where its weight ties the maps' k-th within rounding.
              ++swapped_ties;
              bad_keys +=
                  !(j_got >= 0 && std::size_t(j_got) < in.Tx && std::abs(p[j_got] - want) <= kTol);
            }
            const float* got = sum_online.rows().ptr() + ((b * Hs + h) * Ls + q) * kSummaryColumns;
            const float* want = sum_rows.rows().ptr() + ((b * Hs + h) * Ls + q) * kSummaryColumns;
            CAPTURE(b);
            CAPTURE(h);
            CAPTURE(q);
            bad_summary += !(std::abs(got[kEntropy] - want[kEntropy]) <= 2e-5f);
            bad_summary += !(std::abs(got[kFirstKey] - want[kFirstKey]) <= kTol);
            bad_summary += !(std::abs(got[kRecent] - want[kRecent]) <= 1e-5f);
            bad_summary += !(std::abs(got[kMeanDist] - want[kMeanDist]) <=
                             1e-5f * std::max(1.0f, want[kMeanDist]));
            const std::size_t a_got = std::size_t(got[kArgmax]),
                              a_want = std::size_t(want[kArgmax]);
            bad_summary += !(a_got == a_want || std::abs(p[a_got] - p[a_want]) <= kTol);
          }
      CHECK(bad_values == 0);
      CHECK(bad_keys == 0);
      CHECK(swapped_ties <= B * Hs * Ls * K / 100);  // ties within rounding are rare
      CHECK(bad_summary == 0);
      const auto h_online = sum_online.histograms(), h_rows = sum_rows.histograms();
      REQUIRE(h_online.size() == h_rows.size());
      for (std::size_t h = 0; h < h_rows.size(); ++h) {
        REQUIRE(h_online[h].size() == h_rows[h].size());
        for (std::size_t k = 0; k < h_rows[h].size(); ++k)
          CHECK(std::abs(h_online[h][k] - h_rows[h][k]) <= 1e-5 * std::max(1.0, h_rows[h][k]));
      }
    }
}

TEST_CASE("map digests: a fully masked row and K = T' keep keys 0.. in order, as the maps") {
  // Batch 1 pads every key: its rows are fully masked; K = T' takes every key.
  Case c{"all padded"};
  Inputs in = inputs_for(c);
  for (std::size_t j = 0; j < S; ++j) in.pad.data[S + j] = 1;
  in.kp = &in.pad;
  TopKSink online(B, H, S, S, S), rows(B, H, S, S, S);
  test::RowsOnly rows_only(rows);
  run(in, &online, 2);
  run(in, &rows_only, 2);
  std::size_t bad = 0, masked_in_order = 0;
  for (std::size_t e = 0; e < B * H * S * S; ++e) {
    bad += !(std::abs(online.values.data[e] - rows.values.data[e]) <= kTol);
  }
  for (std::size_t e = B * H * S * S / 2; e < B * H * S * S; ++e)  // batch 1
    masked_in_order += online.indices[e] == std::int64_t(e % S) && online.values.data[e] == 0.0f;
  CHECK(bad == 0);
  CHECK(masked_in_order == H * S * S);
}

TEST_CASE("map digests: a block with NaN scores (--allow-nonfinite) comes from the maps path") {
  Case c{"causal", true};
  Inputs in = inputs_for(c);
  for (std::size_t k = 0; k < C; ++k)
    in.x.data[(S + 200) * C + k] = std::nanf("");  // b 1, token 200
  TopKSink online(B, H, S, S, K), rows(B, H, S, S, K);
  test::RowsOnly rows_only(rows);
  ForwardOptions opt;
  opt.threads = 2;
  opt.check_overflow = false;
  Tensor ctx_online, ctx_rows;
  opt.attention = &online;
  forward(in.w, in.spec, in.x, nullptr, ctx_online, opt);
  opt.attention = &rows_only;
  forward(in.w, in.spec, in.x, nullptr, ctx_rows, opt);
  // Rows from token 200 on see its NaN key: their blocks are the maps path's
  // own (the same top-k bit for bit); the rows before it are online.
  std::size_t differ = 0, nan_rows = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < S; ++i) {
        const std::size_t at = ((b * H + h) * S + i) * K;
        const bool from_maps = b == 1 && i >= 128;  // the blocks holding rows >= 200
        for (std::size_t k = 0; k < K; ++k) {
          const float a = online.values.data[at + k], e = rows.values.data[at + k];
          differ += from_maps ? a != e || online.indices[at + k] != rows.indices[at + k]
                              : !(std::abs(a - e) <= 1e-5f * e + 1e-9f);
        }
      }
  for (std::size_t i = 0; i < S; ++i)
    nan_rows +=
        std::isnan(ctx_rows.data[(S + i) * H * D]) && std::isnan(ctx_online.data[(S + i) * H * D]);
  // NaN as torch's eager attention gives, both ways: every row of batch 1
  // (attn @ v meets v[200] in every row, a masked weight 0 times NaN).
  CHECK(nan_rows == S);
  CHECK(differ == 0);
}

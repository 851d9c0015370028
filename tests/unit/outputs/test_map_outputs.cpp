// Selected and reduced maps (attn/map_select.h, attn/map_reduce.h) against
// the slices and reductions of the full maps, computed here with plain loops
// from the maps a TensorSink collects. Each case runs the forward pass three
// times: the streaming path (no sink), the maps path with the full maps, and
// the maps path feeding the selection / reductions; the contexts must agree.
// The reductions here get the rows (test::RowsOnly); test_map_digests checks
// the streaming pass's digests against them.
//
// Letters: B batch, S sequence, C hidden, H heads, Hkv key/value heads,
// D head size; H', L', S' the selection.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/map_select.h"
#include "attn/map_summary.h"
#include "attn/map_topk.h"
#include "test_util.h"

using namespace attn;

namespace {

struct Case {
  std::string name;
  bool causal = false;
  std::size_t window = 0;
  bool padding = false;
  bool sinks = false;
  std::size_t Hkv = 4;  // of H = 4
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"plain"},
      {"causal", true},
      {"causal window 3", true, 3},
      {"window 2 both ways", false, 2},
      {"padding", false, 0, true},
      {"causal padding sinks", true, 0, true, true},
      {"GQA causal", true, 0, false, false, 2},
      {"MQA window padding", true, 4, true, false, 1},
  };
  return all;
}

constexpr std::size_t B = 2, S = 21, C = 16, H = 4, D = 4;

Weights weights_for(const Case& c) {
  Weights w;
  w.C = C;
  w.H = H;
  w.D = D;
  w.Hkv = c.Hkv;
  w.O = H * D;
  const std::size_t rows = w.geometry().qkv_rows();
  w.w_qkv = test::random_tensor({rows, C}, 7);
  for (float& v : w.w_qkv.data) v *= 0.8f;
  w.has_out_proj = false;
  if (c.sinks) w.sinks = test::random_tensor({H}, 9);
  return w;
}

AttentionSpec spec_for(const Case& c) {
  AttentionSpec s = AttentionSpec::plain(0.5f, c.causal);
  if (c.window) s.sliding_window = c.window;
  s.sinks = c.sinks;
  return s;
}

Mask padding_for(const Case& c) {
  Mask m;
  m.shape = {B, S};
  m.data.assign(B * S, 0);
  if (c.padding)
    for (std::size_t j = 0; j < S; ++j) {
      m.data[j] = j >= S - 3;      // batch 0: right padding
      m.data[S + j] = j % 4 == 1;  // batch 1: holes
    }
  return m;
}

// One case's three runs: full maps (B, H, S, S), and the contexts of the
// streaming path and of a maps-path run feeding `sink` (when not null).
struct Runs {
  Tensor maps, ctx_stream, ctx_sink;
};

Runs run_case(const Case& c, AttentionSink* sink, int threads) {
  const Weights w = weights_for(c);
  const AttentionSpec spec = spec_for(c);
  const Tensor x = test::random_tensor({B, S, C}, 3);
  const Mask pad = padding_for(c);
  const Mask* kp = c.padding ? &pad : nullptr;
  Runs r;
  ForwardOptions opt;
  opt.threads = threads;
  forward(w, spec, x, kp, r.ctx_stream, opt);
  TensorSink full(B, H, S);
  opt.attention = &full;
  Tensor ctx_full;
  forward(w, spec, x, kp, ctx_full, opt);
  r.maps = std::move(full.maps);
  if (sink) {
    opt.attention = sink;
    forward(w, spec, x, kp, r.ctx_sink, opt);
    CHECK(test::compare(r.ctx_sink, r.ctx_stream).relative() <= 1e-5);
  }
  return r;
}

float at(const Tensor& maps, std::size_t b, std::size_t h, std::size_t i, std::size_t j) {
  return maps.data[((b * H + h) * S + i) * S + j];
}

}  // namespace

TEST_CASE("map_select: heads, queries and keys equal the slices of the full maps") {
  MapSelection sel;
  sel.heads = {3, 0, 2};
  sel.queries = {0, 1, 2, 9, 5, 18, 19, 20};  // runs and a gap, out of order
  sel.keys = {20, 0, 4, 5, 6, 13};
  for (const Case& c : cases())
    for (int threads : {1, 3}) {
      CAPTURE(c.name);
      CAPTURE(threads);
      TensorSink picked(B, sel.heads.size(), sel.queries.size(), sel.keys.size());
      SelectSink select(H, S, S, sel, picked);
      CHECK(select.heads() == 3);
      CHECK(select.queries() == 8);
      CHECK(select.keys() == 6);
      const Runs r = run_case(c, &select, threads);
      std::size_t differ = 0;
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < sel.heads.size(); ++h)
          for (std::size_t i = 0; i < sel.queries.size(); ++i)
            for (std::size_t j = 0; j < sel.keys.size(); ++j) {
              const float want = at(r.maps, b, sel.heads[h], sel.queries[i], sel.keys[j]);
              const float got =
                  picked.maps.data[((b * sel.heads.size() + h) * sel.queries.size() + i) *
                                       sel.keys.size() +
                                   j];
              differ += want != got;
            }
      CHECK(differ == 0);
    }
}

TEST_CASE("map_select: one axis picked leaves the others whole") {
  const Case& c = cases()[1];
  for (int axis = 0; axis < 3; ++axis) {
    CAPTURE(axis);
    MapSelection sel;
    if (axis == 0) sel.heads = {1};
    if (axis == 1) sel.queries = {S - 2, S - 1};  // last:2
    if (axis == 2) sel.keys = {0};
    const std::size_t Hs = axis == 0 ? 1 : H, Ls = axis == 1 ? 2 : S, Ts = axis == 2 ? 1 : S;
    TensorSink picked(B, Hs, Ls, Ts);
    SelectSink select(H, S, S, sel, picked);
    const Runs r = run_case(c, &select, 2);
    const auto hs = selected_or_all(sel.heads, H), qs = selected_or_all(sel.queries, S),
               ks = selected_or_all(sel.keys, S);
    std::size_t differ = 0;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < Hs; ++h)
        for (std::size_t i = 0; i < Ls; ++i)
          for (std::size_t j = 0; j < Ts; ++j)
            differ += at(r.maps, b, hs[h], qs[i], ks[j]) !=
                      picked.maps.data[((b * Hs + h) * Ls + i) * Ts + j];
    CHECK(differ == 0);
  }
}

namespace {

// numpy's argsort(-row, kind="stable")[:K]: decreasing, ties by lower index.
std::vector<std::size_t> stable_top(const float* row, std::size_t n, std::size_t K) {
  std::vector<std::size_t> idx(n);
  std::iota(idx.begin(), idx.end(), std::size_t(0));
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return row[a] > row[b]; });
  idx.resize(K);
  return idx;
}

}  // namespace

TEST_CASE("map_topk: one row, ties to the lower key index") {
  const std::vector<float> row = {0.1f, 0.3f, 0.0f, 0.3f, 0.2f, 0.0f, 0.1f};
  for (std::size_t K = 1; K <= row.size(); ++K) {
    CAPTURE(K);
    std::vector<float> v(K);
    std::vector<std::int64_t> idx(K);
    top_k_row(row.data(), row.size(), K, v.data(), idx.data());
    const auto want = stable_top(row.data(), row.size(), K);
    for (std::size_t k = 0; k < K; ++k) {
      CHECK(idx[k] == std::int64_t(want[k]));
      CHECK(v[k] == row[want[k]]);
    }
  }
  // K = 4: 0.3 (1), 0.3 (3), 0.2 (4), 0.1 (0), never the later 0.1 (6).
  std::vector<float> v(4);
  std::vector<std::int64_t> idx(4);
  top_k_row(row.data(), row.size(), 4, v.data(), idx.data());
  CHECK(idx == std::vector<std::int64_t>{1, 3, 4, 0});
  const std::vector<float> zeros(5, 0.0f);  // a fully masked row: keys 0.. in order
  top_k_row(zeros.data(), zeros.size(), 3, v.data(), idx.data());
  CHECK(std::vector<std::int64_t>(idx.begin(), idx.begin() + 3) ==
        std::vector<std::int64_t>{0, 1, 2});
}

TEST_CASE("map_topk: values and indices equal the stable sort of the full maps' rows") {
  for (const Case& c : cases())
    for (std::size_t K : {std::size_t(1), std::size_t(5), S}) {
      CAPTURE(c.name);
      CAPTURE(K);
      // Through a selection of heads and queries (keys are never picked for top-k).
      MapSelection sel;
      sel.heads = {2, 1};
      sel.queries = {20, 0, 1, 2, 11};
      TopKSink topk(B, 2, 5, S, K);
      SelectSink select(H, S, S, sel, topk);
      test::RowsOnly rows_only(
          select);  // the maps path's reduction (test_map_digests: the online one)
      const Runs r = run_case(c, &rows_only, 3);
      std::size_t differ = 0;
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < 2; ++h)
          for (std::size_t i = 0; i < 5; ++i) {
            const float* row = r.maps.ptr() + ((b * H + sel.heads[h]) * S + sel.queries[i]) * S;
            const auto want = stable_top(row, S, K);
            const std::size_t at = ((b * 2 + h) * 5 + i) * K;
            for (std::size_t k = 0; k < K; ++k) {
              differ += topk.indices[at + k] != std::int64_t(want[k]);
              differ += topk.values.data[at + k] != row[want[k]];
            }
          }
      CHECK(differ == 0);
    }
}

TEST_CASE("map_summary: distance bins are 0, then powers of two") {
  CHECK(distance_bins(0) == 1);
  CHECK(distance_bins(1) == 2);  // {0}, [1, 2)
  CHECK(distance_bins(2) == 3);  // [2, 4)
  CHECK(distance_bins(3) == 3);
  CHECK(distance_bins(4) == 4);   // [4, 8)
  CHECK(distance_bins(20) == 6);  // [16, 32)
}

TEST_CASE("map_summary: the columns and histograms equal the reductions of the full maps") {
  const std::size_t W = 4;
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    MapSelection sel;
    sel.heads = {3, 1};
    sel.queries = {0, 1, 7, 20, 19};
    SummarySink summary(B, 2, S, S, W, sel.queries);
    SelectSink select(H, S, S, sel, summary);
    test::RowsOnly rows_only(
        select);  // the maps path's reduction (test_map_digests: the online one)
    const Runs r = run_case(c, &rows_only, 3);
    std::vector<std::vector<double>> want_hist(2, std::vector<double>(distance_bins(S - 1), 0.0));
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < 2; ++h)
        for (std::size_t k = 0; k < sel.queries.size(); ++k) {
          const std::size_t i = sel.queries[k];
          const float* p = r.maps.ptr() + ((b * H + sel.heads[h]) * S + i) * S;
          double total = 0, plogp = 0, recent = 0, dist = 0;
          std::size_t argmax = 0;
          for (std::size_t j = 0; j < S; ++j) {
            total += p[j];
            if (p[j] > 0) plogp += p[j] * std::log(double(p[j]));
            if (j <= i && j + W > i) recent += p[j];
            const std::size_t d = i > j ? i - j : j - i;
            dist += p[j] * double(d);
            if (p[j] > p[argmax]) argmax = j;
            std::size_t bin = 0;
            while (d >= (std::size_t(1) << bin)) ++bin;  // 0 -> 0, 1 -> 1, 2..3 -> 2, ...
            want_hist[h][bin] += p[j];
          }
          double entropy = total > 0 ? -plogp : 0;
          if (total > 0 && total < 0.999) entropy = entropy / total + std::log(total);
          const float* got = summary.rows().ptr() + ((b * 2 + h) * 5 + k) * kSummaryColumns;
          CAPTURE(b);
          CAPTURE(h);
          CAPTURE(i);
          CHECK(std::abs(got[kEntropy] - entropy) <= 1e-5);
          CHECK(got[kFirstKey] == p[0]);
          CHECK(std::abs(got[kRecent] - recent) <= 1e-6);
          CHECK(std::abs(got[kMeanDist] - (total > 0 ? dist / total : 0.0)) <= 1e-5 * S);
          CHECK(got[kArgmax] == float(argmax));
        }
    const auto hist = summary.histograms();
    REQUIRE(hist.size() == 2);
    for (std::size_t h = 0; h < 2; ++h) {
      REQUIRE(hist[h].size() == want_hist[h].size());
      for (std::size_t k = 0; k < hist[h].size(); ++k)
        CHECK(std::abs(hist[h][k] - want_hist[h][k]) <= 1e-9);
    }
  }
}

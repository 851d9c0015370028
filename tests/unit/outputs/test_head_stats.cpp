// --head-stats (attn/head_stats.h) against the per-head means of row
// reductions of the full maps computed by float64 loops here: on the
// streaming path (the online pass's head columns, kernels/row_digest.cpp)
// and the maps path (rows forced by a wrapper), with causal, windows,
// padding, sinks, GQA, ALiBi, torch MHA's extra keys and --heads/--queries
// selections; the same numbers bit for bit for 1, 2 and 3 threads.
//
// Letters: B batch, S sequence, C hidden, H heads, Hkv key/value heads, D
// head size, T' keys of a row, N sink keys, R recent keys.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/head_stats.h"
#include "attn/map_select.h"
#include "streamed_cases.h"
#include "test_util.h"

using namespace attn;

namespace {

using namespace test::streamed;

// The table by float64 loops over full maps (B, H, L, T'), T key positions:
// heads[h'] and queries[i'] select (empty = all).
std::vector<HeadStatsRow> reference_table(const Tensor& maps, std::size_t T,
                                          std::vector<std::size_t> heads,
                                          std::vector<std::size_t> queries, std::size_t N,
                                          std::size_t R) {
  const std::size_t Hm = maps.shape[1], L = maps.shape[2], Tx = maps.shape[3];
  heads = selected_or_all(heads, Hm);
  queries = selected_or_all(queries, L);
  std::vector<HeadStatsRow> out;
  for (std::size_t h : heads) {
    HeadStatsRow row;
    row.head = h;
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i : queries) {
        const float* p = maps.ptr() + ((b * Hm + h) * L + i) * Tx;
        double total = 0, sink = 0, recent = 0, ent = 0, dist = 0, pos = 0;
        for (std::size_t j = 0; j < Tx; ++j) {
          const double w = p[j];
          total += w;
          if (w > 0) ent -= w * std::log(w);
          if (j >= T) continue;  // the extra columns have no position
          pos += w;
          dist += w * double(i > j ? i - j : j - i);
          if (j < N) sink += w;
          if (j >= N && j <= i && j + R > i) recent += w;
        }
        if (!(total > 0)) continue;
        if (total < 0.999) ent = ent / total + std::log(total);
        ++row.rows;
        row.sink += sink;
        row.recent += recent;
        row.entropy += ent;
        row.distance += pos > 0 ? dist / pos : 0.0;
      }
    const double n = double(std::max<std::size_t>(row.rows, 1));
    row.sink /= n, row.recent /= n, row.entropy /= n, row.distance /= n;
    row.other = 1 - row.sink - row.recent;
    out.push_back(row);
  }
  return out;
}

std::size_t count_bad(const std::vector<HeadStatsRow>& got, const std::vector<HeadStatsRow>& want) {
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0;
  for (std::size_t h = 0; h < want.size(); ++h) {
    const HeadStatsRow &g = got[h], &w = want[h];
    CAPTURE(h);
    bad += g.head != w.head || g.rows != w.rows;
    bad += !(std::abs(g.sink - w.sink) <= 2e-6);
    bad += !(std::abs(g.recent - w.recent) <= 2e-6);
    bad += !(std::abs(g.other - w.other) <= 4e-6);
    bad += !(std::abs(g.entropy - w.entropy) <= 2e-5);
    bad += !(std::abs(g.distance - w.distance) <= 1e-5 * std::max(1.0, w.distance));
  }
  return bad;
}

bool same(const std::vector<HeadStatsRow>& a, const std::vector<HeadStatsRow>& b) {
  bool eq = a.size() == b.size();
  for (std::size_t h = 0; eq && h < a.size(); ++h)
    eq = a[h].sink == b[h].sink && a[h].recent == b[h].recent && a[h].entropy == b[h].entropy &&
         a[h].distance == b[h].distance && a[h].rows == b[h].rows;
  return eq;
}

}  // namespace

TEST_CASE("head stats: both paths equal the float64 reductions of the full maps") {
  MapSelection picked;
  picked.heads = {3, 0, 1};
  picked.queries = {0, 1, 2, 127, 128, 129, 300, 299, 511, 512, 650, 698, 699};
  for (const Case& c : cases())
    for (const bool select : {false, true}) {
      CAPTURE(c.name);
      CAPTURE(select);
      const Weights w = weights_for(c);
      const AttentionSpec spec = spec_for(c);
      const Tensor x = test::random_tensor({B, S, C}, 3);
      const Mask pad = padding_for();
      const Mask* kp = c.padding ? &pad : nullptr;
      const std::size_t Tx = map_keys(w, spec, S);
      const MapSelection sel = select ? picked : MapSelection{};
      const std::size_t Hs = select ? sel.heads.size() : H;
      const std::size_t N = select ? 1 : 4, R = select ? 300 : 64;
      const auto positions = selected_or_all(sel.queries, S);
      const auto heads = selected_or_all(sel.heads, H);

      TensorSink full(B, H, S, Tx);
      run(w, spec, x, kp, &full, 2);
      const auto want = reference_table(full.maps, S, sel.heads, sel.queries, N, R);

      std::vector<HeadStatsRow> first;
      for (const int threads : {1, 2, 3}) {
        CAPTURE(threads);
        HeadStatsSink online(B, Hs, S, Tx, N, R, positions), rows(B, Hs, S, Tx, N, R, positions);
        SelectSink select_online(H, S, Tx, sel, online), select_rows(H, S, Tx, sel, rows);
        test::RowsOnly rows_only(select_rows);
        REQUIRE_FALSE(select_online.digest_request().rows);
        run(w, spec, x, kp, &select_online, threads);
        run(w, spec, x, kp, &rows_only, threads);
        const auto got_online = online.result(0, heads), got_rows = rows.result(0, heads);
        CHECK(count_bad(got_online, want) == 0);
        CHECK(count_bad(got_rows, want) == 0);
        if (threads == 1) first = got_online;
        CHECK(same(got_online, first));
      }
    }
}

TEST_CASE("head stats: the csv and json tables") {
  std::vector<HeadStatsRow> rows(2);
  rows[0] = {3, 0, 0.5, 0.25, 0.25, 1.5, 2.0, 10};
  rows[1] = {3, 7, 0.125, 0.5, 0.375, 0.5, 1.0, 10};
  CHECK(head_stats_csv(rows) ==
        "layer,head,sink,recent,other,entropy,distance\n3,0,0.5,0.25,0.25,1.5,2\n"
        "3,7,0.125,0.5,0.375,0.5,1\n");
}

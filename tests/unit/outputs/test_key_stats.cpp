// --key-stats (attn/key_stats.h) against the column reductions of the full
// maps computed by float64 loops here: on the streaming path (each tile's
// exponentials rescaled at the block's end, kernels/key_sums.cpp) and the maps path (rows forced by
// a wrapper), with causal, windows, padding, sinks, GQA, ALiBi, torch MHA's extra keys and
// --heads/--queries selections, on shapes of several query blocks and key tiles (S = 700: 6 blocks
// of 128 rows, 2 tiles of 512 keys); the same numbers bit for bit for 1, 2 and 3 threads.
//
// Letters: B batch, S sequence, C hidden, H heads, Hkv key/value heads, D
// head size, T' keys of a row, W voting rows, K pooling kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/key_stats.h"
#include "attn/map_select.h"
#include "reference.h"
#include "streamed_cases.h"
#include "test_util.h"

using namespace attn;

namespace {

using namespace test::streamed;

// The statistics by float64 loops over full maps (B, Hm, L, T'): heads[h']
// and queries[i'] select (empty = all); the last W of the selected rows vote;
// max_pool1d(votes, K, 1, K // 2). Returns (B, H', T', 4).
std::vector<double> reference_stats(const Tensor& maps, std::vector<std::size_t> heads,
                                    std::vector<std::size_t> queries, std::size_t W,
                                    std::size_t K) {
  const std::size_t Hm = maps.shape[1], L = maps.shape[2], T = maps.shape[3];
  heads = selected_or_all(heads, Hm);
  queries = selected_or_all(queries, L);
  const std::size_t Hs = heads.size(), Ls = queries.size();
  std::vector<double> out(B * Hs * T * 4, 0.0);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < Hs; ++h) {
      double* o = out.data() + (b * Hs + h) * T * 4;
      for (std::size_t q = 0; q < Ls; ++q) {
        const float* p = maps.ptr() + ((b * Hm + heads[h]) * L + queries[q]) * T;
        for (std::size_t j = 0; j < T; ++j) {
          o[j * 4 + 0] += double(p[j]);
          o[j * 4 + 1] = std::max(o[j * 4 + 1], double(p[j]));
          if (q + W >= Ls) o[j * 4 + 2] += double(p[j]);
        }
      }
      for (std::size_t j = 0; j < T; ++j) {
        double m = -1.0;
        for (std::ptrdiff_t c = std::ptrdiff_t(j) - std::ptrdiff_t(K / 2);
             c <= std::ptrdiff_t(j + K / 2); ++c)
          if (c >= 0 && c < std::ptrdiff_t(T)) m = std::max(m, o[std::size_t(c) * 4 + 2]);
        o[j * 4 + 3] = m;
      }
    }
  return out;
}

// Cells of got (B, H', T', 4) off the reference by more than float rounding
// of the weights summed (each weight within about 1e-7 of its value).
std::size_t count_bad(const Tensor& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0;
  double worst = 0.0;
  for (std::size_t e = 0; e < want.size(); ++e) {
    const double err = std::abs(double(got.data[e]) - want[e]);
    worst = std::max(worst, err);
    bad += !(err <= 1e-7 + 2e-6 * want[e]);
  }
  if (bad) MESSAGE("max abs error " << worst);
  return bad;
}

bool same_bits(const Tensor& a, const Tensor& b) { return a.data == b.data && a.shape == b.shape; }

}  // namespace

TEST_CASE("key stats: both paths equal the float64 column reductions of the full maps") {
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
      const std::size_t Hs = select ? sel.heads.size() : H, Ls = select ? sel.queries.size() : S;
      const std::size_t W = select ? 5 : 40, K = select ? 3 : 7;

      TensorSink full(B, H, S, Tx);
      run(w, spec, x, kp, &full, 2);
      const std::vector<double> want = reference_stats(full.maps, sel.heads, sel.queries, W, K);

      Tensor first;
      for (const int threads : {1, 2, 3}) {
        CAPTURE(threads);
        KeyStatsSink online(B, Hs, Ls, Tx, W, K), rows(B, Hs, Ls, Tx, W, K);
        SelectSink select_online(H, S, Tx, sel, online), select_rows(H, S, Tx, sel, rows);
        test::RowsOnly rows_only(select_rows);
        REQUIRE_FALSE(select_online.digest_request().rows);
        run(w, spec, x, kp, &select_online, threads);
        run(w, spec, x, kp, &rows_only, threads);
        const Tensor got_online = online.result(), got_rows = rows.result();
        CHECK(got_online.shape == std::vector<std::size_t>{B, Hs, Tx, 4});
        CHECK(count_bad(got_online, want) == 0);
        CHECK(count_bad(got_rows, want) == 0);
        // The same sums whatever the threads did.
        if (threads == 1) first = got_online;
        CHECK(same_bits(got_online, first));
      }
    }
}

TEST_CASE("key stats: equal the reductions of the float64 reference attention") {
  // tests/support's reference computes every map in double: causal, padding
  // and GQA are the score terms it has.
  for (const Case& c : {Case{"plain"}, Case{"causal", true}, Case{"causal padding", true, 0, true},
                        Case{"GQA causal padding", true, 0, true, false, 2}}) {
    CAPTURE(c.name);
    const Weights w = weights_for(c);
    const AttentionSpec spec = spec_for(c);
    const Tensor x = test::random_tensor({B, S, C}, 3);
    const Mask pad = padding_for();
    const Mask* kp = c.padding ? &pad : nullptr;
    const ref::Result r = ref::attention(ref::from_weights(w), x, kp, spec.scale, c.causal);
    const std::vector<double> want = reference_stats(r.attention, {}, {}, 32, 7);
    KeyStatsSink online(B, H, S, S, 32, 7);
    run(w, spec, x, kp, &online, 2);
    CHECK(count_bad(online.result(), want) == 0);
  }
}

TEST_CASE("key stats: a window past the rows makes every row vote; K = 1 pools nothing") {
  const Case c{"causal", true};
  const Weights w = weights_for(c);
  const AttentionSpec spec = spec_for(c);
  const Tensor x = test::random_tensor({B, S, C}, 3);
  KeyStatsSink stats(B, H, S, S, 5000, 1);
  run(w, spec, x, nullptr, &stats, 2);
  const Tensor t = stats.result();
  std::size_t differ = 0;
  for (std::size_t e = 0; e < B * H * S; ++e)
    differ += t.data[e * 4 + 2] != t.data[e * 4 + 0] || t.data[e * 4 + 3] != t.data[e * 4 + 2];
  CHECK(differ == 0);
  // Causal: key 0 has every row's weight, the last key only the last row's.
  CHECK(t.data[0] > t.data[(S - 1) * 4]);
}

TEST_CASE("key_stats.csv: each number as printf's %zu and %.9g write it") {
  // Floats of every magnitude and the edge values (signed zeros, subnormals, the largest and
  // least, infinities, NaNs of both signs), in a table of 2 batches x 3 heads x 50 keys.
  std::vector<float> values = {
      0.0f,           -0.0f,    1.0f,     -1.0f,     0.1f, 1e-45f, -1e-40f,      1.17549435e-38f,
      3.40282347e38f, -3.4e38f, INFINITY, -INFINITY, NAN,  -NAN,   123456789.0f, 1e7f,
      9.99999e-5f,    1e-4f};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-44, 38);
  while (values.size() < 2 * 3 * 50 * 4)
    values.push_back(mantissa(rng) * std::pow(10.0f, float(exponent(rng))));
  Tensor stats({2, 3, 50, 4}, 0.0f);
  std::copy(values.begin(), values.end(), stats.data.begin());
  const std::vector<std::size_t> heads = {7, 0, 123456};
  std::string want = "batch,head,key";
  for (const std::string& c : key_stats_column_names()) want += "," + c;
  want += "\n";
  char line[256];
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t h = 0; h < 3; ++h)
      for (std::size_t j = 0; j < 50; ++j) {
        const float* v = stats.ptr() + ((b * 3 + h) * 50 + j) * 4;
        std::snprintf(line, sizeof line, "%zu,%zu,%zu,%.9g,%.9g,%.9g,%.9g\n", b, heads[h], j,
                      double(v[0]), double(v[1]), double(v[2]), double(v[3]));
        want += line;
      }
  CHECK(key_stats_csv(stats, heads) == want);
}

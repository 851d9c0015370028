// The sink chain built from a request (attn/sink_chain.h) against the full
// maps of the same forward pass, computed here with plain loops: the maps it
// keeps are the selection of the mean over heads, --stats sees every head,
// and under --keys the reductions still see whole rows.
//
// Letters: B batch, S sequence, C hidden, H heads, D head size; H', L', S'
// the selection.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "attn/attention.h"
#include "attn/digest.h"
#include "attn/sink_chain.h"
#include "attn/stats.h"
#include "test_util.h"

using namespace attn;

namespace {

constexpr std::size_t B = 2, S = 13, C = 16, H = 4, D = 4;

Weights small_weights() {
  Weights w;
  w.C = C;
  w.H = H;
  w.D = D;
  w.Hkv = H;
  w.O = H * D;
  w.w_qkv = test::random_tensor({w.geometry().qkv_rows(), C}, 5);
  w.has_out_proj = false;
  return w;
}

// The full maps (B, H, S, S) of a causal run.
Tensor full_maps(const Weights& w, const Tensor& x) {
  TensorSink full(B, H, S);
  ForwardOptions opt;
  opt.attention = &full;
  Tensor ctx;
  forward(w, AttentionSpec::plain(0.5f, true), x, nullptr, ctx, opt);
  return std::move(full.maps);
}

// The same run with its maps handed to `head`.
void run_through(const Weights& w, const Tensor& x, AttentionSink* head) {
  ForwardOptions opt;
  opt.attention = head;
  opt.threads = 2;
  Tensor ctx;
  forward(w, AttentionSpec::plain(0.5f, true), x, nullptr, ctx, opt);
}

float at(const Tensor& maps, std::size_t b, std::size_t h, std::size_t i, std::size_t j) {
  return maps.data[((b * H + h) * S + i) * S + j];
}

}  // namespace

TEST_CASE("sink_chain: nothing asked, nothing listens") {
  SinkRequest want;
  want.B = B;
  want.H = H;
  want.L = want.T = want.keys = S;
  CHECK_FALSE(want.listens());
  SinkChain chain(want);
  CHECK(chain.head() == nullptr);
  CHECK(chain.intermediates() == nullptr);
  want.summary = true;
  CHECK(want.listens());
}

TEST_CASE("sink_chain: the kept maps are the selected mean over heads; --stats sees every head") {
  const Weights w = small_weights();
  const Tensor x = test::random_tensor({B, S, C}, 3);
  const Tensor maps = full_maps(w, x);

  SinkRequest want;
  want.B = B;
  want.H = H;
  want.L = want.T = want.keys = S;
  want.average_heads = true;
  want.selection.queries = {12, 0, 5};
  want.selection.keys = {0, 4, 5};
  want.keep_all_maps = true;
  want.stats = true;
  SinkChain chain(want);
  REQUIRE(chain.head() != nullptr);
  run_through(w, x, chain.head());
  chain.finish();

  const Tensor kept = chain.take_maps();  // (B, 1, 3, 3)
  REQUIRE(kept.shape == std::vector<std::size_t>{B, 1, 3, 3});
  double worst = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t j = 0; j < 3; ++j) {
        double mean = 0;
        for (std::size_t h = 0; h < H; ++h)
          mean += at(maps, b, h, want.selection.queries[i], want.selection.keys[j]);
        mean /= H;
        worst = std::max(worst, std::abs(kept.data[(b * 3 + i) * 3 + j] - mean));
      }
  CHECK(worst <= 1e-6);

  const std::vector<HeadStats> got = chain.stats(), expect = attention_stats(maps);
  REQUIRE(got.size() == H);
  for (std::size_t h = 0; h < H; ++h) {
    CAPTURE(h);
    CHECK(got[h].rows == expect[h].rows);
    CHECK(got[h].mean_entropy == doctest::Approx(expect[h].mean_entropy).epsilon(1e-9));
    CHECK(got[h].mean_max_weight == doctest::Approx(expect[h].mean_max_weight).epsilon(1e-9));
  }
}

TEST_CASE("sink_chain: under --keys the maps get the picked columns, the summary whole rows") {
  const Weights w = small_weights();
  const Tensor x = test::random_tensor({B, S, C}, 4);
  const Tensor maps = full_maps(w, x);

  SinkRequest want;
  want.B = B;
  want.H = H;
  want.L = want.T = want.keys = S;
  want.selection.heads = {2, 1};
  want.selection.keys = {3};
  want.keep_all_maps = true;
  want.summary = true;
  SinkChain chain(want);
  run_through(w, x, chain.head());
  chain.finish();

  const Tensor kept = chain.take_maps();  // (B, 2, S, 1)
  REQUIRE(kept.shape == std::vector<std::size_t>{B, 2, S, 1});
  REQUIRE(chain.summary != nullptr);
  const Tensor& rows = chain.summary->rows();  // (B, 2, S, kSummaryColumns)
  std::size_t differ = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t i = 0; i < S; ++i) {
        const std::size_t hh = want.selection.heads[h];
        differ += kept.data[(b * 2 + h) * S + i] != at(maps, b, hh, i, 3);
        std::size_t argmax = 0;  // over every key: the summary saw the whole row
        for (std::size_t j = 1; j < S; ++j)
          if (at(maps, b, hh, i, j) > at(maps, b, hh, i, argmax)) argmax = j;
        differ += rows.data[((b * 2 + h) * S + i) * kSummaryColumns + kArgmax] != float(argmax);
      }
  CHECK(differ == 0);
}

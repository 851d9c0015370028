// Random mixes of the score features (causal, sliding window, attention
// chunks, softcap, ALiBi, rope, sinks, torch MHA's extra keys, padding, GQA
// and MQA) at random sizes, against the plain-loop reference through both
// kernels (score_cases.h). The fixed cases of test_attention_scores take the
// features one or two at a time; the kernels' fast paths (their own register
// tiles, the causal tiles' unset entries past the diagonal, the overflow check
// on the row max's pass, the panels of the projection) meet them here
// together, at head sizes of every panel width and lengths across the query
// blocks (kernels::kQueryBlock rows) and key tiles (kernels::kKeyBlock keys):
// a third of the longer layers past one key tile.
//
// Letters: B batch, L queries, C hidden, H heads, Hkv key/value heads, D head
// size, O out size.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "attn/positions.h"
#include "kernels/kernels.h"
#include "score_cases.h"

using namespace attn;
using namespace attn::test::scores;

namespace {

// A layer with every feature drawn at random from `rng`.
Case random_case(std::mt19937& rng, unsigned seed) {
  const auto pick = [&](std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
  };
  const auto one_in = [&](std::size_t n) { return pick(1, n) == 1; };
  static const std::size_t kHeadSizes[] = {2, 4, 6, 8, 16, 24, 32, 48, 64, 96, 128};
  Case c;
  c.seed = seed;
  c.B = pick(1, 2);
  constexpr std::size_t kTile = kernels::kKeyBlock;
  c.L = one_in(3) ? pick(1, 12) : one_in(3) ? pick(kTile + 1, kTile + 300) : pick(13, kTile);
  c.D = kHeadSizes[pick(0, std::size(kHeadSizes) - 1)];
  c.H = pick(1, 4) * (one_in(2) ? 2 : 1);
  const std::size_t group = pick(1, c.H);
  c.Hkv = c.H % group == 0 ? c.H / group : c.H;
  c.C = pick(4, 40);
  c.O = pick(1, 24);
  c.bias = one_in(2);
  c.spec.scale = 1.0 / std::sqrt(double(c.D));
  c.spec.causal = one_in(2);
  if (one_in(4)) c.spec.sliding_window = std::int64_t(pick(1, 300));
  if (c.spec.causal && one_in(5)) c.spec.attention_chunk = std::int64_t(pick(1, 200));
  if (one_in(5)) c.spec.softcap = double(pick(1, 50));
  if (one_in(5)) c.spec.alibi = AlibiSpec{8.0, alibi_slopes(c.H, 8.0)};
  if (c.D % 2 == 0 && one_in(5)) {
    RopeSpec rope;
    rope.rotary_dim = std::int64_t(c.D);
    c.spec.rope = rope;
  }
  c.sinks = one_in(5);
  if (!c.spec.alibi && one_in(6)) {  // torch MHA's extra keys: no grouping there
    c.bias_kv = one_in(2);
    c.spec.add_zero_attn = !c.bias_kv || one_in(2);
    c.Hkv = 0;
  }
  if (one_in(3)) {  // right, left or scattered padding, a different amount per batch row
    Mask m;
    m.shape = {c.B, c.L};
    m.data.assign(c.B * c.L, 0);
    const std::size_t kind = pick(0, 2);
    for (std::size_t b = 0; b < c.B; ++b) {
      const std::size_t k = pick(0, c.L);
      for (std::size_t j = 0; j < c.L; ++j)
        m.data[b * c.L + j] = kind == 0 ? j >= c.L - k : kind == 1 ? j < k : one_in(4);
    }
    c.padding = m;
  }
  return c;
}

}  // namespace

TEST_CASE("attention: random mixes of the score features match the reference, both kernels") {
  std::mt19937 rng(2026);  // fixed: the same 120 layers every run
  // How many layers take each feature, and how many take three or more at once.
  std::size_t causal = 0, window = 0, chunk = 0, softcap = 0, alibi = 0, rope = 0, sinks = 0,
              extra = 0, padding = 0, grouped = 0, long_rows = 0, mixes = 0;
  for (unsigned i = 0; i < 120; ++i) {
    const Case c = random_case(rng, 7 * i + 3);
    const std::size_t features = c.spec.causal + bool(c.spec.sliding_window) +
                                 bool(c.spec.attention_chunk) + bool(c.spec.softcap) +
                                 bool(c.spec.alibi) + bool(c.spec.rope) + c.sinks +
                                 (c.bias_kv || c.spec.add_zero_attn) + bool(c.padding);
    causal += c.spec.causal, window += bool(c.spec.sliding_window);
    chunk += bool(c.spec.attention_chunk), softcap += bool(c.spec.softcap);
    alibi += bool(c.spec.alibi), rope += bool(c.spec.rope), sinks += c.sinks;
    extra += c.bias_kv || c.spec.add_zero_attn, padding += bool(c.padding);
    grouped += c.Hkv != 0 && c.Hkv<c.H, long_rows += c.L> kernels::kKeyBlock,
        mixes += features >= 3;
    CAPTURE(i);
    CAPTURE(c.spec.causal);
    CAPTURE(c.spec.sliding_window.value_or(0));
    CAPTURE(c.spec.attention_chunk.value_or(0));
    CAPTURE(c.spec.softcap.value_or(0.0));
    CAPTURE(bool(c.spec.alibi));
    CAPTURE(bool(c.spec.rope));
    CAPTURE(c.sinks);
    CAPTURE(c.bias_kv);
    CAPTURE(c.spec.add_zero_attn);
    CAPTURE(bool(c.padding));
    check_case(c, int(1 + i % 3));
  }
  // The sweep reaches every feature, GQA, rows past one key tile, and mixes of them.
  for (const std::size_t n : {causal, window, chunk, softcap, alibi, rope, sinks, extra, padding,
                              grouped, long_rows, mixes})
    CHECK(n >= 5);
}

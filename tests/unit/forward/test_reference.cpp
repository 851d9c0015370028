// The reference attention itself (tests/support/reference.h): a case small
// enough to work out by hand, and grouped-query attention against the same
// layer with its K/V heads repeated (Hugging Face's repeat_kv).
//
// Letters: B batch, S sequence, C hidden, H query heads, Hkv key/value heads,
// D head size, O out size.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>
#include <xtensor/xrandom.hpp>
#include <xtensor/xview.hpp>

#include "reference.h"
#include "test_util.h"

namespace attn {
namespace {

// H = 2 query heads of size D = 1 sharing one KV head, C = 2, O = 1:
//   q_head0 = x0, q_head1 = x1, k = x0 + x1, v = x0 - x1 + 0.5,
//   out = y_head0 + 2 y_head1 + 0.25.
ref::RefLayer hand_layer() {
  ref::RefLayer l;
  l.H = 2, l.Hkv = 1, l.D = 1;
  l.w_qkv = {{1, 0}, {0, 1}, {1, 1}, {1, -1}};  // ((H + 2*Hkv)*D, C)
  l.b_qkv = {0, 0, 0, 0.5};
  l.w_out = {{1, 2}};  // (O, H*D)
  l.b_out = {0.25};
  return l;
}

TEST_CASE("reference: a causal GQA case worked out by hand") {
  Tensor x({1, 2, 2});  // (B, S, C): x_0 = (1, 0), x_1 = (0, 2)
  x.data = {1, 0, 0, 2};
  // k = (1, 2), v = (1.5, -1.5); head 0: q = (1, 0), head 1: q = (0, 2).
  // Query 0 sees key 0 only: y = 1.5 in both heads, out = 1.5 + 3 + 0.25.
  // Query 1, head 0: scores (0, 0) -> weights (1/2, 1/2), y = 0.
  // Query 1, head 1: scores (2, 4) -> weights (1, e^2) / (1 + e^2),
  //   y = 1.5 (1 - e^2) / (1 + e^2) = -1.5 tanh(1), out = 0.25 - 3 tanh(1).
  const ref::Result r = ref::attention(hand_layer(), x, nullptr, 1.0, true);
  const double t = std::tanh(1.0);
  REQUIRE(r.context.shape == std::vector<std::size_t>{1, 2, 1});
  CHECK(r.context.data[0] == doctest::Approx(4.75));
  CHECK(r.context.data[1] == doctest::Approx(0.25 - 3 * t));
  REQUIRE(r.attention.shape == std::vector<std::size_t>{1, 2, 2, 2});
  const std::vector<double> maps = {1, 0, 0.5,         0.5,           // head 0
                                    1, 0, (1 - t) / 2, (1 + t) / 2};  // head 1
  for (std::size_t i = 0; i < maps.size(); ++i)
    CHECK(r.attention.data[i] == doctest::Approx(maps[i]));
  CHECK(r.fully_masked_rows == 0);

  // Scale 0.5 halves the scores: head 1 query 1 gets (1, e) / (1 + e).
  const ref::Result half = ref::attention(hand_layer(), x, nullptr, 0.5, true);
  CHECK(half.attention.data[7] == doctest::Approx(std::exp(1.0) / (1 + std::exp(1.0))));

  // Key 0 padded: query 0 has no key left in either head (zero weights, the
  // context is the output bias); query 1 puts all weight on key 1.
  Mask pad{{1, 2}, {1, 0}};
  const ref::Result p = ref::attention(hand_layer(), x, &pad, 1.0, true);
  CHECK(p.fully_masked_rows == 2);
  CHECK(p.context.data[0] == doctest::Approx(0.25));
  CHECK(p.context.data[1] == doctest::Approx(-1.5 - 3.0 + 0.25));
  const std::vector<double> padded = {0, 0, 0, 1, 0, 0, 0, 1};
  for (std::size_t i = 0; i < padded.size(); ++i)
    CHECK(p.attention.data[i] == doctest::Approx(padded[i]));

  // Without out_proj the context is the concatenated heads (H*D wide).
  ref::RefLayer bare = hand_layer();
  bare.has_out_proj = false;
  const ref::Result y = ref::attention(bare, x, nullptr, 1.0, false);
  REQUIRE(y.context.shape == std::vector<std::size_t>{1, 2, 2});
  // Non-causal, query 0 head 0: scores (1, 2) -> y = 1.5 (1 - e) / (1 + e).
  CHECK(y.context.data[0] == doctest::Approx(1.5 * (1 - std::exp(1.0)) / (1 + std::exp(1.0))));
}

// A layer with Hkv KV heads, and the same layer with every KV head repeated
// for the H / Hkv query heads that read it: Hugging Face's repeat_kv.
ref::RefLayer random_layer(std::size_t C, std::size_t H, std::size_t Hkv, std::size_t D,
                           std::size_t O) {
  ref::RefLayer l;
  l.H = H, l.Hkv = Hkv, l.D = D;
  l.w_qkv = xt::random::rand<double>({(H + 2 * Hkv) * D, C}, -1.0, 1.0);
  l.b_qkv = xt::random::rand<double>({(H + 2 * Hkv) * D}, -1.0, 1.0);
  l.w_out = xt::random::rand<double>({O, H * D}, -1.0, 1.0);
  l.b_out = xt::random::rand<double>({O}, -1.0, 1.0);
  return l;
}

// kv_of(h): the KV head query head h reads; h / (H / Hkv) is repeat_kv's.
template <class KvOf>
ref::RefLayer repeat_kv(const ref::RefLayer& l, KvOf kv_of) {
  ref::RefLayer e = l;
  const std::size_t H = l.H, D = l.D;
  e.Hkv = H;
  e.w_qkv = xt::zeros<double>({3 * H * D, l.w_qkv.shape(1)});
  e.b_qkv = xt::zeros<double>({3 * H * D});
  xt::view(e.w_qkv, xt::range(0, H * D), xt::all()) =
      xt::view(l.w_qkv, xt::range(0, H * D), xt::all());
  xt::view(e.b_qkv, xt::range(0, H * D)) = xt::view(l.b_qkv, xt::range(0, H * D));
  for (std::size_t part = 1; part <= 2; ++part)  // k, then v
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t from = (H + (part - 1) * l.Hkv + kv_of(h)) * D;
      const std::size_t to = (part * H + h) * D;
      xt::view(e.w_qkv, xt::range(to, to + D), xt::all()) =
          xt::view(l.w_qkv, xt::range(from, from + D), xt::all());
      xt::view(e.b_qkv, xt::range(to, to + D)) = xt::view(l.b_qkv, xt::range(from, from + D));
    }
  return e;
}

TEST_CASE("reference: GQA and MQA equal attention with the KV heads repeated (repeat_kv)") {
  xt::random::seed(7);
  const std::size_t B = 2, S = 9, C = 5, H = 6, D = 3, O = 4;
  const Tensor x = test::random_tensor({B, S, C}, 11);
  Mask pad{{B, S}, std::vector<std::uint8_t>(B * S, 0)};
  pad.data[1] = pad.data[S + 8] = 1;
  for (std::size_t Hkv : {1, 2, 3, 6}) {
    CAPTURE(Hkv);
    const ref::RefLayer gqa = random_layer(C, H, Hkv, D, O);
    const ref::RefLayer full = repeat_kv(gqa, [&](std::size_t h) { return h / (H / Hkv); });
    for (bool causal : {false, true}) {
      CAPTURE(causal);
      const ref::Result a = ref::attention(gqa, x, &pad, 0.6, causal);
      const ref::Result b = ref::attention(full, x, &pad, 0.6, causal);
      const test::Diff dc = test::compare(a.context, b.context);
      const test::Diff dm = test::compare(a.attention, b.attention);
      INFO("context: " << test::describe(dc) << "; maps: " << test::describe(dm));
      CHECK(dc.shape_ok);
      CHECK(dm.shape_ok);
      CHECK(dc.relative() <= 1e-6);
      CHECK(dm.max_abs <= 1e-6);
      CHECK(a.fully_masked_rows == b.fully_masked_rows);
    }
  }
  // The check can fail: reading KV head h % Hkv instead (another plausible
  // grouping) gives different numbers.
  const ref::RefLayer gqa = random_layer(C, H, 2, D, O);
  const ref::RefLayer wrong = repeat_kv(gqa, [](std::size_t h) { return h % 2; });
  const test::Diff d = test::compare(ref::attention(gqa, x, nullptr, 0.6, false).context,
                                     ref::attention(wrong, x, nullptr, 0.6, false).context);
  CHECK(d.relative() > 1e-3);
}

}  // namespace
}  // namespace attn

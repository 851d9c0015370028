// The score terms of CONTRACT.md "(v4) Families and schedulers" against the
// plain-loop reference (tests/support/reference_scores.h), through both
// kernels (the streaming one and the one that writes the maps): clip_qkv
// (OLMo, DBRX, MPT), qk_norm after rope (Hunyuan), v_norm with q/k norms
// without Gemma's offset (Gemma 3n).
//
// Letters: B batch, L queries, T keys, C hidden, H heads, Hkv key/value
// heads, D head size.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "attn/attention.h"
#include "kernels/kernels.h"
#include "reference_scores.h"
#include "score_cases.h"
#include "test_util.h"

using namespace attn;
using namespace attn::test::scores;

namespace {

// The largest |q|, |k| or |v| the layer's projections give (before norms and rope).
float largest_projection(const Case& c) {
  const Weights w = make_weights(c);
  Inputs t;
  make_inputs(c, w, t);
  float most = 0.0f;
  const Geometry g = w.geometry();
  for (std::size_t r = 0; r < c.B * c.L; ++r)
    for (std::size_t o = 0; o < g.qkv_rows(); ++o) {
      double s = w.b_qkv.data.empty() ? 0.0 : w.b_qkv.data[o];
      for (std::size_t i = 0; i < c.C; ++i)
        s += double(w.w_qkv.data[o * c.C + i]) * double(t.x.data[r * c.C + i]);
      most = std::max(most, float(std::abs(s)));
    }
  return most;
}

// How far the context moves when `change` is applied to the case's spec.
template <class F>
double moved_by(const Case& c, F change) {
  const Weights w = make_weights(c);
  Inputs t;
  make_inputs(c, w, t);
  AttentionSpec other = c.spec;
  change(other);
  Tensor with, without;
  forward(w, c.spec, t.in, with, {});
  forward(w, other, t.in, without, {});
  return test::compare(with, without).max_abs;
}

}  // namespace

TEST_CASE("clip_qkv: q, k and v clamped after the projections, before norms and rope") {
  {
    Case c;  // self-attention, MHA and GQA, causal
    c.spec.causal = true;
    const float most = largest_projection(c);
    REQUIRE(most > 1.0f);
    for (std::size_t Hkv : {std::size_t(4), std::size_t(2)}) {
      c.Hkv = Hkv;
      c.spec.clip_qkv = 0.5 * most;
      CAPTURE(Hkv);
      check_case(c);
      // The clamp binds: dropping it moves the context.
      CHECK(moved_by(c, [](AttentionSpec& s) { s.clip_qkv.reset(); }) > 1e-3);
    }
  }
  {
    Case c;  // OLMo-like: clamp, then q/k norms over all heads, then rope; positions, padding
    c.L = 300;
    c.H = 4;
    c.D = 16;
    c.spec.causal = true;
    c.spec.clip_qkv = 0.4;
    c.qk_norm_weights = true;
    c.qk_all = true;
    QkNormSpec n;
    n.scope_all = true;
    c.spec.qk_norm = n;
    c.spec.rope = rope(16);
    c.padding = pad_right_left(c.B, c.L, 5);
    c.positions = positions_of(*c.padding, 3);
    check_case(c, 3);
    CHECK(moved_by(c, [](AttentionSpec& s) { s.clip_qkv.reset(); }) > 1e-3);
  }
  {
    Case c;  // cross-attention (one source) and torch MHA's extra keys, which are not clamped
    c.cross = true;
    c.kv_one_source = true;
    c.T = 7;
    c.bias_kv = true;
    c.spec.add_zero_attn = true;
    c.spec.clip_qkv = 0.3;
    check_case(c);
  }
  {
    // A Llama-shaped layer takes the plain projection path with clip_qkv
    // (v is clamped before it is packed), with the same numbers.
    Case c;
    c.L = 64;
    c.D = 64;
    c.C = 48;
    c.O = 40;
    c.H = 8;
    c.Hkv = 2;
    c.spec.causal = true;
    c.spec.scale = 0.125f;
    c.spec.rope = rope(64);
    c.spec.clip_qkv = 0.25;
    const std::size_t before = kernels::qkv_panels_calls();
    check_case(c);
    CHECK(kernels::qkv_panels_calls() == before);
  }
}

TEST_CASE("qk_norm order after_rope: the norm after rotary, before the temperature") {
  struct Variant {
    QkNormKind kind;
    bool all, per_head;
  };
  for (const Variant& v :
       {Variant{QkNormKind::rms, false, false},  // Hunyuan
        Variant{QkNormKind::rms, true, false}, Variant{QkNormKind::layer, false, true}}) {
    CAPTURE(int(v.kind));
    CAPTURE(v.all);
    Case c;
    c.L = 130;
    c.H = 4;
    c.Hkv = 2;
    c.D = 16;
    c.spec.causal = true;
    c.qk_norm_weights = true;
    c.qk_all = v.all;
    c.qk_per_head = v.per_head;
    QkNormSpec n;
    n.kind = v.kind;
    n.scope_all = v.all;
    n.per_head = v.per_head;
    n.eps = 1e-5;
    n.after_rope = true;
    c.spec.qk_norm = n;
    c.spec.rope = rope(16);
    c.padding = pad_right_left(c.B, c.L, 4);
    c.positions = positions_of(*c.padding, 11);
    check_case(c, 2);
    // The order matters: the norm's weight is per dimension, rope mixes dimensions.
    CHECK(moved_by(c, [](AttentionSpec& s) { s.qk_norm->after_rope = false; }) > 1e-3);
  }
  {
    // The projection's fast path (q | k | v into panels, position work inside)
    // takes it where this build projects with its own kernel, same numbers;
    // with Llama 4's temperature after the norm.
    Case c;
    c.B = 1;
    c.L = 70;
    c.C = 48;
    c.O = 40;
    c.H = 8;
    c.Hkv = 2;
    c.D = 64;
    c.spec.causal = true;
    c.spec.scale = 0.125f;
    c.qk_norm_weights = true;
    QkNormSpec n;
    n.after_rope = true;
    c.spec.qk_norm = n;
    c.spec.rope = rope(64, RopeStyle::half, 1e6);
    const std::size_t before = kernels::qkv_panels_calls();
    check_case(c);
    CHECK(kernels::qkv_panels_calls() - before ==
          (kernels::qkv_panels_fit(1, c.L, c.D) ? std::size_t(2) : std::size_t(0)));
    c.spec.attn_temperature = AttnTemperature{4.0, 0.3};
    check_case(c);
  }
}

namespace {

DisentangledSpec deberta(std::int64_t buckets, std::int64_t max_relative, bool share, bool c2p,
                         bool p2c) {
  DisentangledSpec d;
  d.position_buckets = buckets;
  d.max_relative_positions = max_relative;
  d.share_att_key = share;
  d.c2p = c2p;
  d.p2c = p2c;
  return d;
}

}  // namespace

TEST_CASE("disentangled: DeBERTa's c2p and p2c, buckets or none, shared or own projections") {
  struct Variant {
    std::int64_t buckets, max_relative;
    bool share, c2p, p2c;
  };
  for (const Variant& v : {Variant{4, 16, true, true, true},  // log buckets reached at L = 9
                           Variant{4, 16, false, true, true},
                           Variant{-1, 3, true, true, true},  // no buckets, clamped past 3
                           Variant{8, 64, false, true, false}, Variant{8, 64, true, false, true}}) {
    CAPTURE(v.buckets);
    CAPTURE(v.share);
    CAPTURE(v.c2p);
    CAPTURE(v.p2c);
    Case c;  // BERT-like encoder: not causal, biases, padding right and left
    c.spec.causal = false;
    c.spec.disentangled = deberta(v.buckets, v.max_relative, v.share, v.c2p, v.p2c);
    c.spec.scale = 1.0 / std::sqrt(8.0 * (1 + c.spec.disentangled->terms()));
    c.padding = pad_right_left(c.B, c.L, 2);
    check_case(c);
    c.spec.mask_padded_queries = true;  // DeBERTa's mask: a padded query row sees no key
    check_case(c);
    // Each term counts.
    if (v.c2p) CHECK(moved_by(c, [](AttentionSpec& s) { s.disentangled->c2p = false; }) > 1e-3);
    if (v.p2c) CHECK(moved_by(c, [](AttentionSpec& s) { s.disentangled->p2c = false; }) > 1e-3);
  }
  {
    Case c;  // GQA, positions with an offset, several query blocks and key tiles, 3 threads
    c.L = 300;
    c.H = 4;
    c.Hkv = 2;
    c.D = 16;
    c.spec.disentangled = deberta(32, 128, true, true, true);
    c.spec.scale = 1.0 / std::sqrt(16.0 * 3);
    c.padding = pad_right_left(c.B, c.L, 7);
    c.positions = positions_of(*c.padding, 5);
    c.spec.mask_padded_queries = true;
    check_case(c, 3);
    c.spec.disentangled->share_att_key = false;
    check_case(c, 2);
  }
}

TEST_CASE("mask_padded_queries: a padded query row gets zero weights, counted, as no key") {
  Case c;
  c.padding = pad_right_left(c.B, c.L, 3);
  c.spec.mask_padded_queries = true;
  const Weights w = make_weights(c);
  Inputs t;
  make_inputs(c, w, t);
  const ref::ScoresResult want = ref::attention_with_scores(w, c.spec, t.in);
  CHECK(want.fully_masked_rows == long(2 * 3 * c.H));  // 3 padded rows in each batch row
  check_case(c);
}

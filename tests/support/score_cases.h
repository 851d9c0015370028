// The layer cases of the score features' tests (test_attention_scores,
// test_score_terms): one layer with random weights and inputs, every score
// feature off unless set, run through both kernels (the streaming one and the
// one that writes the maps) against the plain-loop reference
// (reference_scores.h).
//
// Letters: B batch, L queries, T keys, C hidden, H heads, Hkv key/value
// heads, D head size, O out size.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "attn/attention.h"
#include "attn/masks.h"
#include "reference_scores.h"
#include "test_util.h"

namespace attn::test::scores {

inline constexpr double kTol = 1e-5;  // CONTRACT.md: within 1e-5 of the output's scale

inline Tensor scaled(Tensor t, double by) {
  for (float& v : t.data) v = float(v * by);
  return t;
}

// One test layer and its inputs; fields left at their defaults are off.
struct Case {
  std::size_t B = 2, L = 9, T = 0, C = 16, H = 4, Hkv = 0, D = 8, O = 16;
  std::size_t Ck = 0, Cv = 0;  // torch MHA kdim/vdim (0 = C)
  bool cross = false;          // keys from a (B, T, Ck) source
  bool kv_one_source = false;  // kv_input: one source for k and v
  bool bias = true, bias_kv = false, qk_norm_weights = false, qk_all = false, sinks = false;
  bool gate = false;                          // w_gate (and b_gate with bias)
  bool qk_per_head = false, qk_bias = false;  // norm weights (H, D) / (Hkv, D); norm biases
  unsigned seed = 1;
  AttentionSpec spec;
  std::optional<Mask> padding;           // (B, T)
  std::optional<PositionIds> positions;  // (B, L)
  std::optional<AttnMask> attn_mask;
  std::optional<MlaSpec> mla;  // DeepSeek's latent attention: H, C, O and bias used; D from it

  std::size_t keys() const { return cross ? T : L; }
};

// Random tensors of DeepSeek's multi-head latent attention (weights.h MlaWeights).
inline Weights make_mla_weights(const Case& c) {
  const MlaSpec& m = *c.mla;
  const auto Rq = std::size_t(m.q_lora_rank), Rkv = std::size_t(m.kv_lora_rank);
  const auto Dn = std::size_t(m.qk_nope_head_dim), Dr = std::size_t(m.qk_rope_head_dim);
  const auto Dv = std::size_t(m.v_head_dim);
  Weights w;
  w.C = c.C;
  w.H = w.Hkv = c.H;
  w.D = m.head_size();
  w.O = c.O;
  w.mla = MlaWeights{};
  w.mla->spec = m;
  MlaWeights& t = *w.mla;
  const double in = 2.0 / std::sqrt(double(c.C));
  if (Rq == 0) {
    t.q_proj = scaled(test::random_tensor({c.H * (Dn + Dr), c.C}, c.seed), in);
  } else {
    t.q_a_proj = scaled(test::random_tensor({Rq, c.C}, c.seed), in);
    t.q_a_norm = scaled(test::random_tensor({Rq}, c.seed + 30), 1.0);
    t.q_b_proj = scaled(test::random_tensor({c.H * (Dn + Dr), Rq}, c.seed + 31),
                        1.0 / std::sqrt(double(Rq)));
    if (c.bias) t.q_a_bias = scaled(test::random_tensor({Rq}, c.seed + 32), 0.5);
  }
  t.kv_a_proj = scaled(test::random_tensor({Rkv + Dr, c.C}, c.seed + 33), in);
  if (c.bias) t.kv_a_bias = scaled(test::random_tensor({Rkv + Dr}, c.seed + 34), 0.5);
  t.kv_a_norm = scaled(test::random_tensor({Rkv}, c.seed + 35), 1.0);
  t.kv_b_proj = scaled(test::random_tensor({c.H * (Dn + Dv), Rkv}, c.seed + 36),
                       2.0 / std::sqrt(double(Rkv)));
  w.w_out =
      scaled(test::random_tensor({c.O, c.H * Dv}, c.seed + 2), 1.0 / std::sqrt(double(c.H * Dv)));
  if (c.bias) w.b_out = scaled(test::random_tensor({c.O}, c.seed + 3), 0.5);
  return w;
}

inline Weights make_weights(const Case& c) {
  if (c.mla) return make_mla_weights(c);
  Weights w;
  w.C = c.C;
  w.H = c.H;
  w.Hkv = c.Hkv ? c.Hkv : c.H;
  w.D = c.D;
  w.O = c.O;
  w.Ck = c.Ck;
  w.Cv = c.Cv;
  const Geometry g = w.geometry();
  const double in = 2.0 / std::sqrt(double(c.C));
  if (c.Ck || c.Cv) {
    w.w_qkv = scaled(test::random_tensor({g.q_rows(), c.C}, c.seed), in);
    w.w_k = scaled(test::random_tensor({g.kv_rows(), g.Ck}, c.seed + 20),
                   2.0 / std::sqrt(double(g.Ck)));
    w.w_v = scaled(test::random_tensor({g.kv_rows(), g.Cv}, c.seed + 21),
                   2.0 / std::sqrt(double(g.Cv)));
  } else {
    w.w_qkv = scaled(test::random_tensor({g.qkv_rows(), c.C}, c.seed), in);
  }
  if (c.bias) w.b_qkv = scaled(test::random_tensor({g.qkv_rows()}, c.seed + 1), 0.5);
  w.w_out = scaled(test::random_tensor({c.O, g.q_rows()}, c.seed + 2),
                   1.0 / std::sqrt(double(g.q_rows())));
  if (c.bias) w.b_out = scaled(test::random_tensor({c.O}, c.seed + 3), 0.5);
  if (c.bias_kv) {
    w.bias_k = test::random_tensor({g.kv_rows()}, c.seed + 4);
    w.bias_v = test::random_tensor({g.kv_rows()}, c.seed + 5);
  }
  if (c.qk_norm_weights) {
    const std::vector<std::size_t> sq = c.qk_per_head
                                            ? std::vector<std::size_t>{g.H, g.D}
                                            : std::vector<std::size_t>{c.qk_all ? g.q_rows() : g.D};
    const std::vector<std::size_t> sk =
        c.qk_per_head ? std::vector<std::size_t>{g.Hkv, g.D}
                      : std::vector<std::size_t>{c.qk_all ? g.kv_rows() : g.D};
    w.q_norm = scaled(test::random_tensor(sq, c.seed + 6), 0.3);
    w.k_norm = scaled(test::random_tensor(sk, c.seed + 7), 0.3);
    if (c.qk_bias) {
      w.q_norm_bias = scaled(test::random_tensor(sq, c.seed + 32), 0.3);
      w.k_norm_bias = scaled(test::random_tensor(sk, c.seed + 33), 0.3);
    }
  }
  if (c.sinks) w.sinks = scaled(test::random_tensor({c.H}, c.seed + 8), 2.0);
  if (c.spec.relative_bias)  // T5's table (num_buckets, H)
    w.relative_bias = scaled(
        test::random_tensor({std::size_t(c.spec.relative_bias->num_buckets), c.H}, c.seed + 9),
        2.0);
  if (c.spec.disentangled) {  // DeBERTa: the relative embeddings (2 span, C) and projections
    const DisentangledSpec& d = *c.spec.disentangled;
    w.rel_embeddings = test::random_tensor({2 * std::size_t(d.span()), c.C}, c.seed + 40);
    if (!d.share_att_key) {
      w.pos_key_w = scaled(test::random_tensor({g.q_rows(), c.C}, c.seed + 41), in);
      w.pos_query_w = scaled(test::random_tensor({g.q_rows(), c.C}, c.seed + 42), in);
      if (c.bias) {
        w.pos_key_b = scaled(test::random_tensor({g.q_rows()}, c.seed + 43), 0.5);
        w.pos_query_b = scaled(test::random_tensor({g.q_rows()}, c.seed + 44), 0.5);
      }
    }
  }
  if (c.gate) {
    w.w_gate = scaled(test::random_tensor({g.q_rows(), c.C}, c.seed + 30), in);
    if (c.bias) w.b_gate = scaled(test::random_tensor({g.q_rows()}, c.seed + 31), 0.5);
  }
  return w;
}

struct Inputs {
  Tensor x, key, value;
  std::optional<ScoreMask> score_mask;
  ForwardInputs in;
};

inline void make_inputs(const Case& c, const Weights& w, Inputs& t) {
  const Geometry g = w.geometry();
  t.x = test::random_tensor({c.B, c.L, c.C}, c.seed + 10);
  t.in.x = &t.x;
  if (c.cross) {
    t.key = test::random_tensor({c.B, c.T, g.Ck}, c.seed + 11);
    t.in.key = &t.key;
    if (!c.kv_one_source) {
      t.value = test::random_tensor({c.B, c.T, g.Cv}, c.seed + 12);
      t.in.value = &t.value;
    }
  }
  if (c.padding) t.in.key_padding = &*c.padding;
  if (c.positions) t.in.positions = &*c.positions;
  if (c.attn_mask) {
    t.score_mask = score_mask(*c.attn_mask, c.B, c.H, c.L, c.keys(), "attn_mask");
    t.in.attn_mask = &*t.score_mask;
  }
}

// Runs both kernels against the reference: context, maps, masked-row count.
inline void check_case(const Case& c, int threads = 2) {
  CAPTURE(c.B);
  CAPTURE(c.L);
  CAPTURE(c.T);
  CAPTURE(c.H);
  CAPTURE(c.Hkv);
  CAPTURE(c.D);
  CAPTURE(threads);
  const Weights w = make_weights(c);
  Inputs t;
  make_inputs(c, w, t);
  const ref::ScoresResult want = ref::attention_with_scores(w, c.spec, t.in);
  const std::size_t Tx = map_keys(w, c.spec, c.keys());
  REQUIRE(want.attention.shape == std::vector<std::size_t>{c.B, c.H, c.L, Tx});

  ForwardOptions opt;
  opt.threads = threads;
  Tensor ctx;
  const ForwardStats st = forward(w, c.spec, t.in, ctx, opt);
  const test::Diff d = test::compare(ctx, want.context);
  INFO("stream context: " << test::describe(d));
  CHECK(d.shape_ok);
  CHECK(d.relative() <= kTol);
  CHECK(st.fully_masked_rows == want.fully_masked_rows);
  for (float v : ctx.data) REQUIRE(std::isfinite(v));

  TensorSink sink(c.B, c.H, c.L, Tx);
  opt.attention = &sink;
  Tensor ctx2;
  const ForwardStats st2 = forward(w, c.spec, t.in, ctx2, opt);
  const test::Diff d2 = test::compare(ctx2, want.context);
  const test::Diff dm = test::compare(sink.maps, want.attention);
  INFO("maps context: " << test::describe(d2));
  INFO("maps: " << test::describe(dm));
  CHECK(d2.relative() <= kTol);
  CHECK(dm.max_abs <= kTol);  // weights are in [0, 1]
  CHECK(st2.fully_masked_rows == want.fully_masked_rows);
}

inline Mask pad_right_left(std::size_t B, std::size_t T, std::size_t n) {
  // batch 0 padded by n on the right, batch 1 on the left, others none
  Mask m{{B, T}, std::vector<std::uint8_t>(B * T, 0)};
  for (std::size_t j = 0; j < n && j < T; ++j) {
    m.data[T - 1 - j] = 1;
    if (B > 1) m.data[T + j] = 1;
  }
  return m;
}

inline PositionIds positions_of(const Mask& padding, std::int64_t offset) {
  // Hugging Face: position_ids = cumsum(attention_mask) - 1, clamped at 0
  const std::size_t B = padding.shape[0], L = padding.shape[1];
  PositionIds p{{B, L}, std::vector<std::int64_t>(B * L)};
  for (std::size_t b = 0; b < B; ++b) {
    std::int64_t n = 0;
    for (std::size_t i = 0; i < L; ++i) {
      n += padding.data[b * L + i] ? 0 : 1;
      p.data[b * L + i] = std::max<std::int64_t>(n - 1, 0) + offset;
    }
  }
  return p;
}

inline RopeSpec rope(std::int64_t R, RopeStyle style = RopeStyle::half, double theta = 10000.0) {
  RopeSpec r;
  r.theta = theta;
  r.rotary_dim = R;
  r.style = style;
  return r;
}

}  // namespace attn::test::scores

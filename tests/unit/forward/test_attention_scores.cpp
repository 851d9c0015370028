// The score features of the forward pass (CONTRACT.md "Scores, in
// order": qk_norm, rope, softcap, alibi, attn_mask, sliding window, sinks,
// cross-attention, torch MHA's bias_kv and zero_attn; v3's relative_bias) against the plain-loop
// reference (tests/support/reference_scores.h), through both kernels: the
// streaming one (no sink) and the one that writes the maps.
//
// Letters: B batch, L queries, T keys, C hidden, H heads, Hkv key/value
// heads, D head size, O out size.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/error.h"
#include "attn/masks.h"
#include "attn/positions.h"
#include "expect_error.h"
#include "forward/stages.h"
#include "kernels/kernels.h"
#include "kernels/micro.h"
#include "reference_scores.h"
#include "score_cases.h"
#include "test_util.h"

using namespace attn;
using namespace attn::test::scores;

TEST_CASE("attention v2: rope, both styles, partial rotary, positions per batch row") {
  for (RopeStyle style : {RopeStyle::half, RopeStyle::interleaved})
    for (std::int64_t R : {8, 4}) {
      Case c;
      c.Hkv = 2;
      c.spec.causal = true;
      c.spec.scale = 1.0f / std::sqrt(8.0f);
      c.spec.rope = rope(R, style);
      c.padding = pad_right_left(c.B, c.L, 2);
      c.positions = positions_of(*c.padding, 50000);  // far positions: exact float64 angles
      check_case(c);
    }
}

TEST_CASE(
    "attention v2: rope with llama3 scaling and default positions, long enough for several "
    "blocks") {
  Case c;
  c.B = 1;
  c.L = 300;
  c.H = 2;
  c.C = 8;
  c.O = 8;
  c.spec.causal = true;
  c.spec.rope = rope(8, RopeStyle::half, 500000.0);
  RopeScaling s;
  s.type = "llama3";
  s.factor = 8.0;
  s.low_freq_factor = 1.0;
  s.high_freq_factor = 4.0;
  s.original_max_position_embeddings = 32;
  c.spec.rope->scaling = s;
  check_case(c, 1);
  check_case(c, 3);
}

TEST_CASE("attention v2: alibi with 6 and 12 heads, positions and left padding") {
  for (std::size_t H : {6, 12}) {
    Case c;
    c.H = H;
    c.D = 4;
    c.C = 24;
    c.O = 24;
    c.spec.causal = true;
    c.spec.scale = 0.5f;
    c.spec.alibi = AlibiSpec{8.0, alibi_slopes(H, 8.0)};
    c.padding = pad_right_left(c.B, c.L, 3);
    c.positions = positions_of(*c.padding, 0);
    check_case(c);
  }
}

RelativeBiasSpec relative_bias(std::int64_t buckets, std::int64_t distance, bool bidirectional) {
  RelativeBiasSpec r;
  r.num_buckets = buckets;
  r.max_distance = distance;
  r.bidirectional = bidirectional;
  return r;
}

TEST_CASE("attention v3: T5's relative bias, encoder and decoder, across blocks and tiles") {
  // T5's (32, 128) and a small table whose log part and saturation a short
  // run reaches; scale 1 as T5; the encoder padded, the decoder causal.
  for (auto [buckets, distance] : {std::pair<std::int64_t, std::int64_t>{32, 128}, {8, 12}})
    for (bool decoder : {false, true}) {
      CAPTURE(buckets);
      CAPTURE(decoder);
      Case c;
      c.bias = false;
      c.spec.scale = 1.0f;
      c.spec.causal = decoder;
      c.spec.relative_bias = relative_bias(buckets, distance, !decoder);
      if (!decoder) c.padding = pad_right_left(c.B, c.L, 2);
      check_case(c);
      c.B = 1;
      c.L = 300;  // past one query block and one key tile: the bias follows the tile offsets
      c.H = 2;
      c.padding.reset();
      check_case(c, 3);
    }
}

TEST_CASE(
    "attention v3: relative bias with positions, after softcap and alibi, before a float "
    "attn_mask; with GQA and a window") {
  Case c;
  c.Hkv = 2;
  c.spec.scale = 0.5f;
  c.spec.softcap = 3.0f;
  c.spec.alibi = AlibiSpec{8.0, alibi_slopes(c.H, 8.0)};
  c.spec.relative_bias = relative_bias(16, 20, true);
  c.spec.sliding_window = 5;
  c.padding = pad_right_left(c.B, c.L, 2);
  c.positions = positions_of(*c.padding, 7);  // the bucket of pos_j - pos_i, not of j - i
  AttnMask m;
  m.additive = true;
  m.add = scaled(test::random_tensor({c.L, c.L}, 77), 0.5);
  c.attn_mask = m;
  check_case(c);
  c.spec.causal = true;
  c.spec.relative_bias->bidirectional = false;
  check_case(c, 1);
}

TEST_CASE("attention v3: relative bias misuses are clear errors") {
  Case c;
  c.spec.relative_bias = relative_bias(8, 12, true);
  Weights w = make_weights(c);
  Inputs t;
  make_inputs(c, w, t);
  Tensor ctx;
  w.relative_bias = Tensor({8, c.H + 1});
  test::expect_error([&] { forward(w, c.spec, t.in, ctx, {}); }, Exit::data,
                     "relative_bias: relative_attention_bias.weight: expected shape (8, 4)",
                     "found (8, 5)");
  Case x = c;
  x.cross = true;
  x.T = 5;
  const Weights wx = make_weights(x);
  Inputs tx;
  make_inputs(x, wx, tx);
  test::expect_error([&] { forward(wx, x.spec, tx.in, ctx, {}); }, Exit::config,
                     "relative_bias: needs self-attention");
}

TEST_CASE("attention v2: sliding window, causal and bidirectional, short and across tiles") {
  for (bool causal : {true, false})
    for (std::size_t W : {1, 3, 9, 20}) {
      Case c;
      c.spec.causal = causal;
      c.spec.sliding_window = W;
      c.padding = pad_right_left(c.B, c.L, 2);
      CAPTURE(W);
      CAPTURE(causal);
      check_case(c);
    }
  // Several query blocks and key tiles: tiles outside the band are skipped.
  for (bool causal : {true, false}) {
    Case c;
    c.B = 1;
    c.L = 700;
    c.H = 2;
    c.D = 8;
    c.spec.causal = causal;
    c.spec.sliding_window = 300;
    CAPTURE(causal);
    check_case(c);
  }
}

TEST_CASE("attention v2: softcap, then qk_norm of scope head and all, offsets 0 and 1") {
  {
    Case c;
    c.spec.causal = true;
    c.spec.scale = 3.0f;  // scores large enough for the cap to bite
    c.spec.softcap = 2.0f;
    check_case(c);
  }
  for (bool all : {false, true})
    for (int offset : {0, 1}) {
      Case c;
      c.Hkv = 1;
      c.qk_norm_weights = true;
      c.qk_all = all;
      c.spec.causal = true;
      c.spec.qk_norm = QkNormSpec{1e-6, all, offset};
      c.spec.rope = rope(8);
      CAPTURE(all);
      CAPTURE(offset);
      check_case(c);
    }
}

TEST_CASE("attention v2: a sink of -inf takes no share of its head's rows") {
  // exp(-inf - m) = 0: the head's rows as without a sink (the reference's
  // float64 softmax), on both kernels, over several key tiles.
  Case c;
  c.sinks = true;
  c.spec.sinks = true;
  c.L = 700;
  c.spec.causal = true;
  Weights w = make_weights(c);
  w.sinks.data[1] = -std::numeric_limits<float>::infinity();
  Inputs t;
  make_inputs(c, w, t);
  const ref::ScoresResult want = ref::attention_with_scores(w, c.spec, t.in);
  for (bool maps : {false, true}) {
    CAPTURE(maps);
    TensorSink sink(c.B, c.H, c.L);
    ForwardOptions opt;
    if (maps) opt.attention = &sink;
    Tensor ctx;
    forward(w, c.spec, t.in, ctx, opt);
    const test::Diff d = test::compare(ctx, want.context);
    INFO(test::describe(d));
    CHECK(d.relative() <= kTol);
  }
  // Head 1's rows sum to 1 in the reference: no share went to its sink.
  double sum = 0.0;
  for (std::size_t j = 0; j < c.L; ++j)
    sum += want.attention.data[((0 * c.H + 1) * c.L + 5) * c.L + j];
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
}

TEST_CASE("attention v2: sinks make rows sum to less than 1, fully masked rows stay zero") {
  Case c;
  c.sinks = true;
  c.spec.sinks = true;
  c.spec.causal = true;
  c.spec.sliding_window = 3;
  c.padding = pad_right_left(c.B, c.L, 3);  // batch 1's first rows see no key
  check_case(c);

  const Weights w = make_weights(c);
  Inputs t;
  make_inputs(c, w, t);
  TensorSink sink(c.B, c.H, c.L);
  ForwardOptions opt;
  opt.attention = &sink;
  Tensor ctx;
  const ForwardStats st = forward(w, c.spec, t.in, ctx, opt);
  // Batch 0 (3 padded on the right): row 8's window holds padded keys only;
  // batch 1 (3 padded on the left): rows 0..2.
  CHECK(st.fully_masked_rows == 4 * std::int64_t(c.H));
  for (std::size_t i = 0; i < c.L; ++i) {
    double sum = 0.0;  // batch 1, head 1
    for (std::size_t j = 0; j < c.L; ++j)
      sum += sink.maps.data[((1 * c.H + 1) * c.L + i) * c.L + j];
    CAPTURE(i);
    if (i < 3) {
      CHECK(sum == 0.0);
    } else {
      CHECK(sum < 1.0 - 1e-4);  // the sink took its share
      CHECK(sum > 0.0);
    }
  }
}

TEST_CASE("attention v2: attn_mask bool and float in every shape, with causal and padding") {
  const std::size_t B = 2, H = 4, L = 9;
  const std::vector<std::vector<std::size_t>> shapes = {
      {L, L}, {B, L, L}, {B * H, L, L}, {B, 1, L, L}, {B, H, L, L}};
  unsigned seed = 40;
  for (const auto& shape : shapes)
    for (bool additive : {false, true}) {
      Case c;
      c.spec.causal = additive;  // the float mask with causal, the bool one without
      c.padding = pad_right_left(B, L, 1);
      AttnMask m;
      m.additive = additive;
      const Tensor r = test::random_tensor(shape, seed++);
      if (additive) {
        m.add = scaled(r, 2.0);
        for (std::size_t i = 0; i < m.add.size(); i += 7) m.add.data[i] = -INFINITY;
      } else {
        m.blocked.shape = shape;
        for (float v : r.data) m.blocked.data.push_back(v > 0.4f);  // about 30% blocked
      }
      c.attn_mask = m;
      CAPTURE(shape.size());
      CAPTURE(shape[0]);
      CAPTURE(additive);
      check_case(c);
    }
}

TEST_CASE("attention v2: a bool attn_mask blocking whole rows gives zero rows, counted") {
  Case c;
  c.B = 1;
  AttnMask m;
  m.blocked = Mask{{c.L, c.L}, std::vector<std::uint8_t>(c.L * c.L, 0)};
  for (std::size_t j = 0; j < c.L; ++j) m.blocked.data[4 * c.L + j] = 1;  // row 4: nothing allowed
  c.attn_mask = m;
  check_case(c);
  const Weights w = make_weights(c);
  Inputs t;
  make_inputs(c, w, t);
  Tensor ctx;
  CHECK(forward(w, c.spec, t.in, ctx, {}).fully_masked_rows == std::int64_t(c.H));
}

TEST_CASE("attention v2: cross-attention, one source, separate sources with kdim and vdim") {
  {
    Case c;  // kv_input: T != L, key padding on the T keys
    c.cross = true;
    c.kv_one_source = true;
    c.T = 13;
    c.Hkv = 2;
    c.padding = pad_right_left(c.B, c.T, 4);
    check_case(c);
  }
  {
    Case c;  // torch MHA: kdim 12, vdim 10
    c.cross = true;
    c.T = 6;
    c.Ck = 12;
    c.Cv = 10;
    c.L = 5;
    c.padding = pad_right_left(c.B, c.T, 2);
    check_case(c);
  }
}

TEST_CASE("attention v2: torch MHA's bias_kv and zero_attn columns, self and cross, with masks") {
  for (bool cross : {false, true})
    for (bool bias_kv : {false, true})
      for (bool zero : {false, true}) {
        if (!bias_kv && !zero) continue;
        Case c;
        c.cross = cross;
        c.T = 6;
        c.L = 5;
        c.Ck = cross ? 12 : 0;
        c.Cv = cross ? 10 : 0;
        c.bias_kv = bias_kv;
        c.spec.add_zero_attn = zero;
        c.padding = pad_right_left(c.B, c.keys(), 2);
        AttnMask m;
        m.additive = true;
        m.add = test::random_tensor({c.L, c.keys()}, 77);
        c.attn_mask = m;
        CAPTURE(cross);
        CAPTURE(bias_kv);
        CAPTURE(zero);
        check_case(c);
      }
}

TEST_CASE("attention v2: the families' combinations") {
  {
    Case c;  // gpt-oss: GQA, rope, window, sinks, biases, left padding, several blocks
    c.B = 2;
    c.L = 260;
    c.Hkv = 2;
    c.sinks = true;
    c.spec.sinks = true;
    c.spec.causal = true;
    c.spec.sliding_window = 128;
    c.spec.rope = rope(8);
    c.padding = pad_right_left(c.B, c.L, 5);
    c.positions = positions_of(*c.padding, 0);
    check_case(c);
  }
  {
    Case c;  // Gemma 2: softcap, scale, window, rope
    c.L = 20;
    c.Hkv = 2;
    c.D = 16;
    c.spec.scale = float(1.0 / std::sqrt(24.0));
    c.spec.softcap = 2.0f;
    c.spec.causal = true;
    c.spec.sliding_window = 4;
    c.spec.rope = rope(16);
    check_case(c);
  }
}

TEST_CASE("attention v3: mla, low-rank q or q_proj, v narrower or wider than q.k, rope styles") {
  auto mla = [](std::int64_t Rq, std::int64_t Rkv, std::int64_t Dn, std::int64_t Dr,
                std::int64_t Dv) {
    MlaSpec m;
    m.q_lora_rank = Rq;
    m.kv_lora_rank = Rkv;
    m.qk_nope_head_dim = Dn;
    m.qk_rope_head_dim = Dr;
    m.v_head_dim = Dv;
    return m;
  };
  SUBCASE("DeepSeek-V3: q_a/q_b, interleaved rope, causal, padded, Dv < Dn + Dr") {
    Case c;
    c.mla = mla(12, 10, 8, 4, 6);
    c.spec.scale = float(1.0 / std::sqrt(12.0) * 1.3);
    c.spec.causal = true;
    c.spec.rope = rope(4, RopeStyle::interleaved);
    c.padding = pad_right_left(c.B, c.L, 2);
    c.positions = positions_of(*c.padding, 0);
    check_case(c);
    check_case(c, 1);
  }
  SUBCASE("DeepSeek-V2-Lite: q_proj, half rope, no bias, Dv > Dn + Dr, several blocks") {
    Case c;
    c.B = 2;
    c.L = 150;
    c.H = 3;
    c.bias = false;
    c.mla = mla(0, 6, 4, 4, 10);
    c.spec.scale = float(1.0 / std::sqrt(8.0));
    c.spec.causal = true;
    c.spec.rope = rope(4, RopeStyle::half, 500.0);
    check_case(c);
  }
  SUBCASE("no rope, bidirectional, a window, Dv == Dn + Dr, batches past one chunk") {
    Case c;
    c.B = 130;
    c.L = 9;
    c.mla = mla(5, 7, 2, 2, 4);
    c.spec.scale = 0.5f;
    c.spec.sliding_window = 3;
    check_case(c);
  }
  SUBCASE("misuses: keys from elsewhere, qk_norm") {
    Case c;
    c.mla = mla(0, 6, 4, 4, 4);
    const Weights w = make_weights(c);
    Inputs t;
    make_inputs(c, w, t);
    Tensor ctx;
    ForwardInputs cross = t.in;
    cross.key = &t.x;
    test::expect_error([&] { forward(w, c.spec, cross, ctx, ForwardOptions{}); }, Exit::config,
                       "mla: needs self-attention");
    AttentionSpec s = c.spec;
    s.qk_norm = QkNormSpec{};
    test::expect_error([&] { forward(w, s, t.in, ctx, ForwardOptions{}); }, Exit::config,
                       "mla: not with qk_norm");
  }
}

TEST_CASE("attention v2: misuses are clear errors") {
  Case c;
  const Weights w = make_weights(c);
  Inputs t;
  make_inputs(c, w, t);
  Tensor ctx;
  {
    PositionIds p{{c.B, c.L + 1}, std::vector<std::int64_t>(c.B * (c.L + 1), 0)};
    ForwardInputs in = t.in;
    in.positions = &p;
    AttentionSpec s;
    s.rope = rope(8);
    test::expect_error([&] { forward(w, s, in, ctx, {}); }, Exit::data,
                       "positions: expected shape (2, 9)");
  }
  {
    AttentionSpec s;
    s.rope = rope(7);
    test::expect_error([&] { forward(w, s, t.in, ctx, {}); }, Exit::config, "rope.rotary_dim");
  }
  {
    AttentionSpec s;
    s.sinks = true;
    test::expect_error([&] { forward(w, s, t.in, ctx, {}); }, Exit::data,
                       "sinks: expected one logit per head");
  }
  {
    AttentionSpec s;
    s.alibi = AlibiSpec{8.0, {1.0, 0.5}};
    test::expect_error([&] { forward(w, s, t.in, ctx, {}); }, Exit::config,
                       "alibi: expected 4 slopes");
  }
  {
    // A window or chunk is given as n > 0 (none: left unset).
    AttentionSpec s;
    s.sliding_window = 0;
    test::expect_error([&] { forward(w, s, t.in, ctx, {}); }, Exit::config,
                       "sliding_window: expected an integer > 0, found 0");
    s.sliding_window.reset();
    s.attention_chunk = -2;
    test::expect_error([&] { forward(w, s, t.in, ctx, {}); }, Exit::config,
                       "attention_chunk: expected an integer > 0, found -2");
  }
  {
    Tensor key = test::random_tensor({c.B, 3, c.C}, 3);
    ForwardInputs in = t.in;
    in.key = &key;
    AttentionSpec s;
    s.rope = rope(8);
    test::expect_error([&] { forward(w, s, in, ctx, {}); }, Exit::config,
                       "rope: needs self-attention");
    Mask pad{{c.B, c.L}, std::vector<std::uint8_t>(c.B * c.L, 0)};
    in.key_padding = &pad;
    test::expect_error([&] { forward(w, {}, in, ctx, {}); }, Exit::data,
                       "padding_mask: expected shape (2, 3)");
  }
}

TEST_CASE("attention v2: batches past one chunk of rows (each chunk its own projections)") {
  // L = 520: one batch row per chunk (kChunkRows 1024), so 3 chunks; every
  // per-batch input (padding, positions, attn_mask, key source) must follow.
  {
    Case c;  // self-attention: rope, alibi-free GQA, padding left/right, per-batch positions
    c.B = 3;
    c.L = 520;
    c.H = 2;
    c.Hkv = 1;
    c.C = 8;
    c.O = 8;
    c.D = 8;
    c.spec.causal = true;
    c.spec.rope = rope(8);
    c.padding = pad_right_left(c.B, c.L, 7);
    c.positions = positions_of(*c.padding, 3);
    AttnMask m;
    m.additive = true;
    m.add = scaled(test::random_tensor({c.B, c.L, c.L}, 91), 0.5);
    c.attn_mask = m;
    check_case(c);
  }
  {
    Case c;  // cross-attention with torch MHA's extra keys
    c.B = 3;
    c.L = 600;
    c.T = 40;
    c.H = 2;
    c.C = 8;
    c.O = 8;
    c.D = 4;
    c.cross = true;
    c.Ck = 6;
    c.Cv = 5;
    c.bias_kv = true;
    c.spec.add_zero_attn = true;
    c.padding = pad_right_left(c.B, c.T, 3);
    check_case(c);
  }
}

TEST_CASE(
    "attention v3: gate multiplies each head's context by sigmoid(gate), with and without "
    "bias, GQA, rope and padding, across chunks") {
  for (bool bias : {true, false}) {
    Case c;
    c.bias = bias;
    c.gate = true;
    c.Hkv = 2;
    c.spec.gate = true;
    c.spec.causal = true;
    c.spec.rope = rope(4);  // partial rotary, as Qwen3-Next
    c.padding = pad_right_left(c.B, c.L, 2);
    c.positions = positions_of(*c.padding, 0);
    CAPTURE(bias);
    check_case(c);
  }
  {
    Case c;  // several chunks of batch rows and query blocks; no out_proj-free shortcut
    c.B = 3;
    c.L = 400;
    c.H = 2;
    c.C = 8;
    c.O = 8;
    c.gate = true;
    c.spec.gate = true;
    c.spec.causal = true;
    check_case(c, 3);
  }
  {
    // The gate changes the result: without it the same weights give another context.
    Case c;
    c.gate = true;
    c.spec.gate = true;
    const Weights w = make_weights(c);
    Inputs t;
    make_inputs(c, w, t);
    Tensor gated, plain;
    forward(w, c.spec, t.in, gated, {});
    AttentionSpec off = c.spec;
    off.gate = false;
    forward(w, off, t.in, plain, {});
    CHECK(test::compare(gated, plain).max_abs > 1e-2);
    Weights none = w;
    none.w_gate = Tensor();
    test::expect_error([&] { forward(none, c.spec, t.in, gated, {}); }, Exit::data,
                       "gate: expected weights w_gate (32, 16)");
  }
}

TEST_CASE("attention v3: qk_norm kinds layer (shared, per head, bias, scope all) and l2") {
  struct Variant {
    QkNormKind kind;
    bool per_head, bias, all;
    int offset;
  };
  for (const Variant& v :
       {Variant{QkNormKind::layer, false, false, false, 0},
        Variant{QkNormKind::layer, true, false, false, 0},  // Cohere
        Variant{QkNormKind::layer, true, true, false, 0},   // StableLM-like + bias
        Variant{QkNormKind::layer, false, true, false, 0},  // Phi
        Variant{QkNormKind::layer, false, false, true, 1},
        Variant{QkNormKind::rms, true, false, false, 1},
        Variant{QkNormKind::l2, false, false, false, 0},  // Llama 4
        Variant{QkNormKind::l2, false, false, true, 0}}) {
    Case c;
    c.Hkv = 2;
    c.qk_norm_weights = v.kind != QkNormKind::l2;
    c.qk_per_head = v.per_head;
    c.qk_bias = v.bias;
    c.qk_all = v.all;
    QkNormSpec n;
    n.eps = 1e-5;
    n.kind = v.kind;
    n.per_head = v.per_head;
    n.bias = v.bias;
    n.scope_all = v.all;
    n.weight_offset = v.offset;
    c.spec.qk_norm = n;
    c.spec.causal = true;
    c.spec.rope = rope(8, RopeStyle::interleaved);
    c.padding = pad_right_left(c.B, c.L, 2);
    CAPTURE(int(v.kind));
    CAPTURE(v.per_head);
    CAPTURE(v.bias);
    CAPTURE(v.all);
    check_case(c);
  }
  {
    Case c;  // a layer norm differs from the RMS norm on the same weights
    c.qk_norm_weights = true;
    QkNormSpec n;
    n.kind = QkNormKind::layer;
    c.spec.qk_norm = n;
    const Weights w = make_weights(c);
    Inputs t;
    make_inputs(c, w, t);
    Tensor layer, rms;
    forward(w, c.spec, t.in, layer, {});
    AttentionSpec other = c.spec;
    other.qk_norm->kind = QkNormKind::rms;
    forward(w, other, t.in, rms, {});
    CHECK(test::compare(layer, rms).max_abs > 1e-3);
    other.qk_norm->kind = QkNormKind::layer;
    other.qk_norm->per_head = true;  // (D) weights where (H, D) are expected
    test::expect_error([&] { forward(w, other, t.in, rms, {}); }, Exit::data,
                       "qk_norm: expected weights q_norm (4, 8) and k_norm (4, 8)");
  }
}

TEST_CASE("attention v3: attention_chunk, causal and not, with window and padding, across tiles") {
  for (bool causal : {true, false})
    for (std::size_t n : {1, 3, 4, 9, 20}) {
      Case c;
      c.spec.causal = causal;
      c.spec.attention_chunk = n;
      c.padding = pad_right_left(c.B, c.L, 2);
      CAPTURE(n);
      CAPTURE(causal);
      check_case(c);
    }
  {
    Case c;  // chunk and window together
    c.spec.causal = true;
    c.spec.attention_chunk = 4;
    c.spec.sliding_window = 3;
    check_case(c);
  }
  // Several query blocks (128) and key tiles (256); chunks not aligned to either.
  for (std::size_t n : {100, 200, 256, 300})
    for (bool causal : {true, false}) {
      Case c;
      c.B = 1;
      c.L = 700;
      c.H = 2;
      c.D = 8;
      c.spec.causal = causal;
      c.spec.attention_chunk = n;
      CAPTURE(n);
      CAPTURE(causal);
      check_case(c, 3);
    }
  {
    // The chunk changes the result; cross-attention has no chunks.
    Case c;
    c.spec.causal = true;
    c.spec.attention_chunk = 4;
    const Weights w = make_weights(c);
    Inputs t;
    make_inputs(c, w, t);
    Tensor chunked, full;
    forward(w, c.spec, t.in, chunked, {});
    AttentionSpec off = c.spec;
    off.attention_chunk.reset();
    forward(w, off, t.in, full, {});
    CHECK(test::compare(chunked, full).max_abs > 1e-3);
    Tensor key = test::random_tensor({c.B, 3, c.C}, 3);
    ForwardInputs in = t.in;
    in.key = &key;
    in.key_padding = nullptr;
    AttentionSpec cross;
    cross.attention_chunk = 4;
    test::expect_error([&] { forward(w, cross, in, chunked, {}); }, Exit::config,
                       "attention_chunk: needs self-attention");
  }
}

TEST_CASE("attention v3: attn_temperature scales q by its position, with and without positions") {
  for (double floor_scale : {1.0, 3.0, 8192.0})
    for (bool with_positions : {false, true}) {
      Case c;
      c.spec.causal = true;
      c.spec.attn_temperature = AttnTemperature{floor_scale, 0.5};
      if (with_positions) {
        c.padding = pad_right_left(c.B, c.L, 2);
        c.positions = positions_of(*c.padding, 20);
      }
      CAPTURE(floor_scale);
      CAPTURE(with_positions);
      check_case(c);
    }
  {
    Case c;  // Llama 4's no-rope layer with its L2-normed neighbours' settings, several blocks
    c.B = 2;
    c.L = 300;
    c.H = 2;
    c.Hkv = 1;
    c.spec.causal = true;
    c.spec.attn_temperature = AttnTemperature{64.0, 0.1};
    check_case(c, 3);
  }
  {
    Case c;  // with rope and chunks (a combination no family uses, but the order must hold)
    c.spec.causal = true;
    c.spec.rope = rope(8, RopeStyle::interleaved);
    c.spec.attention_chunk = 4;
    c.spec.attn_temperature = AttnTemperature{2.0, 0.3};
    check_case(c);
  }
  {
    // The temperature changes the result; cross-attention has none.
    Case c;
    c.spec.attn_temperature = AttnTemperature{2.0, 1.0};
    const Weights w = make_weights(c);
    Inputs t;
    make_inputs(c, w, t);
    Tensor tuned, plain;
    forward(w, c.spec, t.in, tuned, {});
    forward(w, AttentionSpec{}, t.in, plain, {});
    CHECK(test::compare(tuned, plain).max_abs > 1e-3);
    Tensor key = test::random_tensor({c.B, 3, c.C}, 3);
    ForwardInputs in = t.in;
    in.key = &key;
    test::expect_error([&] { forward(w, c.spec, in, tuned, {}); }, Exit::config,
                       "attn_temperature: needs self-attention");
  }
}

// ---- The fast path: q | k | v projected straight into the panels with
// qk_norm, rope and the temperature applied by the projection's tasks
// (forward/project.cpp PositionWork, kernels::linear_qkv_panels), against
// the same plain reference. D = 64 is a whole number of panels on AVX2
// (16 wide) and AVX-512 (32 wide); L = 70 leaves a partial last panel of
// tokens (one batch row per chunk may); H = 12, Hkv = 6 cut q and k into
// several tasks of whole heads, so a task's first head is not head 0.

namespace {

Case fast_case(std::size_t B, std::size_t L, std::size_t H, std::size_t Hkv) {
  Case c;
  c.B = B;
  c.L = L;
  c.H = H;
  c.Hkv = Hkv;
  c.D = 64;
  c.C = 48;
  c.O = 40;
  c.spec.causal = true;
  c.spec.scale = 0.125f;
  return c;
}

// check_case (two runs: streaming and maps), and each run projected into the
// panels once per chunk of batch rows where this build projects with
// attn-run's own kernel (AVX2 and wider), never otherwise.
void check_fast(const Case& c, int threads = 2) {
  const std::size_t before = kernels::qkv_panels_calls();
  check_case(c, threads);
  const std::size_t chunks = (c.B + detail::chunk_batch(c.L) - 1) / detail::chunk_batch(c.L);
  CHECK(kernels::qkv_panels_calls() - before == (kernels::micro::kOwnProjections ? 2 * chunks : 0));
}

RopeScaling llama3_scaling() {
  RopeScaling s;
  s.type = "llama3";
  s.factor = 8.0;
  s.low_freq_factor = 1.0;
  s.high_freq_factor = 4.0;
  s.original_max_position_embeddings = 32;
  return s;
}

}  // namespace

TEST_CASE("fast path: a plain Llama-shaped layer (rope, GQA) takes it; what cannot, falls back") {
  CHECK(kernels::qkv_panels_fit(1, 2048, 128) == kernels::micro::kOwnProjections);
  // Llama 3 (rope with llama3 scaling, GQA 4:1) and Qwen3 (and rms qk_norm per head): one
  // projection into panels each, no position stage after it.
  Case llama = fast_case(1, 96, 8, 2);
  llama.D = 128;
  llama.spec.rope = rope(128, RopeStyle::half, 500000.0);
  llama.spec.rope->scaling = llama3_scaling();
  Case qwen3 = llama;
  qwen3.qk_norm_weights = true;
  qwen3.spec.qk_norm = QkNormSpec{};
  for (const Case* c : {&llama, &qwen3}) {
    const Weights w = make_weights(*c);
    Inputs t;
    make_inputs(*c, w, t);
    const std::size_t before = kernels::qkv_panels_calls();
    Tensor ctx;
    forward(w, c->spec, t.in, ctx, {});
    CHECK(kernels::qkv_panels_calls() - before == (kernels::micro::kOwnProjections ? 1 : 0));
  }
  // Extra keys (bias_kv) and keys from elsewhere project apart, then rope and norms as before.
  Case extra = fast_case(1, 64, 4, 4);
  extra.bias_kv = true;
  extra.spec.causal = false;
  extra.spec.rope = rope(64);
  Case cross = fast_case(2, 64, 4, 2);
  cross.cross = true;
  cross.T = 40;
  cross.spec.causal = false;
  for (const Case* c : {&extra, &cross}) {
    const std::size_t before = kernels::qkv_panels_calls();
    check_case(*c);
    CHECK(kernels::qkv_panels_calls() == before);
  }
}

TEST_CASE("fast path: cross-attention from one source projects k and v into the panels") {
  // kv_input (k and v from one source through the k | v rows of w_qkv): one
  // projection of the keys into the panels per chunk, q apart; the keys'
  // count need not be the queries'. One batch row with a partial last panel
  // of keys, two with whole panels, GQA and key padding.
  const auto cross_case = [](std::size_t B, std::size_t L, std::size_t H, std::size_t Hkv,
                             std::size_t T, std::size_t padded) {
    Case c = fast_case(B, L, H, Hkv);
    c.cross = true;
    c.kv_one_source = true;
    c.T = T;
    c.spec.causal = false;
    c.padding = pad_right_left(B, T, padded);
    return c;
  };
  const Case one = cross_case(1, 40, 8, 2, 70, 6);
  const Case two = cross_case(2, 50, 4, 4, 96, 9);
  for (const Case* c : {&one, &two}) {
    check_fast(*c);
    check_fast(*c, 1);
  }
  // Separate key and value sources, kdim != C, or keys across a panel
  // between batch rows: the plain path.
  Case apart = two;
  apart.kv_one_source = false;
  Case kdim = one;
  kdim.Ck = kdim.Cv = 24;
  Case straddle = cross_case(2, 50, 4, 4, 40, 3);
  for (const Case* c : {&apart, &kdim, &straddle}) {
    const std::size_t before = kernels::qkv_panels_calls();
    check_case(*c);
    CHECK(kernels::qkv_panels_calls() == before);
  }
}

TEST_CASE("fast path: rope, both styles, partial rotary, GQA, a partial last panel, positions") {
  for (RopeStyle style : {RopeStyle::half, RopeStyle::interleaved})
    for (std::int64_t R : {64, 32}) {
      CAPTURE(int(style));
      CAPTURE(R);
      Case one = fast_case(1, 70, 8, 2);  // no positions: 0..L-1
      one.spec.rope = rope(R, style);
      check_fast(one);
      Case two = fast_case(2, 64, 12, 6);  // positions per batch row, padding left and right
      two.spec.rope = rope(R, style);
      two.padding = pad_right_left(two.B, two.L, 5);
      two.positions = positions_of(*two.padding, 50000);
      check_fast(two, 1);
    }
}

TEST_CASE("fast path: rope scaling llama3 and yarn, several blocks, sparse positions, 2 chunks") {
  for (const char* type : {"llama3", "yarn"}) {
    CAPTURE(type);
    Case c = fast_case(1, 300, 4, 1);
    c.spec.rope = rope(64, RopeStyle::half, 500000.0);
    if (std::string(type) == "llama3") {
      c.spec.rope->scaling = llama3_scaling();
    } else {
      RopeScaling s;
      s.type = "yarn";
      s.factor = 4.0;
      s.original_max_position_embeddings = 64;
      c.spec.rope->scaling = s;
    }
    check_fast(c, 1);
    check_fast(c, 3);
  }
  {
    Case c = fast_case(2, 64, 8, 2);  // positions far apart: cos and sin per token, not a table
    c.spec.rope = rope(48, RopeStyle::interleaved);
    c.positions = PositionIds{{2, 64}, std::vector<std::int64_t>(128)};
    for (std::size_t i = 0; i < 128; ++i) c.positions->data[i] = std::int64_t((i * 7919) % 100003);
    check_fast(c);
  }
  {
    Case c = fast_case(18, 64, 4, 2);  // chunks of 16 and 2 batch rows
    c.C = 16;
    c.spec.rope = rope(64);
    c.padding = pad_right_left(c.B, c.L, 9);
    c.positions = positions_of(*c.padding, 7);
    check_fast(c);
  }
}

TEST_CASE("fast path: qk_norm kinds, per head, bias, offsets, scope all, with rope") {
  struct Variant {
    QkNormKind kind;
    bool per_head, bias, all;
    int offset;
  };
  for (const Variant& v : {Variant{QkNormKind::rms, false, false, false, 0},  // Qwen3
                           Variant{QkNormKind::rms, false, false, false, 1},  // Gemma 3
                           Variant{QkNormKind::rms, true, false, false, 0},
                           Variant{QkNormKind::rms, false, false, true, 0},    // OLMo 2
                           Variant{QkNormKind::layer, true, false, false, 0},  // Cohere
                           Variant{QkNormKind::layer, false, true, false, 0},  // Phi
                           Variant{QkNormKind::layer, true, true, true, 0},
                           Variant{QkNormKind::l2, false, false, false, 0}}) {
    CAPTURE(int(v.kind));
    CAPTURE(v.per_head);
    CAPTURE(v.bias);
    CAPTURE(v.all);
    CAPTURE(v.offset);
    Case c = fast_case(1, 70, 12, 6);
    c.qk_norm_weights = v.kind != QkNormKind::l2;
    c.qk_per_head = v.per_head;
    c.qk_bias = v.bias;
    c.qk_all = v.all;
    QkNormSpec n;
    n.kind = v.kind;
    n.per_head = v.per_head;
    n.bias = v.bias;
    n.scope_all = v.all;
    n.weight_offset = v.offset;
    c.spec.qk_norm = n;
    c.spec.rope = rope(32, RopeStyle::half, 1000000.0);
    check_fast(c);
    c.spec.rope.reset();  // the norm alone
    check_fast(c);
  }
}

TEST_CASE("fast path: windows, sinks, temperature, softcap and the gate after it") {
  {
    Case c = fast_case(2, 64, 8, 2);  // gpt-oss: rope, window, sinks, biases, left padding
    c.sinks = true;
    c.spec.sinks = true;
    c.spec.sliding_window = 16;
    c.spec.rope = rope(64, RopeStyle::half, 150000.0);
    c.padding = pad_right_left(c.B, c.L, 4);
    c.positions = positions_of(*c.padding, 0);
    check_fast(c);
  }
  {
    Case c = fast_case(1, 70, 8, 4);  // Llama 4: l2 norm, rope, the queries' temperature, chunks
    QkNormSpec n;
    n.kind = QkNormKind::l2;
    c.spec.qk_norm = n;
    c.spec.rope = rope(64, RopeStyle::interleaved, 500000.0);
    c.spec.attn_temperature = AttnTemperature{4.0, 0.3};
    c.spec.attention_chunk = 24;
    check_fast(c);
    c.spec.rope.reset();
    c.spec.qk_norm.reset();  // the temperature alone changes q only
    check_fast(c);
  }
  {
    Case c = fast_case(2, 64, 8, 8);  // Gemma 2-like: softcap, window, rope; a gated Qwen3-Next
    c.spec.softcap = 2.0f;
    c.spec.scale = 1.0f;
    c.spec.sliding_window = 9;
    c.spec.rope = rope(64);
    check_fast(c);
    c.gate = true;
    c.spec.gate = true;
    c.spec.softcap.reset();
    c.spec.rope = rope(16);
    check_fast(c);
  }
}

TEST_CASE("attention v3: v_norm (Gemma 4), with GQA, qk_norm and rope, padding, cross, tiles") {
  for (bool qk : {false, true})
    for (std::size_t Hkv : {std::size_t(4), std::size_t(1)}) {
      Case c;  // self-attention: the fused projection writes v inside the q|k|v rows
      c.Hkv = Hkv;
      c.spec.causal = true;
      c.spec.v_norm = VNormSpec{1e-6};
      if (qk) {
        c.qk_norm_weights = true;
        c.spec.qk_norm = QkNormSpec{};
        c.spec.rope = rope(8);
      }
      CAPTURE(qk);
      check_case(c);
    }
  {
    Case c;  // Gemma 4's global layer: scale 1, window off, padding, several blocks of keys
    c.L = 300;
    c.H = 4;
    c.Hkv = 2;
    c.D = 16;
    c.spec.causal = true;
    c.spec.scale = 1.0f;
    c.qk_norm_weights = true;
    c.spec.qk_norm = QkNormSpec{};
    c.spec.v_norm = VNormSpec{1e-6};
    c.spec.rope = rope(16, RopeStyle::half, 1e6);
    c.spec.rope->scaling = RopeScaling{};
    c.spec.rope->scaling->type = "proportional";
    c.spec.rope->scaling->partial_rotary_factor = 0.25;
    c.padding = pad_right_left(c.B, c.L, 3);
    c.positions = positions_of(*c.padding, 7);
    check_case(c, 3);
  }
  {
    Case c;  // cross-attention: the values of the key source, normed
    c.cross = true;
    c.kv_one_source = true;
    c.T = 5;
    c.Hkv = 2;
    c.spec.v_norm = VNormSpec{1e-5};
    check_case(c);
  }
  {
    // v_norm changes the result: v's heads no longer keep their scale.
    Case c;
    c.spec.v_norm = VNormSpec{1e-6};
    const Weights w = make_weights(c);
    Inputs t;
    make_inputs(c, w, t);
    Tensor normed, plain;
    forward(w, c.spec, t.in, normed, {});
    forward(w, AttentionSpec{}, t.in, plain, {});
    CHECK(test::compare(normed, plain).max_abs > 1e-3);
  }
}

TEST_CASE("positions v3: proportional rope (Gemma 4) rotates the first p*R/2 pairs of the head") {
  RopeSpec r;
  r.theta = 1e6;
  r.rotary_dim = 16;
  r.scaling = RopeScaling{};
  r.scaling->type = "proportional";
  r.scaling->partial_rotary_factor = 0.25;
  const RopeFrequencies f = rope_frequencies(r, 10);
  REQUIRE(f.inv_freq.size() == 8);
  // _compute_proportional_rope_parameters: theta^(-2i/16) for i < int(0.25 * 16 // 2) = 2, else 0
  CHECK(f.inv_freq[0] == doctest::Approx(1.0));
  CHECK(f.inv_freq[1] == doctest::Approx(std::pow(1e6, -2.0 / 16.0)));
  for (std::size_t i = 2; i < 8; ++i) CHECK(f.inv_freq[i] == 0.0);
  r.scaling->factor = 4.0;
  r.scaling->partial_rotary_factor = 0.4;  // int(0.4 * 16 // 2) = 3
  const RopeFrequencies g = rope_frequencies(r, 10);
  CHECK(g.inv_freq[2] == doctest::Approx(std::pow(1e6, -4.0 / 16.0) / 4.0));
  CHECK(g.inv_freq[3] == 0.0);
}

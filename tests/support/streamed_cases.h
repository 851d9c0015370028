// The layer cases the streamed reductions' tests share (test_key_stats,
// test_head_stats): one projection-only layer of S = 700 tokens (6 query
// blocks of 128 rows, 3 key tiles of 256) under causal, windows, padding with
// holes, sinks, GQA/MQA, ALiBi and torch MHA's extra keys, and a forward run
// with a sink listening.
//
// Letters: B batch, S sequence, C hidden, H heads, Hkv key/value heads, D
// head size, T' keys of a row.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "test_util.h"

namespace attn::test::streamed {

inline constexpr std::size_t B = 2, S = 700, C = 32, H = 4, D = 8;

struct Case {
  std::string name;
  bool causal = false;
  std::size_t window = 0;
  bool padding = false;
  bool sinks = false;
  std::size_t Hkv = 4;  // of H = 4
  bool alibi = false;
  bool extra_keys = false;  // torch MHA's bias_kv and zero_attn: T' = S + 2
};

inline const std::vector<Case>& cases() {
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
  };
  return all;
}

inline Weights weights_for(const Case& c) {
  Weights w;
  w.C = C;
  w.H = H;
  w.D = D;
  w.Hkv = c.Hkv;
  w.O = H * D;
  w.w_qkv = random_tensor({w.geometry().qkv_rows(), C}, 7);
  for (float& v : w.w_qkv.data) v *= 0.6f;
  w.has_out_proj = false;
  if (c.sinks) w.sinks = random_tensor({H}, 9);
  if (c.extra_keys) {
    w.bias_k = random_tensor({c.Hkv * D}, 11);
    w.bias_v = random_tensor({c.Hkv * D}, 12);
  }
  return w;
}

inline AttentionSpec spec_for(const Case& c, float scale = 0.35f) {
  AttentionSpec s = AttentionSpec::plain(scale, c.causal);
  if (c.window) s.sliding_window = c.window;
  s.sinks = c.sinks;
  s.add_zero_attn = c.extra_keys;
  if (c.alibi) {
    s.alibi = AlibiSpec{};
    for (std::size_t h = 0; h < H; ++h) s.alibi->slopes.push_back(std::pow(2.0f, -float(h + 1)));
  }
  return s;
}

inline Mask padding_for() {
  Mask m;
  m.shape = {B, S};
  m.data.assign(B * S, 0);
  for (std::size_t j = 0; j < S; ++j) {
    m.data[j] = j >= S - 90;              // batch 0: right padding
    m.data[S + j] = j % 7 == 1 || j < 5;  // batch 1: holes, and key 0 padded
  }
  return m;
}

inline Tensor run(const Weights& w, const AttentionSpec& spec, const Tensor& x, const Mask* kp,
                  AttentionSink* sink, int threads) {
  ForwardOptions opt;
  opt.threads = threads;
  opt.attention = sink;
  Tensor ctx;
  forward(w, spec, x, kp, ctx, opt);
  return ctx;
}

}  // namespace attn::test::streamed

// The settings of the score features of CONTRACT.md "Scores, in order" and
// "Positions", as plain data: the config reads them (config.h), the forward
// pass applies them (attention.h, positions.h). Nothing here computes.
//
// Letters: H heads, D head size, R rotary_dim (even, <= D).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn {

// Hugging Face's rope_scaling object as written in a config.json
// (modeling_rope_utils: linear, dynamic, yarn, llama3, longrope).
struct RopeScaling {
  std::string type;  // "linear" | "dynamic" | "yarn" | "llama3" | "longrope"
  std::optional<double> factor;
  std::optional<std::int64_t> original_max_position_embeddings;
  std::optional<double> low_freq_factor, high_freq_factor;  // llama3
  std::optional<double> beta_fast, beta_slow;               // yarn (32, 1)
  std::optional<double> attention_factor;                   // yarn, longrope
  std::optional<double> mscale, mscale_all_dim;             // yarn (DeepSeek)
  bool truncate = true;                                     // yarn
  std::vector<double> short_factor, long_factor;            // longrope (R/2 each)
};

enum class RopeStyle { half, interleaved };  // rotate_half (HF) | GPT-J pairs

struct RopeSpec {
  double theta = 10000.0;
  std::int64_t rotary_dim = 0;  // R; dimensions past R pass unchanged
  RopeStyle style = RopeStyle::half;
  std::optional<std::int64_t> max_position_embeddings;
  std::optional<RopeScaling> scaling;
};

// qk_norm: RMSNorm of q and k before rope, in float32 as Hugging Face's
// RMSNorm: x * rsqrt(mean(x^2) + eps) * (weight_offset + w).
struct QkNormSpec {
  double eps = 1e-6;
  bool scope_all = false;  // "all": over the H*D (q) and Hkv*D (k) row (OLMo 2); "head": over D
  int weight_offset = 0;   // 1: x * (1 + w) (Gemma)
};

// alibi: true, {"max_bias": x} or {"slopes": [H numbers]}.
struct AlibiSpec {
  double max_bias = 8.0;
  std::vector<double> slopes;  // H values when given; empty = BLOOM/MPT's formula with max_bias
};

}  // namespace attn

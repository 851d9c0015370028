// The settings of the score features of CONTRACT.md "Scores, in order" and
// "Positions", gathered in AttentionSpec, and torch's attn_mask, as plain
// data: the config reads them into its spec (config.h), the forward pass
// applies them (attention.h, positions.h, masks.h). Nothing here computes.
//
// Letters: B batch, H heads, L queries, T keys, D head size, R rotary_dim
// (even, <= D).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attn/tensor.h"

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
  // proportional (Gemma 4's global layers): the first
  // floor(partial_rotary_factor * R / 2) frequencies theta^(-2i/R), the rest 0.
  std::optional<double> partial_rotary_factor;
  // llama.cpp's rope_freqs.weight (R/2 numbers > 0): each inverse
  // frequency is divided by its factor after the type's own rule, as ggml_rope_ext
  // divides by freq_factors. With type llama3 they are its whole rule (what
  // convert_hf_to_gguf.py's LlamaModel computed from factor, low_freq_factor,
  // high_freq_factor and original_max_position_embeddings), those fields unused.
  std::vector<double> freq_factors;
};

enum class RopeStyle { half, interleaved };  // rotate_half (HF) | GPT-J pairs

// The arithmetic of RoPE's frequencies and angles: float64 (the default, the
// closest to the exact values) or float32 as transformers' rotary embeddings
// compute them (float32 inv_freq per rope type, float32 position * inv_freq,
// float32 cos and sin times the attention scaling), for comparisons with it.
enum class RopePrecision { float64, float32 };

struct RopeSpec {
  double theta = 10000.0;
  std::int64_t rotary_dim = 0;  // R; dimensions past R pass unchanged
  RopeStyle style = RopeStyle::half;
  std::optional<std::int64_t> max_position_embeddings;
  std::optional<RopeScaling> scaling;
  RopePrecision precision = RopePrecision::float64;
  // Multimodal rope (Qwen2-VL's mrope): the R/2 frequencies split among three
  // position rows, time, height and width ([t, h, w], summing to R/2), as
  // modeling_qwen2_vl.apply_multimodal_rotary_pos_emb (contiguous: the first t
  // frequencies turn at the time row, the next h at the height row, the last w
  // at the width row) or, interleaved, as modeling_qwen3_vl's
  // apply_interleaved_mrope (frequency i at the height row when i % 3 == 1 and
  // i < 3h, at the width row when i % 3 == 2 and i < 3w, else at the time row).
  // Empty: one row. With 1-D positions every row is the same: the plain rope.
  std::vector<std::int64_t> mrope_section;
  bool mrope_interleaved = false;
};

// qk_norm: a norm of q and k before rope (or after it: order), in float32 as
// Hugging Face's:
//   rms   (v2)  x * rsqrt(mean(x^2) + eps) * (weight_offset + w)   (Qwen3RMSNorm)
//   layer (v3)  (x - mean) * rsqrt(var + eps) * (weight_offset + w) + b
//               (nn.LayerNorm, CohereLayerNorm, StableLM's and Phi's qk_layernorm)
//   l2    (v3)  x * rsqrt(mean(x^2) + eps), no weight (Llama4TextL2Norm)
enum class QkNormKind { rms, layer, l2 };
struct QkNormSpec {
  double eps = 1e-6;
  bool scope_all = false;  // "all": over the H*D (q) and Hkv*D (k) row (OLMo 2); "head": over D
  int weight_offset = 0;   // 1: x * (1 + w) (Gemma)
  QkNormKind kind = QkNormKind::rms;
  // per_head: weights (H, D) for q and (Hkv, D) for k, one D-vector per
  // head (Cohere's (H, D) weight, StableLM's per-head norms); else one (D)
  // weight shared by the heads. bias: "layer" with a bias (Phi's qk_layernorm).
  bool per_head = false;
  bool bias = false;
  // order "after_rope": the norm applies to q and k after rope (and
  // before Llama 4's temperature), as Hunyuan's query_layernorm /
  // key_layernorm (modeling_hunyuan_v1_dense); "before_rope" (the default)
  // as Qwen3, Gemma 3, OLMo 2.
  bool after_rope = false;
  bool has_weight() const { return kind != QkNormKind::l2; }
};

// attn_temperature: q scaled by log1p(floor((pos + 1) / floor_scale)) *
// attn_scale + 1 (modeling_llama4's attn_temperature_tuning on no-rope layers).
struct AttnTemperature {
  double floor_scale = 8192.0;  // Llama4TextConfig's defaults
  double attn_scale = 0.1;
};

// v_norm: each head's v normalized without a weight before the weighted
// sum, x * rsqrt(mean(x^2) + eps) (modeling_gemma4's v_norm, an RMSNorm with
// with_scale=False). Kind "rms" only.
struct VNormSpec {
  double eps = 1e-6;
};

// mla: DeepSeek's multi-head latent attention (CONTRACT.md "(v3) More of the
// forward pass"), as modeling_deepseek_v3.DeepseekV3Attention builds q, k and
// v. Letters: Rq q_lora_rank, Rkv kv_lora_rank, Dn qk_nope_head_dim, Dr
// qk_rope_head_dim, Dv v_head_dim.
struct MlaSpec {
  std::int64_t q_lora_rank =
      0;  // Rq; 0 = null: q_proj instead of q_a_proj, q_a_layernorm, q_b_proj
  std::int64_t kv_lora_rank = 0;      // Rkv
  std::int64_t qk_nope_head_dim = 0;  // Dn
  std::int64_t qk_rope_head_dim = 0;  // Dr: the part rope rotates, k's part shared by all heads
  std::int64_t v_head_dim = 0;        // Dv
  std::int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }  // Dn + Dr
  // The head size D of the forward pass: q and k are padded with zeros past
  // Dn + Dr, v past Dv (zeros change no score and no context column).
  std::int64_t head_size() const { return std::max(qk_head_dim(), v_head_dim); }
};

// alibi: true, {"max_bias": x} or {"slopes": [H numbers]}.
struct AlibiSpec {
  double max_bias = 8.0;
  // One per head: as given, or BLOOM/MPT's formula with max_bias (filled as a
  // config is resolved).
  std::vector<double> slopes;
};

// relative_bias (v3): T5's bucketed relative position bias
// (modeling_t5.T5Attention._relative_position_bucket and compute_bias): the
// score of query i and key j gains table[bucket(pos_j - pos_i), h], the table
// being relative_attention_bias.weight (num_buckets, H).
struct RelativeBiasSpec {
  std::int64_t num_buckets = 32;    // T5Config.relative_attention_num_buckets
  std::int64_t max_distance = 128;  // T5Config.relative_attention_max_distance
  bool bidirectional = true;        // encoder; the decoder's self-attention: false
  // The table's full key in the weights (T5 keeps one table in block 0 of
  // each stack); "" = relative_attention_bias.weight under weights_prefix.
  std::string table;
};

// disentangled: DeBERTa-v2/v3's relative attention
// (modeling_deberta_v2.DisentangledSelfAttention). Of query i and key j, with
// r = clamp(bucket(pos_i - pos_j) + span, 0, 2 span - 1) (build_relative_position,
// make_log_bucket_position; span = position_buckets, or max_relative_positions
// without buckets):
//   c2p  s += scale * q_i . pos_key[r]     (content to position)
//   p2c  s += scale * k_j . pos_query[r]   (position to content)
// pos_key = table[0:2 span] Wk^T + bk, pos_query = table[0:2 span] Wq^T + bq,
// the table (rel_embeddings, (rows >= 2 span, C)) through its LayerNorm when
// given; W = pos_key_proj / pos_query_proj under the layer, or the layer's own
// k / q projection (share_att_key). The default scale is 1/sqrt(D (1 + terms)).
// Letters: R2 = 2 span.
struct DisentangledSpec {
  bool c2p = true, p2c = true;                // pos_att_type
  std::int64_t position_buckets = 256;        // <= 0: no buckets, relative positions as they are
  std::int64_t max_relative_positions = 512;  // the log buckets' range (and span without buckets)
  bool share_att_key = true;                  // pos_key / pos_query from k_proj / q_proj
  // The table's full key in the weights ("" = rel_embeddings.weight under
  // weights_prefix), its LayerNorm's weight and bias keys ("" = no norm: norm_rel_ebd
  // without "layer_norm"; no bias key: none) and eps (DebertaV2Config's layer_norm_eps).
  std::string table, norm_weight, norm_bias;
  double norm_eps = 1e-7;
  std::int64_t span() const {
    return position_buckets > 0 ? position_buckets : max_relative_positions;
  }
  int terms() const { return int(c2p) + int(p2c); }
};

// residual_norm: the context is LayerNorm(o_proj(attention) + input),
// the LayerNorm a post-norm family applies after its attention (BertSelfOutput:
// LayerNorm(dense(h) + input_tensor)), with the weight and bias under `prefix`
// (full keys of the weights file, not under weights_prefix).
struct ResidualNormSpec {
  double eps = 1e-12;  // BertConfig's layer_norm_eps
  std::string prefix;  // resolved: weights_prefix + "output.LayerNorm." unless given
};

// input_norm: the input is the residual stream entering the block; the block's
// own pre-attention norm comes first, per position, in float32 as transformers
// computes it: rms  x * rsqrt(mean(x^2) + eps) * (offset + w)  (LlamaRMSNorm,
// T5LayerNorm; Gemma's offset 1), layer  (x - mean) * rsqrt(var + eps) * w (+ b)
// (nn.LayerNorm, biased variance), none  x as is (a post-norm family: BERT,
// OLMo 2). `weight` and `bias` are full keys of the weights file ("" = none).
enum class InputNormKind { none, rms, layer };
struct InputNormSpec {
  InputNormKind kind = InputNormKind::rms;
  double eps = 1e-6;
  std::string weight, bias;
  int offset = 0;
  // The norm's output times this, in float32 (Falcon-H1's attention_in_multiplier:
  // FalconH1DecoderLayer gives self_attn input_layernorm(h) * it).
  double multiplier = 1.0;
  // What the family calls it ("LlamaRMSNorm input_layernorm"; for none, why
  // there is none), for run.json and messages; "" from a plain config.
  std::string module;
};

// What the scores of CONTRACT.md "Scores, in order" apply, for one run: a
// config's (Config::spec, filled as the config is resolved) or built by hand.
// Each is off by default.
struct AttentionSpec {
  double scale = 1.0;   // multiplies q k^T (in float32)
  bool causal = false;  // mask keys after the query position
  // c > 0: q, k and v clamped to [-c, c] after the projection, before norms
  // and rope (OLMo's and DBRX's clip_qkv, MPT's attn_config.clip_qkv)
  std::optional<double> clip_qkv;
  // On q and k after the projection (and qk_norm); rotary_dim even, in 2..D.
  std::optional<RopeSpec> rope;
  // s += slope_h * (pos_j - pos_i): slopes holds one per head (H).
  std::optional<AlibiSpec> alibi;
  // W > 0: keys with i - W < j (and j - i < W when not causal).
  std::optional<std::int64_t> sliding_window;
  std::optional<double> softcap;      // c > 0: s = c * tanh(s / c)
  std::optional<QkNormSpec> qk_norm;  // RMSNorm of q and k (weights in Weights::q_norm/k_norm)
  bool sinks = false;                 // Weights::sinks joins every softmax row as a dropped column
  // T5: s += Weights::relative_bias[bucket(pos_j - pos_i), h] after alibi, before attn_mask
  std::optional<RelativeBiasSpec> relative_bias;
  bool add_zero_attn = false;  // torch MHA: a zero key and value appended (after bias_kv)
  bool gate = false;  // each head's context * sigmoid(x Wg^T + bg) (Weights::w_gate, b_gate)
  // n > 0: query i sees key j only when i / n == j / n.
  std::optional<std::int64_t> attention_chunk;
  // q times log1p(floor((pos + 1) / floor_scale)) * attn_scale + 1 after rope (positions or 0..L-1)
  std::optional<AttnTemperature> attn_temperature;
  // context = LayerNorm(o_proj(y) + x) with Weights::residual_norm_weight and
  // _bias (BertSelfOutput), after the output projection; self-attention, O == C.
  std::optional<ResidualNormSpec> residual_norm;
  // v's heads RMS-normalized without a weight after the projection (Gemma 4)
  std::optional<VNormSpec> v_norm;
  // Before the projections: the block's pre-attention norm of the input
  // (Weights::input_norm_weight and _bias), self-attention only.
  std::optional<InputNormSpec> input_norm;
  // DeBERTa's c2p and p2c terms (Weights::pos_key, pos_query), added
  // with the bias terms after softcap; self-attention only.
  std::optional<DisentangledSpec> disentangled;
  // A padded position masks its query row too (every key blocked: zero
  // weights): DeBERTa's get_attention_mask, mask[i] * mask[j]. Self-attention.
  bool mask_padded_queries = false;
  // torch MHA's add_bias_kv is on when Weights::bias_k is set.

  // The version 1 spec: scale and causal only.
  static AttentionSpec plain(float scale, bool causal) {
    AttentionSpec s;
    s.scale = scale;
    s.causal = causal;
    return s;
  }
};

// torch's attn_mask as given, before its shape is resolved against a run:
// bool (true = not allowed) or float (added to the scores). From a .npy, a
// bool dtype or integers give a bool mask, floats an additive one; inline in a
// config, JSON true/false give a bool mask, numbers an additive one.
struct AttnMask {
  bool additive = false;
  Tensor add;    // when additive
  Mask blocked;  // otherwise
  const std::vector<std::size_t>& shape() const { return additive ? add.shape : blocked.shape; }
};

// torch's attn_mask for one run: rows of T values addressed per (b, h, i).
// A shape that leaves out B or H shares its rows (stride 0).
struct ScoreMask {
  bool additive = false;              // float mask: add; bool mask: block
  std::vector<float> add;             // additive values; -inf = not allowed
  std::vector<std::uint8_t> blocked;  // 1 = not allowed
  std::size_t L = 0, T = 0;
  std::size_t stride_b = 0, stride_h = 0;  // elements between batches / heads

  std::size_t row_offset(std::size_t b, std::size_t h, std::size_t i) const {
    return b * stride_b + h * stride_h + i * T;
  }
  const float* add_row(std::size_t b, std::size_t h, std::size_t i) const {
    return add.data() + row_offset(b, h, i);
  }
  const std::uint8_t* blocked_row(std::size_t b, std::size_t h, std::size_t i) const {
    return blocked.data() + row_offset(b, h, i);
  }
};

}  // namespace attn

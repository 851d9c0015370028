// The model families: one row of data per Hugging Face model_type
// (family_row.h), each as its configuration_<type>.py and modeling_<type>.py
// in transformers read config.json. The supported list (CONTRACT.md, README,
// errors, tests) is this table.
#include <algorithm>

#include "family/family_row.h"
#include "family/hooks.h"

namespace attn::family {

namespace {

// Where the usual decoders keep a layer's attention.
const std::vector<std::string> kDecoderLayers = {"model.layers.{N}.self_attn.",
                                                 "layers.{N}.self_attn."};

WindowRule every_layer() {
  WindowRule w;
  w.kind = WindowRule::all;
  return w;
}

// Every period-th layer global, the rest sliding; counted from the last of
// each period unless global_first.
WindowRule global_every(std::int64_t period, const char* period_key = nullptr,
                        bool global_first = false) {
  WindowRule w;
  w.kind = WindowRule::global_every;
  w.period = period;
  w.period_key = period_key;
  w.global_first = global_first;
  return w;
}

// Qwen2 / Qwen3: layers from max_window_layers up slide when use_sliding_window.
WindowRule qwen_window() {
  WindowRule w;
  w.kind = WindowRule::from_layer;
  w.enable_key = "use_sliding_window";
  w.from_key = "max_window_layers";
  return w;
}

ScaleRule inverse_sqrt_of(const char* key) { return {ScaleRule::inverse_sqrt_of_key, key}; }

QkNormRule rms_norm(const char* scope, int offset) {
  QkNormRule q;
  q.scope = scope;
  q.offset = offset;
  return q;
}

RopeRule rope_keys(std::vector<const char*> theta_keys, std::vector<const char*> fraction_keys,
                   double fraction) {
  RopeRule r;
  r.theta_keys = std::move(theta_keys);
  r.fraction_keys = std::move(fraction_keys);
  r.fraction = fraction;
  return r;
}

RopeRule local_base(const char* key, double theta) {
  RopeRule r;
  r.local_theta_key = key;
  r.local_theta = theta;
  return r;
}

BiasRule fixed(bool on) { return {nullptr, on, false}; }

// Pairs (x[2i], x[2i+1]), or as config.json's `key` says when it has it.
RopeRule interleaved_rope(const char* key) {
  RopeRule r;
  r.interleaved = true;
  r.interleave_key = key;
  return r;
}

std::vector<Row> build() {
  std::vector<Row> t;
  auto row = [&t](const char* type) -> Row& {
    t.emplace_back();
    t.back().model_type = type;
    t.back().prefixes = kDecoderLayers;
    return t.back();
  };

  // ---- CONTRACT.md v2's families ---------------------------------------------------------
  row("gpt2")
      .at({"h.{N}.attn.", "transformer.h.{N}.attn."})
      .with_layout("gpt2")
      .biases(fixed(true), fixed(true))
      .with_hook(hooks::gpt2_scale);
  row("bert")
      .at({"bert.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_layout("bert")
      .causal_unless_encoder()
      .biases(fixed(true), fixed(true))
      .with_hook(hooks::bert_absolute_positions);
  row("roberta")
      .at({"roberta.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_layout("bert")
      .causal_unless_encoder()
      .biases(fixed(true), fixed(true))
      .with_hook(hooks::bert_absolute_positions);
  row("llama").bias("attention_bias", false).with_rope(10000.0);
  row("mistral")
      .bias("attention_bias", false)
      .with_rope(10000.0)
      .with_window(every_layer())
      .with_defaults({{"sliding_window", 4096}});
  row("mixtral")
      .bias("attention_bias", false)
      .with_rope(10000.0)
      .with_window(every_layer())
      .with_defaults({{"rope_theta", 1e6}});
  row("qwen2")
      .biases(fixed(true), fixed(false))  // Qwen2Attention: q/k/v with bias, o_proj without
      .with_rope(10000.0)
      .with_window(qwen_window())
      .with_defaults({{"sliding_window", 4096}, {"max_window_layers", 28}});
  row("qwen3")
      .bias("attention_bias", false)
      .with_qk_norm(rms_norm("head", 0))
      .with_rope(10000.0)
      .with_window(qwen_window())
      .with_defaults({{"head_dim", 128}, {"sliding_window", 4096}, {"max_window_layers", 28}});
  row("gemma").bias("attention_bias", false).with_rope(10000.0).with_defaults({{"head_dim", 256}});
  row("gemma2")
      .bias("attention_bias", false)
      .with_rope(10000.0)
      .with_scale(inverse_sqrt_of("query_pre_attn_scalar"))
      .softcap("attn_logit_softcapping")
      .with_window(global_every(2))  // even layers slide
      .with_defaults({{"head_dim", 256},
                      {"query_pre_attn_scalar", 256},
                      {"attn_logit_softcapping", 50.0},
                      {"sliding_window", 4096}});
  row("gemma3_text")
      .wrapped_in("gemma3", "text_config")
      .at({"model.layers.{N}.self_attn.", "language_model.model.layers.{N}.self_attn.",
           "model.language_model.layers.{N}.self_attn.", "layers.{N}.self_attn."})
      .bias("attention_bias", false)
      .with_qk_norm(rms_norm("head", 1))
      .with_scale(inverse_sqrt_of("query_pre_attn_scalar"))
      .softcap("attn_logit_softcapping")
      .with_window(global_every(6, "sliding_window_pattern"))  // 5 local : 1 global
      .with_rope(1e6, local_base("rope_local_base_freq", 10000.0))
      .with_defaults({{"hidden_size", 2304},
                      {"num_hidden_layers", 26},
                      {"num_attention_heads", 8},
                      {"num_key_value_heads", 4},
                      {"head_dim", 256},
                      {"query_pre_attn_scalar", 256},
                      {"sliding_window", 4096},
                      {"rope_theta", 1e6},
                      {"rope_local_base_freq", 10000.0},
                      {"max_position_embeddings", 131072}});
  row("phi3")
      .with_layout("fused")
      .biases(fixed(false), fixed(false))
      .with_rope(10000.0)
      .with_window(every_layer())
      .with_hook(hooks::phi3_longrope_names);
  row("gpt_neox")
      .at({"gpt_neox.layers.{N}.attention.", "layers.{N}.attention."})
      .with_layout("neox")
      .bias("attention_bias", true)
      .with_rope(10000.0, rope_keys({"rope_theta", "rotary_emb_base"},
                                    {"rotary_pct", "partial_rotary_factor"}, 0.25));
  row("falcon")
      .at({"transformer.h.{N}.self_attention.", "h.{N}.self_attention."})
      .with_layout("falcon")
      .bias("bias", false)
      .with_rope(10000.0)
      .with_hook(hooks::falcon_architecture);
  row("bloom")
      .at({"transformer.h.{N}.self_attention.", "h.{N}.self_attention."})
      .with_layout("neox")
      .biases(fixed(true), fixed(true))
      .with_alibi();
  row("mpt")
      .at({"transformer.blocks.{N}.attn.", "blocks.{N}.attn."})
      .with_layout("fused")
      .biases({"no_bias", false, true}, {"no_bias", false, true})
      .with_hook(hooks::mpt_attn_config);
  row("opt")
      .at({"model.decoder.layers.{N}.self_attn.", "decoder.layers.{N}.self_attn."})
      .bias("enable_bias", true);
  row("olmo2")
      .bias("attention_bias", false)
      .with_qk_norm(rms_norm("all", 0))
      .with_rope(10000.0)
      .with_defaults({{"rms_norm_eps", 1e-5}});
  row("gpt_oss")
      .bias("attention_bias", true)
      .with_sinks()
      .with_rope(150000.0)
      .with_window(global_every(2))  // even layers slide (config.json lists layer_types)
      .with_defaults({{"num_attention_heads", 64},
                      {"num_key_value_heads", 8},
                      {"head_dim", 64},
                      {"sliding_window", 128},
                      {"rope_scaling",
                       {{"rope_type", "yarn"},
                        {"factor", 32.0},
                        {"beta_fast", 32.0},
                        {"beta_slow", 1.0},
                        {"truncate", false},
                        {"original_max_position_embeddings", 4096}}}});

  // ---- CONTRACT.md v3's decoders ------------------------------------------------------------
  // (rows that need no new forward-pass feature)

  // ---- CONTRACT.md v3's encoders ------------------------------------------------------------
  // (BERT-like, vision and CLIP towers)

  // ---- CONTRACT.md v3: gated attention, qk_norm kinds, chunks, temperature ------------------
  // (Qwen3-Next / Qwen3.5, Gemma 4, Cohere, StableLM, Llama 4)

  // ---- CONTRACT.md v3: multi-head latent attention ------------------------------------------
  // (DeepSeek-V2 / V3)
  // DeepseekV2Attention: V2's complex rope multiplies (x[2i], x[2i+1]) pairs; q_lora_rank
  // null (V2-Lite) is q_proj. DeepseekV2Config's defaults.
  row("deepseek_v2")
      .bias("attention_bias", false)
      .with_rope(10000.0, interleaved_rope(nullptr))
      .with_mla()
      .with_defaults({{"hidden_size", 4096},
                      {"num_attention_heads", 32},
                      {"max_position_embeddings", 2048},
                      {"q_lora_rank", 1536},
                      {"kv_lora_rank", 512},
                      {"qk_nope_head_dim", 128},
                      {"qk_rope_head_dim", 64},
                      {"v_head_dim", 128}});
  // DeepseekV3Attention (also Kimi-K2 relabelled deepseek_v3): rope_interleave (default true)
  // de-interleaves before rotate_half, the same scores as interleaved pairs. DeepseekV3Config's
  // defaults.
  row("deepseek_v3")
      .bias("attention_bias", false)
      .with_rope(10000.0, interleaved_rope("rope_interleave"))
      .with_mla()
      .with_defaults({{"hidden_size", 7168},
                      {"num_attention_heads", 128},
                      {"max_position_embeddings", 4096},
                      {"q_lora_rank", 1536},
                      {"kv_lora_rank", 512},
                      {"qk_nope_head_dim", 128},
                      {"qk_rope_head_dim", 64},
                      {"v_head_dim", 128}});

  // Kimi-K2 (Moonshot's configuration_deepseek.DeepseekV3Config under its own model_type,
  // so engines can tell it apart); K2.5 and later nest it as kimi_k25's text_config, the
  // weights under language_model.
  row("kimi_k2")
      .wrapped_in("kimi_k25", "text_config")
      .at({"model.layers.{N}.self_attn.", "language_model.model.layers.{N}.self_attn.",
           "layers.{N}.self_attn."})
      .bias("attention_bias", false)
      .with_rope(10000.0, interleaved_rope("rope_interleave"))
      .with_mla()
      .with_defaults({{"hidden_size", 7168},
                      {"num_attention_heads", 128},
                      {"max_position_embeddings", 4096},
                      {"q_lora_rank", 1536},
                      {"kv_lora_rank", 512},
                      {"qk_nope_head_dim", 128},
                      {"qk_rope_head_dim", 64},
                      {"v_head_dim", 128}});

  // ---- CONTRACT.md v3: relative position bias ------------------------------------------------
  // (T5)

  return t;
}

}  // namespace

const std::vector<Row>& rows() {
  static const std::vector<Row> t = build();
  return t;
}

const Row* row_of(const std::string& model_type) {
  for (const Row& r : rows())
    if (r.model_type == model_type) return &r;
  return nullptr;
}

}  // namespace attn::family

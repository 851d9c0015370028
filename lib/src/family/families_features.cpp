// The families whose attention needs a forward-pass feature of its own
// (table.h): gated attention (Qwen3-Next, Qwen3.5), Gemma 4 (k_eq_v, v_norm), Gemma 3n (v_norm),
// q/k norm kinds (Cohere, StableLM), chunks and temperature (Llama 4),
// multi-head latent attention (DeepSeek-V2 and V3, Kimi-K2) and relative
// position bias (T5, mT5, UMT5).
#include "family/hooks.h"
#include "family/table.h"

namespace attn::family {

namespace {

// Every period-th layer is full attention, the others of `type` (transformers'
// layer_types default when config.json lists none).
WindowRule every_nth_full(std::int64_t period, const char* key, const char* type) {
  WindowRule w = global_every(period, key);
  w.local_type = type;
  return w;
}

// Gemma 4's use_bidirectional_attention: "vision" (the released checkpoints) is causal for
// text; "all" makes every layer bidirectional with the window W // 2 + 1, whose bound
// (exclusive or inclusive) the masking code of transformers' releases does not agree on:
// refused rather than guessed.
Refusal gemma4_all_bidirectional() {
  Refusal r;
  r.key = "use_bidirectional_attention";
  r.values = {"all"};
  r.values_run = false;  // the value refused; any other runs
  r.why =
      "{value} (every token both ways) is not supported for Gemma 4 yet; a plain --config with "
      "\"attention\": \"multi\" and the layer's sliding_window runs such a layer";
  return r;
}

// Pairs (x[2i], x[2i+1]), or as config.json's `key` says when it has it.
RopeRule interleaved_rope(const char* key) {
  RopeRule r;
  r.interleaved = true;
  r.interleave_key = key;
  return r;
}

// UMT5 (modeling_umt5.UMT5LayerSelfAttention): UMT5Attention(config,
// has_relative_attention_bias=True) in every block, each its own table.
RelativeBiasRule per_layer_table() {
  RelativeBiasRule r;
  r.first_block = false;
  return r;
}

}  // namespace

void add_feature_rows(Table& t) {
  // Qwen3-Next and Qwen3.5's full-attention layers (Qwen3NextAttention): a gate per head in
  // q_proj, (1 + w) RMS q/k norms per head, partial rotary (0.25), every 4th layer full
  // (full_attention_interval; the others are Gated DeltaNet linear attention, not run).
  t.row("qwen3_next")
      .with_embedding(word_embedding())
      .bias("attention_bias", false)
      .with_gate()
      .with_input_norm(rms_input("input_layernorm.", 1, "Qwen3NextRMSNorm"))
      .with_qk_norm(rms_norm("head", 1))
      .with_rope(10000.0, rope_keys({"rope_theta"}, {"partial_rotary_factor"}, 0.25))
      .with_window(every_nth_full(4, "full_attention_interval", "linear_attention"))
      .with_defaults({{"num_attention_heads", 16},
                      {"num_key_value_heads", 2},
                      {"head_dim", 256},
                      {"rms_norm_eps", 1e-6}});
  t.row("qwen3_5_text", t.of("qwen3_next"))
      .wrapped_in("qwen3_5", "text_config")
      .at({"model.language_model.layers.{N}.self_attn.", "model.layers.{N}.self_attn.",
           "layers.{N}.self_attn."})
      .with_defaults({{"num_key_value_heads", 4}});
  // Gemma 4's text layers (Gemma4TextAttention; gemma4's text_config): layer_types (else
  // every 6th full), q/k norms x * w (no 1 + w), scale 1, rope_parameters per layer type
  // (proportional on the full layers); the full layers' sizes, k_eq_v and the values' norm
  // are hooks::gemma4_layers; the last num_kv_shared_layers layers reuse an earlier layer's
  // keys and values (refused). Gemma4TextConfig's defaults.
  WindowRule gemma4_window = global_every(6);  // 5 sliding : 1 full, the last one full
  gemma4_window.last_full = true;
  t.row("gemma4_text")
      .wrapped_in("gemma4", "text_config")
      .at({"model.language_model.layers.{N}.self_attn.", "model.layers.{N}.self_attn.",
           "language_model.model.layers.{N}.self_attn.", "layers.{N}.self_attn."})
      .bias("attention_bias", false)
      .with_qk_norm(rms_norm("head", 0))
      .with_input_norm(rms_input("input_layernorm.", 0, "Gemma4RMSNorm"))
      .with_scale({ScaleRule::one, nullptr})
      .with_window(gemma4_window)
      .with_rope(10000.0)
      .with_v_norm()
      .shares_kv("num_kv_shared_layers")
      .refuse(gemma4_all_bidirectional())
      .with_hook(hooks::gemma4_layers)
      .with_defaults({{"hidden_size", 2304},
                      {"num_hidden_layers", 30},
                      {"num_attention_heads", 8},
                      {"num_key_value_heads", 4},
                      {"head_dim", 256},
                      {"global_head_dim", 512},
                      {"rms_norm_eps", 1e-6},
                      {"sliding_window", 512},
                      {"max_position_embeddings", 131072},
                      {"rope_parameters",
                       {{"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}},
                        {"full_attention",
                         {{"rope_type", "proportional"},
                          {"partial_rotary_factor", 0.25},
                          {"rope_theta", 1000000.0}}}}}});
  // Gemma 3n's text layers (Gemma3nTextAttention; gemma3n's text_config): q_norm and k_norm
  // Gemma3nRMSNorm x * w (no 1 + w) per head, v_norm the same without a weight, all before
  // rope; scale 1; layer_types (else every 5th full); the sliding layers' rope
  // rope_local_base_freq without rope_scaling; the last num_kv_shared_layers layers reuse an
  // earlier layer's keys and values (refused, as Gemma 4's). Its block's input_layernorm
  // (x * w) normalizes AltUp's active prediction, which --residual takes as its input; the
  // embedding goes through AltUp (--tokens refused). Gemma3nTextConfig's defaults.
  t.row("gemma3n_text")
      .wrapped_in("gemma3n", "text_config")
      .at({"model.language_model.layers.{N}.self_attn.", "model.layers.{N}.self_attn.",
           "layers.{N}.self_attn."})
      .bias("attention_bias", false)
      .with_qk_norm(rms_norm("head", 0))
      .with_v_norm()
      .with_input_norm(rms_input("input_layernorm.", 0, "Gemma3nRMSNorm"))
      .with_scale({ScaleRule::one, nullptr})
      .with_window(global_every(5))
      .with_rope(1e6, local_base("rope_local_base_freq", 10000.0))
      .shares_kv("num_kv_shared_layers")
      .with_defaults({{"hidden_size", 2048},
                      {"num_hidden_layers", 35},
                      {"num_attention_heads", 8},
                      {"num_key_value_heads", 2},
                      {"head_dim", 256},
                      {"rms_norm_eps", 1e-6},
                      {"sliding_window", 512},
                      {"rope_theta", 1e6},
                      {"rope_local_base_freq", 10000.0},
                      {"num_kv_shared_layers", 15},
                      {"max_position_embeddings", 32768}});
  // Cohere (CohereAttention): interleaved rotary (rotate_half over pairs), and with
  // use_qk_norm a CohereLayerNorm per head (weights (H, D) and (Hkv, D), no bias).
  RopeRule pairs;
  pairs.interleaved = true;
  QkNormRule cohere_norm;
  cohere_norm.kind = "layer";
  cohere_norm.per_head = true;
  cohere_norm.enable_key = "use_qk_norm";
  cohere_norm.eps_keys = {"layer_norm_eps"};
  cohere_norm.eps = 1e-5;
  // CohereLayerNorm: a LayerNorm without bias.
  const InputNormRule cohere_input =
      layer_input("input_layernorm.", "layer_norm_eps", 1e-5, fixed(false), "CohereLayerNorm");
  t.row("cohere")
      .with_embedding(word_embedding())
      .bias("attention_bias", false)
      .with_input_norm(cohere_input)
      .with_rope(10000.0, pairs)
      .with_qk_norm(cohere_norm);
  // Cohere 2: 3 sliding layers of 4 (sliding_window_pattern, or layer_types) with
  // interleaved rotary; the global layers have no rope (hooks::cohere2_rope_on_sliding).
  t.row("cohere2")
      .with_embedding(word_embedding())
      .bias("attention_bias", false)
      .with_input_norm(cohere_input)
      .with_rope(10000.0, pairs)
      .with_window(global_every(4, "sliding_window_pattern"))
      .with_hook(hooks::cohere2_rope_on_sliding)
      .with_defaults({{"sliding_window", 4096}});
  // StableLM (StableLmAttention): partial rotary (0.25), q/k/v bias from use_qkv_bias, and
  // with qk_layernorm one nn.LayerNorm per head (q_layernorm.norms.{h}, no bias).
  QkNormRule per_head_layer_norm = cohere_norm;
  per_head_layer_norm.enable_key = "qk_layernorm";
  t.row("stablelm")
      .with_embedding(word_embedding())
      .rename("q_layernorm.", "q_norm.")
      .rename("k_layernorm.", "k_norm.")
      .biases({"use_qkv_bias", false, false}, fixed(false))
      .with_input_norm(layer_input("input_layernorm.", "layer_norm_eps", 1e-5))
      .with_rope(10000.0, rope_keys({"rope_theta"}, {"partial_rotary_factor"}, 0.25))
      .with_qk_norm(per_head_layer_norm);
  // Llama 4's text layers: interleaved rotary (complex pairs) on 3 layers of 4, which are
  // chunked and L2-normed; the 4th has no rope and tunes its queries' temperature
  // (hooks::llama4_layers reads no_rope_layers).
  t.row("llama4_text")
      .with_embedding(word_embedding())
      .wrapped_in("llama4", "text_config")
      .at({"model.layers.{N}.self_attn.", "language_model.model.layers.{N}.self_attn.",
           "model.language_model.layers.{N}.self_attn.", "layers.{N}.self_attn."})
      .bias("attention_bias", false)
      .with_rope(500000.0, pairs)
      .with_window(every_nth_full(4, "no_rope_layer_interval", "chunked_attention"))
      .with_hook(hooks::llama4_layers)
      .with_defaults({{"num_attention_heads", 40},
                      {"num_key_value_heads", 8},
                      {"head_dim", 128},
                      {"rms_norm_eps", 1e-5},
                      {"attention_chunk_size", 8192}});

  // Multi-head latent attention. DeepseekV2Attention: V2's complex rope multiplies
  // (x[2i], x[2i+1]) pairs; q_lora_rank null (V2-Lite) is q_proj. DeepseekV2Config's defaults.
  t.row("deepseek_v2")
      .with_embedding(word_embedding())
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
  // DeepseekV3Attention is V2's, and DeepseekV3Config keeps V2's ranks: rope_interleave
  // (default true) de-interleaves before rotate_half, the same scores as interleaved pairs.
  t.row("deepseek_v3", t.of("deepseek_v2"))
      .with_rope(10000.0, interleaved_rope("rope_interleave"))
      .with_defaults(
          {{"hidden_size", 7168}, {"num_attention_heads", 128}, {"max_position_embeddings", 4096}});
  // Kimi-K2 (Moonshot's configuration_deepseek.DeepseekV3Config under its own model_type,
  // so engines can tell it apart); K2.5 and later nest it as kimi_k25's text_config, the
  // weights under language_model.
  t.row("kimi_k2", t.of("deepseek_v3"))
      .wrapped_in("kimi_k25", "text_config")
      .at({"model.layers.{N}.self_attn.", "language_model.model.layers.{N}.self_attn.",
           "layers.{N}.self_attn."});

  // modeling_t5.T5Attention: q, k, v, o without bias, H * d_kv wide, no
  // 1/sqrt(d_kv), the relative position bias of block 0 in every layer; --layer N
  // is encoder block N, --decoder-layer N [--cross] the decoder's causal
  // self-attention (the decoder's block-0 table, one-directional) and its
  // EncDecAttention (no table). T5Config's defaults (num_decoder_layers unset:
  // num_layers); MT5Config's and UMT5Config's differ in the heads and layers.
  DecoderRule t5_decoder;
  t5_decoder.self_prefixes = {"decoder.block.{N}.layer.0.SelfAttention."};
  t5_decoder.cross_prefixes = {"decoder.block.{N}.layer.1.EncDecAttention."};
  t5_decoder.decoder_layers_key = "num_decoder_layers";
  t.row("t5")
      .at({"encoder.block.{N}.layer.0.SelfAttention."})
      .with_decoder(t5_decoder)
      .rename("q.", "q_proj.")
      .rename("k.", "k_proj.")
      .rename("v.", "v_proj.")
      .rename("o.", "o_proj.")
      .bidirectional_attention()
      .biases(fixed(false), fixed(false))
      .with_input_norm(rms_input("layer_norm.", 0, "T5LayerNorm", "layer_norm_epsilon"))
      .with_scale({ScaleRule::one, nullptr})
      .with_relative_bias({})
      .with_defaults({{"d_model", 512},
                      {"d_kv", 64},
                      {"num_heads", 8},
                      {"num_layers", 6},
                      {"relative_attention_num_buckets", 32},
                      {"relative_attention_max_distance", 128}});
  t.row("mt5", t.of("t5")).with_defaults({{"num_heads", 6}, {"num_layers", 8}});
  t.row("umt5", t.of("mt5")).with_relative_bias(per_layer_table());
}

}  // namespace attn::family

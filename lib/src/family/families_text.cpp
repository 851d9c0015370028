// More decoder language models on the forward pass's existing features
// (table.h): GLM-4 and GLM-4.5/4.6, EXAONE 4, ERNIE 4.5 (dense and MoE),
// Seed-OSS, Apertus, Qwen2-MoE and Qwen3-MoE, OLMo 3, Phi-MoE, Persimmon and GPT-Neo, each as its
// configuration_<type>.py and modeling_<type>.py in transformers read config.json.
#include "family/hf_config.h"
#include "family/table.h"

namespace attn::family {

namespace {

// Partial rotary as a fraction of the head (partial_rotary_factor, default
// `fraction`), pairs (x[2i], x[2i+1]) or halves.
RopeRule partial(double fraction, bool interleaved) {
  RopeRule r = rope_keys({"rope_theta"}, {"partial_rotary_factor"}, fraction);
  r.interleaved = interleaved;
  return r;
}

// Qwen2MoeConfig.__post_init__'s layer_types: even layers below max_window_layers slide when
// use_sliding_window ("sliding_attention" if (i + 1) % 2 and i < max_window_layers).
WindowRule qwen2_moe_window() {
  WindowRule w = global_every(2);
  w.enable_key = "use_sliding_window";
  w.below_key = "max_window_layers";
  return w;
}

// Qwen3MoeAttention: every layer slides (config.sliding_window) when use_sliding_window.
WindowRule qwen3_moe_window() {
  WindowRule w = every_layer();
  w.enable_key = "use_sliding_window";
  return w;
}

// GPTNeoSelfAttention: attention_layers (or attention_types' runs) names each layer "global"
// or "local"; a local layer keeps the window_size latest keys (bias ^ tril(bias,
// -window_size)).
WindowRule gpt_neo_window() {
  WindowRule w;
  w.kind = WindowRule::listed;
  w.list_key = "attention_layers";
  w.runs_key = "attention_types";
  w.local_name = "local";
  w.global_name = "global";
  w.window_key = "window_size";
  return w;
}

// PhimoeRotaryEmbedding: a rope_scaling (longrope) multiplies cos and sin by its short_mscale
// (positions up to original_max_position_embeddings) or long_mscale (past them) instead of
// longrope's own attention factor. attn-run has one factor for every position: the two equal
// (Phi-3.5-MoE's) run, others are refused.
void phimoe_mscale(LayerContext& c) {
  if (!c.out.contains("rope") || !c.out["rope"].contains("scaling")) return;
  json& s = c.out["rope"]["scaling"];
  const char* key = c.hf.first_set({"rope_scaling", "rope_parameters"});
  const auto mscale = [&](const char* k) {
    if (!s.contains(k) || !s[k].is_number() || !(s[k].get<double>() > 0.0))
      c.hf.fail(key, std::string("expected ") + k + ", a number > 0 (PhimoeRotaryEmbedding)");
    return s[k].get<double>();
  };
  const double short_m = mscale("short_mscale"), long_m = mscale("long_mscale");
  if (short_m != long_m)
    c.hf.fail(key,
              "short_mscale and long_mscale differ (attn-run runs one attention factor for "
              "every position; Phi-3.5-MoE's are equal)");
  s.erase("short_mscale");
  s.erase("long_mscale");
  s["attention_factor"] = short_m;
}

// ApertusDecoderLayer: attention_layernorm (ApertusRMSNorm, rms_norm_eps) before the attention.
InputNormRule apertus_input_norm() {
  InputNormRule r = rms_input("attention_layernorm.", 0, "ApertusRMSNorm");
  r.names = {"attention_layernorm.", "input_layernorm."};
  return r;
}

// GPTNeoBlock: ln_1 (nn.LayerNorm, layer_norm_epsilon) before attn, whose attention module is
// attn.attention (two parts of the prefix up to the block).
InputNormRule gpt_neo_input_norm() {
  InputNormRule r = layer_input("ln_1.", "layer_norm_epsilon", 1e-5);
  r.up = 2;
  return r;
}

}  // namespace

void add_text_rows(Table& t) {
  // Glm4Attention: q/k/v with attention_bias (default true), o_proj without; rope on the first
  // partial_rotary_factor (0.5) of the head in pairs (cos/sin repeat_interleave'd, rotate_half
  // of x[..., 0::2] / x[..., 1::2]). Glm4Config's defaults.
  t.row("glm4")
      .with_embedding(word_embedding())
      .biases({"attention_bias", true}, fixed(false))
      .with_rope(10000.0, partial(0.5, /*interleaved=*/true))
      .with_defaults({{"hidden_size", 4096},
                      {"num_hidden_layers", 40},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 2},
                      {"head_dim", 128},
                      {"max_position_embeddings", 131072}});
  // Glm4MoeAttention (GLM-4.5, 4.6, 4.7): q/k/v with attention_bias, o_proj without; with
  // use_qk_norm an RMSNorm per head (x * w) before rope; rotate_half on the first
  // partial_rotary_factor (0.5) of the head. head_dim from config.json, else C / H.
  QkNormRule glm_qk_norm = rms_norm("head", 0);
  glm_qk_norm.enable_key = "use_qk_norm";
  t.row("glm4_moe")
      .with_embedding(word_embedding())
      .biases({"attention_bias", false}, fixed(false))
      .with_qk_norm(glm_qk_norm)
      .with_rope(10000.0, partial(0.5, /*interleaved=*/false))
      .with_defaults({{"hidden_size", 4096},
                      {"num_hidden_layers", 46},
                      {"num_attention_heads", 96},
                      {"num_key_value_heads", 8},
                      {"rms_norm_eps", 1e-5},
                      {"max_position_embeddings", 131072}});
  // Exaone4Attention: no biases; an RMSNorm per head on q and k before rope; the sliding layers
  // (layer_types, else sliding_window_pattern: every 4th full) rope and slide, the full ones
  // are NoPE when the model has a window (sliding_window null: every layer ropes, none
  // slides). Exaone4Config's defaults.
  RopeRule exaone_rope;
  exaone_rope.full_nope_with_window = true;
  t.row("exaone4")
      .with_embedding(word_embedding())
      .with_input_norm(
          post_norm("post-norm: Exaone4DecoderLayer's post_attention_layernorm comes after "
                    "its attention"))
      .biases(fixed(false), fixed(false))
      .with_qk_norm(rms_norm("head", 0))
      .with_rope(10000.0, exaone_rope)
      .with_window(global_every(4, "sliding_window_pattern"))
      .with_defaults({{"hidden_size", 4096},
                      {"num_hidden_layers", 32},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 32},
                      {"rms_norm_eps", 1e-5},
                      {"max_position_embeddings", 2048},
                      {"sliding_window", 4096},
                      {"sliding_window_pattern", 4}});
  // Ernie4_5Attention: q/k/v/o with use_bias; rope in pairs over the whole head (GLM's
  // interleaved rotate_half, in float32). Ernie4_5Config's defaults (rope_theta 500000).
  RopeRule pairs;
  pairs.interleaved = true;
  t.row("ernie4_5")
      .with_embedding(word_embedding())
      .bias("use_bias", false)
      .with_rope(500000.0, pairs)
      .with_defaults({{"hidden_size", 1024},
                      {"num_hidden_layers", 18},
                      {"num_attention_heads", 16},
                      {"num_key_value_heads", 2},
                      {"head_dim", 128},
                      {"max_position_embeddings", 131072}});
  // Ernie4_5_MoeAttention is Ernie4_5Attention; Ernie4_5_MoeConfig has no head_dim (C / H).
  t.row("ernie4_5_moe", t.of("ernie4_5"))
      .with_defaults({{"hidden_size", 2560},
                      {"num_hidden_layers", 28},
                      {"num_attention_heads", 20},
                      {"num_key_value_heads", 4},
                      {"head_dim", nullptr}});
  // SeedOssAttention: q/k/v with attention_bias (default true), o_proj with attention_out_bias
  // (default false). SeedOssConfig's defaults.
  t.row("seed_oss")
      .with_embedding(word_embedding())
      .biases({"attention_bias", true}, {"attention_out_bias", false})
      .with_rope(10000.0)
      .with_defaults({{"hidden_size", 4096},
                      {"num_hidden_layers", 64},
                      {"num_attention_heads", 80},
                      {"num_key_value_heads", 8},
                      {"head_dim", 128},
                      {"max_position_embeddings", 524288}});
  // ApertusAttention: LlamaAttention with an RMSNorm per head on q and k before rope.
  // ApertusConfig's rope: llama3 scaling of base 12000000 unless config.json says otherwise.
  t.row("apertus")
      .with_embedding(word_embedding())
      .with_input_norm(apertus_input_norm())
      .bias("attention_bias", false)
      .with_qk_norm(rms_norm("head", 0))
      .with_rope(12000000.0)
      .with_defaults({{"hidden_size", 4096},
                      {"num_hidden_layers", 32},
                      {"num_attention_heads", 32},
                      {"rms_norm_eps", 1e-5},
                      {"max_position_embeddings", 65536},
                      {"rope_scaling",
                       {{"rope_type", "llama3"},
                        {"factor", 8.0},
                        {"original_max_position_embeddings", 8192},
                        {"low_freq_factor", 1.0},
                        {"high_freq_factor", 4.0}}}});
  // Qwen2MoeAttention: q/k/v with qkv_bias (default true), o_proj without.
  t.row("qwen2_moe")
      .with_embedding(word_embedding())
      .biases({"qkv_bias", true}, fixed(false))
      .with_rope(10000.0)
      .with_window(qwen2_moe_window())
      .with_defaults({{"hidden_size", 2048},
                      {"num_hidden_layers", 24},
                      {"num_attention_heads", 16},
                      {"num_key_value_heads", 16},
                      {"max_position_embeddings", 32768},
                      {"sliding_window", 4096},
                      {"max_window_layers", 28}});
  // Qwen3MoeAttention: Qwen3's (q/k norms per head, attention_bias), head_dim from config.json
  // else C / H.
  t.row("qwen3_moe")
      .with_embedding(word_embedding())
      .bias("attention_bias", false)
      .with_qk_norm(rms_norm("head", 0))
      .with_rope(10000.0)
      .with_window(qwen3_moe_window())
      .with_defaults({{"hidden_size", 2048},
                      {"num_hidden_layers", 24},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 4},
                      {"max_position_embeddings", 32768},
                      {"sliding_window", 4096}});
  // Olmo3Attention: OLMo 2's (RMSNorm over all heads' q and k before the head view), 3
  // sliding layers of 4 (layer_types); the sliding layers' rope takes no rope_scaling
  // (Olmo3Model's rotary_embs["sliding_attention"] is a default rope; llama.cpp's
  // rope_freq_scale_train_swa 1). Olmo3Config's (Olmo2Config's) defaults.
  RopeRule olmo3_rope;
  olmo3_rope.sliding_unscaled = true;
  t.row("olmo3")
      .with_embedding(word_embedding())
      .with_input_norm(
          post_norm("post-norm: Olmo3DecoderLayer's post_attention_layernorm comes after "
                    "its attention"))
      .bias("attention_bias", false)
      .with_qk_norm(rms_norm("all", 0))
      .with_rope(10000.0, olmo3_rope)
      .with_window(global_every(4))
      .with_defaults({{"hidden_size", 4096},
                      {"num_hidden_layers", 32},
                      {"num_attention_heads", 32},
                      {"rms_norm_eps", 1e-5},
                      {"max_position_embeddings", 2048},
                      {"sliding_window", 4096}});
  // PhimoeAttention is LlamaAttention: q/k/v and o_proj with attention_bias; every layer slides
  // when sliding_window is set (MixtralModel's mask); longrope with Phi-MoE's mscale
  // (phimoe_mscale). PhimoeConfig's defaults.
  t.row("phimoe")
      .with_embedding(word_embedding())
      .with_input_norm(layer_input("input_layernorm.", "rms_norm_eps", 1e-5))
      .bias("attention_bias", false)
      .with_rope(1000000.0)
      .with_window(every_layer())
      .with_hook(phimoe_mscale)
      .with_defaults({{"hidden_size", 4096},
                      {"num_hidden_layers", 32},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 8},
                      {"rms_norm_eps", 1e-5},
                      {"max_position_embeddings", 131072}});
  // PersimmonAttention: query_key_value (bias) viewed (H, 3, D) per head, GPT-NeoX's layout;
  // with qk_layernorm (default true) an nn.LayerNorm(head_dim) with a bias on q and on k
  // before rope; rotate_half on the first partial_rotary_factor (0.5) of the head; dense with
  // bias. PersimmonConfig's defaults.
  QkNormRule persimmon_norm;
  persimmon_norm.kind = "layer";
  persimmon_norm.enable_key = "qk_layernorm";
  persimmon_norm.eps_keys = {"layer_norm_eps"};
  persimmon_norm.eps = 1e-5;
  persimmon_norm.bias = true;
  t.row("persimmon")
      .with_input_norm(layer_input("input_layernorm.", "layer_norm_eps", 1e-5))
      .with_layout("neox")
      .rename("q_layernorm.", "q_norm.")
      .rename("k_layernorm.", "k_norm.")
      .biases(fixed(true), fixed(true))
      .with_rope(25000.0, partial(0.5, /*interleaved=*/false))
      .with_qk_norm(persimmon_norm)
      .with_defaults({{"hidden_size", 4096},
                      {"num_hidden_layers", 36},
                      {"num_attention_heads", 64},
                      {"qk_layernorm", true},
                      {"layer_norm_eps", 1e-5},
                      {"max_position_embeddings", 16384}});
  // GPTNeoSelfAttention: q/k/v_proj without bias, out_proj with; no 1/sqrt(D) (scale 1);
  // global and local layers (gpt_neo_window). GPTNeoConfig's defaults.
  t.row("gpt_neo")
      .with_input_norm(gpt_neo_input_norm())
      .at({"transformer.h.{N}.attn.attention.", "h.{N}.attn.attention."})
      .biases(fixed(false), fixed(true))
      .with_scale({ScaleRule::one, nullptr})
      .with_window(gpt_neo_window())
      .with_defaults({{"hidden_size", 2048},
                      {"num_layers", 24},
                      {"num_heads", 16},
                      {"window_size", 256},
                      {"max_position_embeddings", 2048},
                      {"attention_types",
                       json::array({json::array({json::array({"global", "local"}), 12})})}});
}

}  // namespace attn::family

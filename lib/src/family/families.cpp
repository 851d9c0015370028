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

// PhiAttention with qk_layernorm: nn.LayerNorm(head_dim, eps=layer_norm_eps) with a bias on q
// and on k, shared by the heads, before rope.
QkNormRule phi_qk_layernorm() {
  QkNormRule q;
  q.kind = "layer";
  q.enable_key = "qk_layernorm";
  q.eps_keys = {"layer_norm_eps"};
  q.eps = 1e-5;
  q.bias = true;
  return q;
}

// Partial rotary as a count of dimensions (GPT-J's rotary_dim; null = the head).
RopeRule rotary_dims(const char* key, bool interleaved) {
  RopeRule r;
  r.fraction_keys = {};
  r.dims_key = key;
  r.interleaved = interleaved;
  return r;
}

// SmolLM3 / Llama 4: no_rope_layers, else no rope on every interval-th layer.
RopeRule no_rope_every(std::int64_t interval) {
  RopeRule r;
  r.no_rope_key = "no_rope_layers";
  r.no_rope_interval_key = "no_rope_layer_interval";
  r.no_rope_interval = interval;
  return r;
}

// SmolLM3Config: the layers without rope slide when use_sliding_window and
// sliding_window are set.
WindowRule sliding_where_no_rope() {
  WindowRule w;
  w.kind = WindowRule::no_rope;
  w.enable_key = "use_sliding_window";
  return w;
}

// ModernBERT: global layers take global_rope_theta, local ones local_rope_theta (and, as
// transformers v5 applies a legacy rope_scaling to both, its scaling too).
RopeRule modernbert_rope() {
  RopeRule r = local_base("local_rope_theta", 10000.0);
  r.global_theta_key = "global_rope_theta";
  r.local_scaling = true;
  return r;
}

// ModernBERT: layer % global_attn_every_n_layers != 0 is local, a symmetric window of
// local_attention // 2 keys each side: the contract's bidirectional W = that + 1.
WindowRule modernbert_window() {
  WindowRule w = global_every(3, "global_attn_every_n_layers", true);
  w.window_key = "local_attention";
  w.div = 2;
  w.add = 1;
  return w;
}

// Pairs (x[2i], x[2i+1]), or as config.json's `key` says when it has it.
RopeRule interleaved_rope(const char* key) {
  RopeRule r;
  r.interleaved = true;
  r.interleave_key = key;
  return r;
}

// BertSelfOutput (RoBERTa's, XLM-RoBERTa's and ELECTRA's are copies of it):
// LayerNorm(dense(h) + input_tensor) with layer_norm_eps, inside `module`
// (BertAttention), so its output is what users compare with.
ResidualNormRule bert_self_output(const char* module) {
  ResidualNormRule r;
  r.name = "attention.output.LayerNorm.";
  r.module = module;
  return r;
}

// DistilBERT's TransformerBlock: sa_layer_norm(sa_output + x), nn.LayerNorm(dim,
// eps=1e-12) whatever the config; outside MultiHeadSelfAttention, whose output
// is out_lin's.
ResidualNormRule distilbert_sa_layer_norm() {
  ResidualNormRule r;
  r.name = "sa_layer_norm.";
  r.eps_keys = {};
  r.module = "TransformerBlock";
  r.in_attention = false;
  return r;
}

// OPTDecoderLayer with do_layer_norm_before false (OPT-350m): self_attn_layer_norm(residual +
// attention), nn.LayerNorm's eps 1e-5; outside OPTAttention. With true (the default, every
// other OPT), the same norm comes before the attention.
ResidualNormRule opt_post_norm() {
  ResidualNormRule r;
  r.name = "self_attn_layer_norm.";
  r.eps_keys = {};
  r.eps = 1e-5;
  r.module = "OPTDecoderLayer";
  r.in_attention = false;
  r.before_key = "do_layer_norm_before";
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
      .with_residual_norm(bert_self_output("BertAttention"))
      .with_hook(hooks::bert_absolute_positions);
  row("roberta")
      .at({"roberta.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_layout("bert")
      .causal_unless_encoder()
      .biases(fixed(true), fixed(true))
      .with_residual_norm(bert_self_output("RobertaAttention"))
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
      .bias("enable_bias", true)
      .with_residual_norm(opt_post_norm());
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
  row("gpt_bigcode")  // StarCoder, SantaCoder: c_attn an nn.Linear, multi_query by default
      .at({"transformer.h.{N}.attn.", "h.{N}.attn."})
      .with_layout("fused")
      .rename("c_attn.", "Wqkv.")
      .rename("c_proj.", "Wo.")
      .biases(fixed(true), fixed(true))
      .with_hook(hooks::gpt_bigcode_heads);
  row("starcoder2")
      .bias("use_bias", true)
      .with_rope(10000.0)
      .with_window(every_layer())  // sliding_window (null: none) on every layer
      .with_defaults({{"num_key_value_heads", 2}});
  row("granite")
      .bias("attention_bias", false)
      .with_rope(10000.0)
      .with_scale({ScaleRule::value_of_key, "attention_multiplier"})
      .with_defaults({{"attention_multiplier", 1.0}});
  row("phi")  // phi-1, phi-1.5, phi-2: q/k/v_proj and dense, all with bias
      .rename("dense.", "o_proj.")
      .rename("q_layernorm.", "q_norm.")
      .rename("k_layernorm.", "k_norm.")
      .biases(fixed(true), fixed(true))
      .with_rope(10000.0, rope_keys({"rope_theta"}, {"partial_rotary_factor"}, 0.5))
      .with_qk_norm(phi_qk_layernorm());
  row("gptj")
      .at({"transformer.h.{N}.attn.", "h.{N}.attn."})
      .biases(fixed(false), fixed(false))
      .with_rope(10000.0, rotary_dims("rotary_dim", /*interleaved=*/true))
      .with_defaults({{"rotary_dim", 64}});
  row("internlm2")  // wqkv per KV group [q..., k, v] (the falcon layout), wo
      .at({"model.layers.{N}.attention.", "layers.{N}.attention."})
      .with_layout("falcon")
      .rename("wqkv.", "query_key_value.")
      .rename("wo.", "dense.")
      .bias("bias", true)
      .with_rope(10000.0);
  row("smollm3")  // every 4th layer without rope (no_rope_layers); those slide when enabled
      .bias("attention_bias", false)
      .with_rope(2000000.0, no_rope_every(4))
      .with_window(sliding_where_no_rope())
      .with_defaults({{"num_key_value_heads", 4}});

  // ---- CONTRACT.md v3's encoders ------------------------------------------------------------
  // (BERT-like, vision and CLIP towers)
  row("xlm-roberta")  // XLMRobertaSelfAttention is BertSelfAttention; base_model_prefix "roberta"
      .at({"roberta.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_layout("bert")
      .causal_unless_encoder()
      .biases(fixed(true), fixed(true))
      .with_residual_norm(bert_self_output("XLMRobertaAttention"))
      .with_hook(hooks::bert_absolute_positions);
  row("electra")  // ElectraSelfAttention is BertSelfAttention (embedding_size is the embeddings')
      .at({"electra.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_layout("bert")
      .causal_unless_encoder()
      .biases(fixed(true), fixed(true))
      .with_residual_norm(bert_self_output("ElectraAttention"))
      .with_hook(hooks::bert_absolute_positions);
  row("distilbert")  // MultiHeadSelfAttention: q_lin, k_lin, v_lin, out_lin, all with bias
      .at({"distilbert.transformer.layer.{N}.attention.", "transformer.layer.{N}.attention."})
      .rename("q_lin.", "q_proj.")
      .rename("k_lin.", "k_proj.")
      .rename("v_lin.", "v_proj.")
      .rename("out_lin.", "o_proj.")
      .bidirectional_attention()
      .biases(fixed(true), fixed(true))
      .with_residual_norm(distilbert_sa_layer_norm())
      .with_defaults({{"dim", 768}, {"n_heads", 12}, {"n_layers", 6}});
  row("vit")  // ViTSelfAttention (attention.query/key/value) and ViTSelfOutput.dense
      .at({"vit.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_layout("bert")
      .rename("attention.", "self.")
      .bidirectional_attention()
      .biases({"qkv_bias", true}, fixed(true))
      .with_defaults(
          {{"hidden_size", 768}, {"num_attention_heads", 12}, {"num_hidden_layers", 12}});
  // CLIPAttention (q/k/v_proj, out_proj, all with bias). A "clip" config.json (CLIPModel)
  // opens as its text tower, as CLIPTextModel.from_pretrained reads it, or as its vision
  // tower when model_type clip_vision_model is asked for.
  row("clip_text_model")
      .wrapped_in("clip", "text_config")
      .at({"text_model.encoder.layers.{N}.self_attn.", "encoder.layers.{N}.self_attn."})
      .biases(fixed(true), fixed(true))  // causal: CLIPTextTransformer's causal mask
      .with_defaults({{"hidden_size", 512}, {"num_attention_heads", 8}, {"num_hidden_layers", 12}});
  row("clip_vision_model")
      .wrapped_in("clip", "vision_config")  // when asked for by model_type (model_folder.h)
      .at({"vision_model.encoder.layers.{N}.self_attn.", "encoder.layers.{N}.self_attn."})
      .bidirectional_attention()
      .biases(fixed(true), fixed(true))
      .with_defaults(
          {{"hidden_size", 768}, {"num_attention_heads", 12}, {"num_hidden_layers", 12}});

  // ModernBertAttention: Wqkv (3C, C) as q|k|v, Wo. Every global_attn_every_n_layers-th layer
  // from the first is global with global_rope_theta; the others see |i - j| <= local_attention
  // // 2 (_update_attention_mask's sliding_window_mask) with local_rope_theta. transformers v5
  // saves layer_types and rope_parameters per layer type instead; its rope_scaling updates both.
  row("modernbert")
      .at({"model.layers.{N}.attn.", "layers.{N}.attn."})
      .with_layout("fused")
      .bidirectional_attention()
      .bias("attention_bias", false)
      .with_rope(160000.0, modernbert_rope())
      .with_window(modernbert_window())
      .with_hook(hooks::modernbert_window_of_layer)
      .with_defaults({{"hidden_size", 768},
                      {"num_attention_heads", 12},
                      {"num_hidden_layers", 22},
                      {"global_attn_every_n_layers", 3},
                      {"local_attention", 128},
                      {"global_rope_theta", 160000.0},
                      {"local_rope_theta", 10000.0},
                      {"max_position_embeddings", 8192}});

  // ---- CONTRACT.md v3: gated attention, qk_norm kinds, chunks, temperature ------------------
  // (Qwen3-Next / Qwen3.5, Gemma 4, Cohere, StableLM, Llama 4)
  {
    // Every period-th layer is full attention, the others of `type` (transformers'
    // layer_types default when config.json lists none).
    auto every_nth_full = [](std::int64_t period, const char* key, const char* type) {
      WindowRule w = global_every(period, key);
      w.local_type = type;
      return w;
    };
    // Qwen3-Next and Qwen3.5's full-attention layers (Qwen3NextAttention): a gate per head in
    // q_proj, (1 + w) RMS q/k norms per head, partial rotary (0.25), every 4th layer full
    // (full_attention_interval; the others are Gated DeltaNet linear attention, not run).
    auto qwen3_next_like = [&](Row& r) -> Row& {
      return r.bias("attention_bias", false)
          .with_gate()
          .with_qk_norm(rms_norm("head", 1))
          .with_rope(10000.0, rope_keys({"rope_theta"}, {"partial_rotary_factor"}, 0.25))
          .with_window(every_nth_full(4, "full_attention_interval", "linear_attention"));
    };
    qwen3_next_like(row("qwen3_next"))
        .with_defaults({{"num_attention_heads", 16},
                        {"num_key_value_heads", 2},
                        {"head_dim", 256},
                        {"rms_norm_eps", 1e-6}});
    qwen3_next_like(row("qwen3_5_text"))
        .wrapped_in("qwen3_5", "text_config")
        .at({"model.language_model.layers.{N}.self_attn.", "model.layers.{N}.self_attn.",
             "layers.{N}.self_attn."})
        .with_defaults({{"num_attention_heads", 16},
                        {"num_key_value_heads", 4},
                        {"head_dim", 256},
                        {"rms_norm_eps", 1e-6}});
    // Gemma 4's text layers (Gemma4TextAttention; gemma4's text_config): layer_types (else
    // every 6th full), q/k norms x * w (no 1 + w), scale 1, rope_parameters per layer type
    // (proportional on the full layers); the full layers' sizes, k_eq_v and the values' norm
    // are hooks::gemma4_layers; the last num_kv_shared_layers layers reuse an earlier layer's
    // keys and values (refused). Gemma4TextConfig's defaults.
    WindowRule gemma4_window = global_every(6);  // 5 sliding : 1 full, the last one full
    gemma4_window.last_full = true;
    row("gemma4_text")
        .wrapped_in("gemma4", "text_config")
        .at({"model.language_model.layers.{N}.self_attn.", "model.layers.{N}.self_attn.",
             "language_model.model.layers.{N}.self_attn.", "layers.{N}.self_attn."})
        .bias("attention_bias", false)
        .with_qk_norm(rms_norm("head", 0))
        .with_scale({ScaleRule::one, nullptr})
        .with_window(gemma4_window)
        .with_rope(10000.0)
        .shares_kv("num_kv_shared_layers")
        .with_hook(hooks::gemma4_layers)
        .with_defaults(
            {{"hidden_size", 2304},
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
    row("cohere").bias("attention_bias", false).with_rope(10000.0, pairs).with_qk_norm(cohere_norm);
    // Cohere 2: 3 sliding layers of 4 (sliding_window_pattern, or layer_types) with
    // interleaved rotary; the global layers have no rope (hooks::cohere2_rope_on_sliding).
    row("cohere2")
        .bias("attention_bias", false)
        .with_rope(10000.0, pairs)
        .with_window(global_every(4, "sliding_window_pattern"))
        .with_hook(hooks::cohere2_rope_on_sliding)
        .with_defaults({{"sliding_window", 4096}});
    // StableLM (StableLmAttention): partial rotary (0.25), q/k/v bias from use_qkv_bias, and
    // with qk_layernorm one nn.LayerNorm per head (q_layernorm.norms.{h}, no bias).
    QkNormRule per_head_layer_norm = cohere_norm;
    per_head_layer_norm.enable_key = "qk_layernorm";
    row("stablelm")
        .rename("q_layernorm.", "q_norm.")
        .rename("k_layernorm.", "k_norm.")
        .biases({"use_qkv_bias", false, false}, fixed(false))
        .with_rope(10000.0, rope_keys({"rope_theta"}, {"partial_rotary_factor"}, 0.25))
        .with_qk_norm(per_head_layer_norm);
    // Llama 4's text layers: interleaved rotary (complex pairs) on 3 layers of 4, which are
    // chunked and L2-normed; the 4th has no rope and tunes its queries' temperature
    // (hooks::llama4_layers reads no_rope_layers).
    row("llama4_text")
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
  }

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
  // modeling_t5.T5Attention: q, k, v, o without bias, H * d_kv wide, no
  // 1/sqrt(d_kv); --layer N is encoder block N (the decoder's self- and
  // cross-attention: weights_prefix, causal, kv_input, see the README).
  for (const char* type : {"t5", "mt5", "umt5"})
    row(type)
        .at({"encoder.block.{N}.layer.0.SelfAttention."})
        .rename("q.", "q_proj.")
        .rename("k.", "k_proj.")
        .rename("v.", "v_proj.")
        .rename("o.", "o_proj.")
        .bidirectional_attention()
        .biases(fixed(false), fixed(false))
        .with_scale({ScaleRule::one, nullptr})
        .with_hook(std::string(type) == "umt5" ? hooks::umt5_relative_bias
                                               : hooks::t5_relative_bias)
        .with_defaults({{"d_model", 512},
                        {"d_kv", 64},
                        {"num_heads", std::string(type) == "t5" ? 8 : 6},
                        {"num_layers", std::string(type) == "t5" ? 6 : 8},
                        {"relative_attention_num_buckets", 32},
                        {"relative_attention_max_distance", 128}});

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

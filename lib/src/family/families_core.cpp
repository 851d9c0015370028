// The core families (table.h): GPT-2, BERT, RoBERTa, Llama, Mistral, Mixtral,
// Qwen2 and 3, Gemma 1 to 3, Phi-3, GPT-NeoX, Falcon, BLOOM, MPT, OPT, OLMo 2
// and gpt-oss, each as its configuration_<type>.py and modeling_<type>.py in
// transformers read config.json.
#include "family/hooks.h"
#include "family/table.h"

namespace attn::family {

namespace {

// Qwen2 / Qwen3: layers from max_window_layers up slide when use_sliding_window.
WindowRule qwen_window() {
  WindowRule w;
  w.kind = WindowRule::from_layer;
  w.enable_key = "use_sliding_window";
  w.from_key = "max_window_layers";
  return w;
}

ScaleRule inverse_sqrt_of(const char* key) { return {ScaleRule::inverse_sqrt_of_key, key}; }

// modeling_gpt2.GPT2Attention._attn: divide by sqrt(D) when scale_attn_weights,
// and by (layer + 1) when scale_attn_by_inverse_layer_idx.
ScaleRule gpt2_scale() {
  ScaleRule s;
  s.enable_key = "scale_attn_weights";
  s.by_layer_key = "scale_attn_by_inverse_layer_idx";
  return s;
}

// BertSelfAttention adds relative position embeddings inside the attention for
// "relative_key" / "relative_key_query"; "absolute" lives outside it (BertEmbeddings).
Refusal bert_absolute_positions() {
  Refusal r;
  r.key = "position_embedding_type";
  r.values = {"absolute"};
  r.typed = true;  // a string
  r.why = "{value} is not supported (only \"absolute\", which lives outside the attention layer)";
  return r;
}

// An attn_config setting of MPT's that attn-run does not run (qk_ln's norms, its own
// rope): unset or false.
Refusal mpt_unless_false(const char* key) {
  Refusal r;
  r.within = "attn_config";
  r.key = key;
  r.values = {false};
  r.why = "is not supported by attn-run";
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

// OPTDecoderLayer with do_layer_norm_before true (the default): self_attn_layer_norm before
// the attention, nn.LayerNorm(elementwise_affine) with eps 1e-5 whatever the config.
InputNormRule opt_pre_norm() {
  InputNormRule r = layer_input("self_attn_layer_norm.", nullptr, 1e-5);
  r.before_key = "do_layer_norm_before";
  return r;
}

// FalconDecoderLayer: ln_attn when new_decoder_architecture has two norms
// (num_ln_in_parallel_attn 2), else input_layernorm; the weights say which.
InputNormRule falcon_input_norm() {
  InputNormRule r = layer_input("ln_attn.", "layer_norm_epsilon", 1e-5);
  r.names.push_back("input_layernorm.");
  return r;
}

// BloomModel: word_embeddings, then word_embeddings_layernorm (layer_norm_epsilon).
EmbeddingRule bloom_embedding() {
  EmbeddingRule e = word_embedding("word_embeddings.");
  e.norm = "word_embeddings_layernorm.";
  e.eps_keys = {"layer_norm_epsilon"};
  e.eps = 1e-5;
  return e;
}

// OPTDecoder: embed_tokens + OPTLearnedPositionalEmbedding (positions offset by 2); a
// word_embed_proj_dim other than hidden_size adds project_in, which attn-run does not run.
EmbeddingRule opt_embedding() {
  EmbeddingRule e = learned_positions("embed_tokens.", "embed_positions.", 2);
  e.same_size_key = "word_embed_proj_dim";
  e.module = "OPTDecoder";
  return e;
}

}  // namespace

void add_core_rows(Table& t) {
  t.row("gpt2")
      .at({"h.{N}.attn.", "transformer.h.{N}.attn."})
      .with_layout("gpt2")
      .biases(fixed(true), fixed(true))
      .with_input_norm(layer_input("ln_1.", "layer_norm_epsilon", 1e-5))
      .with_embedding(learned_positions("wte.", "wpe."))  // GPT2Model: wte + wpe
      .with_scale(gpt2_scale());
  // BertSelfAttention: the base row of the BERT-like encoders (RoBERTa, XLM-RoBERTa and
  // ELECTRA's self-attention are copies of it): query, key, value and BertSelfOutput.dense
  // with bias, causal only as a decoder (is_decoder).
  t.row("bert")
      .at({"bert.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_layout("bert")
      .causal_unless_encoder()
      .biases(fixed(true), fixed(true))
      .with_residual_norm(bert_self_output("BertAttention"))
      .with_input_norm(post_norm("post-norm: BertLayer's LayerNorm comes after its attention"))
      .with_embedding(bert_embeddings("BertEmbeddings"))
      .refuse(bert_absolute_positions());
  t.row("roberta", t.of("bert"))
      .at({"roberta.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_residual_norm(bert_self_output("RobertaAttention"))
      .with_embedding(roberta_embeddings("RobertaEmbeddings"));
  t.row("llama").bias("attention_bias", false).with_rope(10000.0).with_embedding(word_embedding());
  // Mistral 3 (Mistral3ForConditionalGeneration: Mistral Small 3.1 / 3.2, Magistral, Devstral)
  // nests a mistral text model as text_config, its layers under model.language_model (today's
  // checkpoints) or language_model.model (before transformers 4.52).
  t.row("mistral")
      .with_embedding(word_embedding())
      .wrapped_in("mistral3", "text_config", /*typed=*/true)
      .at({"model.layers.{N}.self_attn.", "model.language_model.layers.{N}.self_attn.",
           "language_model.model.layers.{N}.self_attn.", "layers.{N}.self_attn."})
      .bias("attention_bias", false)
      .with_rope(10000.0)
      .with_window(every_layer())
      .with_defaults({{"sliding_window", 4096}});
  t.row("mixtral")
      .with_embedding(word_embedding())
      .bias("attention_bias", false)
      .with_rope(10000.0)
      .with_window(every_layer())
      .with_defaults({{"rope_theta", 1e6}});
  t.row("qwen2")
      .with_embedding(word_embedding())
      .biases(fixed(true), fixed(false))  // Qwen2Attention: q/k/v with bias, o_proj without
      .with_rope(10000.0)
      .with_window(qwen_window())
      .with_defaults({{"sliding_window", 4096}, {"max_window_layers", 28}});
  t.row("qwen3")
      .with_embedding(word_embedding())
      .bias("attention_bias", false)
      .with_qk_norm(rms_norm("head", 0))
      .with_rope(10000.0)
      .with_window(qwen_window())
      .with_defaults({{"head_dim", 128}, {"sliding_window", 4096}, {"max_window_layers", 28}});
  t.row("gemma")
      .with_embedding(gemma_embedding("GemmaModel"))
      .bias("attention_bias", false)
      .with_input_norm(rms_input("input_layernorm.", 1, "GemmaRMSNorm"))
      .with_rope(10000.0)
      .with_defaults({{"head_dim", 256}});
  t.row("gemma2")
      .with_embedding(gemma_embedding("Gemma2Model"))
      .bias("attention_bias", false)
      .with_input_norm(rms_input("input_layernorm.", 1, "Gemma2RMSNorm"))
      .with_rope(10000.0)
      .with_scale(inverse_sqrt_of("query_pre_attn_scalar"))
      .softcap("attn_logit_softcapping")
      .with_window(global_every(2))  // even layers slide
      .with_defaults({{"head_dim", 256},
                      {"query_pre_attn_scalar", 256},
                      {"attn_logit_softcapping", 50.0},
                      {"sliding_window", 4096}});
  t.row("gemma3_text")
      .with_embedding(gemma_embedding("Gemma3TextScaledWordEmbedding"))
      .wrapped_in("gemma3", "text_config")
      .at({"model.layers.{N}.self_attn.", "language_model.model.layers.{N}.self_attn.",
           "model.language_model.layers.{N}.self_attn.", "layers.{N}.self_attn."})
      .bias("attention_bias", false)
      .with_input_norm(rms_input("input_layernorm.", 1, "Gemma3RMSNorm"))
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
  t.row("phi3")
      .with_embedding(word_embedding())
      .with_layout("fused")
      .biases(fixed(false), fixed(false))
      .with_rope(10000.0)
      .with_window(every_layer())
      .with_hook(hooks::phi3_longrope_names);
  t.row("gpt_neox")
      .at({"gpt_neox.layers.{N}.attention.", "layers.{N}.attention."})
      .with_layout("neox")
      .bias("attention_bias", true)
      .with_input_norm(layer_input("input_layernorm.", "layer_norm_eps", 1e-5))
      .with_embedding(word_embedding("embed_in."))  // GPTNeoXModel.embed_in
      .with_rope(10000.0, rope_keys({"rope_theta", "rotary_emb_base"},
                                    {"rotary_pct", "partial_rotary_factor"}, 0.25));
  t.row("falcon")
      .at({"transformer.h.{N}.self_attention.", "h.{N}.self_attention."})
      .with_layout("falcon")
      .bias("bias", false)
      .with_input_norm(falcon_input_norm())
      .with_embedding(word_embedding("word_embeddings."))
      .with_rope(10000.0)
      .with_hook(hooks::falcon_architecture);
  t.row("bloom")
      .at({"transformer.h.{N}.self_attention.", "h.{N}.self_attention."})
      .with_layout("neox")
      .biases(fixed(true), fixed(true))
      .with_input_norm(layer_input("input_layernorm.", "layer_norm_epsilon", 1e-5))
      .with_embedding(bloom_embedding())
      .with_alibi();
  t.row("mpt")
      .at({"transformer.blocks.{N}.attn.", "blocks.{N}.attn."})
      .with_layout("fused")
      .biases({"no_bias", false, true}, {"no_bias", false, true})
      // MptBlock: norm_1 = LayerNorm(eps=layer_norm_epsilon), its bias set to None
      .with_input_norm(layer_input("norm_1.", "layer_norm_epsilon", 1e-5, fixed(false)))
      .with_embedding(word_embedding("wte."))  // MptModel: wte, ALiBi for positions
      .refuse(mpt_unless_false("qk_ln"))
      .refuse(mpt_unless_false("rope"))
      .with_hook(hooks::mpt_attn_config);
  t.row("opt")
      .at({"model.decoder.layers.{N}.self_attn.", "decoder.layers.{N}.self_attn."})
      .bias("enable_bias", true)
      .with_residual_norm(opt_post_norm())
      .with_input_norm(opt_pre_norm())
      .with_embedding(opt_embedding());
  t.row("olmo2")
      .with_embedding(word_embedding())
      .bias("attention_bias", false)
      .with_input_norm(post_norm("post-norm: Olmo2DecoderLayer's post_attention_layernorm "
                                 "comes after its attention"))
      .with_qk_norm(rms_norm("all", 0))
      .with_rope(10000.0)
      .with_defaults({{"rms_norm_eps", 1e-5}});
  t.row("gpt_oss")
      .with_embedding(word_embedding())
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
}

}  // namespace attn::family

// More encoders (table.h): the BERT-like XLM-RoBERTa and ELECTRA (derived from
// the RoBERTa and BERT rows), DistilBERT, ViT, CLIP's two towers and
// ModernBERT.
#include "family/table.h"

namespace attn::family {

namespace {

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
// ModernBertAttention.__init__ gives those layers the local window whatever layer_types says,
// while ModernBertModel takes each layer's rope from rope_parameters[layer_types[layer_id]]: a
// layer_types that disagrees with the period would mix a global window with a local base (or
// the reverse), which no attn-run layer type means.
WindowRule modernbert_window() {
  WindowRule w = global_every(3, "global_attn_every_n_layers", true);
  w.window_key = "local_attention";
  w.div = 2;
  w.add = 1;
  w.layer_types_agree =
      "ModernBertAttention takes its window from the period and its rope from "
      "layer_types";
  return w;
}

}  // namespace

namespace {

// ModernBertEncoderLayer: attn_norm = nn.LayerNorm(eps=norm_eps, bias=norm_bias), except
// layer 0's nn.Identity (the embeddings end in a norm).
InputNormRule modernbert_attn_norm() {
  InputNormRule r = layer_input("attn_norm.", "norm_eps", 1e-5, {"norm_bias", false, false});
  r.none_on_first = true;
  return r;
}

// ElectraEmbeddings: BertEmbeddings of embedding_size, then embeddings_project to
// hidden_size when they differ (a projection attn-run does not run).
EmbeddingRule electra_embeddings() {
  EmbeddingRule e = bert_embeddings("ElectraEmbeddings");
  e.same_size_key = "embedding_size";
  return e;
}

// DistilBERT's Embeddings: word + position, then LayerNorm(eps=1e-12); no token types.
EmbeddingRule distilbert_embeddings() {
  EmbeddingRule e = bert_embeddings("Embeddings");
  e.token_types = nullptr;
  e.eps_keys = {};
  return e;
}

}  // namespace

void add_encoder_rows(Table& t) {
  // DeBERTa-v2 and v3 (DebertaV2Model, base_model_prefix "deberta"): query_proj, key_proj,
  // value_proj with biases, DisentangledSelfAttention's relative terms (pos_key_proj /
  // pos_query_proj unless share_att_key), DebertaV2SelfOutput's dense and LayerNorm after it
  // (layer_norm_eps, DebertaV2Config's 1e-7); bidirectional.
  ResidualNormRule deberta_output = bert_self_output("DebertaV2Attention");
  deberta_output.eps = 1e-7;
  t.row("deberta-v2")
      .at({"deberta.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .rename("self.query_proj.", "q_proj.")
      .rename("self.key_proj.", "k_proj.")
      .rename("self.value_proj.", "v_proj.")
      .rename("self.pos_key_proj.", "pos_key_proj.")
      .rename("self.pos_query_proj.", "pos_query_proj.")
      .rename("output.dense.", "o_proj.")
      .bidirectional_attention()
      .biases(fixed(true), fixed(true))
      .with_disentangled()
      .with_residual_norm(deberta_output)
      .with_input_norm(post_norm("post-norm: DebertaV2Layer's LayerNorm comes after its attention"))
      .with_defaults({{"hidden_size", 1536},
                      {"num_attention_heads", 24},
                      {"num_hidden_layers", 24},
                      {"layer_norm_eps", 1e-7}});
  // XLMRobertaSelfAttention is RobertaSelfAttention (base_model_prefix "roberta").
  t.row("xlm-roberta", t.of("roberta"))
      .with_residual_norm(bert_self_output("XLMRobertaAttention"))
      .with_embedding(roberta_embeddings("XLMRobertaEmbeddings"));
  // ElectraSelfAttention is BertSelfAttention (embedding_size is the embeddings').
  t.row("electra", t.of("bert"))
      .at({"electra.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_residual_norm(bert_self_output("ElectraAttention"))
      .with_embedding(electra_embeddings());
  t.row("distilbert")  // MultiHeadSelfAttention: q_lin, k_lin, v_lin, out_lin, all with bias
      .at({"distilbert.transformer.layer.{N}.attention.", "transformer.layer.{N}.attention."})
      .rename("q_lin.", "q_proj.")
      .rename("k_lin.", "k_proj.")
      .rename("v_lin.", "v_proj.")
      .rename("out_lin.", "o_proj.")
      .bidirectional_attention()
      .biases(fixed(true), fixed(true))
      .with_residual_norm(distilbert_sa_layer_norm())
      .with_input_norm(post_norm("post-norm: TransformerBlock's sa_layer_norm comes after its "
                                 "attention"))
      .with_embedding(distilbert_embeddings())
      .with_defaults({{"dim", 768}, {"n_heads", 12}, {"n_layers", 6}});
  t.row("vit")  // ViTSelfAttention (attention.query/key/value) and ViTSelfOutput.dense
      .at({"vit.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_layout("bert")
      .rename("attention.", "self.")
      .bidirectional_attention()
      .biases({"qkv_bias", true}, fixed(true))
      .with_input_norm(layer_input("layernorm_before.", "layer_norm_eps", 1e-12))
      .with_defaults(
          {{"hidden_size", 768}, {"num_attention_heads", 12}, {"num_hidden_layers", 12}});
  // CLIPAttention (q/k/v_proj, out_proj, all with bias). A "clip" config.json (CLIPModel)
  // opens as its text tower, as CLIPTextModel.from_pretrained reads it, or as its vision
  // tower when model_type clip_vision_model is asked for.
  t.row("clip_text_model")
      .wrapped_in("clip", "text_config")
      .at({"text_model.encoder.layers.{N}.self_attn.", "encoder.layers.{N}.self_attn."})
      .biases(fixed(true), fixed(true))  // causal: CLIPTextTransformer's causal mask
      .with_input_norm(layer_input("layer_norm1.", "layer_norm_eps", 1e-5))
      .with_defaults({{"hidden_size", 512}, {"num_attention_heads", 8}, {"num_hidden_layers", 12}});
  t.row("clip_vision_model")
      .wrapped_in("clip", "vision_config")  // when asked for by model_type (model_folder.h)
      .at({"vision_model.encoder.layers.{N}.self_attn.", "encoder.layers.{N}.self_attn."})
      .bidirectional_attention()
      .biases(fixed(true), fixed(true))
      .with_input_norm(layer_input("layer_norm1.", "layer_norm_eps", 1e-5))
      .with_defaults(
          {{"hidden_size", 768}, {"num_attention_heads", 12}, {"num_hidden_layers", 12}});

  // ModernBertAttention: Wqkv (3C, C) as q|k|v, Wo. Every global_attn_every_n_layers-th layer
  // from the first is global with global_rope_theta; the others see |i - j| <= local_attention
  // // 2 (_update_attention_mask's sliding_window_mask) with local_rope_theta. transformers v5
  // saves layer_types and rope_parameters per layer type instead; its rope_scaling updates both.
  t.row("modernbert")
      .at({"model.layers.{N}.attn.", "layers.{N}.attn."})
      .with_layout("fused")
      .bidirectional_attention()
      .bias("attention_bias", false)
      .with_input_norm(modernbert_attn_norm())
      .with_rope(160000.0, modernbert_rope())
      .with_window(modernbert_window())
      .with_defaults({{"hidden_size", 768},
                      {"num_attention_heads", 12},
                      {"num_hidden_layers", 22},
                      {"global_attn_every_n_layers", 3},
                      {"local_attention", 128},
                      {"global_rope_theta", 160000.0},
                      {"local_rope_theta", 10000.0},
                      {"max_position_embeddings", 8192}});
}

}  // namespace attn::family

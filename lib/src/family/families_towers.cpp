// Encoder towers on the forward pass's existing features (table.h): ESM-2's
// rotary encoder, DINOv2 (with and without registers) and SigLIP / SigLIP 2's
// text and vision towers, each as its configuration_<type>.py and
// modeling_<type>.py in transformers read config.json.
#include "family/table.h"

namespace attn::family {

namespace {

// EsmSelfAttention: "rotary" ropes q and k (ESM-2), "absolute" adds learned positions in
// EsmEmbeddings (ESM-1b); relative_key / relative_key_query add distance embeddings inside
// the attention, which attn-run does not run.
Refusal esm_positions() {
  Refusal r;
  r.key = "position_embedding_type";
  r.values = {"rotary", "absolute"};
  r.typed = true;  // a string
  r.why =
      "{value} is not supported (\"rotary\", ESM-2's, and \"absolute\", whose positions live "
      "outside the attention layer, run)";
  return r;
}

// ESM's RotaryEmbedding: base 10000 over the whole head whatever config.json says, rotate_half,
// on when position_embedding_type is "rotary". Its angles are the sequence's 0..S-1 (not
// position ids), attn-run's default positions.
RopeRule esm_rotary() {
  RopeRule r;
  r.theta_keys = {};
  r.fraction_keys = {};
  r.on_key = "position_embedding_type";
  r.on_value = "rotary";
  return r;
}

// SiglipAttention (SigLIP 2's is the same): q/k/v_proj and out_proj with bias, bidirectional
// in both towers (the text tower's mask is the padding only).
Row& siglip_tower(Row& r, const char* tower) {
  const std::string stack = std::string(tower) + ".encoder.layers.{N}.self_attn.";
  return r.at({stack, "encoder.layers.{N}.self_attn."})
      .bidirectional_attention()
      .biases(fixed(true), fixed(true))
      .with_defaults(
          {{"hidden_size", 768}, {"num_attention_heads", 12}, {"num_hidden_layers", 12}});
}

// EsmAttention.LayerNorm (layer_norm_eps) inside the attention module, before EsmSelfAttention:
// the module sits at the attention's own prefix (no part dropped).
InputNormRule esm_input_norm() {
  InputNormRule r = layer_input("LayerNorm.", "layer_norm_eps", 1e-12);
  r.up = 0;
  return r;
}

}  // namespace

void add_tower_rows(Table& t) {
  // EsmSelfAttention (ESM-2): query, key, value and EsmSelfOutput.dense with bias, the BERT
  // names under esm.encoder.layer.N.attention; q scaled by 1/sqrt(D) before the rotary (the
  // same scores as after it); causal only as a decoder. EsmAttention's LayerNorm comes before
  // (attention.LayerNorm), and EsmSelfOutput adds the input back without a norm: the context is
  // dense's output. EsmConfig's defaults.
  t.row("esm")
      .with_input_norm(esm_input_norm())
      .at({"esm.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_layout("bert")
      .causal_unless_encoder()
      .biases(fixed(true), fixed(true))
      .with_rope(10000.0, esm_rotary())
      .refuse(esm_positions())
      .with_defaults({{"hidden_size", 768},
                      {"num_attention_heads", 12},
                      {"num_hidden_layers", 12},
                      {"position_embedding_type", "absolute"}});
  // Dinov2SelfAttention (attention.attention.query/key/value with qkv_bias) and
  // Dinov2SelfOutput.dense: ViT's names; the layer scale and MLP lie outside. Dinov2Config's
  // defaults; Dinov2WithRegistersConfig's are the same.
  t.row("dinov2")
      .with_input_norm(layer_input("norm1.", "layer_norm_eps", 1e-6))
      .at({"dinov2.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."})
      .with_layout("bert")
      .rename("attention.", "self.")
      .bidirectional_attention()
      .biases({"qkv_bias", true}, fixed(true))
      .with_defaults(
          {{"hidden_size", 768}, {"num_attention_heads", 12}, {"num_hidden_layers", 12}});
  t.row("dinov2_with_registers", t.of("dinov2"));
  // A "siglip" / "siglip2" config.json (SiglipModel) opens as its text tower, as
  // SiglipTextModel.from_pretrained reads it, or as its vision tower when the vision model_type
  // is asked for (as CLIP's).
  siglip_tower(t.row("siglip_text_model").wrapped_in("siglip", "text_config"), "text_model");
  siglip_tower(t.row("siglip_vision_model").wrapped_in("siglip", "vision_config"), "vision_model");
  siglip_tower(t.row("siglip2_text_model").wrapped_in("siglip2", "text_config"), "text_model");
  siglip_tower(t.row("siglip2_vision_model").wrapped_in("siglip2", "vision_config"),
               "vision_model");
}

}  // namespace attn::family

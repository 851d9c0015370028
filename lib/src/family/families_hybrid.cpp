// The hybrid models (table.h): attention layers among Mamba (and MLP-only) layers
// (Granite 4.0-H, Nemotron-H, Jamba), or beside Mamba in every layer (Falcon-H1),
// each as its configuration_<type>.py and modeling_<type>.py in transformers read
// config.json. attn-run runs the attention layers; a Mamba, MLP or MoE layer is
// refused naming its type and listed "not run" (layer_map.h known_layer_types).
#include "family/table.h"

namespace attn::family {

namespace {

// transformers' legacy layer kinds ("attention", "mamba") and the current ones
// ("full_attention", and "linear_attention" for a Mamba layer, remap_legacy_layer_types).
LayerKindsRule mamba_kinds() {
  LayerKindsRule k;
  k.list_keys = {"layers_block_type"};
  k.names = {{"attention", "full_attention"}, {"linear_attention", "mamba"}};
  return k;
}

// Every layer is of `type` unless config.json lists the layers' kinds.
WindowRule all_layers(const char* type) {
  WindowRule w = every_layer();
  w.local_type = type;
  return w;
}

// Granite 4.0-H: GraniteMoeHybridModel makes a rotary embedding only when
// position_embedding_type is "rope" (the released checkpoints say "nope").
RopeRule granite_rope() {
  RopeRule r;
  r.on_key = "position_embedding_type";
  r.on_value = "rope";
  return r;
}

// NemotronHConfig: hybrid_override_pattern, one letter per layer (M Mamba2, * attention,
// - MLP, E MoE), or transformers v5's layers_block_type list (its "linear_attention" is
// Mamba2); their length is the number of layers.
LayerKindsRule nemotron_kinds() {
  LayerKindsRule k = mamba_kinds();
  k.pattern_key = "hybrid_override_pattern";
  k.names.insert(k.names.end(),
                 {{"M", "mamba"}, {"*", "full_attention"}, {"-", "mlp"}, {"E", "moe"}});
  k.counts_layers = true;
  return k;
}

// JambaConfig.layers_block_type: "attention" where layer % attn_layer_period ==
// attn_layer_offset, else "mamba".
WindowRule jamba_attention_layers() {
  WindowRule w = global_every(8, "attn_layer_period");
  w.offset_key = "attn_layer_offset";
  w.offset = 4;
  w.local_type = "mamba";
  return w;
}

// FalconH1Attention multiplies k by key_multiplier after k_proj: the scores by it.
ScaleRule falcon_h1_scale() {
  ScaleRule s;
  s.times_key = "key_multiplier";
  return s;
}

// FalconH1DecoderLayer: input_layernorm (RMS, rms_norm_eps), then times attention_in_multiplier.
InputNormRule falcon_h1_input_norm() {
  InputNormRule r = rms_input("input_layernorm.", 0, "FalconH1RMSNorm", "rms_norm_eps", 1e-5);
  r.multiplier_key = "attention_in_multiplier";
  return r;
}

}  // namespace

void add_hybrid_rows(Table& t) {
  // modeling_granitemoehybrid.GraniteMoeHybridAttention (Granite 4.0-H): LlamaAttention with
  // attention_multiplier as the scale; "attention" layers of layer_types (no list: every
  // layer Mamba), no positions unless position_embedding_type is "rope".
  t.row("granitemoehybrid")
      .with_embedding(times_multiplier("embedding_multiplier"))
      .bias("attention_bias", false)
      .with_rope(10000.0, granite_rope())
      .with_scale({ScaleRule::value_of_key, "attention_multiplier"})
      .with_window(all_layers("mamba"))
      .with_kinds(mamba_kinds())
      .with_defaults({{"hidden_size", 4096},
                      {"num_attention_heads", 32},
                      {"num_hidden_layers", 32},
                      {"attention_multiplier", 1.0},
                      {"max_position_embeddings", 2048}});
  // modeling_nemotron_h.NemotronHAttention: no positions, head_dim^-0.5, in the block's
  // mixer (NemotronHForCausalLM keeps the model under backbone). NemotronHConfig's
  // defaults; no pattern at all is transformers v5's default layers_block_type.
  t.row("nemotron_h")
      .with_input_norm(rms_input("norm.", 0, "NemotronHRMSNorm", "layer_norm_epsilon", 1e-5))
      .wrapped_in("NemotronH_Nano_VL_V2", "llm_config")
      .at({"backbone.layers.{N}.mixer.", "model.layers.{N}.mixer.",
           "language_model.backbone.layers.{N}.mixer.", "layers.{N}.mixer."})
      .bias("attention_bias", false)
      .with_kinds(nemotron_kinds())
      .with_defaults({{"hidden_size", 4096},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 8},
                      {"head_dim", 128},
                      {"hybrid_override_pattern", "ME*-"}});
  // modeling_falcon_h1.FalconH1Attention (LlamaAttention, rope) beside the Mamba mixer in
  // every layer: k times key_multiplier. Its input is FalconH1DecoderLayer's
  // input_layernorm(h) * attention_in_multiplier, what the module receives (the input
  // given); attention_out_multiplier comes after the module, as Granite's residual_multiplier.
  t.row("falcon_h1")
      .with_input_norm(falcon_h1_input_norm())
      .with_embedding(times_multiplier("embedding_multiplier"))  // FalconH1Model
      .biases(fixed(false), fixed(false))  // FalconH1Config sets attention_bias = False
      .with_rope(100000.0)
      .with_scale(falcon_h1_scale())
      .with_defaults({{"hidden_size", 4096},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 8},
                      {"num_hidden_layers", 32},
                      {"max_position_embeddings", 8192}});
  // modeling_jamba.JambaAttention: no positions, no biases, head_dim = hidden_size / heads
  // (the sliding_window it reads is flash-attention's only: eager and SDPA attend to all).
  t.row("jamba")
      .biases(fixed(false), fixed(false))
      .with_window(jamba_attention_layers())
      .with_kinds(mamba_kinds())
      .with_defaults({{"hidden_size", 4096},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 8},
                      {"num_hidden_layers", 32},
                      {"attn_layer_period", 8},
                      {"attn_layer_offset", 4}});
}

}  // namespace attn::family

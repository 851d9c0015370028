// The text towers of vision-language models (table.h): Qwen2.5-VL and Qwen3-VL,
// each as its configuration_<type>.py and modeling_<type>.py in transformers
// read config.json. Their multimodal rope (mrope: three position rows, time,
// height and width, each turning its own section of the frequencies) reads
// mrope_section into rope.mrope_section: positions of shape (3, S) or
// (3, B, S) are the rows (Hugging Face's get_rope_index), and 1-D positions
// (text: the three rows equal) are the plain rope.
#include "family/table.h"

namespace attn::family {

void add_vl_rows(Table& t) {
  // Qwen2_5_VLTextModel's layers (Qwen2_5_VLAttention): Qwen2's attention (q/k/v with bias,
  // o_proj without; windows from use_sliding_window and max_window_layers) under
  // model.language_model. (transformers 4.52 on) or model. (the released checkpoints);
  // rope_scaling {"type": "mrope", "mrope_section"}: apply_multimodal_rotary_pos_emb's
  // contiguous sections (no default: the text model's code reads the file's).
  // Qwen2_5_VLTextConfig's defaults. Newer config.json files nest it as text_config; the
  // released ones keep its keys at the top (the qwen2_5_vl row).
  const json qwen2_5_vl_defaults = {{"hidden_size", 8192},
                                    {"num_hidden_layers", 80},
                                    {"num_attention_heads", 64},
                                    {"num_key_value_heads", 8},
                                    {"rope_theta", 1e6},
                                    {"rms_norm_eps", 1e-5},
                                    {"max_position_embeddings", 32768},
                                    {"sliding_window", 4096},
                                    {"max_window_layers", 80}};
  t.row("qwen2_5_vl_text", t.of("qwen2"))
      .wrapped_in("qwen2_5_vl", "text_config")
      .at({"model.language_model.layers.{N}.self_attn.", "model.layers.{N}.self_attn.",
           "layers.{N}.self_attn."})
      .with_mrope(false)
      .with_defaults(qwen2_5_vl_defaults);
  t.row("qwen2_5_vl", t.of("qwen2_5_vl_text")).with_defaults(qwen2_5_vl_defaults);
  // Qwen3VLTextModel's layers (Qwen3VLTextAttention): Qwen3's attention (RMS q/k norms per
  // head, x * w, before rope; attention_bias), no window; its mrope is always interleaved
  // (Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope; mrope_section default [24, 20, 20]).
  // config.json nests it as text_config of qwen3_vl. Qwen3VLTextConfig's defaults.
  t.row("qwen3_vl_text")
      .wrapped_in("qwen3_vl", "text_config")
      .at({"model.language_model.layers.{N}.self_attn.", "model.layers.{N}.self_attn.",
           "layers.{N}.self_attn."})
      .with_embedding(word_embedding())
      .bias("attention_bias", false)
      .with_qk_norm(rms_norm("head", 0))
      .with_rope(5000000.0)
      .with_mrope(true, {24, 20, 20})
      .with_defaults({{"hidden_size", 4096},
                      {"num_hidden_layers", 32},
                      {"num_attention_heads", 32},
                      {"num_key_value_heads", 32},
                      {"head_dim", 128},
                      {"rope_theta", 5000000.0},
                      {"rms_norm_eps", 1e-6},
                      {"max_position_embeddings", 128000}});
}

}  // namespace attn::family

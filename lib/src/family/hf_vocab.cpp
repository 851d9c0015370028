// Keys of Hugging Face's config.json and torch's module arguments that users
// carry over into an attn-run config (CONTRACT.md "Config"): each gets an
// error naming the attn-run key that means the same, or saying it is not a
// config key, instead of a spelling suggestion.
#include "family/hf_vocab.h"

#include <stdexcept>
#include <utility>
#include <vector>

namespace attn {

namespace {

using Table = std::vector<std::pair<const char*, const char*>>;

const char* find(const Table& t, const std::string& key) {
  for (const auto& [foreign, ours] : t)
    if (key == foreign) return ours;
  return nullptr;
}

// A foreign spelling of a size (size_spellings), or nullptr.
const char* size_of(const std::string& key) {
  for (const SizeSpelling& s : size_spellings())
    for (const char* theirs : s.theirs)
      if (key == theirs && key != s.ours) return s.ours;
  return nullptr;
}

std::string same_as(const std::string& ours) {
  return "this is Hugging Face's or torch's name; attn-run's key is " + ours;
}

}  // namespace

const std::vector<SizeSpelling>& size_spellings() {
  // transformers' configuration classes (and GPT-2's, T5's, MPT's older
  // spellings); "num_layers" is the model's depth, not a config key of ours.
  static const std::vector<SizeSpelling> t = {
      {"hidden_size", {"hidden_size", "n_embd", "d_model", "n_embed", "dim"}},
      {"num_heads", {"num_attention_heads", "n_head", "n_heads", "num_heads"}},
      {"num_kv_heads", {"num_key_value_heads", "num_kv_heads", "n_head_kv"}},
      {"head_size", {"head_dim", "d_kv"}},
      {"num_layers", {"num_hidden_layers", "n_layer", "n_layers", "num_layers"}},
  };
  return t;
}

const std::vector<const char*>& spellings_of(const std::string& ours) {
  for (const SizeSpelling& s : size_spellings())
    if (ours == s.ours) return s.theirs;
  throw std::logic_error("spellings_of: no size " + ours);
}

namespace {

// Top level: the foreign name and the attn-run key that means the same.
const Table& top_level() {
  static const Table t = {
      {"num_kv_heads_per_layer", "num_kv_heads"},
      {"multi_query", "num_kv_heads (1 = multi-query)"},
      {"nhead", "num_heads"},
      {"num_head", "num_heads"},
      {"kv_channels", "head_size"},
      {"embed_dim", "hidden_size"},
      {"attention_bias", "qkv_bias and out_bias"},
      {"add_bias_linear", "qkv_bias and out_bias"},
      {"use_bias", "bias"},
      {"enable_bias", "bias"},
      {"attention_dropout", "attn_drop"},
      {"attn_pdrop", "attn_drop"},
      {"resid_pdrop", "out_drop"},
      {"attn_dropout", "attn_drop"},
      {"key_padding_mask", "padding_mask"},
      {"is_causal", "causal"},
      {"max_position_embeddings",
       "context_size (and rope.max_position_embeddings for rope scaling)"},
      {"n_positions", "context_size"},
      {"n_ctx", "context_size"},
      {"block_size", "context_size"},
      // positions (CONTRACT.md "Positions")
      {"rope_theta", "rope.theta"},
      {"rotary_emb_base", "rope.theta"},
      {"rope_scaling", "rope.scaling"},
      {"rope_parameters", "rope (its theta and scaling)"},
      {"rotary_pct", "rope.rotary_dim (= rotary_pct * head_size)"},
      {"partial_rotary_factor", "rope.rotary_dim (= partial_rotary_factor * head_size)"},
      {"rotary_dim", "rope.rotary_dim"},
      {"rotary_emb_fraction", "rope.rotary_dim (= fraction * head_size)"},
      {"position_ids", "positions"},
      {"alibi_bias_max", "alibi.max_bias"},
      {"alibi_slopes", "alibi.slopes"},
      {"use_alibi", "alibi"},
      // the variants
      {"attn_logit_softcapping", "softcap"},
      {"logit_softcapping", "softcap"},
      {"query_pre_attn_scalar", "scale (= query_pre_attn_scalar^-0.5)"},
      {"softmax_scale", "scale"},
      {"attention_multiplier", "scale"},
      {"window_size", "sliding_window"},
      {"sliding_window_size", "sliding_window"},
      {"attention_window", "sliding_window"},
      {"qk_layernorm", "qk_norm"},
      {"qk_ln", "qk_norm"},
      {"use_qk_norm", "qk_norm"},
      {"rms_norm_eps", "qk_norm.eps (the eps of q_norm and k_norm)"},
      {"attention_sinks", "sinks"},
      {"use_sinks", "sinks"},
      // more of the forward pass
      {"attention_chunk_size", "attention_chunk"},
      {"chunk_size", "attention_chunk"},
      {"attn_temperature_tuning", "attn_temperature"},
      {"floor_scale", "attn_temperature.floor_scale"},
      {"attn_scale", "attn_temperature.attn_scale"},
      {"gated_attention", "gate"},
      {"attn_output_gate", "gate"},
      {"attention_k_eq_v", "k_eq_v"},
      // encoder-decoders and hybrids
      {"attention_in_multiplier",
       "input_norm.multiplier (Falcon-H1's attention reads input_layernorm(h) * "
       "attention_in_multiplier)"},
      {"key_multiplier", "scale (= key_multiplier / sqrt(head_size))"},
      {"encoder_attention_heads", "num_heads"},
      {"decoder_attention_heads", "num_heads"},
      {"is_cross_attention", "cross_attention (with \"decoder_layer\")"},
      // torch.nn.MultiheadAttention's forward() and constructor
      {"key", "key_input (or kv_input for one source of keys and values)"},
      {"value", "value_input (or kv_input for one source of keys and values)"},
      {"query", "input"},
      {"encoder_hidden_states", "kv_input"},
      {"need_weights", "output.attention (or --no-attn)"},
      {"average_attn_weights", "output.average_heads (or --average-heads)"},
      {"bias_k", "add_bias_kv"},
      {"bias_v", "add_bias_kv"},
      {"k_dim", "kdim"},
      {"v_dim", "vdim"},
      {"key_labels", "kv_labels"},
      {"model_path", "model"},
      {"model_dir", "model"},
      {"layer_idx", "layer"},
      {"layer_id", "layer"},
      // T5's relative position bias
      {"relative_attention_num_buckets", "relative_bias.num_buckets"},
      {"relative_attention_max_distance", "relative_bias.max_distance"},
      {"relative_attention_bias", "relative_bias"},
      {"position_bias", "relative_bias"},
      {"has_relative_attention_bias", "relative_bias"},
      {"is_decoder", "causal (relative_bias.bidirectional follows: not causal)"},
  };
  return t;
}

// Hugging Face settings that say which layers slide, or how the positions
// change from layer to layer: a model folder knows them per layer.
const std::vector<const char*>& per_layer() {
  static const std::vector<const char*> k = {
      "use_sliding_window", "max_window_layers", "layer_types", "sliding_window_pattern",
      "rope_local_base_freq", "attn_config", "new_decoder_architecture", "no_rope_layers",
      "global_attn_every_n_layers", "no_rope_layer_interval",
      // Gemma 4: the full layers' sizes, the layers sharing K/V
      "global_head_dim", "num_global_key_value_heads", "num_kv_shared_layers"};
  return k;
}

// Hugging Face or torch settings outside the attention layer.
const std::vector<const char*>& outside() {
  static const std::vector<const char*> k = {"hidden_act",
                                             "vocab_size",
                                             "intermediate_size",
                                             "layer_norm_eps",
                                             "torch_dtype",
                                             "dtype",
                                             "initializer_range",
                                             "tie_word_embeddings",
                                             "bos_token_id",
                                             "eos_token_id",
                                             "pad_token_id",
                                             "use_cache",
                                             "layer_norm_epsilon",
                                             "activation_function",
                                             "final_logit_softcapping",
                                             "transformers_version",
                                             "_name_or_path",
                                             "mlp_bias",
                                             "position_embedding_type",
                                             "type_vocab_size",
                                             "model_type",
                                             "architectures",
                                             "d_ff",
                                             "feed_forward_proj",
                                             "num_decoder_layers"};
  return k;
}

// Inside an object of ours: the foreign field and ours.
const Table& in_rope() {
  static const Table t = {
      {"rope_theta", "theta"},
      {"base", "theta"},
      {"rotary_emb_base", "theta"},
      {"rope_scaling", "scaling"},
      {"rope_type", "scaling.rope_type (inside \"scaling\")"},
      {"type", "scaling.rope_type (inside \"scaling\")"},
      {"factor", "scaling.factor (inside \"scaling\")"},
      {"partial_rotary_factor", "rotary_dim (= partial_rotary_factor * head_size)"},
      {"rotary_pct", "rotary_dim (= rotary_pct * head_size)"},
      {"dim", "rotary_dim"},
      {"interleaved", "style (\"interleaved\" or \"half\")"},
      {"is_neox_style", "style (\"half\" is GPT-NeoX's style)"}};
  return t;
}

const Table& in_alibi() {
  static const Table t = {{"alibi_bias_max", "max_bias"}, {"bias_max", "max_bias"}};
  return t;
}

const Table& in_relative_bias() {
  static const Table t = {{"relative_attention_num_buckets", "num_buckets"},
                          {"buckets", "num_buckets"},
                          {"relative_attention_max_distance", "max_distance"},
                          {"is_decoder", "bidirectional (= not is_decoder)"}};
  return t;
}

const Table& in_qk_norm() {
  static const Table t = {{"rms_norm_eps", "eps"}, {"epsilon", "eps"}};
  return t;
}

}  // namespace

std::string foreign_config_key(const std::string& path, const std::string& key) {
  if (path == "rope") {
    if (const char* ours = find(in_rope(), key)) return same_as("rope." + std::string(ours));
    return "";
  }
  if (path == "alibi") {
    if (const char* ours = find(in_alibi(), key)) return same_as("alibi." + std::string(ours));
    return "";
  }
  if (path == "qk_norm") {
    if (const char* ours = find(in_qk_norm(), key)) return same_as("qk_norm." + std::string(ours));
    return "";
  }
  if (path == "relative_bias") {
    if (const char* ours = find(in_relative_bias(), key))
      return same_as("relative_bias." + std::string(ours));
    return "";
  }
  if (path == "residual_norm") {  // nn.LayerNorm's eps, as config.json names it
    if (key == "layer_norm_eps" || key == "layer_norm_epsilon" || key == "epsilon")
      return same_as("residual_norm.eps");
    return "";
  }
  if (path == "output") {
    if (key == "need_weights") return same_as("output.attention");
    if (key == "average_attn_weights") return same_as("output.average_heads");
    return "";
  }
  if (!path.empty()) return "";
  if (const char* ours = find(top_level(), key)) return same_as(ours);
  if (const char* ours = size_of(key)) {
    if (std::string(ours) == "num_layers")
      return "this is a Hugging Face or torch setting, not an attn-run config key (attention "
             "layers only; see CONTRACT.md \"Config\")";
    return same_as(ours);
  }
  for (const char* k : per_layer())
    if (key == k)
      return "this is a Hugging Face per-layer setting; per-layer settings come from a model "
             "folder: give \"model\" and \"layer\" (or set this layer's keys, e.g. sliding_window, "
             "yourself)";
  if (key == "layer_norm_eps")  // BERT's: the LayerNorm after its attention is residual_norm's
    return "this is a Hugging Face setting, not an attn-run config key; the LayerNorm after a "
           "BERT-style attention is \"residual_norm\": {\"eps\": ...} (--with-residual-norm)";
  for (const char* k : outside())
    if (key == k)
      return "this is a Hugging Face or torch setting, not an attn-run config key (attention "
             "layers only; see CONTRACT.md \"Config\")";
  return "";
}

}  // namespace attn

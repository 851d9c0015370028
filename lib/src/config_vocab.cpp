// Keys of Hugging Face's config.json and torch's module arguments that users
// carry over into an attn-run config (CONTRACT.md "Config"): each gets an
// error naming the attn-run key that means the same, or saying it is not a
// config key, instead of a spelling suggestion.
#include "config_vocab.h"

#include <utility>
#include <vector>

namespace attn {

std::string foreign_config_key(const std::string& path, const std::string& key) {
  if (!path.empty()) return "";
  static const std::vector<std::pair<const char*, const char*>> same = {
      {"num_key_value_heads", "num_kv_heads"}, {"n_head_kv", "num_kv_heads"},
      {"multi_query", "num_kv_heads (1 = multi-query)"},
      {"n_head", "num_heads"},              {"num_attention_heads", "num_heads"},
      {"n_heads", "num_heads"},             {"nhead", "num_heads"},
      {"head_dim", "head_size"},            {"n_embd", "hidden_size"},
      {"d_model", "hidden_size"},           {"embed_dim", "hidden_size"},
      {"dim", "hidden_size"},               {"attention_bias", "qkv_bias and out_bias"},
      {"add_bias_linear", "qkv_bias and out_bias"}, {"use_bias", "bias"},
      {"attention_dropout", "attn_drop"},   {"attn_pdrop", "attn_drop"},
      {"resid_pdrop", "out_drop"},          {"attn_dropout", "attn_drop"},
      {"key_padding_mask", "padding_mask"}, {"is_causal", "causal"},
      {"max_position_embeddings", "context_size"}, {"n_positions", "context_size"},
      {"n_ctx", "context_size"},            {"block_size", "context_size"},
      {"rope_theta", "rope.theta (not supported yet)"},
      {"rope_scaling", "rope (not supported yet)"},
      {"rotary_pct", "rope's rotary_dim (not supported yet)"},
      {"partial_rotary_factor", "rope's rotary_dim (not supported yet)"},
      {"rotary_emb_base", "rope's theta (not supported yet)"},
      {"query_pre_attn_scalar", "scale (= query_pre_attn_scalar^-0.5)"},
      {"attn_logit_softcapping", "softcap (not supported yet)"}};
  for (const auto& [foreign, ours] : same)
    if (key == foreign)
      return "this is Hugging Face's or torch's name; attn-run's key is " + std::string(ours);
  static const std::vector<const char*> none = {
      "hidden_act", "model_type", "architectures", "vocab_size", "num_hidden_layers",
      "intermediate_size", "layer_norm_eps", "rms_norm_eps", "torch_dtype", "initializer_range",
      "tie_word_embeddings", "bos_token_id", "eos_token_id", "pad_token_id", "use_cache",
      "layer_norm_epsilon", "activation_function", "n_layer"};
  for (const char* k : none)
    if (key == k)
      return "this is a Hugging Face or torch setting, not an attn-run config key (attention "
             "layers only; see CONTRACT.md \"Config\")";
  return "";
}

}  // namespace attn

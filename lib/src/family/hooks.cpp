// Family quirks no row rule can say (hooks.h).
#include "family/hooks.h"

#include <cmath>
#include <cstdint>

#include "attn/error.h"
#include "family/hf_config.h"

namespace attn::family::hooks {

// modeling_gpt2.GPT2Attention._attn: divide by sqrt(D) when
// scale_attn_weights, and by (layer + 1) when scale_attn_by_inverse_layer_idx.
void gpt2_scale(LayerContext& c) {
  double scale = c.hf.boolean_or("scale_attn_weights", true) ? 1.0 / std::sqrt(double(c.D)) : 1.0;
  if (c.hf.boolean_or("scale_attn_by_inverse_layer_idx", false)) scale /= double(c.layer + 1);
  c.out["scale"] = scale;
}

// BertSelfAttention adds relative position embeddings inside the attention
// for "relative_key" / "relative_key_query"; "absolute" lives outside it.
void bert_absolute_positions(LayerContext& c) {
  const std::string pos = c.hf.string("position_embedding_type").value_or("absolute");
  if (pos != "absolute")
    c.hf.fail("position_embedding_type",
              "\"" + pos +
                  "\" is not supported (only \"absolute\", which lives outside the attention "
                  "layer)");
}

// Phi3Config._rope_scaling_adjustment: the early "su" (and "yarn") names mean longrope.
void phi3_longrope_names(LayerContext& c) {
  if (!c.out.contains("rope") || !c.out["rope"].contains("scaling")) return;
  json& s = c.out["rope"]["scaling"];
  for (const char* k : {"type", "rope_type"})
    if (s.contains(k) && s[k].is_string() && (s[k] == "su" || s[k] == "yarn")) s[k] = "longrope";
}

// modeling_falcon.FalconAttention: new_decoder_architecture keeps
// num_kv_heads groups of [q..., k, v] (the falcon layout); without it,
// multi_query is one KV group (falcon layout, Hkv = 1) and otherwise each head
// holds its own [q, k, v] (the neox layout). ALiBi replaces rope.
void falcon_architecture(LayerContext& c) {
  const bool new_arch = c.hf.boolean_or("new_decoder_architecture", false);
  const bool multi_query = c.hf.boolean_or("multi_query", true);
  c.out["layout"] = new_arch || multi_query ? "falcon" : "neox";
  if (!new_arch) c.out["num_kv_heads"] = multi_query ? 1 : c.H;
  if (c.hf.boolean_or("alibi", false)) {
    c.out.erase("rope");
    c.out["alibi"] = true;
  }
}

// MPT keeps its attention settings in attn_config (Mosaic's own code reads
// them; MptAttentionConfig's alibi defaults to true, alibi_bias_max to 8).
void mpt_attn_config(LayerContext& c) {
  const json empty = json::object();
  const std::optional<HfConfig> given = c.hf.object("attn_config");
  const HfConfig a = given ? *given : HfConfig(empty, c.hf.file(), "attn_config.");
  for (const char* unsupported : {"clip_qkv", "qk_ln", "rope"})
    if (a.has(unsupported) && a.raw()[unsupported] != false)
      a.fail(unsupported, "is not supported by attn-run");
  if (a.has("kv_n_heads")) c.out["num_kv_heads"] = *a.integer("kv_n_heads", 1, c.H);
  if (a.has("softmax_scale")) c.out["scale"] = a.positive_or("softmax_scale", 1.0);
  // Multi-query keeps one K and one V head (Mosaic's MultiQueryAttention).
  if (a.string("attn_type").value_or("") == "multiquery_attention") c.out["num_kv_heads"] = 1;
  if (a.boolean_or("alibi", true))
    c.out["alibi"] = {{"max_bias", a.number("alibi_bias_max", 0.0, true, 1e300).value_or(8.0)}};
}

// ModernBertAttention.__init__ gives layer_id % global_attn_every_n_layers != 0 the local window
// whatever layer_types says, while ModernBertModel takes each layer's rope from
// rope_parameters[layer_types[layer_id]]: a layer_types that disagrees with the period mixes a
// global window with a local base (or the reverse), which no attn-run layer type means.
void modernbert_window_of_layer(LayerContext& c) {
  if (!c.hf.has("layer_types")) return;
  const std::int64_t n = c.hf.integer_or("global_attn_every_n_layers", 1, INT64_MAX, 3);
  const bool local = c.layer % n != 0;
  if (local != (c.layer_type == "sliding_attention"))
    c.hf.fail("layer_types[" + std::to_string(c.layer) + "]",
              "is \"" + c.layer_type + "\" but global_attn_every_n_layers " + std::to_string(n) +
                  " makes layer " + std::to_string(c.layer) + (local ? " local" : " global") +
                  " (ModernBertAttention takes its window from the period and its rope from "
                  "layer_types); attn-run runs layers where both agree");
}

}  // namespace attn::family::hooks

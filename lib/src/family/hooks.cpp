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

// modeling_gpt_bigcode.GPTBigCodeAttention: c_attn is an nn.Linear. With
// multi_query (the default) its rows are [q (C) | k (D) | v (D)], one KV head:
// the fused layout; without, c_attn's output is viewed (H, 3D), per head
// [q, k, v]: the neox layout. Scores are scaled by 1/sqrt(D) when
// scale_attn_weights (scale_attention_softmax_in_fp32 divides by layer + 1
// and multiplies back: no change).
void gpt_bigcode_heads(LayerContext& c) {
  if (c.hf.boolean_or("multi_query", true)) {
    c.out["num_kv_heads"] = 1;
  } else {
    c.out.erase("num_kv_heads");
    c.out["layout"] = "neox";
    c.out["weights_rename"] = {{"c_attn.", "query_key_value."}, {"c_proj.", "dense."}};
  }
  c.out["scale"] = c.hf.boolean_or("scale_attn_weights", true) ? 1.0 / std::sqrt(double(c.D)) : 1.0;
}

namespace {

// relative_bias from T5Config's relative_attention_num_buckets and
// relative_attention_max_distance; bidirectional is left to its default (not
// causal: T5's bidirectional = not is_decoder), so a decoder run with causal
// true gets the one-directional buckets. `table` "" = the layer's own.
void relative_bias_of(LayerContext& c, const std::string& table) {
  // T5's buckets (T5Attention._relative_position_bucket): half per side when
  // bidirectional, half of a side's exact, the rest logarithmic up to
  // max_distance. Checked here so a message names the config.json's fields.
  const bool bidirectional = c.out.value("attention", "multi") != "causal";
  const std::int64_t buckets = c.hf.integer_or("relative_attention_num_buckets", 1, INT64_MAX, 32);
  const std::int64_t distance =
      c.hf.integer_or("relative_attention_max_distance", 1, INT64_MAX, 128);
  const std::int64_t min_buckets = bidirectional ? 4 : 2;
  if (buckets < min_buckets)
    c.hf.fail("relative_attention_num_buckets",
              "expected an integer >= " + std::to_string(min_buckets) + " (" +
                  (bidirectional ? "half the buckets per side, " : "") +
                  "half of a side's buckets exact), found " + std::to_string(buckets));
  const std::int64_t max_exact = (bidirectional ? buckets / 2 : buckets) / 2;
  if (distance <= max_exact)
    c.hf.fail("relative_attention_max_distance",
              "expected an integer > " + std::to_string(max_exact) +
                  " (past the exact buckets of " + "relative_attention_num_buckets " +
                  std::to_string(buckets) + "), found " + std::to_string(distance));
  json r = {{"num_buckets", buckets}, {"max_distance", distance}};
  if (!table.empty()) r["table"] = table;
  c.out["relative_bias"] = r;
}

}  // namespace

// modeling_t5.T5Attention.compute_bias: the table relative_attention_bias
// exists in block 0 only (T5Stack: has_relative_attention_bias=bool(i == 0))
// and its position_bias is passed on to every later block of the stack. The
// table's key follows the layer's prefix, block 0 (layer_map picks the prefix
// after the hook: T5's checkpoints all use the first).
void t5_relative_bias(LayerContext& c) {
  std::string table = c.row.prefixes.front();
  table.replace(table.find("{N}"), 3, "0");
  relative_bias_of(c, table + "relative_attention_bias.weight");
}

// modeling_umt5.UMT5LayerSelfAttention: UMT5Attention(config,
// has_relative_attention_bias=True) in every block, each its own table.
void umt5_relative_bias(LayerContext& c) { relative_bias_of(c, ""); }

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

// Llama 4 (modeling_llama4.Llama4TextAttention, Llama4TextDecoderLayer):
// no_rope_layers[i] (1 = rope; empty or absent: every no_rope_layer_interval-th
// layer, from 4, has none) decides each layer. A rope layer is chunked
// (attention_chunk_size, when set) and L2-normalizes q and k (use_qk_norm, eps
// rms_norm_eps; applied after rope there, which an L2 norm over each head
// commutes with). A no-rope layer scales its queries by the temperature
// (attn_temperature_tuning: floor_scale, attn_scale).
void llama4_layers(LayerContext& c) {
  const HfConfig& hf = c.hf;
  std::optional<std::vector<std::int64_t>> flags = hf.integers("no_rope_layers", 0, 1);
  bool rope = (c.layer + 1) % hf.integer_or("no_rope_layer_interval", 1, 1 << 20, 4) != 0;
  if (flags && !flags->empty()) {
    if (std::int64_t(flags->size()) != c.num_layers)
      hf.fail("no_rope_layers", "expected one entry per layer (" + std::to_string(c.num_layers) +
                                    "), found " + std::to_string(flags->size()));
    rope = (*flags)[std::size_t(c.layer)] != 0;
  }
  if (rope) {
    if (hf.has("attention_chunk_size"))
      c.out["attention_chunk"] = *hf.integer("attention_chunk_size", 1, INT64_MAX);
    if (hf.boolean_or("use_qk_norm", true))
      c.out["qk_norm"] = {{"kind", "l2"}, {"eps", hf.positive_or("rms_norm_eps", 1e-5)}};
    return;
  }
  c.out.erase("rope");
  // attn_temperature_tuning: true, or an int (early configs wrote 4): nonzero is on.
  const json& t = hf.raw().contains("attn_temperature_tuning") ? hf.raw()["attn_temperature_tuning"]
                                                               : json(true);
  const bool tuning =
      t.is_number() ? t.get<double>() != 0.0 : hf.boolean_or("attn_temperature_tuning", true);
  if (tuning)
    c.out["attn_temperature"] = {
        {"floor_scale", hf.positive_or("floor_scale", 8192.0)},
        {"attn_scale", hf.number("attn_scale", -1e300, false, 1e300).value_or(0.1)}};
}

// Cohere 2 (modular_cohere2.Cohere2Attention): rotary only where the layer
// slides (self.sliding_window is not None); head_dim is always hidden_size /
// num_attention_heads (Cohere2Config.__post_init__ sets it so).
void cohere2_rope_on_sliding(LayerContext& c) {
  if (c.layer_type != "sliding_attention") c.out.erase("rope");
  c.out["head_size"] = c.C / c.H;
  if (c.out.contains("rope")) c.out["rope"]["rotary_dim"] = c.C / c.H;
}

// Gemma 4 (modeling_gemma4.Gemma4TextAttention, configuration_gemma4.Gemma4TextConfig): a full
// layer's head size is global_head_dim when set (512 by default), and with attention_k_eq_v its
// KV heads are num_global_key_value_heads and v is k_proj's output (no v_proj); a
// per_layer_config entry, where config.json carries one, overrides both. Rope turns the whole
// head (the sliding layers' default rope ignores partial_rotary_factor; the full layers'
// proportional rope reads it). Every layer RMS-normalizes its values without a weight (v_norm).
void gemma4_layers(LayerContext& c) {
  const HfConfig& hf = c.hf;
  std::int64_t D = c.D, Hkv = c.Hkv;
  if (c.layer_type != "sliding_attention") {
    const std::int64_t global = hf.integer_or("global_head_dim", 0, std::int64_t(1) << 24, 0);
    if (global > 0) D = global;
    if (hf.boolean_or("attention_k_eq_v", false)) {
      Hkv = hf.integer_or("num_global_key_value_heads", 1, c.H, Hkv);
      c.out["k_eq_v"] = true;
    }
    if (std::optional<HfConfig> table = hf.object("per_layer_config"))
      if (std::optional<HfConfig> l = table->object(std::to_string(c.layer).c_str())) {
        D = l->integer_or("head_dim", 1, std::int64_t(1) << 24, D);
        Hkv = l->integer_or("num_key_value_heads", 1, c.H, Hkv);
      }
  }
  if (c.H % Hkv != 0)
    hf.fail(c.out.contains("k_eq_v") ? "num_global_key_value_heads" : "num_key_value_heads",
            "expected a divisor of the " + std::to_string(c.H) + " attention heads, found " +
                std::to_string(Hkv));
  c.out["head_size"] = D;
  if (Hkv != c.H)
    c.out["num_kv_heads"] = Hkv;
  else
    c.out.erase("num_kv_heads");
  if (c.out.contains("rope")) c.out["rope"]["rotary_dim"] = D;
  c.out["v_norm"] = {{"kind", "rms"}, {"eps", hf.positive_or("rms_norm_eps", 1e-6)}};
  // "vision" (the released checkpoints) is causal for text; "all" makes every layer
  // bidirectional with the window W // 2 + 1, whose bound (exclusive or inclusive) the
  // masking code of transformers' releases does not agree on: refused rather than guessed.
  const json& bidi = hf.raw().contains("use_bidirectional_attention")
                         ? hf.raw()["use_bidirectional_attention"]
                         : json(nullptr);
  if (bidi == "all")
    hf.fail("use_bidirectional_attention",
            "\"all\" (every token both ways) is not supported for Gemma 4 yet; a plain --config "
            "with \"attention\": \"multi\" and the layer's sliding_window runs such a layer");
}

}  // namespace attn::family::hooks

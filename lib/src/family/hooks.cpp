// Family quirks no row rule can say (hooks.h): each follows its family's code in
// transformers (models/<family>/modeling_<family>.py, configuration_<family>.py).
#include "family/hooks.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "attn/error.h"
#include "family/hf_config.h"

namespace attn::family::hooks {

// configuration_phi3.Phi3Config._rope_scaling_adjustment: the early "su" (and "yarn") names
// mean longrope.
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

// MPT keeps its attention settings in attn_config (configuration_mpt.MptAttentionConfig:
// alibi defaults to true, alibi_bias_max to 8; modeling_mpt.MptAttention's softmax_scale, and
// Mosaic's own code, llm-foundry's attention.py, for kv_n_heads and multi-query). clip_qkv
// clamps the fused qkv (MptAttention: `if self.clip_qkv: mixed_qkv.clamp(...)`, so 0 is
// off). The row refuses qk_ln and rope.
void mpt_attn_config(LayerContext& c) {
  const json empty = json::object();
  const std::optional<HfConfig> given = c.hf.object("attn_config");
  const HfConfig a = given ? *given : HfConfig(empty, c.hf.file(), "attn_config.");
  if (a.has("kv_n_heads")) c.out["num_kv_heads"] = *a.integer("kv_n_heads", 1, c.H);
  if (a.has("softmax_scale")) c.out["scale"] = a.positive_or("softmax_scale", 1.0);
  if (const double clip = a.number("clip_qkv", 0.0, false, 1e300).value_or(0.0); clip > 0.0)
    c.out["clip_qkv"] = clip;
  // Multi-query keeps one K and one V head (Mosaic's MultiQueryAttention).
  if (a.string("attn_type").value_or("") == "multiquery_attention") c.out["num_kv_heads"] = 1;
  if (a.boolean_or("alibi", true))
    c.out["alibi"] = {{"max_bias", a.number("alibi_bias_max", 0.0, true, 1e300).value_or(8.0)}};
}

// modeling_gpt_bigcode.GPTBigCodeAttention: c_attn is an nn.Linear. With
// multi_query (the default) its rows are [q (C) | k (D) | v (D)], one KV head:
// the fused layout; without, c_attn's output is viewed (H, 3D), per head
// [q, k, v]: the neox layout. (Its scale is the row's rule.)
void gpt_bigcode_heads(LayerContext& c) {
  if (c.hf.boolean_or("multi_query", true)) {
    c.out["num_kv_heads"] = 1;
  } else {
    c.out.erase("num_kv_heads");
    c.out["layout"] = "neox";
    c.out["weights_rename"] = {{"c_attn.", "query_key_value."}, {"c_proj.", "dense."}};
  }
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

// Cohere 2 (modeling_cohere2.Cohere2Attention): rotary only where the layer
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
// proportional rope reads it). (Every layer's v_norm is the row's.)
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
}

// Hunyuan (modeling_hunyuan_v1_dense.HunYuanDenseV1RotaryEmbedding, "DynamicNTKAlphaRotary";
// Tencent's Hunyuan-A13B code likewise): a "dynamic" rope_scaling (rope_parameters in
// transformers v5) with a nonzero alpha is no scaling but the base rope_theta * alpha^(D / (D -
// 2)) over the whole head, attention factor 1.
void hunyuan_alpha_rope(LayerContext& c) {
  if (!c.out.contains("rope") || !c.out["rope"].contains("scaling")) return;
  const json& s = c.out["rope"]["scaling"];
  const std::string type = s.value("rope_type", s.value("type", std::string()));
  if (type != "dynamic" || !s.contains("alpha") || s["alpha"].is_null()) return;
  const char* where = c.hf.has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  if (!s["alpha"].is_number() || !(s["alpha"].get<double>() > 0.0))
    c.hf.fail(where, "alpha: expected a number > 0, found " + s["alpha"].dump());
  const double alpha = s["alpha"].get<double>();
  if (c.D <= 2) c.hf.fail("head_dim", "the NTK-alpha base needs a head size above 2");
  const double theta = c.out["rope"]["theta"].get<double>();
  c.out["rope"]["theta"] = theta * std::pow(alpha, double(c.D) / double(c.D - 2));
  c.out["rope"].erase("scaling");
}

// DBRX (configuration_dbrx.DbrxAttentionConfig, modeling_dbrx.DbrxAttention) keeps its
// attention settings in attn_config: kv_n_heads (default 1), rope_theta (default 10000) and
// clip_qkv, which clamps Wqkv's fused output when not null.
void dbrx_attn_config(LayerContext& c) {
  const std::optional<HfConfig> a = c.hf.object("attn_config");
  if (!a) {
    if (c.H != 1) c.out["num_kv_heads"] = 1;
    return;
  }
  const std::int64_t kv = a->integer_or("kv_n_heads", 1, c.H, 1);
  if (c.H % kv != 0)
    a->fail("kv_n_heads", "expected a divisor of the " + std::to_string(c.H) +
                              " attention heads, found " + std::to_string(kv));
  if (kv != c.H)
    c.out["num_kv_heads"] = kv;
  else
    c.out.erase("num_kv_heads");
  if (c.out.contains("rope")) c.out["rope"]["theta"] = a->positive_or("rope_theta", 10000.0);
  if (a->has("clip_qkv")) c.out["clip_qkv"] = *a->number("clip_qkv", 0.0, true, 1e300);
}

}  // namespace attn::family::hooks

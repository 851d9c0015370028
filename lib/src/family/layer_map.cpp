// A family row applied to one layer (family_row.h): config.json, read through
// the checked accessors of hf_config.h, to attn-run config keys. The config
// parser then checks the result like any config, so a folder and a
// hand-written config obey the same rules.
#include "family/layer_map.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "attn/error.h"
#include "family/hf_config.h"
#include "family/hf_vocab.h"
#include "family/layer_kinds.h"

namespace attn::family {

namespace {

std::int64_t size_field(const HfConfig& hf, const std::string& ours, bool required,
                        std::int64_t fallback) {
  const std::vector<const char*>& keys = spellings_of(ours);
  for (const char* k : keys)
    if (hf.has(k)) return *hf.integer(k, 1, kMaxSize);
  if (!required) return fallback;
  std::string also;
  for (std::size_t i = 1; i < keys.size(); ++i) also += (i > 1 ? ", " : "") + std::string(keys[i]);
  hf.fail(keys.front(), "is missing (an integer >= 1; also read as " + also + ")");
}

std::string with_layer(std::string p, std::int64_t layer) {
  const std::size_t at = p.find("{N}");
  return at == std::string::npos ? p : p.replace(at, 3, std::to_string(layer));
}

bool bias_of(const HfConfig& hf, const BiasRule& b) {
  if (!b.key) return b.fallback;
  const std::optional<bool> v = hf.boolean(b.key);
  if (!v) return b.fallback;
  return b.inverted ? !*v : *v;
}

double first_positive(const HfConfig& hf, const std::vector<const char*>& keys, double fallback) {
  for (const char* k : keys)
    if (hf.has(k)) return *hf.number(k, 0.0, true, 1e300);
  return fallback;
}

// rope_scaling (or a v5 rope_parameters object) as attn-run's rope.scaling:
// null for "default"; its type must be one transformers knows.
json scaling_of(const HfConfig& s, const std::string& what) {
  const std::optional<std::string> t =
      s.has("rope_type") ? s.string("rope_type") : s.string("type");
  const std::string type = t.value_or("default");
  if (type == "default") return nullptr;
  // "mrope" (Qwen2-VL's text config) is rotate_half over 1-D positions: the
  // default; "su" is Phi-3's early name of longrope (its hook renames it).
  if (type == "mrope") return nullptr;
  static const char* kKnown[] = {"linear",   "dynamic", "yarn",        "llama3",
                                 "longrope", "su",      "proportional"};
  if (std::find(std::begin(kKnown), std::end(kKnown), type) == std::end(kKnown))
    s.fail(s.has("rope_type") ? "rope_type" : "type",
           "unknown " + what + " type \"" + type +
               "\" (known: default, linear, dynamic, yarn, llama3, longrope, proportional)");
  json out = s.raw();
  out.erase("rope_theta");
  out.erase("mrope_section");  // the rope's own keys (map_rope)
  out.erase("mrope_interleaved");
  // Proportional rope (Gemma 4) keeps its fraction: it says how many of the
  // whole head's pairs turn; the others' fraction is the rotary_dim.
  if (type != "proportional") out.erase("partial_rotary_factor");
  return out;
}

void map_rope(LayerContext& c, bool sliding) {
  const RopeRule& r = c.row.rope;
  const HfConfig& hf = c.hf;
  // transformers v5: rope_parameters, flat or per layer type, replaces
  // rope_theta / rope_scaling.
  std::optional<HfConfig> params = hf.object("rope_parameters");
  if (params && !params->has("rope_theta") && !params->has("rope_type")) {
    const char* type = sliding ? "sliding_attention" : "full_attention";
    params = params->object(type);
  }
  double theta = first_positive(hf, r.theta_keys, r.theta);
  if (!sliding && r.global_theta_key) theta = hf.positive_or(r.global_theta_key, theta);
  json scaling = nullptr;
  if (params) {
    theta = params->positive_or("rope_theta", theta);
    scaling = scaling_of(*params, "rope_parameters");
  } else if (std::optional<HfConfig> s = hf.object("rope_scaling")) {
    scaling = scaling_of(*s, "rope_scaling");
  }
  // Sliding layers' own base (Gemma 3, ModernBERT): before transformers v5
  // their rope takes no scaling (rope_scaling is for the global layers).
  const bool local_from_v5 = params && hf.object("rope_parameters")->has("sliding_attention");
  if (sliding && r.local_theta_key && !local_from_v5) {
    theta = hf.positive_or(r.local_theta_key, r.local_theta);
    if (!r.local_scaling) scaling = nullptr;
  }
  if (sliding && r.sliding_unscaled && !local_from_v5) scaling = nullptr;
  double fraction = first_positive(hf, r.fraction_keys, r.fraction);
  if (params) fraction = params->positive_or("partial_rotary_factor", fraction);
  if (fraction > 1.0)
    hf.fail(r.fraction_keys.empty() ? "partial_rotary_factor" : r.fraction_keys.front(),
            "expected a fraction in (0, 1] of the head size, found " + json(fraction).dump());
  std::int64_t dims = std::int64_t(double(c.D) * fraction);
  if (r.dims_key && hf.has(r.dims_key)) dims = *hf.integer(r.dims_key, 2, c.D);
  // _compute_proportional_rope_parameters: over the whole head, the fraction
  // choosing how many of its frequencies are nonzero.
  if (scaling.is_object() &&
      scaling.value("rope_type", scaling.value("type", "")) == "proportional") {
    dims = c.D;
    scaling["partial_rotary_factor"] = fraction;
  }
  const bool interleaved =
      r.interleave_key ? hf.boolean_or(r.interleave_key, r.interleaved) : r.interleaved;
  json rope = {
      {"theta", theta}, {"rotary_dim", dims}, {"style", interleaved ? "interleaved" : "half"}};
  if (hf.has("max_position_embeddings"))
    rope["max_position_embeddings"] = *hf.integer("max_position_embeddings", 1, INT64_MAX);
  if (r.mrope) {
    // Qwen2-VL's rope_scaling {"type": "mrope", "mrope_section"}, Qwen3-VL's
    // {"mrope_section", "mrope_interleaved"}, v5's rope_parameters.
    std::optional<HfConfig> holder = params ? params : hf.object("rope_scaling");
    std::vector<std::int64_t> section = r.mrope_default;
    // The family's default fits its default head (Qwen3-VL's 128); elsewhere
    // the file's sections or none.
    if (section.size() == 3 && section[0] + section[1] + section[2] != dims / 2) section.clear();
    if (holder && holder->has("mrope_section")) {
      section = holder->integers("mrope_section", 0, c.D).value_or(section);
      if (section.size() != 3)
        holder->fail("mrope_section",
                     "expected [t, h, w], three integers, found " + std::to_string(section.size()));
    }
    if (!section.empty()) {
      rope["mrope_section"] = section;
      rope["mrope_interleaved"] = r.mrope_interleaved;
    }
  }
  if (scaling.is_object()) {
    // Phi-3 keeps original_max_position_embeddings beside rope_scaling.
    if (!scaling.contains("original_max_position_embeddings") &&
        hf.has("original_max_position_embeddings"))
      scaling["original_max_position_embeddings"] =
          *hf.integer("original_max_position_embeddings", 1, INT64_MAX);
    rope["scaling"] = scaling;
  }
  c.out["rope"] = rope;
}

}  // namespace

// Whether this layer has rope: SmolLM3Config's no_rope_layers (1 = rope),
// or its default from no_rope_layer_interval ((layer + 1) % interval != 0).
bool has_rope(const Row& row, const HfConfig& hf, std::int64_t layer, std::int64_t num_layers) {
  const RopeRule& r = row.rope;
  if (!r.on) return false;
  if (r.on_key && hf.string(r.on_key).value_or("") != r.on_value) return false;
  if (!r.no_rope_key) return true;
  if (std::optional<std::vector<std::int64_t>> list = hf.integers(r.no_rope_key, 0, 1)) {
    if (std::int64_t(list->size()) < num_layers)
      hf.fail(r.no_rope_key, "expected one entry (1 = rope, 0 = none) per layer (" +
                                 std::to_string(num_layers) + "), found " +
                                 std::to_string(list->size()));
    return (*list)[std::size_t(layer)] != 0;
  }
  const std::int64_t n = r.no_rope_interval_key
                             ? hf.integer_or(r.no_rope_interval_key, 1, 1 << 20, r.no_rope_interval)
                             : r.no_rope_interval;
  return n <= 0 || (layer + 1) % n != 0;
}

namespace {

void map_window(LayerContext& c) {
  if (c.layer_type != "sliding_attention") return;
  const WindowRule& w = c.row.window;
  const std::optional<std::int64_t> n = c.hf.integer(w.window_key, 1, INT64_MAX);
  if (n) c.out["sliding_window"] = *n / w.div + w.add;
}

void map_scale(LayerContext& c) {
  const ScaleRule& s = c.row.scale;
  switch (s.kind) {
    case ScaleRule::inverse_sqrt_head: {
      if (!s.enable_key && !s.by_layer_key && !s.times_key) return;  // the default, 1/sqrt(D)
      double scale =
          !s.enable_key || c.hf.boolean_or(s.enable_key, true) ? 1.0 / std::sqrt(double(c.D)) : 1.0;
      if (s.by_layer_key && c.hf.boolean_or(s.by_layer_key, false)) scale /= double(c.layer + 1);
      if (s.times_key) scale *= c.hf.positive_or(s.times_key, 1.0);
      c.out["scale"] = scale;
      return;
    }
    case ScaleRule::inverse_sqrt_of_key:
      if (c.hf.has(s.key)) c.out["scale"] = 1.0 / std::sqrt(c.hf.positive_or(s.key, 1.0));
      return;
    case ScaleRule::value_of_key:
      if (c.hf.has(s.key)) c.out["scale"] = c.hf.positive_or(s.key, 1.0);
      return;
    case ScaleRule::one:
      c.out["scale"] = 1.0;
      return;
  }
}

void map_qk_norm(LayerContext& c) {
  const QkNormRule& q = c.row.qk_norm;
  if (!q.on || (q.enable_key && !c.hf.boolean_or(q.enable_key, false))) return;
  json n = {{"eps", first_positive(c.hf, q.eps_keys, q.eps)},
            {"scope", q.scope},
            {"weight_offset", q.offset}};
  if (std::string(q.kind) != "rms") n["kind"] = q.kind;
  if (std::string(q.kind) == "l2") n.erase("weight_offset");  // no weight to offset
  if (q.per_head) n["per_head"] = true;
  if (q.bias) n["bias"] = true;
  if (q.after_rope) n["order"] = "after_rope";
  c.out["qk_norm"] = n;
}

// DeepSeek's multi-head latent attention (modeling_deepseek_v3.DeepseekV3Attention):
// its sizes as "mla"; the head size max(Dn + Dr, Dv); rope on the Dr part; every
// head its own keys and values (kv_b_proj), whatever num_key_value_heads says.
void map_mla(LayerContext& c) {
  if (!c.row.mla) return;
  const HfConfig& hf = c.hf;
  auto size = [&](const char* key) {
    const std::optional<std::int64_t> v = hf.integer(key, 1, kMaxSize);
    if (!v) hf.fail(key, "is missing (an integer >= 1)");
    return *v;
  };
  const std::optional<std::int64_t> q_lora =
      hf.integer("q_lora_rank", 1, kMaxSize);  // null: q_proj
  const std::int64_t nope = size("qk_nope_head_dim"), rope = size("qk_rope_head_dim");
  const std::int64_t v = size("v_head_dim");
  c.out["mla"] = {{"q_lora_rank", q_lora ? json(*q_lora) : json(nullptr)},
                  {"kv_lora_rank", size("kv_lora_rank")},
                  {"qk_nope_head_dim", nope},
                  {"qk_rope_head_dim", rope},
                  {"v_head_dim", v}};
  c.out["head_size"] = std::max(nope + rope, v);
  c.out.erase("num_kv_heads");
  if (c.out.contains("rope")) c.out["rope"]["rotary_dim"] = rope;
}

// The row's relative position bias (family_row.h RelativeBiasRule) as "relative_bias";
// `pattern` the module's prefix the weights use ("{N}" = the layer).
void map_relative_bias(LayerContext& c, const std::string& pattern) {
  const RelativeBiasRule& r = c.row.relative_bias;
  if (!r.on) return;
  // T5's buckets (T5Attention._relative_position_bucket): half per side when
  // bidirectional, half of a side's exact, the rest logarithmic up to
  // max_distance. Checked here so a message names the config.json's fields.
  const bool bidirectional = c.out.value("attention", "multi") != "causal";
  const std::int64_t buckets = c.hf.integer_or(r.buckets_key, 1, INT64_MAX, r.buckets);
  const std::int64_t distance = c.hf.integer_or(r.distance_key, 1, INT64_MAX, r.distance);
  const std::int64_t min_buckets = bidirectional ? 4 : 2;
  if (buckets < min_buckets)
    c.hf.fail(r.buckets_key, "expected an integer >= " + std::to_string(min_buckets) + " (" +
                                 (bidirectional ? "half the buckets per side, " : "") +
                                 "half of a side's buckets exact), found " +
                                 std::to_string(buckets));
  const std::int64_t max_exact = (bidirectional ? buckets / 2 : buckets) / 2;
  if (distance <= max_exact)
    c.hf.fail(r.distance_key, "expected an integer > " + std::to_string(max_exact) +
                                  " (past the exact buckets of " + r.buckets_key + " " +
                                  std::to_string(buckets) + "), found " + std::to_string(distance));
  json bias = {{"num_buckets", buckets}, {"max_distance", distance}};
  // Left to attn-run's defaults: the layer's own table, and bidirectional (T5's
  // bidirectional = not is_decoder), so a decoder run with causal true gets the
  // one-directional buckets.
  if (r.first_block) bias["table"] = with_layer(pattern, 0) + r.table;
  c.out["relative_bias"] = bias;
}

// DeBERTa-v2/v3 (DebertaV2Config, DebertaV2Encoder, DisentangledSelfAttention): with
// relative_attention, the terms of pos_att_type (a "p2c|c2p" string or a list; none: no term),
// the buckets and their range, share_att_key, and the model-level table and its LayerNorm
// (norm_rel_ebd "layer_norm") under the root of `pattern` ("deberta.encoder.layer.{N}..." ->
// "deberta."); a padded query row sees no key (get_attention_mask).
void map_disentangled(LayerContext& c, const std::string& pattern) {
  if (!c.row.disentangled) return;
  c.out["mask_padded_queries"] = true;
  if (!c.hf.boolean_or("relative_attention", false)) return;
  json terms = json::array();
  if (const json& raw = c.hf.raw(); raw.contains("pos_att_type") && !raw["pos_att_type"].is_null())
    terms = raw["pos_att_type"];
  if (terms.is_array() && terms.empty()) return;  // no term: the content scores alone
  std::int64_t max_relative = c.hf.integer_or("max_relative_positions", INT64_MIN, kMaxSize, -1);
  if (max_relative < 1) max_relative = c.hf.integer_or("max_position_embeddings", 1, kMaxSize, 512);
  json d = {{"pos_att_type", terms},
            {"position_buckets", c.hf.integer_or("position_buckets", INT64_MIN, kMaxSize, -1)},
            {"max_relative_positions", max_relative},
            {"share_att_key", c.hf.boolean_or("share_att_key", false)}};
  const std::size_t at = pattern.find("encoder.layer.");
  const std::string root = at == std::string::npos ? std::string() : pattern.substr(0, at);
  d["table"] = root + "encoder.rel_embeddings.weight";
  std::string norm = c.hf.string("norm_rel_ebd").value_or("none");
  for (char& ch : norm) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (norm.find("layer_norm") != std::string::npos) {  // the list's "layer_norm", stripped
    d["norm_weight"] = root + "encoder.LayerNorm.weight";
    d["norm_bias"] = root + "encoder.LayerNorm.bias";
    d["eps"] = c.hf.positive_or("layer_norm_eps", 1e-7);
  }
  c.out["disentangled"] = d;
}

// The row's refusals (family_row.h Refusal): a setting it does not run, named.
void check_refusals(const LayerContext& c) {
  for (const Refusal& r : c.row.refusals) {
    std::optional<HfConfig> nested;
    if (r.within && !(nested = c.hf.object(r.within))) continue;
    const HfConfig& hf = nested ? *nested : c.hf;
    if (!hf.has(r.key)) continue;
    json value = hf.raw()[r.key];
    if (r.typed && !r.values.empty()) {
      if (r.values.front().is_string()) value = *hf.string(r.key);
      if (r.values.front().is_boolean()) value = *hf.boolean(r.key);
    }
    const bool listed = std::find(r.values.begin(), r.values.end(), value) != r.values.end();
    if (listed == r.values_run) continue;
    std::string why = r.why;
    const std::size_t at = why.find("{value}");
    if (at != std::string::npos)
      why.replace(at, 7, value.is_string() ? "\"" + value.get<std::string>() + "\"" : value.dump());
    hf.fail(r.key, why);
  }
}

// The row's layer_types_agree (family_row.h WindowRule): config.json's
// layer_types entry and the period make the same layer local or global.
void check_layer_type_agrees(const LayerContext& c) {
  const WindowRule& w = c.row.window;
  if (!w.layer_types_agree || w.kind != WindowRule::global_every || !c.hf.has("layer_types"))
    return;
  const std::int64_t n =
      w.period_key ? c.hf.integer_or(w.period_key, 1, INT64_MAX, w.period) : w.period;
  if (n <= 0) return;
  const bool local = c.layer % n != global_place(w, c.hf, n);
  if (local == (c.layer_type == w.local_type)) return;
  const std::string layer = std::to_string(c.layer);
  c.hf.fail("layer_types[" + layer + "]",
            "is \"" + c.layer_type + "\" but " +
                (w.period_key ? std::string(w.period_key) : std::string("the period")) + " " +
                std::to_string(n) + " makes layer " + layer + (local ? " local" : " global") +
                " (" + w.layer_types_agree + "); attn-run runs layers where both agree");
}

// The family's LayerNorm over o_proj's output plus the input, named under the
// layer's module: the attention prefix without its last part
// ("bert.encoder.layer.3.attention." -> "bert.encoder.layer.3.").
void map_residual_norm(LayerContext& c, const std::string& attention_prefix) {
  const ResidualNormRule& r = c.row.residual_norm;
  std::string layer = attention_prefix;
  if (!layer.empty() && layer.back() == '.') layer.pop_back();
  const std::size_t dot = layer.rfind('.');
  layer = dot == std::string::npos ? std::string() : layer.substr(0, dot + 1);
  c.out["residual_norm"] = {{"eps", first_positive(c.hf, r.eps_keys, r.eps)},
                            {"prefix", layer + r.name}};
}

// The block's pre-attention norm (family_row.h InputNormRule) as "input_norm":
// its tensors under the block's module, the attention prefix without its last
// `up` parts ("model.layers.3.self_attn." -> "model.layers.3." +
// "input_layernorm.").
void map_input_norm(LayerContext& c, const std::string& attention_prefix,
                    const std::vector<std::string>& weight_keys) {
  const InputNormRule& r = c.row.input_norm;
  if (r.refused)
    throw Error(Exit::config, "--residual: not available for model_type " + c.row.model_type +
                                  ": " + r.refused + "; give the layer's input with --input");
  const bool post = r.kind == InputNormRule::none ||
                    (r.before_key && !c.hf.boolean_or(r.before_key, true)) ||
                    (r.none_on_first && c.layer == 0);
  if (post) {
    std::string why = r.kind == InputNormRule::none ? r.module
                      : r.before_key                ? std::string(r.before_key) + " false"
                                                    : "layer 0's is nn.Identity";
    c.out["input_norm"] = {{"kind", "none"}, {"module", why}};
    return;
  }
  std::string block = attention_prefix;
  for (int i = 0; i < r.up; ++i) {
    if (!block.empty() && block.back() == '.') block.pop_back();
    const std::size_t dot = block.rfind('.');
    block = dot == std::string::npos ? std::string() : block.substr(0, dot + 1);
  }
  std::string name = r.names.front();
  for (const char* n : r.names)
    if (std::find(weight_keys.begin(), weight_keys.end(), block + n + "weight") !=
        weight_keys.end()) {
      name = n;
      break;
    }
  json n = {{"kind", r.kind == InputNormRule::rms ? "rms" : "layer"},
            {"eps", first_positive(c.hf, r.eps_keys, r.eps)},
            {"weight", block + name + "weight"},
            {"offset", r.offset},
            {"module", std::string(r.module) + " " + name.substr(0, name.size() - 1)}};
  if (r.kind == InputNormRule::layer && bias_of(c.hf, r.bias)) n["bias"] = block + name + "bias";
  if (r.multiplier_key) n["multiplier"] = c.hf.positive_or(r.multiplier_key, 1.0);
  c.out["input_norm"] = n;
}

// The family's embedding (family_row.h EmbeddingRule) as "embedding": its
// tensors under the model's root, the attention prefix without its last `up`
// parts ("model.layers.0.self_attn." -> "model." + "embed_tokens.").
void map_embedding(LayerContext& c, const std::string& attention_prefix,
                   const std::vector<std::string>& weight_keys) {
  const EmbeddingRule& r = c.row.embedding;
  if (!r.on) {
    std::string covered;
    for (const Row& other : rows())
      if (other.embedding.on) covered += (covered.empty() ? "" : ", ") + other.model_type;
    throw Error(Exit::config, "--tokens: not available for model_type " + c.row.model_type +
                                  ": attn-run does not build its embedding (the families it "
                                  "builds: " +
                                  covered + "); give layer 0's input with --input");
  }
  if (r.same_size_key && c.hf.has(r.same_size_key)) {
    const std::int64_t n = *c.hf.integer(r.same_size_key, 1, kMaxSize);
    if (n != c.C)
      c.hf.fail(r.same_size_key, std::to_string(n) + " differs from hidden_size " +
                                     std::to_string(c.C) + ": " + r.module +
                                     " projects its embeddings to hidden_size, which --tokens "
                                     "does not run; give layer 0's input with --input");
  }
  std::string root = attention_prefix;
  for (int i = 0; i < r.up; ++i) {
    if (!root.empty() && root.back() == '.') root.pop_back();
    const std::size_t dot = root.rfind('.');
    root = dot == std::string::npos ? std::string() : root.substr(0, dot + 1);
  }
  std::string word = r.word.front();
  for (const char* w : r.word)
    if (std::find(weight_keys.begin(), weight_keys.end(), root + w + "weight") !=
        weight_keys.end()) {
      word = w;
      break;
    }
  json e = {{"word", root + word + "weight"}, {"module", r.module}};
  if (r.scale == EmbeddingRule::sqrt_hidden) {
    e["scale"] = std::sqrt(double(c.C));
    e["scale_dtype"] = "table";
  } else if (r.scale == EmbeddingRule::multiplier) {
    const double m = c.hf.positive_or(r.multiplier_key, 1.0);
    if (m != 1.0) e["scale"] = m;
  }
  if (r.positions) {
    e["positions"] = root + r.positions + "weight";
    if (r.position_offset) e["position_offset"] = r.position_offset;
    if (r.padding_key) e["padding_id"] = c.hf.integer_or(r.padding_key, 0, INT64_MAX, r.padding);
  }
  if (r.token_types) e["token_types"] = root + r.token_types + "weight";
  if (r.norm) {
    e["norm_weight"] = root + r.norm + "weight";
    e["norm_bias"] = root + r.norm + "bias";
    e["norm_eps"] = first_positive(c.hf, r.eps_keys, r.eps);
  }
  c.out["embedding"] = e;
}

}  // namespace

bool has_residual_norm(const Row& row, const HfConfig& hf) {
  const ResidualNormRule& r = row.residual_norm;
  return r.name && !(r.before_key && hf.boolean_or(r.before_key, true));
}

json map_layer(const Row& row, const HfConfig& hf, std::int64_t layer, std::int64_t num_layers,
               const std::vector<std::string>& weight_keys, bool residual_norm, int module,
               bool input_norm, bool embedding) {
  // A decoder's modules are full attention, causal or over the encoder's output.
  LayerContext c{row,
                 hf,
                 layer,
                 num_layers,
                 module ? "full_attention" : layer_type_of(row, hf, layer, num_layers),
                 module,
                 0,
                 0,
                 0,
                 0,
                 json::object()};
  c.C = size_field(hf, "hidden_size", true, 0);
  const char* heads = module ? row.decoder.decoder_heads_key : row.decoder.encoder_heads_key;
  c.H = heads && hf.has(heads) ? *hf.integer(heads, 1, kMaxSize)
                               : size_field(hf, "num_heads", true, 0);
  c.Hkv = size_field(hf, "num_kv_heads", false, c.H);
  c.D = size_field(hf, "head_size", false, c.C / c.H);
  if (c.D < 1) hf.fail("head_dim", "is missing and hidden_size / num_attention_heads is 0");
  // Without a head size of its own the modeling code divides the width by
  // the heads (and refuses a remainder: GPT2Attention, GPTBigCodeAttention,
  // BertSelfAttention, ...): named as this config.json spells them.
  const auto spelled = [&](const char* ours) {
    for (const char* k : spellings_of(ours))
      if (hf.has(k)) return std::string(k);
    return std::string(ours);
  };
  if (c.C % c.H != 0 && spelled("head_size") == "head_size")
    hf.fail(spelled("num_heads"),
            "expected a divisor of " + spelled("hidden_size") + " " + std::to_string(c.C) +
                " (the head size is their quotient), found " + std::to_string(c.H));
  if (c.Hkv > c.H || c.H % c.Hkv != 0)
    hf.fail(hf.first_set({"num_key_value_heads", "num_kv_heads", "n_head_kv"}),
            "expected a divisor of the " + std::to_string(c.H) + " attention heads, found " +
                std::to_string(c.Hkv));

  // The module's tensor prefixes, the one the weights really use first.
  const std::vector<std::string>& prefixes = module == 1   ? row.decoder.self_prefixes
                                             : module == 2 ? row.decoder.cross_prefixes
                                                           : row.prefixes;
  std::string pattern = prefixes.front();
  for (const std::string& p : prefixes) {
    const std::string cand = with_layer(p, layer);
    if (std::any_of(weight_keys.begin(), weight_keys.end(),
                    [&](const std::string& k) { return k.compare(0, cand.size(), cand) == 0; })) {
      pattern = p;
      break;
    }
  }

  c.out["hidden_size"] = c.C;
  c.out["num_heads"] = c.H;
  c.out["head_size"] = c.D;
  c.out["out_size"] = c.C;
  if (c.Hkv != c.H) c.out["num_kv_heads"] = c.Hkv;
  const bool causal =
      module == 1 || (module == 0 && row.direction == Row::causal) ||
      (module == 0 && row.direction == Row::decoder_flag && hf.boolean_or("is_decoder", false));
  c.out["attention"] = causal ? "causal" : "multi";
  c.out["layout"] = row.layout;
  if (!row.renames.empty()) {
    json r = json::object();
    for (const auto& [from, to] : row.renames) r[from] = to;
    c.out["weights_rename"] = r;
  }
  c.out["qkv_bias"] = bias_of(hf, row.qkv_bias);
  c.out["out_bias"] = bias_of(hf, row.out_bias);
  const bool sliding = c.layer_type == "sliding_attention";
  const bool nope = row.rope.full_nope_with_window && !sliding && hf.has(row.window.window_key);
  if (has_rope(row, hf, layer, num_layers) && !nope) map_rope(c, sliding);
  if (row.alibi) c.out["alibi"] = true;
  map_window(c);
  map_scale(c);
  if (row.softcap_key && hf.has(row.softcap_key))
    c.out["softcap"] = hf.positive_or(row.softcap_key, 0.0);
  map_qk_norm(c);
  if (row.v_norm)
    c.out["v_norm"] = {{"kind", "rms"},
                       {"eps", first_positive(hf, row.qk_norm.eps_keys, row.qk_norm.eps)}};
  if (row.sinks) c.out["sinks"] = true;
  if (row.clip_qkv_key && hf.has(row.clip_qkv_key))
    c.out["clip_qkv"] = *hf.number(row.clip_qkv_key, 0.0, true, 1e300);
  if (row.gate) c.out["gate"] = true;
  map_mla(c);
  if (module != 2) map_relative_bias(c, pattern);  // T5's cross-attention has no table
  map_disentangled(c, pattern);
  check_refusals(c);
  check_layer_type_agrees(c);
  if (row.hook) row.hook(c);

  const std::string prefix = with_layer(pattern, layer);
  c.out["weights_prefix"] = prefix;
  if (residual_norm && has_residual_norm(row, hf)) map_residual_norm(c, prefix);
  if (input_norm) map_input_norm(c, prefix, weight_keys);
  if (embedding) map_embedding(c, prefix, weight_keys);
  return c.out;
}

}  // namespace attn::family

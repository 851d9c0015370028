// The version 2 config keys (CONTRACT.md "(v2) New keys", "Positions"):
// rope, alibi, sliding_window, softcap, qk_norm, sinks, the masks, the
// cross-attention sources and torch MHA's options. Each is read strictly
// here, checked against the sizes and the other keys in resolve_score_keys, and
// written back as resolved for run.json in score_keys_to_json.
#include <cmath>
#include <set>

#include "attn/error.h"
#include "attn/positions.h"
#include "config/internal.h"
#include "config/json.h"

namespace attn::config_detail {
namespace {

namespace cj = config_json;

std::string n(std::int64_t v) { return std::to_string(v); }

double positive(const json& v, const std::string& name) {
  const double d = cj::get_number(v, name);
  if (!(d > 0.0)) bad(name, "expected a number > 0, found " + v.dump());
  return d;
}

std::int64_t positive_int(const json& v, const std::string& name) {
  const std::int64_t i = cj::get_int(v, name);
  if (i < 1) bad(name, "expected an integer > 0, found " + n(i));
  return i;
}

std::vector<double> positive_list(const json& v, const std::string& name) {
  if (!v.is_array() || v.empty())
    bad(name, "expected a non-empty array of numbers > 0, found " +
                  (v.is_array() ? std::string("an empty array") : cj::describe(v)));
  std::vector<double> out;
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(positive(v[i], name + "[" + std::to_string(i) + "]"));
  return out;
}

const std::vector<std::string>& scaling_types() {
  static const std::vector<std::string> t = {"linear", "dynamic",  "yarn",
                                             "llama3", "longrope", "proportional"};
  return t;
}

// Hugging Face's rope_scaling as written in a config.json. "default" (or
// "type": "default") means no scaling, as in transformers.
std::optional<RopeScaling> read_scaling(const json& v, const std::string& name) {
  if (v.is_null()) return std::nullopt;
  const json& o = cj::get_object(v, name);
  std::string type;
  if (o.contains("rope_type")) type = cj::get_string(o.at("rope_type"), name + ".rope_type");
  if (o.contains("type")) {
    const std::string t = cj::get_string(o.at("type"), name + ".type");
    if (!type.empty() && t != type)
      bad(name, "rope_type " + cj::quote(type) + " and type " + cj::quote(t) +
                    " disagree (give one; transformers reads rope_type)");
    type = t;
  }
  std::string list;
  for (const auto& t : scaling_types()) list += (list.empty() ? "" : ", ") + t;
  if (type.empty()) bad(name, "expected \"rope_type\" (" + list + "), found none");
  if (type == "default") return std::nullopt;
  if (std::find(scaling_types().begin(), scaling_types().end(), type) == scaling_types().end())
    bad(name + ".rope_type",
        "expected one of " + list + " (or \"default\"), found " + cj::quote(type));

  // Fields a type does not use are accepted and ignored, as transformers
  // does (it warns): folders carry original_max_position_embeddings for all.
  RopeScaling s;
  s.type = type;
  auto field = [&](const char* k) -> const json* { return o.contains(k) ? &o.at(k) : nullptr; };
  const std::string at = name + ".";
  if (auto* f = field("factor")) s.factor = positive(*f, at + "factor");
  if (auto* f = field("original_max_position_embeddings"))
    s.original_max_position_embeddings = positive_int(*f, at + "original_max_position_embeddings");
  if (auto* f = field("low_freq_factor")) s.low_freq_factor = positive(*f, at + "low_freq_factor");
  if (auto* f = field("high_freq_factor"))
    s.high_freq_factor = positive(*f, at + "high_freq_factor");
  if (auto* f = field("beta_fast")) s.beta_fast = cj::get_number(*f, at + "beta_fast");
  if (auto* f = field("beta_slow")) s.beta_slow = cj::get_number(*f, at + "beta_slow");
  if (auto* f = field("attention_factor"))
    s.attention_factor = positive(*f, at + "attention_factor");
  if (auto* f = field("mscale")) s.mscale = cj::get_number(*f, at + "mscale");
  if (auto* f = field("mscale_all_dim"))
    s.mscale_all_dim = cj::get_number(*f, at + "mscale_all_dim");
  if (auto* f = field("truncate")) s.truncate = cj::get_bool(*f, at + "truncate");
  if (auto* f = field("short_factor")) s.short_factor = positive_list(*f, at + "short_factor");
  if (auto* f = field("long_factor")) s.long_factor = positive_list(*f, at + "long_factor");
  if (auto* f = field("freq_factors")) s.freq_factors = positive_list(*f, at + "freq_factors");
  if (auto* f = field("partial_rotary_factor")) {
    s.partial_rotary_factor = cj::get_number(*f, at + "partial_rotary_factor");
    if (!(*s.partial_rotary_factor >= 0.0 && *s.partial_rotary_factor <= 1.0))
      bad(at + "partial_rotary_factor",
          "expected a number from 0 to 1 (the rotated share of the head), found " + f->dump());
  }
  // llama3 blends between the two wavelengths. Equal factors leave no band
  // to blend (Llama 4 ships high = low = 1; transformers accepts them).
  if (type == "llama3" && s.low_freq_factor && s.high_freq_factor &&
      *s.high_freq_factor < *s.low_freq_factor)
    bad(at + "high_freq_factor", "expected a number >= low_freq_factor " +
                                     json(*s.low_freq_factor).dump() + ", found " +
                                     json(*s.high_freq_factor).dump());
  return s;
}

void read_rope(Config& c, const json& v, const std::string& name) {
  c.rope.reset();
  c.rotary_dim_given = false;
  if (v.is_null()) return;
  if (!v.is_object())
    bad(name, "expected an object ({} for theta 10000 over all of head_size) or null, found " +
                  cj::describe(v));
  const json& o = v;
  RopeSpec r;
  if (o.contains("theta")) r.theta = positive(o.at("theta"), name + ".theta");
  if (o.contains("rotary_dim")) {
    r.rotary_dim = cj::get_int(o.at("rotary_dim"), name + ".rotary_dim");
    c.rotary_dim_given = true;
  }
  if (o.contains("style")) {
    const std::string s = cj::get_string(o.at("style"), name + ".style");
    if (s == "half")
      r.style = RopeStyle::half;
    else if (s == "interleaved")
      r.style = RopeStyle::interleaved;
    else
      bad(name + ".style",
          "expected \"half\" (Hugging Face's rotate_half) or \"interleaved\" "
          "(GPT-J, Meta's Llama), found " +
              cj::quote(s));
  }
  if (o.contains("max_position_embeddings"))
    r.max_position_embeddings =
        positive_int(o.at("max_position_embeddings"), name + ".max_position_embeddings");
  if (o.contains("scaling")) r.scaling = read_scaling(o.at("scaling"), name + ".scaling");
  c.rope = std::move(r);
}

void read_alibi(Config& c, const json& v, const std::string& name) {
  c.alibi.reset();
  if (v.is_boolean()) {
    if (v.get<bool>()) c.alibi = AlibiSpec{};
    return;
  }
  if (!v.is_object())
    bad(name, "expected true, false, {\"max_bias\": number} or {\"slopes\": [numbers]}, found " +
                  cj::describe(v));
  if (v.contains("max_bias") && v.contains("slopes"))
    bad(name, "expected max_bias or slopes, found both (slopes are the bias per head)");
  AlibiSpec a;
  if (v.contains("max_bias")) a.max_bias = positive(v.at("max_bias"), name + ".max_bias");
  if (v.contains("slopes")) {
    const json& s = v.at("slopes");
    if (!s.is_array() || s.empty())
      bad(name + ".slopes", "expected an array of num_heads numbers, found " +
                                (s.is_array() ? std::string("an empty array") : cj::describe(s)));
    for (std::size_t i = 0; i < s.size(); ++i)
      a.slopes.push_back(cj::get_number(s[i], name + ".slopes[" + std::to_string(i) + "]"));
  }
  c.alibi = std::move(a);
}

void read_qk_norm(Config& c, const json& v, const std::string& name) {
  c.qk_norm.reset();
  if (v.is_null()) return;
  if (!v.is_object())
    bad(name, "expected an object ({} for eps 1e-6 per head) or null, found " + cj::describe(v));
  const json& o = v;
  QkNormSpec q;
  if (o.contains("eps")) {
    q.eps = positive(o.at("eps"), name + ".eps");
    // Added in float32 to the mean square: an eps that rounds to 0 is none.
    if (!(static_cast<float>(q.eps) > 0.0f) || !std::isfinite(static_cast<float>(q.eps)))
      bad(name + ".eps", "expected a number > 0 that float32 holds, found " + o.at("eps").dump());
  }
  if (o.contains("scope")) {
    const std::string s = cj::get_string(o.at("scope"), name + ".scope");
    if (s != "head" && s != "all")
      bad(name + ".scope",
          "expected \"head\" (Qwen3, Gemma 3: per head, over D) or \"all\" (OLMo 2: "
          "over all heads), found " +
              cj::quote(s));
    q.scope_all = s == "all";
  }
  if (o.contains("weight_offset")) {
    const std::int64_t w = cj::get_int(o.at("weight_offset"), name + ".weight_offset");
    if (w != 0 && w != 1)
      bad(name + ".weight_offset", "expected 0 (x * w) or 1 (Gemma: x * (1 + w)), found " + n(w));
    q.weight_offset = static_cast<int>(w);
  }
  // (v3) kind, per_head weights, bias
  if (o.contains("kind")) {
    const std::string k = cj::get_string(o.at("kind"), name + ".kind");
    if (k == "rms")
      q.kind = QkNormKind::rms;
    else if (k == "layer")
      q.kind = QkNormKind::layer;
    else if (k == "l2")
      q.kind = QkNormKind::l2;
    else
      bad(name + ".kind",
          "expected \"rms\" (RMSNorm: Qwen3, Gemma 3, OLMo 2), \"layer\" (LayerNorm: Cohere, "
          "StableLM, Phi) or \"l2\" (no weight: Llama 4), found " +
              cj::quote(k));
  }
  if (o.contains("per_head")) q.per_head = cj::get_bool(o.at("per_head"), name + ".per_head");
  if (o.contains("bias")) q.bias = cj::get_bool(o.at("bias"), name + ".bias");
  if (q.kind == QkNormKind::l2) {
    for (const char* k : {"weight_offset", "per_head", "bias"})
      if (o.contains(k))
        bad(name + "." + k, std::string("qk_norm kind \"l2\" has no weight (x * rsqrt(mean(x^2) + "
                                        "eps), Llama 4): leave ") +
                                k + " out");
  }
  if (q.bias && q.kind != QkNormKind::layer)
    bad(name + ".bias", "a bias belongs to qk_norm kind \"layer\" (LayerNorm), found kind \"" +
                            std::string(q.kind == QkNormKind::rms ? "rms" : "l2") + "\"");
  if (q.per_head && q.scope_all)
    bad(name + ".per_head",
        "per-head weights (H, D) norm each head: they need scope \"head\", found \"all\"");
  c.qk_norm = q;
}

// (v3) attn_temperature: {"floor_scale": number > 0, "attn_scale": number},
// Llama 4's defaults (8192, 0.1) for a field left out.
void read_attn_temperature(Config& c, const json& v, const std::string& name) {
  c.attn_temperature.reset();
  if (v.is_null()) return;
  if (!v.is_object())
    bad(name,
        "expected an object {\"floor_scale\": number, \"attn_scale\": number} or null, found " +
            cj::describe(v));
  AttnTemperature t;
  if (v.contains("floor_scale")) {
    t.floor_scale = positive(v.at("floor_scale"), name + ".floor_scale");
    if (!std::isfinite(static_cast<float>(t.floor_scale)))
      bad(name + ".floor_scale",
          "expected a number > 0 that float32 holds, found " + v.at("floor_scale").dump());
  }
  if (v.contains("attn_scale")) {
    t.attn_scale = cj::get_number(v.at("attn_scale"), name + ".attn_scale");
    if (!std::isfinite(static_cast<float>(t.attn_scale)))
      bad(name + ".attn_scale",
          "expected a number that float32 holds, found " + v.at("attn_scale").dump());
  }
  c.attn_temperature = t;
}

// (v3) v_norm: {"kind": "rms", "eps": number > 0} (eps 1e-6 left out), or null.
void read_v_norm(Config& c, const json& v, const std::string& name) {
  c.v_norm.reset();
  if (v.is_null()) return;
  if (!v.is_object())
    bad(name, "expected an object {\"kind\": \"rms\", \"eps\": number} or null, found " +
                  cj::describe(v));
  VNormSpec s;
  if (v.contains("kind")) {
    const std::string k = cj::get_string(v.at("kind"), name + ".kind");
    if (k != "rms")
      bad(name + ".kind",
          "expected \"rms\" (x * rsqrt(mean(x^2) + eps), no weight: Gemma 4), found " +
              cj::quote(k));
  }
  if (v.contains("eps")) {
    s.eps = positive(v.at("eps"), name + ".eps");
    if (!(static_cast<float>(s.eps) > 0.0f) || !std::isfinite(static_cast<float>(s.eps)))
      bad(name + ".eps", "expected a number > 0 that float32 holds, found " + v.at("eps").dump());
  }
  c.v_norm = s;
}

// The key that makes this config a cross-attention one, for messages.
std::string cross_key(const Config& c) { return c.kv_input.given() ? "kv_input" : "key_input"; }

// relative_bias: {num_buckets, max_distance, bidirectional, table} (T5), each
// field optional (T5Config's 32 and 128; bidirectional = not causal, as T5's
// bidirectional = not is_decoder), or null.
void read_relative_bias(Config& c, const json& v, const std::string& name) {
  c.relative_bias.reset();
  c.relative_bias_bidirectional_given = false;
  if (v.is_null()) return;
  if (!v.is_object())
    bad(name, "expected an object ({} for T5's 32 buckets up to distance 128) or null, found " +
                  cj::describe(v));
  RelativeBiasSpec r;
  if (v.contains("num_buckets"))
    r.num_buckets = positive_int(v.at("num_buckets"), name + ".num_buckets");
  if (v.contains("max_distance"))
    r.max_distance = positive_int(v.at("max_distance"), name + ".max_distance");
  if (v.contains("bidirectional")) {
    r.bidirectional = cj::get_bool(v.at("bidirectional"), name + ".bidirectional");
    c.relative_bias_bidirectional_given = true;
  }
  if (v.contains("table")) {
    r.table = cj::get_string(v.at("table"), name + ".table");
    if (r.table.empty() || r.table.find('\0') != std::string::npos)
      bad(name + ".table",
          "expected the table's key in the weights (e.g. "
          "\"encoder.block.0.layer.0.SelfAttention.relative_attention_bias."
          "weight\"), found " +
              v.at("table").dump());
  }
  c.relative_bias = std::move(r);
}

void resolve_relative_bias(Config& c) {
  RelativeBiasSpec& r = *c.relative_bias;
  if (!c.relative_bias_bidirectional_given) r.bidirectional = !c.causal;
  // T5's rule needs at least one exact bucket per side (max_exact = buckets
  // per side / 2 >= 1) and a log range past it (log(max_distance / max_exact) > 0).
  const std::int64_t min_buckets = r.bidirectional ? 4 : 2;
  if (r.num_buckets < min_buckets || r.num_buckets > kMaxSize)
    fail(c, "relative_bias.num_buckets",
         "expected an integer in " + n(min_buckets) + ".." + n(kMaxSize) + " (" +
             (r.bidirectional ? "bidirectional: half the buckets per side, " : "") +
             "half of a side's buckets exact), found " + n(r.num_buckets));
  const std::int64_t max_exact = (r.bidirectional ? r.num_buckets / 2 : r.num_buckets) / 2;
  if (r.max_distance <= max_exact || r.max_distance > kMaxContext)
    fail(c, "relative_bias.max_distance",
         "expected an integer in " + n(max_exact + 1) + ".." + n(kMaxContext) + " (past the " +
             n(max_exact) + " exact buckets), found " + n(r.max_distance));
  if (c.cross())
    fail(c, cross_key(c),
         "cross-attention takes no relative_bias (T5's EncDecAttention has none: the keys have "
         "no positions of the queries' sequence), found relative_bias");
}

void resolve_rope(Config& c) {
  RopeSpec& r = *c.rope;
  // mla: rope rotates the qk_rope_head_dim part only (resolve_mla checks a given rotary_dim).
  const std::int64_t D = c.mla ? c.mla->qk_rope_head_dim : c.head_size;
  if (!c.rotary_dim_given) {
    if (D % 2 != 0)
      fail(c, "rope.rotary_dim",
           "rope rotates pairs of dimensions; the default rotary_dim is "
           "head_size " +
               n(D) + ", which is odd: give an even rope.rotary_dim");
    r.rotary_dim = D;
  } else if (r.rotary_dim < 2 || r.rotary_dim > D || r.rotary_dim % 2 != 0) {
    fail(c, "rope.rotary_dim",
         "expected an even integer in 2..head_size " + n(D) + ", found " + n(r.rotary_dim));
  }
  if (r.scaling && !r.scaling->freq_factors.empty() &&
      r.scaling->freq_factors.size() != std::size_t(r.rotary_dim / 2))
    fail(c, "rope.scaling.freq_factors",
         "needs rotary_dim / 2 = " + std::to_string(r.rotary_dim / 2) + " numbers, found " +
             std::to_string(r.scaling->freq_factors.size()));
  if (r.scaling && r.scaling->type == "longrope") {
    const std::size_t half = static_cast<std::size_t>(r.rotary_dim / 2);
    for (const auto& [key, list] : {std::pair<const char*, const std::vector<double>*>{
                                        "short_factor", &r.scaling->short_factor},
                                    {"long_factor", &r.scaling->long_factor}})
      if (list->size() != half)
        fail(c, std::string("rope.scaling.") + key,
             "rope_type \"longrope\" needs rotary_dim / 2 = " + std::to_string(half) +
                 " numbers, found " + std::to_string(list->size()));
  }
  // The frequencies' own rules (needed fields, as transformers' rope utils
  // read them), checked once here rather than at the run.
  try {
    (void)rope_frequencies(r, 1);
  } catch (const Error& e) {
    if (e.code() != Exit::config) throw;
    throw Error(Exit::config, display_name(c) + ": " + e.what());
  }
}

void resolve_sources(Config& c) {
  const bool kv = c.kv_input.given(), key = c.key_input.given(), value = c.value_input.given();
  if (kv && (key || value))
    fail(c, "kv_input",
         std::string("kv_input feeds both keys and values; found ") +
             (key ? "key_input" : "value_input") +
             " too (give kv_input, or key_input and value_input)");
  if (key != value)
    fail(c, key ? "key_input" : "value_input",
         "key_input and value_input come together (torch MHA's key and value), found only " +
             std::string(key ? "key_input" : "value_input"));
  if (c.cross()) {
    const std::string k = cross_key(c);
    if (c.causal)
      fail(c, k,
           "cross-attention has no causal mask (the keys are another sequence), found " +
               std::string(c.kind == Kind::causal ? "attention \"causal\" (use \"multi\")"
                                                  : "causal true"));
    if (c.rope)
      fail(c, k,
           "cross-attention takes no rope (the keys have no positions of the queries' sequence), "
           "found rope");
    if (c.alibi)
      fail(c, k,
           "cross-attention takes no alibi (the keys have no positions of the queries' sequence), "
           "found alibi");
    if (c.sliding_window)
      fail(c, k,
           "cross-attention takes no sliding_window (it compares positions of one sequence), found "
           "sliding_window " +
               n(*c.sliding_window));
    if (c.attn_temperature)
      fail(c, k,
           "cross-attention takes no attn_temperature (it scales queries by their position in "
           "the keys' sequence), found attn_temperature");
    if (c.attention_chunk)
      fail(c, k,
           "cross-attention takes no attention_chunk (it compares positions of one sequence), "
           "found attention_chunk " +
               n(*c.attention_chunk));
  }

  // kdim/vdim: torch MHA's key and value source widths.
  if (c.kdim_given && (c.kdim < 1 || c.kdim > kMaxSize))
    fail(c, "kdim", "expected an integer in 1.." + n(kMaxSize) + ", found " + n(c.kdim));
  if (c.vdim_given && (c.vdim < 1 || c.vdim > kMaxSize))
    fail(c, "vdim", "expected an integer in 1.." + n(kMaxSize) + ", found " + n(c.vdim));
  if (!c.kdim_given) c.kdim = kv && c.vdim_given ? c.vdim : c.hidden_size;
  if (!c.vdim_given) c.vdim = kv && c.kdim_given ? c.kdim : c.hidden_size;
  if (!c.cross()) {
    for (const auto& [k, v] :
         {std::pair<const char*, std::int64_t>{"kdim", c.kdim}, {"vdim", c.vdim}})
      if (v != c.hidden_size)
        fail(c, k,
             std::string(k) + " " + n(v) + " differs from hidden_size " + n(c.hidden_size) +
                 ", but keys and values come from the input: give key_input and value_input "
                 "(or kv_input) for cross-attention, or drop " +
                 k);
  } else if (kv && c.kdim != c.vdim) {
    fail(c, "vdim",
         "kv_input feeds keys and values from one source, so kdim and vdim are its width: "
         "found kdim " +
             n(c.kdim) + " and vdim " + n(c.vdim));
  }
}

}  // namespace

void read_score_keys(Config& c, const json& root, const KeyName& name) {
  auto has = [&](const char* k) { return root.contains(k); };
  if (has("rope")) read_rope(c, root.at("rope"), name("rope"));
  if (has("positions")) read_positions(c, root.at("positions"), name("positions"));
  if (has("alibi")) read_alibi(c, root.at("alibi"), name("alibi"));
  if (has("sliding_window"))
    c.sliding_window = cj::get_int(root.at("sliding_window"), name("sliding_window"));
  if (has("softcap")) c.softcap = cj::get_number(root.at("softcap"), name("softcap"));
  if (has("qk_norm")) read_qk_norm(c, root.at("qk_norm"), name("qk_norm"));
  if (has("sinks")) c.sinks = cj::get_bool(root.at("sinks"), name("sinks"));
  if (has("relative_bias")) read_relative_bias(c, root.at("relative_bias"), name("relative_bias"));
  if (has("attention_mask"))
    read_key_mask(c.attention_mask, c, root.at("attention_mask"), name("attention_mask"));
  if (has("attn_mask")) read_attn_mask(c, root.at("attn_mask"), name("attn_mask"));
  if (has("kv_input")) read_source(c.kv_input, c, root.at("kv_input"), name("kv_input"));
  if (has("key_input")) read_source(c.key_input, c, root.at("key_input"), name("key_input"));
  if (has("value_input"))
    read_source(c.value_input, c, root.at("value_input"), name("value_input"));
  if (has("kdim")) {
    c.kdim = cj::get_int(root.at("kdim"), name("kdim"));
    c.kdim_given = true;
  }
  if (has("vdim")) {
    c.vdim = cj::get_int(root.at("vdim"), name("vdim"));
    c.vdim_given = true;
  }
  if (has("add_bias_kv")) c.add_bias_kv = cj::get_bool(root.at("add_bias_kv"), name("add_bias_kv"));
  if (has("add_zero_attn"))
    c.add_zero_attn = cj::get_bool(root.at("add_zero_attn"), name("add_zero_attn"));
  if (has("batch_first")) c.batch_first = cj::get_bool(root.at("batch_first"), name("batch_first"));
  if (has("gate")) c.gate = cj::get_bool(root.at("gate"), name("gate"));
  if (has("attention_chunk"))
    c.attention_chunk = cj::get_int(root.at("attention_chunk"), name("attention_chunk"));
  if (has("attn_temperature"))
    read_attn_temperature(c, root.at("attn_temperature"), name("attn_temperature"));
  if (has("v_norm")) read_v_norm(c, root.at("v_norm"), name("v_norm"));
  if (has("k_eq_v")) c.k_eq_v = cj::get_bool(root.at("k_eq_v"), name("k_eq_v"));
}

void resolve_score_keys(Config& c) {
  if (c.mla && (c.v_norm || c.k_eq_v))
    fail(c, c.v_norm ? "v_norm" : "k_eq_v",
         "mla builds v from its latent (kv_b_proj): not with v_norm or k_eq_v");
  if (c.sliding_window && *c.sliding_window < 1)
    fail(c, "sliding_window",
         "expected an integer > 0 (W: keys with i - W < j), found " + n(*c.sliding_window));
  if (c.softcap && (!(*c.softcap > 0.0) || !std::isfinite(static_cast<float>(*c.softcap))))
    fail(c, "softcap",
         "expected a number > 0 that float32 holds, found " + json(*c.softcap).dump());
  if (c.attention_mask.given() && (!c.padding_mask_path.empty() || c.padding_mask_inline))
    fail(c, "attention_mask",
         "attention_mask (Hugging Face's: 1 = attend) and padding_mask (torch's: "
         "true = padded) both mask keys: give one of them");
  if (c.attention_chunk && *c.attention_chunk < 1)
    fail(c, "attention_chunk",
         "expected an integer > 0 (n: query i sees key j when i // n == j // n), found " +
             n(*c.attention_chunk));
  resolve_sources(c);
  if (c.rope) resolve_rope(c);
  if (c.alibi && !c.alibi->slopes.empty() &&
      static_cast<std::int64_t>(c.alibi->slopes.size()) != c.num_heads)
    fail(c, "alibi.slopes",
         "expected one slope per head (num_heads " + n(c.num_heads) + "), found " +
             std::to_string(c.alibi->slopes.size()));
  if (c.relative_bias) resolve_relative_bias(c);
  if (c.positions.given() && !c.rope && !c.alibi && !c.relative_bias && !c.attn_temperature)
    fail(c, "positions",
         "position ids are read by rope, alibi, relative_bias and attn_temperature, and none of "
         "them is set (absolute "
         "position embeddings are added before the attention layer)");
  if (!c.kv_labels.empty() && !c.cross())
    fail(c, "kv_labels",
         "kv_labels name the keys of cross-attention (kv_input or key_input); "
         "without one the keys are the tokens: use labels");
  if (c.add_bias_kv && c.layout && *c.layout != Layout::torch_mha)
    fail(c, "add_bias_kv",
         "bias_k and bias_v are torch.nn.MultiheadAttention's: add_bias_kv needs "
         "layout torch_mha, found layout " +
             layout_name(*c.layout));
}

void score_keys_to_json(const Config& c, json& j) {
  auto array_key = [](const auto& k) {
    return k.inline_value ? json("inline") : k.path.empty() ? json(nullptr) : json(k.path);
  };
  if (c.rope) {
    const RopeSpec& r = *c.rope;
    json rope = {{"theta", r.theta},
                 {"rotary_dim", r.rotary_dim},
                 {"style", r.style == RopeStyle::half ? "half" : "interleaved"},
                 {"max_position_embeddings",
                  r.max_position_embeddings ? json(*r.max_position_embeddings) : json(nullptr)},
                 {"scaling", nullptr}};
    if (r.scaling) {
      const RopeScaling& s = *r.scaling;
      json o = {{"rope_type", s.type}};
      auto put = [&](const char* k, const auto& v) {
        if (v) o[k] = *v;
      };
      put("factor", s.factor);
      put("original_max_position_embeddings", s.original_max_position_embeddings);
      put("low_freq_factor", s.low_freq_factor);
      put("high_freq_factor", s.high_freq_factor);
      put("beta_fast", s.beta_fast);
      put("beta_slow", s.beta_slow);
      put("attention_factor", s.attention_factor);
      put("mscale", s.mscale);
      put("mscale_all_dim", s.mscale_all_dim);
      if (s.type == "yarn") o["truncate"] = s.truncate;
      if (!s.short_factor.empty()) o["short_factor"] = s.short_factor;
      if (!s.long_factor.empty()) o["long_factor"] = s.long_factor;
      if (!s.freq_factors.empty()) o["freq_factors"] = s.freq_factors;
      put("partial_rotary_factor", s.partial_rotary_factor);
      rope["scaling"] = o;
    }
    j["rope"] = rope;
  } else {
    j["rope"] = nullptr;
  }
  j["positions"] = array_key(c.positions);
  if (!c.alibi) {
    j["alibi"] = false;
  } else if (!c.alibi->slopes.empty()) {
    j["alibi"] = {{"slopes", c.alibi->slopes}};
  } else {
    // The slopes the run uses (BLOOM's and MPT's formula).
    j["alibi"] = {
        {"max_bias", c.alibi->max_bias},
        {"slopes", alibi_slopes(static_cast<std::size_t>(c.num_heads), c.alibi->max_bias)}};
  }
  j["sliding_window"] = c.sliding_window ? json(*c.sliding_window) : json(nullptr);
  j["softcap"] = c.softcap ? json(*c.softcap) : json(nullptr);
  if (c.qk_norm) {
    const QkNormSpec& q = *c.qk_norm;
    j["qk_norm"] = {{"eps", q.eps},
                    {"scope", q.scope_all ? "all" : "head"},
                    {"weight_offset", q.weight_offset},
                    {"kind", q.kind == QkNormKind::rms     ? "rms"
                             : q.kind == QkNormKind::layer ? "layer"
                                                           : "l2"},
                    {"per_head", q.per_head},
                    {"bias", q.bias}};
  } else {
    j["qk_norm"] = nullptr;
  }
  j["sinks"] = c.sinks;
  j["relative_bias"] =
      c.relative_bias
          ? json{{"num_buckets", c.relative_bias->num_buckets},
                 {"max_distance", c.relative_bias->max_distance},
                 {"bidirectional", c.relative_bias->bidirectional},
                 {"table",
                  c.relative_bias->table.empty() ? json(nullptr) : json(c.relative_bias->table)}}
          : json(nullptr);
  j["attention_mask"] = array_key(c.attention_mask);
  j["attn_mask"] = array_key(c.attn_mask);
  j["kv_input"] = array_key(c.kv_input);
  j["key_input"] = array_key(c.key_input);
  j["value_input"] = array_key(c.value_input);
  j["kdim"] = c.kdim;
  j["vdim"] = c.vdim;
  j["add_bias_kv"] = c.add_bias_kv;
  j["add_zero_attn"] = c.add_zero_attn;
  j["batch_first"] = c.batch_first;
  j["gate"] = c.gate;
  j["attention_chunk"] = c.attention_chunk ? json(*c.attention_chunk) : json(nullptr);
  j["attn_temperature"] = c.attn_temperature
                              ? json{{"floor_scale", c.attn_temperature->floor_scale},
                                     {"attn_scale", c.attn_temperature->attn_scale}}
                              : json(nullptr);
  j["v_norm"] = c.v_norm ? json{{"kind", "rms"}, {"eps", c.v_norm->eps}} : json(nullptr);
  j["k_eq_v"] = c.k_eq_v;
  j["kv_labels"] = c.kv_labels;
  j["model"] = c.model.empty() ? json(nullptr) : json(c.model);
  j["layer"] = c.layer ? json(*c.layer) : json(nullptr);
  j["from_model"] = c.from_model ? *c.from_model : json(nullptr);
}

}  // namespace attn::config_detail

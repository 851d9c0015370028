// The tables of the config's objects (CONTRACT.md "Config", "Positions",
// "(v3) More of the forward pass"): init, output, rope and rope.scaling,
// alibi, qk_norm, relative_bias, attn_temperature, v_norm, mla and
// residual_norm, one row per field, as config/keys.cpp's table has one per
// key of the top level. A field left out keeps its struct's default
// (scores.h); those that depend on other keys are filled by resolve_config.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "attn/error.h"
#include "attn/files.h"
#include "config/keys.h"

namespace attn::config_detail {

namespace cj = config_json;

double positive_number(const json& v, const std::string& at) {
  const double d = cj::get_number(v, at);
  if (!(d > 0.0)) bad(at, "expected a number > 0, found " + v.dump());
  return d;
}

std::int64_t positive_integer(const json& v, const std::string& at) {
  const std::int64_t i = cj::get_int(v, at);
  if (i < 1) bad(at, "expected an integer > 0, found " + std::to_string(i));
  return i;
}

namespace {

// An eps added in float32 (to a mean square or a variance): one that rounds
// to 0 is none.
void check_float_eps(double eps, const json& v, const std::string& at) {
  if (!(static_cast<float>(eps) > 0.0f) || !std::isfinite(static_cast<float>(eps)))
    bad(at, "expected a number > 0 that float32 holds, found " + v.dump());
}

// A norm's eps: a number > 0 that float32 holds.
template <class S>
Key<S> norm_eps(double S::*eps) {
  return {"eps", "a number > 0 that float32 holds",
          [eps](Config&, S& s, const json& v, const std::string& at) {
            s.*eps = positive_number(v, at);
            check_float_eps(s.*eps, v, at);
          },
          as_is("eps", in(eps))};
}

// A non-empty list of numbers > 0 (rope.scaling's per-frequency factors).
Key<RopeScaling> factors(const char* name, std::vector<double> RopeScaling::*m) {
  return {name, "a non-empty array of numbers > 0",
          [m](Config&, RopeScaling& s, const json& v, const std::string& at) {
            if (!v.is_array() || v.empty())
              bad(at, "expected a non-empty array of numbers > 0, found " +
                          (v.is_array() ? std::string("an empty array") : cj::describe(v)));
            for (std::size_t i = 0; i < v.size(); ++i)
              (s.*m).push_back(positive_number(v[i], at + "[" + std::to_string(i) + "]"));
          },
          [name, m](const Config&, const RopeScaling& s, json& out) {
            if (!(s.*m).empty()) out[name] = s.*m;
          }};
}

}  // namespace

const Keys<Config>& init_keys() {
  static const Keys<Config> k = {
      scalar("seed", "an integer >= 0", in(&Config::init_seed), cj::get_uint),
  };
  return k;
}

const Keys<Config>& output_keys() {
  static const Keys<Config> k = {
      {"dir", "a folder",
       [](Config&, Config& c, const json& v, const std::string& at) {
         const std::string d = cj::get_string(v, at);
         if (d.empty())
           throw Error(Exit::config, at + ": expected a folder, found an empty string");
         if (d.find('\0') != std::string::npos)
           throw Error(Exit::config, at + ": expected a folder, found a NUL character in it");
         c.output_dir = resolve_path(c.dir, d);
       },
       [](const Config&, const Config& c, json& out) {
         out["dir"] = c.output_dir.empty() ? json(nullptr) : json(c.output_dir);
       }},
      flag("attention", in(&Config::output_attention)),
      flag("average_heads", in(&Config::output_average_heads)),
  };
  return k;
}

// Hugging Face's rope_scaling fields (CONTRACT.md "Positions"). rope_type
// and type are read first, by the scaling's own reader (read_scaling_type);
// fields a type does not use are accepted and ignored, as transformers does
// (it warns): folders carry original_max_position_embeddings for all.
const Keys<RopeScaling>& rope_scaling_keys() {
  static const Keys<RopeScaling> k = {
      {"rope_type", "a rope type", nullptr,
       [](const Config&, const RopeScaling& s, json& out) { out["rope_type"] = s.type; }},
      {"type", "a rope type (rope_type's older name)", nullptr, nullptr},
      positive("factor", in(&RopeScaling::factor)),
      positive_int("original_max_position_embeddings",
                   in(&RopeScaling::original_max_position_embeddings)),
      positive("low_freq_factor", in(&RopeScaling::low_freq_factor)),
      positive("high_freq_factor", in(&RopeScaling::high_freq_factor)),
      number("beta_fast", in(&RopeScaling::beta_fast)),
      number("beta_slow", in(&RopeScaling::beta_slow)),
      positive("attention_factor", in(&RopeScaling::attention_factor)),
      number("mscale", in(&RopeScaling::mscale)),
      number("mscale_all_dim", in(&RopeScaling::mscale_all_dim)),
      {"truncate", "true or false",
       [](Config&, RopeScaling& s, const json& v, const std::string& at) {
         s.truncate = cj::get_bool(v, at);
       },
       [](const Config&, const RopeScaling& s, json& out) {
         if (s.type == "yarn") out["truncate"] = s.truncate;
       }},
      factors("short_factor", &RopeScaling::short_factor),
      factors("long_factor", &RopeScaling::long_factor),
      factors("freq_factors", &RopeScaling::freq_factors),
      {"partial_rotary_factor", "a number from 0 to 1",
       [](Config&, RopeScaling& s, const json& v, const std::string& at) {
         s.partial_rotary_factor = cj::get_number(v, at);
         if (!(*s.partial_rotary_factor >= 0.0 && *s.partial_rotary_factor <= 1.0))
           bad(at,
               "expected a number from 0 to 1 (the rotated share of the head), found " + v.dump());
       },
       as_is("partial_rotary_factor", in(&RopeScaling::partial_rotary_factor))},
  };
  return k;
}

const Keys<RopeSpec>& rope_keys() {
  static const Keys<RopeSpec> k = {
      positive("theta", in(&RopeSpec::theta)),
      integer("rotary_dim", in(&RopeSpec::rotary_dim), &Config::rotary_dim_given),
      choice("style",
             "\"half\" (Hugging Face's rotate_half) or \"interleaved\" (GPT-J, Meta's Llama)",
             in(&RopeSpec::style),
             {{"half", RopeStyle::half}, {"interleaved", RopeStyle::interleaved}}),
      positive_int("max_position_embeddings", in(&RopeSpec::max_position_embeddings)),
      choice("precision",
             "\"float64\" (the default: the angles closest to exact) or \"float32\" "
             "(transformers' rotary embedding, for comparisons with it)",
             in(&RopeSpec::precision),
             {{"float64", RopePrecision::float64}, {"float32", RopePrecision::float32}}),
      // Qwen2-VL's mrope (scores.h): with it, positions of shape (3, S) or
      // (3, B, S) are the time, height and width rows (a leading 3 is the
      // rows, as Hugging Face's position_ids of get_rope_index).
      {"mrope_section", "[t, h, w]: three integers >= 0 summing to rotary_dim / 2",
       [](Config&, RopeSpec& r, const json& v, const std::string& at) {
         if (!v.is_array() || v.size() != 3)
           bad(at, "expected [t, h, w], three integers >= 0 summing to rotary_dim / 2, found " +
                       (v.is_array() ? std::to_string(v.size()) + " elements" : cj::describe(v)));
         r.mrope_section.clear();
         for (std::size_t i = 0; i < 3; ++i) {
           const std::string el = at + "[" + std::to_string(i) + "]";
           const std::int64_t n = cj::get_int(v[i], el);
           if (n < 0) bad(el, "expected an integer >= 0, found " + std::to_string(n));
           r.mrope_section.push_back(n);
         }
       },
       [](const Config&, const RopeSpec& r, json& out) {
         if (!r.mrope_section.empty()) out["mrope_section"] = r.mrope_section;
       }},
      {"mrope_interleaved", "true or false (Qwen3-VL's interleaved mrope sections)",
       [](Config&, RopeSpec& r, const json& v, const std::string& at) {
         r.mrope_interleaved = cj::get_bool(v, at);
       },
       [](const Config&, const RopeSpec& r, json& out) {
         if (!r.mrope_section.empty()) out["mrope_interleaved"] = r.mrope_interleaved;
       }},
      {"scaling", "Hugging Face's rope_scaling object or null",
       [](Config& c, RopeSpec& r, const json& v, const std::string& at) {
         r.scaling.reset();
         if (v.is_null()) return;
         const json& o = cj::get_object(v, at);
         RopeScaling s;
         s.type = read_scaling_type(o, at);
         if (s.type.empty()) return;  // "default": no scaling
         read_fields(rope_scaling_keys(), c, s, o, at);
         check_scaling(s, at);
         r.scaling = std::move(s);
       },
       [](const Config& c, const RopeSpec& r, json& out) {
         out["scaling"] =
             r.scaling ? write_keys(rope_scaling_keys(), c, *r.scaling) : json(nullptr);
         if (r.scaling)  // the fields given, no nulls
           for (auto it = out["scaling"].begin(); it != out["scaling"].end();)
             it = it->is_null() ? out["scaling"].erase(it) : std::next(it);
       },
       [](const std::string& path, KeyLists& lists) {
         list_keys(rope_scaling_keys(), path, lists);
       }},
  };
  return k;
}

// {"max_bias": number > 0} or {"slopes": [num_heads numbers]}: the slopes are
// written back either way (from max_bias by BLOOM's and MPT's formula).
const Keys<AlibiSpec>& alibi_keys() {
  static const Keys<AlibiSpec> k = {
      {"max_bias", "a number > 0",
       [](Config&, AlibiSpec& a, const json& v, const std::string& at) {
         a.max_bias = positive_number(v, at);
       },
       [](const Config& c, const AlibiSpec& a, json& out) {
         if (!c.alibi_slopes_given) out["max_bias"] = a.max_bias;
       }},
      {"slopes", "an array of num_heads numbers",
       [](Config& c, AlibiSpec& a, const json& v, const std::string& at) {
         if (!v.is_array() || v.empty())
           bad(at, "expected an array of num_heads numbers, found " +
                       (v.is_array() ? std::string("an empty array") : cj::describe(v)));
         for (std::size_t i = 0; i < v.size(); ++i)
           a.slopes.push_back(cj::get_number(v[i], at + "[" + std::to_string(i) + "]"));
         c.alibi_slopes_given = true;
       },
       as_is("slopes", in(&AlibiSpec::slopes))},
  };
  return k;
}

const Keys<QkNormSpec>& qk_norm_keys() {
  static const Keys<QkNormSpec> k = {
      norm_eps(&QkNormSpec::eps),
      choice("scope",
             "\"head\" (Qwen3, Gemma 3: per head, over D) or \"all\" (OLMo 2: over all heads)",
             in(&QkNormSpec::scope_all), {{"head", false}, {"all", true}}),
      {"weight_offset", "0 (x * w) or 1 (Gemma: x * (1 + w))",
       [](Config&, QkNormSpec& q, const json& v, const std::string& at) {
         const std::int64_t w = cj::get_int(v, at);
         if (w != 0 && w != 1)
           bad(at, "expected 0 (x * w) or 1 (Gemma: x * (1 + w)), found " + std::to_string(w));
         q.weight_offset = static_cast<int>(w);
       },
       as_is("weight_offset", in(&QkNormSpec::weight_offset))},
      choice("kind",
             "\"rms\" (RMSNorm: Qwen3, Gemma 3, OLMo 2), \"layer\" (LayerNorm: Cohere, "
             "StableLM, Phi) or \"l2\" (no weight: Llama 4)",
             in(&QkNormSpec::kind),
             {{"rms", QkNormKind::rms}, {"layer", QkNormKind::layer}, {"l2", QkNormKind::l2}}),
      flag("per_head", in(&QkNormSpec::per_head)),
      flag("bias", in(&QkNormSpec::bias)),
      choice("order",
             "\"before_rope\" (Qwen3, Gemma 3, OLMo 2) or \"after_rope\" (Hunyuan: "
             "query_layernorm after rotary)",
             in(&QkNormSpec::after_rope), {{"before_rope", false}, {"after_rope", true}}),
  };
  return k;
}

// relative_bias: T5's fields, each optional (T5Config's 32 and 128;
// bidirectional = not causal, as T5's bidirectional = not is_decoder).
const Keys<RelativeBiasSpec>& relative_bias_keys() {
  static const Keys<RelativeBiasSpec> k = {
      positive_int("num_buckets", in(&RelativeBiasSpec::num_buckets)),
      positive_int("max_distance", in(&RelativeBiasSpec::max_distance)),
      flag("bidirectional", in(&RelativeBiasSpec::bidirectional),
           &Config::relative_bias_bidirectional_given),
      {"table", "the table's key in the weights",
       [](Config&, RelativeBiasSpec& r, const json& v, const std::string& at) {
         r.table = cj::get_string(v, at);
         if (r.table.empty() || r.table.find('\0') != std::string::npos)
           bad(at,
               "expected the table's key in the weights (e.g. "
               "\"encoder.block.0.layer.0.SelfAttention.relative_attention_bias."
               "weight\"), found " +
                   v.dump());
       },
       [](const Config&, const RelativeBiasSpec& r, json& out) {
         out["table"] = r.table.empty() ? json(nullptr) : json(r.table);
       }},
  };
  return k;
}

// attn_temperature: Llama 4's defaults (8192, 0.1) for a field left out.
const Keys<AttnTemperature>& attn_temperature_keys() {
  static const Keys<AttnTemperature> k = {
      {"floor_scale", "a number > 0 that float32 holds",
       [](Config&, AttnTemperature& t, const json& v, const std::string& at) {
         t.floor_scale = positive_number(v, at);
         if (!std::isfinite(static_cast<float>(t.floor_scale)))
           bad(at, "expected a number > 0 that float32 holds, found " + v.dump());
       },
       as_is("floor_scale", in(&AttnTemperature::floor_scale))},
      {"attn_scale", "a number that float32 holds",
       [](Config&, AttnTemperature& t, const json& v, const std::string& at) {
         t.attn_scale = cj::get_number(v, at);
         if (!std::isfinite(static_cast<float>(t.attn_scale)))
           bad(at, "expected a number that float32 holds, found " + v.dump());
       },
       as_is("attn_scale", in(&AttnTemperature::attn_scale))},
  };
  return k;
}

// v_norm: kind "rms" only (eps 1e-6 left out).
const Keys<VNormSpec>& v_norm_keys() {
  static const Keys<VNormSpec> k = {
      {"kind", "\"rms\" (x * rsqrt(mean(x^2) + eps), no weight: Gemma 4)",
       [](Config&, VNormSpec&, const json& v, const std::string& at) {
         const std::string kind = cj::get_string(v, at);
         if (kind != "rms")
           bad(at, "expected \"rms\" (x * rsqrt(mean(x^2) + eps), no weight: Gemma 4), found " +
                       cj::quote(kind));
       },
       [](const Config&, const VNormSpec&, json& out) { out["kind"] = "rms"; }},
      norm_eps(&VNormSpec::eps),
  };
  return k;
}

// disentangled: DeBERTa-v3's settings for a field left out (position_buckets 256,
// max_relative_positions 512, share_att_key, both terms); pos_att_type as
// DebertaV2Config takes it, "p2c|c2p" or a list.
constexpr char kPosAttType[] = "\"c2p|p2c\" (terms joined by |) or a list of \"c2p\" and \"p2c\"";

// A full key of the weights (not under weights_prefix), non-empty.
Key<DisentangledSpec> weights_key(const char* name, std::string DisentangledSpec::*m) {
  return {name, "a key of the weights",
          [m](Config&, DisentangledSpec& d, const json& v, const std::string& at) {
            d.*m = cj::get_string(v, at);
            if ((d.*m).empty() || (d.*m).find('\0') != std::string::npos)
              bad(at, "expected a key of the weights, found " + v.dump());
          },
          [name, m](const Config&, const DisentangledSpec& d, json& out) {
            out[name] = (d.*m).empty() ? json(nullptr) : json(d.*m);
          }};
}

const Keys<DisentangledSpec>& disentangled_keys() {
  static const Keys<DisentangledSpec> k = {
      {"pos_att_type", kPosAttType,
       [](Config&, DisentangledSpec& d, const json& v, const std::string& at) {
         std::vector<std::string> terms;
         if (v.is_string()) {  // DebertaV2Config: pos_att_type.lower().split("|"), stripped
           std::string s = v.get<std::string>(), term;
           for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
           std::size_t from = 0;
           while (from <= s.size()) {
             const std::size_t bar = std::min(s.find('|', from), s.size());
             term = s.substr(from, bar - from);
             const auto a = term.find_first_not_of(" \t"), b = term.find_last_not_of(" \t");
             terms.push_back(a == std::string::npos ? "" : term.substr(a, b - a + 1));
             from = bar + 1;
           }
         } else if (v.is_array()) {
           for (std::size_t i = 0; i < v.size(); ++i)
             terms.push_back(cj::get_string(v[i], at + "[" + std::to_string(i) + "]"));
         } else {
           bad(at, std::string("expected ") + kPosAttType + ", found " + cj::describe(v));
         }
         d.c2p = d.p2c = false;
         for (const std::string& t : terms) {
           if (t == "c2p")
             d.c2p = true;
           else if (t == "p2c")
             d.p2c = true;
           else
             bad(at, std::string("expected ") + kPosAttType + ", found the term " + cj::quote(t) +
                         " (attn-run runs DeBERTa-v2's c2p and p2c)");
         }
         if (!d.c2p && !d.p2c) bad(at, std::string("expected ") + kPosAttType + ", found none");
       },
       [](const Config&, const DisentangledSpec& d, json& out) {
         json terms = json::array();
         if (d.c2p) terms.push_back("c2p");
         if (d.p2c) terms.push_back("p2c");
         out["pos_att_type"] = terms;
       }},
      {"position_buckets", "an integer (<= 0: no buckets)",
       [](Config&, DisentangledSpec& d, const json& v, const std::string& at) {
         d.position_buckets = cj::get_int(v, at);
         if (d.position_buckets > kMaxSize)
           bad(at, "expected an integer up to " + std::to_string(kMaxSize) + ", found " + v.dump());
       },
       as_is("position_buckets", in(&DisentangledSpec::position_buckets))},
      {"max_relative_positions", "an integer > 0",
       [](Config&, DisentangledSpec& d, const json& v, const std::string& at) {
         d.max_relative_positions = positive_integer(v, at);
         if (d.max_relative_positions > kMaxSize)
           bad(at, "expected an integer up to " + std::to_string(kMaxSize) + ", found " + v.dump());
       },
       as_is("max_relative_positions", in(&DisentangledSpec::max_relative_positions))},
      flag("share_att_key", in(&DisentangledSpec::share_att_key)),
      weights_key("table", &DisentangledSpec::table),
      weights_key("norm_weight", &DisentangledSpec::norm_weight),
      weights_key("norm_bias", &DisentangledSpec::norm_bias),
      norm_eps(&DisentangledSpec::norm_eps),
  };
  return k;
}

// A size field of "mla": config.json's key of the same name, 1..kMaxSize;
// required unless null stands for none (0).
Key<MlaSpec> mla_size(const char* name, const char* expects, std::int64_t MlaSpec::*m,
                      bool null_is_none = false) {
  Key<MlaSpec> k = {name, expects,
                    [m, null_is_none](Config&, MlaSpec& s, const json& v, const std::string& at) {
                      if (null_is_none && v.is_null()) return;
                      const std::int64_t i = cj::get_int(v, at);
                      if (i < 1 || i > kMaxSize)
                        bad(at, "expected an integer in 1.." + std::to_string(kMaxSize) +
                                    ", found " + std::to_string(i));
                      s.*m = i;
                    },
                    [name, m](const Config&, const MlaSpec& s, json& out) {
                      out[name] = s.*m ? json(s.*m) : json(nullptr);
                    }};
  k.required = !null_is_none;
  return k;
}

const Keys<MlaSpec>& mla_keys() {
  static const Keys<MlaSpec> k = {
      // null (DeepSeek-V2-Lite) or left out: q_proj instead of q_a_proj + q_b_proj
      mla_size("q_lora_rank", "an integer > 0 or null, config.json's q_lora_rank",
               &MlaSpec::q_lora_rank, /*null_is_none=*/true),
      mla_size("kv_lora_rank", "an integer > 0, config.json's kv_lora_rank",
               &MlaSpec::kv_lora_rank),
      mla_size("qk_nope_head_dim", "an integer > 0, config.json's qk_nope_head_dim",
               &MlaSpec::qk_nope_head_dim),
      mla_size("qk_rope_head_dim", "an integer > 0, config.json's qk_rope_head_dim",
               &MlaSpec::qk_rope_head_dim),
      mla_size("v_head_dim", "an integer > 0, config.json's v_head_dim", &MlaSpec::v_head_dim),
  };
  return k;
}

const Keys<ResidualNormSpec>& residual_norm_keys() {
  static const Keys<ResidualNormSpec> k = {
      {"eps", "a number > 0 that float32 holds",
       [](Config&, ResidualNormSpec& r, const json& v, const std::string& at) {
         r.eps = cj::get_number(v, at);
         check_float_eps(r.eps, v, at);
       },
       as_is("eps", in(&ResidualNormSpec::eps))},
      text("prefix", in(&ResidualNormSpec::prefix), &Config::residual_norm_prefix_given),
  };
  return k;
}

// input_norm: the block's pre-attention norm (scores.h InputNormSpec); weight
// and bias are full keys of the weights file.
const Keys<InputNormSpec>& input_norm_keys() {
  static const Keys<InputNormSpec> k = {
      choice("kind",
             "\"rms\" (RMSNorm: Llama, Gemma, T5), \"layer\" (LayerNorm: GPT-2, Falcon, "
             "Cohere) or \"none\" (the input as is: post-norm families)",
             in(&InputNormSpec::kind),
             {{"rms", InputNormKind::rms},
              {"layer", InputNormKind::layer},
              {"none", InputNormKind::none}}),
      norm_eps(&InputNormSpec::eps),
      text("weight", in(&InputNormSpec::weight)),
      text("bias", in(&InputNormSpec::bias)),
      {"offset", "0 (x * w) or 1 (Gemma: x * (1 + w))",
       [](Config&, InputNormSpec& n, const json& v, const std::string& at) {
         const std::int64_t w = cj::get_int(v, at);
         if (w != 0 && w != 1)
           bad(at, "expected 0 (x * w) or 1 (Gemma: x * (1 + w)), found " + std::to_string(w));
         n.offset = static_cast<int>(w);
       },
       as_is("offset", in(&InputNormSpec::offset))},
      positive("multiplier", in(&InputNormSpec::multiplier)),
      text("module", in(&InputNormSpec::module)),
  };
  return k;
}

// embedding: layer 0's input from token ids (config.h EmbeddingSpec); the
// tensors are full keys of the weights file.
const Keys<EmbeddingSpec>& embedding_keys() {
  static const Keys<EmbeddingSpec> k = {
      [] {
        Key<EmbeddingSpec> word = text("word", in(&EmbeddingSpec::word));
        word.required = true;
        return word;
      }(),
      positive("scale", in(&EmbeddingSpec::scale)),
      choice("scale_dtype",
             "\"float32\" or \"table\" (the word table's stored dtype: Gemma's normalizer)",
             in(&EmbeddingSpec::scale_dtype),
             {{"float32", EmbeddingDtype::float32}, {"table", EmbeddingDtype::table}}),
      text("positions", in(&EmbeddingSpec::positions)),
      {"position_offset", "an integer >= 0",
       [](Config&, EmbeddingSpec& e, const json& v, const std::string& at) {
         e.position_offset = cj::get_int(v, at);
         if (e.position_offset < 0)
           bad(at, "expected an integer >= 0, found " + std::to_string(e.position_offset));
       },
       as_is("position_offset", in(&EmbeddingSpec::position_offset))},
      {"padding_id", "an integer >= 0",
       [](Config&, EmbeddingSpec& e, const json& v, const std::string& at) {
         const std::int64_t p = cj::get_int(v, at);
         if (p < 0) bad(at, "expected an integer >= 0, found " + std::to_string(p));
         e.padding_id = p;
       },
       as_is("padding_id", in(&EmbeddingSpec::padding_id))},
      text("token_types", in(&EmbeddingSpec::token_types)),
      text("norm_weight", in(&EmbeddingSpec::norm_weight)),
      text("norm_bias", in(&EmbeddingSpec::norm_bias)),
      positive("norm_eps", in(&EmbeddingSpec::norm_eps)),
      text("module", in(&EmbeddingSpec::module)),
  };
  return k;
}

void check_embedding(EmbeddingSpec& e, const json&, const std::string& at) {
  if (e.word.empty()) bad(at + ".word", "expected the word table's key, found \"\"");
  if (!e.norm_bias.empty() && e.norm_weight.empty())
    bad(at + ".norm_bias", "a LayerNorm's bias needs its weight: give \"norm_weight\" too");
  if (e.padding_id && e.positions.empty())
    bad(at + ".padding_id", "numbers the learned positions: give \"positions\" too");
}

}  // namespace attn::config_detail

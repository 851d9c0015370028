// The table of config keys (CONTRACT.md "Config", "(v2) New keys",
// "Positions", "(v3) More of the forward pass"): every key of the top level,
// once, with what it expects, where it lands (a Config field or
// Config::spec's), how it is read and checked, and how run.json writes it
// back; each object's fields have a table of their own in
// config/object_keys.cpp. The tables drive the strict reader (read_config),
// the unknown-key check and its suggestion (known_keys, config_keys) and
// config_to_json.
//
// Defaults: a key left out keeps the value its field starts with (Config's,
// AttentionSpec's and the spec structs' member initializers); the defaults
// that depend on other keys (head_size, out_size, scale, rope.rotary_dim,
// alibi.slopes, relative_bias.bidirectional, residual_norm.prefix, kdim,
// vdim) are filled by resolve_config, each in one place.
#include "config/keys.h"

#include <cmath>

#include "attn/error.h"
#include "attn/files.h"

namespace attn::config_detail {

namespace cj = config_json;

namespace {

// "path or nested array" keys: "inline", the resolved path, or null.
template <class A>
json array_key_json(const ArrayKey<A>& k) {
  return k.inline_value ? json("inline") : k.path.empty() ? json(nullptr) : json(k.path);
}

template <class A>
Key<Config> array_key(const char* name, ArrayKey<A> Config::*m,
                      void (*read)(ArrayKey<A>&, const Config&, const json&, const std::string&)) {
  return {
      name, "a path or a nested array",
      [m, read](Config& c, Config&, const json& v, const std::string& at) { read(c.*m, c, v, at); },
      [name, m](const Config& c, const Config&, json& out) { out[name] = array_key_json(c.*m); }};
}

// A path, resolved against the config's folder, written back resolved ("" = null).
Key<Config> path(const char* name, std::string Config::*m) {
  return {name, "a path",
          [m](Config& c, Config&, const json& v, const std::string& at) {
            c.*m = path_value(c, v, at);
          },
          [name, m](const Config& c, const Config&, json& out) {
            out[name] = (c.*m).empty() ? json(nullptr) : json(c.*m);
          }};
}

Key<Config> labels(const char* name, std::vector<std::string> Config::*m) {
  return {name, "an array of strings",
          [m](Config&, Config& c, const json& v, const std::string& at) {
            if (!v.is_array()) bad(at, "expected an array of strings, found " + cj::describe(v));
            (c.*m).clear();
            for (std::size_t i = 0; i < v.size(); ++i)
              (c.*m).push_back(cj::get_string(v[i], at + "[" + std::to_string(i) + "]"));
          },
          as_is(name, in(m))};
}

// ---- the top level ----

// A bias flag: given true, the weights must hold it (CONTRACT.md "Weight layouts").
Key<Config> bias_flag(const char* name, bool Config::*bias, bool Config::*given) {
  return {name, "true or false",
          [bias, given](Config&, Config& c, const json& v, const std::string& at) {
            c.*bias = cj::get_bool(v, at);
            c.*given = c.*bias;
          },
          as_is(name, in(bias))};
}

// Written back as `value` gives it (sizes as resolved).
template <class F>
Key<Config> resolved(Key<Config> k, F value) {
  const char* name = k.name;
  k.write = [name, value](const Config& c, const Config&, json& out) { out[name] = value(c); };
  return k;
}

Key<Config> required(Key<Config> k) {
  k.required = true;
  return k;
}

// What alibi and residual_norm expect: true (the defaults) or an object of fields.
constexpr char kAlibi[] = "true, false, {\"max_bias\": number} or {\"slopes\": [numbers]}";
constexpr char kResidualNorm[] =
    "true (LayerNorm(o_proj(attention) + input), eps 1e-12, weights under weights_prefix + "
    "\"output.LayerNorm.\"), an object {\"eps\", \"prefix\"}, false or null";

constexpr char kClipQkv[] =
    "a number c > 0 that float32 holds (q, k, v clamped to [-c, c]) or null";

constexpr char kInputNorm[] =
    "true (with a model: the block's own pre-attention norm), an object {\"kind\": \"rms\" | "
    "\"layer\" | \"none\", \"eps\", \"weight\": KEY, \"bias\": KEY, \"offset\": 0 | 1}, "
    "false or null";

// The keys of CONTRACT.md's tables in their order: version 1's, the "(v2) New
// keys" table and kv_labels, model folders, then version 3's.
const Keys<Config>& config_key_table() {
  static const Keys<Config> k = {
      required(
          choice("attention", "\"single\", \"multi\" or \"causal\"", in(&Config::kind),
                 {{"single", Kind::single}, {"multi", Kind::multi}, {"causal", Kind::causal}})),
      required(scalar("hidden_size", "int > 0, C", in(&Config::hidden_size), cj::get_int)),
      integer("num_heads", in(&Config::num_heads)),
      resolved(integer("num_kv_heads", in(&Config::num_kv_heads)),
               [](const Config& c) { return c.kv_heads(); }),
      integer("head_size", in(&Config::head_size), &Config::head_size_given),
      resolved(integer("out_size", in(&Config::out_size), &Config::out_size_given),
               [](const Config& c) { return c.out_features(); }),
      flag("out_proj", in(&Config::out_proj)),
      flag("causal", in_spec(&AttentionSpec::causal), &Config::causal_given),
      integer("context_size", in(&Config::context_size)),
      {"bias", "true or false (qkv_bias and out_bias)",
       [](Config&, Config& c, const json& v, const std::string& at) {
         c.qkv_bias = c.out_bias = c.qkv_bias_given = c.out_bias_given = cj::get_bool(v, at);
       },
       nullptr},
      bias_flag("qkv_bias", &Config::qkv_bias, &Config::qkv_bias_given),
      bias_flag("out_bias", &Config::out_bias, &Config::out_bias_given),
      number("scale", in_spec(&AttentionSpec::scale), &Config::scale_given),
      number("dropout", in(&Config::dropout)),
      number("attn_drop", in(&Config::attn_drop)),
      number("out_drop", in(&Config::out_drop)),
      {"layout", "a layout name",
       [](Config&, Config& c, const json& v, const std::string& at) {
         const std::string l = cj::get_string(v, at);
         c.layout = parse_layout(l);
         if (!c.layout) bad(at, "expected one of " + layout_list() + ", found " + cj::quote(l));
       },
       [](const Config& c, const Config&, json& out) {
         out["layout"] = c.layout ? json(layout_name(*c.layout)) : json(nullptr);
       }},
      path("weights", &Config::weights),
      text("weights_prefix", in(&Config::weights_prefix)),
      {"init", "{\"seed\": int}",
       [](Config& c, Config&, const json& v, const std::string& at) {
         const json& o = cj::get_object(v, at);
         if (!o.contains("seed"))
           throw Error(Exit::config, at + ": expected {\"seed\": int}, \"seed\" is missing");
         read_fields(init_keys(), c, c, o, at);
       },
       [](const Config& c, const Config&, json& out) {
         out["init"] = c.init_seed ? write_keys(init_keys(), c, c) : json(nullptr);
       },
       [](const std::string& p, KeyLists& lists) { list_keys(init_keys(), p, lists); }},
      {"input", "a path (- = standard input) or a nested array",
       [](Config& c, Config&, const json& v, const std::string& at) { read_input(c, v, at); },
       [](const Config& c, const Config&, json& out) {
         out["input"] = c.input_inline         ? json("inline")
                        : c.input_path.empty() ? json(nullptr)
                                               : json(c.input_path);
       }},
      {"padding_mask", "a path or a nested array",
       [](Config& c, Config&, const json& v, const std::string& at) {
         read_padding_mask(c, v, at);
       },
       [](const Config& c, const Config&, json& out) {
         out["padding_mask"] = c.padding_mask_inline         ? json("inline")
                               : c.padding_mask_path.empty() ? json(nullptr)
                                                             : json(c.padding_mask_path);
       }},
      labels("labels", &Config::labels),
      {"output", "an object {dir, attention, average_heads}",
       [](Config& c, Config&, const json& v, const std::string& at) {
         read_fields(output_keys(), c, c, cj::get_object(v, at), at);
       },
       [](const Config& c, const Config&, json& out) {
         out["output"] = write_keys(output_keys(), c, c);
       },
       [](const std::string& p, KeyLists& lists) { list_keys(output_keys(), p, lists); }},
      object("rope", "an object ({} for theta 10000 over all of head_size) or null",
             in_spec(&AttentionSpec::rope), rope_keys),
      array_key("positions", &Config::positions, read_positions),
      {"alibi", kAlibi,
       [](Config& c, Config&, const json& v, const std::string& at) {
         c.spec.alibi.reset();
         if (v.is_boolean()) {
           if (v.get<bool>()) c.spec.alibi = AlibiSpec{};
           return;
         }
         if (!v.is_object())
           bad(at, std::string("expected ") + kAlibi + ", found " + cj::describe(v));
         if (v.contains("max_bias") && v.contains("slopes"))
           bad(at, "expected max_bias or slopes, found both (slopes are the bias per head)");
         AlibiSpec a;
         read_fields(alibi_keys(), c, a, v, at);
         c.spec.alibi = std::move(a);
       },
       [](const Config& c, const Config&, json& out) {
         out["alibi"] = c.spec.alibi ? write_keys(alibi_keys(), c, *c.spec.alibi) : json(false);
       },
       [](const std::string& p, KeyLists& lists) { list_keys(alibi_keys(), p, lists); }},
      integer("sliding_window", in_spec(&AttentionSpec::sliding_window)),
      number("softcap", in_spec(&AttentionSpec::softcap)),
      object("qk_norm", "an object ({} for eps 1e-6 per head) or null",
             in_spec(&AttentionSpec::qk_norm), qk_norm_keys, check_qk_norm),
      flag("sinks", in_spec(&AttentionSpec::sinks)),
      array_key("attention_mask", &Config::attention_mask, read_key_mask),
      array_key("attn_mask", &Config::attn_mask, read_attn_mask),
      array_key("kv_input", &Config::kv_input, read_source),
      array_key("key_input", &Config::key_input, read_source),
      array_key("value_input", &Config::value_input, read_source),
      integer("kdim", in(&Config::kdim), &Config::kdim_given),
      integer("vdim", in(&Config::vdim), &Config::vdim_given),
      flag("add_bias_kv", in(&Config::add_bias_kv)),
      flag("add_zero_attn", in_spec(&AttentionSpec::add_zero_attn)),
      flag("batch_first", in(&Config::batch_first)),
      labels("kv_labels", &Config::kv_labels),
      // read with --model and --layer before the rest (config/model.cpp)
      {"model", "a model folder or a .gguf file", nullptr,
       [](const Config& c, const Config&, json& out) {
         out["model"] = c.model.empty() ? json(nullptr) : json(c.model);
       }},
      {"layer", "an integer >= 0", nullptr, as_is("layer", in(&Config::layer))},
      {"weights_rename", "an object {\"<key start>\": \"<replacement>\"}",
       [](Config&, Config& c, const json& v, const std::string& at) {
         // weights_rename: {"q_lin.": "q_proj.", ...}: a layer key (weights_prefix
         // stripped) that starts with a left side gets the right side instead, so
         // a family's own tensor names (DistilBERT's q_lin, T5's q) reach a layout's.
         for (const auto& [from, to] : cj::get_object(v, at).items()) {
           const std::string key = at + "." + from;
           const std::string target = cj::get_string(to, key);
           if (from.empty() || target.empty())
             throw Error(Exit::config, key + ": expected a non-empty key start and replacement");
           c.weights_rename.emplace_back(from, target);
         }
       },
       [](const Config& c, const Config&, json& out) {
         json renames = json::object();
         for (const auto& [from, to] : c.weights_rename) renames[from] = to;
         out["weights_rename"] = renames;
       }},
      flag("gate", in_spec(&AttentionSpec::gate)),
      integer("attention_chunk", in_spec(&AttentionSpec::attention_chunk)),
      object("attn_temperature",
             "an object {\"floor_scale\": number, \"attn_scale\": number} or null",
             in_spec(&AttentionSpec::attn_temperature), attn_temperature_keys),
      object("relative_bias", "an object ({} for T5's 32 buckets up to distance 128) or null",
             in_spec(&AttentionSpec::relative_bias), relative_bias_keys),
      object("mla",
             "an object {q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, "
             "v_head_dim} or null",
             in(&Config::mla), mla_keys, check_mla),
      {"residual_norm", kResidualNorm,
       [](Config& c, Config&, const json& v, const std::string& at) {
         c.spec.residual_norm.reset();
         if (v.is_null()) return;
         if (v.is_boolean()) {
           if (v.get<bool>()) c.spec.residual_norm = ResidualNormSpec{};
           return;
         }
         if (!v.is_object())
           bad(at, std::string("expected ") + kResidualNorm + ", found " + cj::describe(v));
         ResidualNormSpec r;
         read_fields(residual_norm_keys(), c, r, v, at);
         c.spec.residual_norm = std::move(r);
       },
       [](const Config& c, const Config&, json& out) {
         out["residual_norm"] = c.spec.residual_norm
                                    ? write_keys(residual_norm_keys(), c, *c.spec.residual_norm)
                                    : json(nullptr);
       },
       [](const std::string& p, KeyLists& lists) { list_keys(residual_norm_keys(), p, lists); }},
      object("v_norm", "an object {\"kind\": \"rms\", \"eps\": number} or null",
             in_spec(&AttentionSpec::v_norm), v_norm_keys),
      flag("k_eq_v", in(&Config::k_eq_v)),
      // an encoder-decoder's decoder layer, its self- or cross-attention (config/model.cpp)
      {"decoder_layer", "an integer >= 0", nullptr,
       [](const Config& c, const Config&, json& out) {
         out["decoder_layer"] = c.module.empty() || !c.layer ? json(nullptr) : json(*c.layer);
       }},
      {"cross_attention", "true or false", nullptr,
       [](const Config& c, const Config&, json& out) {
         out["cross_attention"] = c.module == "decoder_cross";
       }},
      {"input_norm", kInputNorm,
       [](Config& c, Config&, const json& v, const std::string& at) {
         c.spec.input_norm.reset();
         if (v.is_null() || (v.is_boolean() && !v.get<bool>())) return;
         if (v.is_boolean())
           bad(at,
               "true takes the block's own norm from a model folder or GGUF file (--model); a "
               "plain config gives it as {\"kind\", \"eps\", \"weight\", \"bias\", "
               "\"offset\"}");
         if (!v.is_object())
           bad(at, std::string("expected ") + kInputNorm + ", found " + cj::describe(v));
         InputNormSpec n;
         read_fields(input_norm_keys(), c, n, v, at);
         c.spec.input_norm = std::move(n);
       },
       [](const Config& c, const Config&, json& out) {
         out["input_norm"] = c.spec.input_norm
                                 ? write_keys(input_norm_keys(), c, *c.spec.input_norm)
                                 : json(nullptr);
       },
       [](const std::string& p, KeyLists& lists) { list_keys(input_norm_keys(), p, lists); }},
      object("embedding",
             "an object {\"word\": KEY, \"scale\", \"scale_dtype\", \"positions\": KEY, "
             "\"position_offset\", \"padding_id\", \"token_types\": KEY, \"norm_weight\": "
             "KEY, \"norm_bias\": KEY, \"norm_eps\"} (layer 0's input from --tokens) or null",
             in(&Config::embedding), embedding_keys, check_embedding),
      // the score terms of CONTRACT.md "(v4) Families and schedulers"
      object("disentangled",
             "an object {pos_att_type, position_buckets, max_relative_positions, share_att_key, "
             "table, norm_weight, norm_bias, eps} ({} for DeBERTa-v3's) or null",
             in_spec(&AttentionSpec::disentangled), disentangled_keys),
      flag("mask_padded_queries", in_spec(&AttentionSpec::mask_padded_queries)),
      {"clip_qkv", kClipQkv,
       [](Config& c, Config&, const json& v, const std::string& at) {
         c.spec.clip_qkv.reset();
         if (v.is_null()) return;  // config.json's "clip_qkv": null
         const double x = cj::get_number(v, at);
         if (!(x > 0.0) || !std::isfinite(static_cast<float>(x)))
           bad(at, std::string("expected ") + kClipQkv + ", found " + v.dump());
         c.spec.clip_qkv = x;
       },
       as_is("clip_qkv", in_spec(&AttentionSpec::clip_qkv))},
  };
  return k;
}

}  // namespace

std::string layout_list() {
  std::string s;
  for (const auto& n : layout_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

const std::vector<std::string>* known_keys(const std::string& path) {
  static const KeyLists lists = [] {
    KeyLists l;
    list_keys(config_key_table(), "", l);
    return l;
  }();
  const auto it = lists.find(path);
  return it == lists.end() ? nullptr : &it->second;
}

void read_config(Config& c, const json& root, const KeyName& name) {
  read_keys(config_key_table(), c, c, root, name);
  resolve_config(c);
}

json keys_to_json(const Config& c) {
  json j = write_keys(config_key_table(), c, c);
  j["from_model"] = c.from_model ? *c.from_model : json(nullptr);
  return j;
}

}  // namespace attn::config_detail

namespace attn {

const std::vector<std::string>& config_keys() { return *config_detail::known_keys(""); }

}  // namespace attn

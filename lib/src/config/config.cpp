// The JSON config of CONTRACT.md ("Config"): strict parsing into Config, the
// derived sizes (resolve_config) and the resolved config for run.json.
// Sizes follow the tutorial modules: Warner's SingleHeadAttention uses a head
// of hidden_size//4; Raschka's MultiHeadAttention splits d_out into num_heads
// heads of d_out // num_heads (and asserts divisibility).
// The version 2 keys live in config/scores.cpp, the array keys in
// config/arrays.cpp, model folders in config/model.cpp.
#include "attn/config.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/geometry.h"
#include "config/internal.h"
#include "config/json.h"
#include "family/hf_vocab.h"

namespace attn {
namespace config_detail {
namespace {

namespace cj = config_json;

std::string layout_list() {
  std::string s;
  for (const auto& n : layout_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

void check_size(const Config& c, const char* key, std::int64_t v, std::int64_t max) {
  if (v < 1 || v > max)
    fail(c, key,
         "expected an integer in 1.." + std::to_string(max) + ", found " + std::to_string(v));
}

void read_init(Config& c, const json& v, const std::string& name) {
  const json& o = cj::get_object(v, name);
  if (!o.contains("seed"))
    throw Error(Exit::config, name + ": expected {\"seed\": int}, \"seed\" is missing");
  c.init_seed = cj::get_uint(o.at("seed"), name + ".seed");
}

void read_output(Config& c, const json& v, const std::string& name) {
  const json& o = cj::get_object(v, name);
  if (o.contains("dir")) {
    std::string d = cj::get_string(o.at("dir"), name + ".dir");
    if (d.empty())
      throw Error(Exit::config, name + ".dir: expected a folder, found an empty string");
    if (d.find('\0') != std::string::npos)
      throw Error(Exit::config, name + ".dir: expected a folder, found a NUL character in it");
    c.output_dir = resolve_path(c.dir, d);
  }
  if (o.contains("attention"))
    c.output_attention = cj::get_bool(o.at("attention"), name + ".attention");
  if (o.contains("average_heads"))
    c.output_average_heads = cj::get_bool(o.at("average_heads"), name + ".average_heads");
}

void read_labels(std::vector<std::string>& labels, const json& v, const std::string& name) {
  if (!v.is_array())
    throw Error(Exit::config, name + ": expected an array of strings, found " + cj::describe(v));
  labels.clear();
  for (std::size_t i = 0; i < v.size(); ++i)
    labels.push_back(cj::get_string(v[i], name + "[" + std::to_string(i) + "]"));
}

// Layouts fix some sizes: their tensors cannot hold another shape
// (geometry.h's fit rule, shared with loading, init and export).
void check_layout(const Config& c) {
  if (!c.layout) return;
  const std::string problem = layout_fit_problem(geometry_of(c), *c.layout);
  if (problem.empty()) return;
  if (!layout_has_out_proj(*c.layout) && c.out_proj)
    fail(c, "out_proj", problem + "; set \"out_proj\": false");
  if (problem.find("output projection") != std::string::npos)
    fail(c, "out_proj", problem + "; found out_proj false");
  fail(c, "layout", problem);
}

const std::vector<std::string>& init_keys() {
  static const std::vector<std::string> k = {"seed"};
  return k;
}

const std::vector<std::string>& output_keys() {
  static const std::vector<std::string> k = {"dir", "attention", "average_heads"};
  return k;
}

const std::vector<std::string>& rope_keys() {
  static const std::vector<std::string> k = {"theta", "rotary_dim", "style",
                                             "max_position_embeddings", "scaling"};
  return k;
}

// Hugging Face's rope_scaling fields (CONTRACT.md "Positions").
const std::vector<std::string>& rope_scaling_keys() {
  static const std::vector<std::string> k = {"rope_type",        "type",
                                             "factor",           "original_max_position_embeddings",
                                             "low_freq_factor",  "high_freq_factor",
                                             "beta_fast",        "beta_slow",
                                             "attention_factor", "mscale",
                                             "mscale_all_dim",   "truncate",
                                             "short_factor",     "long_factor",
                                             "freq_factors",     "partial_rotary_factor"};
  return k;
}

const std::vector<std::string>& alibi_keys() {
  static const std::vector<std::string> k = {"max_bias", "slopes"};
  return k;
}

const std::vector<std::string>& relative_bias_keys() {
  static const std::vector<std::string> k = {"num_buckets", "max_distance", "bidirectional",
                                             "table"};
  return k;
}

const std::vector<std::string>& attn_temperature_keys() {
  static const std::vector<std::string> k = {"floor_scale", "attn_scale"};
  return k;
}

const std::vector<std::string>& v_norm_keys() {
  static const std::vector<std::string> k = {"kind", "eps"};
  return k;
}

const std::vector<std::string>& qk_norm_keys() {
  static const std::vector<std::string> k = {"eps",  "scope",    "weight_offset",
                                             "kind", "per_head", "bias"};
  return k;
}

}  // namespace

std::string display_name(const Config& c) { return c.file.empty() ? "config" : c.file; }

[[noreturn]] void fail(const Config& c, const std::string& key, const std::string& what) {
  throw Error(Exit::config, display_name(c) + ": " + key + ": " + what);
}

const std::vector<std::string>* known_keys(const std::string& path) {
  if (path.empty()) return &config_keys();
  if (path == "init") return &init_keys();
  if (path == "output") return &output_keys();
  if (path == "rope") return &rope_keys();
  if (path == "rope.scaling") return &rope_scaling_keys();
  if (path == "alibi") return &alibi_keys();
  if (path == "qk_norm") return &qk_norm_keys();
  if (path == "relative_bias") return &relative_bias_keys();
  if (path == "attn_temperature") return &attn_temperature_keys();
  if (path == "mla") return &mla_keys();
  if (path == "residual_norm") return &residual_norm_keys();
  if (path == "v_norm") return &v_norm_keys();
  return nullptr;
}

void check_config_keys(const json& root, const std::string& file) {
  cj::check_keys(root, file, known_keys, foreign_config_key);
}

bool looks_like_hf_config(const json& root) {
  // model_folder.h's rule, unless the file is plainly an attn-run config
  // that carries a stray model_type (which then gets the vocabulary's error).
  return root.is_object() && (root.contains("model_type") || root.contains("architectures")) &&
         !root.contains("attention") && !root.contains("model");
}

json parse_config_json(const std::string& text, const std::string& file) {
  if (text.size() > kMaxConfigBytes)
    throw Error(Exit::config,
                file + ": config larger than 1 MiB (" + std::to_string(text.size()) + " bytes)");
  json root = cj::parse_strict(text, file, nullptr);
  if (!root.is_object())
    throw Error(Exit::config,
                file + ": expected a JSON object at the top level, found " + cj::describe(root));
  return root;
}

namespace {

// weights_rename: {"q_lin.": "q_proj.", ...}: a layer key (weights_prefix
// stripped) that starts with a left side gets the right side instead, so a
// family's own tensor names (DistilBERT's q_lin, T5's q) reach a layout's.
void read_weights_rename(Config& c, const json& v, const KeyName& name) {
  const json& o = cj::get_object(v, name("weights_rename"));
  for (const auto& [from, to] : o.items()) {
    const std::string key = name("weights_rename." + from);
    const std::string target = cj::get_string(to, key);
    if (from.empty() || target.empty())
      throw Error(Exit::config, key + ": expected a non-empty key start and replacement");
    c.weights_rename.emplace_back(from, target);
  }
}

}  // namespace

void read_config(Config& c, const json& root, const KeyName& name) {
  auto has = [&](const char* k) { return root.contains(k); };

  if (!has("attention"))
    throw Error(Exit::config,
                name("attention") + ": required key missing (\"single\", \"multi\" or \"causal\")");
  const std::string kind = cj::get_string(root.at("attention"), name("attention"));
  if (kind == "single")
    c.kind = Kind::single;
  else if (kind == "multi")
    c.kind = Kind::multi;
  else if (kind == "causal")
    c.kind = Kind::causal;
  else
    throw Error(Exit::config, name("attention") +
                                  ": expected \"single\", \"multi\" or \"causal\", found " +
                                  cj::quote(kind));

  if (!has("hidden_size"))
    throw Error(Exit::config, name("hidden_size") + ": required key missing (int > 0, C)");
  c.hidden_size = cj::get_int(root.at("hidden_size"), name("hidden_size"));
  if (has("num_heads")) c.num_heads = cj::get_int(root.at("num_heads"), name("num_heads"));
  if (has("num_kv_heads"))
    c.num_kv_heads = cj::get_int(root.at("num_kv_heads"), name("num_kv_heads"));
  if (has("head_size")) {
    c.head_size = cj::get_int(root.at("head_size"), name("head_size"));
    c.head_size_given = true;
  }
  if (has("out_size")) {
    c.out_size = cj::get_int(root.at("out_size"), name("out_size"));
    c.out_size_given = true;
  }
  if (has("out_proj")) c.out_proj = cj::get_bool(root.at("out_proj"), name("out_proj"));
  if (has("causal")) {
    c.causal = cj::get_bool(root.at("causal"), name("causal"));
    c.causal_given = true;
  }
  if (has("context_size"))
    c.context_size = cj::get_int(root.at("context_size"), name("context_size"));
  const bool bias = has("bias") ? cj::get_bool(root.at("bias"), name("bias")) : true;
  c.qkv_bias = has("qkv_bias") ? cj::get_bool(root.at("qkv_bias"), name("qkv_bias")) : bias;
  c.out_bias = has("out_bias") ? cj::get_bool(root.at("out_bias"), name("out_bias")) : bias;
  c.qkv_bias_given = c.qkv_bias && (has("qkv_bias") || has("bias"));
  c.out_bias_given = c.out_bias && (has("out_bias") || has("bias"));
  if (has("scale")) {
    c.scale = cj::get_number(root.at("scale"), name("scale"));
    c.scale_given = true;
  }
  if (has("dropout")) c.dropout = cj::get_number(root.at("dropout"), name("dropout"));
  if (has("attn_drop")) c.attn_drop = cj::get_number(root.at("attn_drop"), name("attn_drop"));
  if (has("out_drop")) c.out_drop = cj::get_number(root.at("out_drop"), name("out_drop"));
  if (has("layout")) {
    const std::string l = cj::get_string(root.at("layout"), name("layout"));
    c.layout = parse_layout(l);
    if (!c.layout)
      throw Error(Exit::config, name("layout") + ": expected one of " + layout_list() + ", found " +
                                    cj::quote(l));
  }
  if (has("weights")) c.weights = path_value(c, root.at("weights"), name("weights"));
  if (has("weights_prefix"))
    c.weights_prefix = cj::get_string(root.at("weights_prefix"), name("weights_prefix"));
  if (has("weights_rename")) read_weights_rename(c, root.at("weights_rename"), name);
  if (has("init")) read_init(c, root.at("init"), name("init"));
  if (has("input")) read_input(c, root.at("input"), name("input"));
  if (has("padding_mask")) read_padding_mask(c, root.at("padding_mask"), name("padding_mask"));
  if (has("labels")) read_labels(c.labels, root.at("labels"), name("labels"));
  if (has("output")) read_output(c, root.at("output"), name("output"));
  read_score_keys(c, root, name);
  if (has("mla")) read_mla(c, root.at("mla"), name("mla"));
  if (has("kv_labels")) read_labels(c.kv_labels, root.at("kv_labels"), name("kv_labels"));
  if (has("residual_norm")) read_residual_norm(c, root.at("residual_norm"), name("residual_norm"));

  resolve_config(c);
}

}  // namespace config_detail

using namespace config_detail;

std::string kind_name(Kind k) {
  return k == Kind::single ? "single" : k == Kind::multi ? "multi" : "causal";
}

const std::vector<std::string>& config_keys() {
  static const std::vector<std::string> keys = {
      // version 1
      "attention", "hidden_size", "num_heads", "num_kv_heads", "head_size", "out_size", "out_proj",
      "causal", "context_size", "bias", "qkv_bias", "out_bias", "scale", "dropout", "attn_drop",
      "out_drop", "layout", "weights", "weights_prefix", "init", "input", "padding_mask", "labels",
      "output",
      // CONTRACT.md's "New keys" table, then kv_labels (issue 10)
      "rope", "positions", "alibi", "sliding_window", "softcap", "qk_norm", "sinks",
      "attention_mask", "attn_mask", "kv_input", "key_input", "value_input", "kdim", "vdim",
      "add_bias_kv", "add_zero_attn", "batch_first", "kv_labels", "model", "layer",
      // version 3
      "weights_rename",
      // CONTRACT.md "(v3) More of the forward pass"
      "gate", "attention_chunk", "attn_temperature", "relative_bias", "mla",
      // what the context is (issue 30)
      "residual_norm",
      // Gemma 4 (issue 24)
      "v_norm", "k_eq_v"};
  return keys;
}

void resolve_config(Config& c) {
  check_size(c, "hidden_size", c.hidden_size, kMaxSize);
  check_size(c, "num_heads", c.num_heads, kMaxSize);
  if (c.kind == Kind::single && c.num_heads != 1)
    fail(c, "num_heads",
         "\"single\" attention has one head, found num_heads " + std::to_string(c.num_heads) +
             " (use \"multi\" for more)");
  if (c.num_kv_heads) {
    check_size(c, "num_kv_heads", *c.num_kv_heads, kMaxSize);
    // Hugging Face's repeat_kv: each KV head serves num_heads / num_kv_heads query heads.
    if (c.num_heads % *c.num_kv_heads != 0)
      fail(c, "num_kv_heads",
           "expected a divisor of num_heads " + std::to_string(c.num_heads) +
               ", found num_kv_heads " + std::to_string(*c.num_kv_heads));
  }
  if (c.out_size_given) check_size(c, "out_size", c.out_size, kMaxSize);
  const std::int64_t out = c.out_size_given ? c.out_size : c.hidden_size;

  if (c.mla) {
    resolve_mla(c);  // D = max(Dn + Dr, Dv)
  } else if (c.head_size_given) {
    check_size(c, "head_size", c.head_size, kMaxSize);
  } else if (c.kind == Kind::single) {
    // Warner's SingleHeadAttention: nn.Linear(hidden_size, (hidden_size//4)*3).
    c.head_size = c.hidden_size / 4;
    if (c.head_size == 0)
      fail(c, "head_size",
           "the default hidden_size/4 is 0 for hidden_size " + std::to_string(c.hidden_size) +
               "; give head_size");
  } else {
    // Raschka's MultiHeadAttention: assert d_out % num_heads == 0.
    if (out % c.num_heads != 0)
      fail(c, "head_size",
           "out_size " + std::to_string(out) + " is not divisible by num_heads " +
               std::to_string(c.num_heads) + "; give head_size or change num_heads");
    c.head_size = out / c.num_heads;
  }
  if (c.inner_size() > kMaxSize)
    fail(c, "head_size",
         "num_heads*head_size = " + std::to_string(c.inner_size()) + " exceeds " +
             std::to_string(kMaxSize));

  if (c.out_proj) {
    c.out_size = out;
  } else {
    // No output projection: the context is the concatenated heads.
    if (c.out_size_given && c.out_size != c.inner_size())
      fail(c, "out_size",
           "with out_proj false the output is num_heads*head_size = " +
               std::to_string(c.inner_size()) + " wide, found out_size " +
               std::to_string(c.out_size));
    c.out_size = c.inner_size();
  }

  if (c.kind == Kind::causal) {
    if (c.causal_given && !c.causal)
      fail(c, "causal",
           "\"causal\" attention always masks future keys, found causal false "
           "(use \"multi\" without a mask)");
    c.causal = true;
  }
  if (c.context_size) check_size(c, "context_size", *c.context_size, kMaxContext);

  if (c.scale_given) {
    if (!(c.scale > 0.0) || !std::isfinite(static_cast<float>(c.scale)))
      fail(c, "scale",
           "expected a number > 0 that float32 holds (at most 3.4e38), found " +
               json(c.scale).dump());
  } else {
    c.scale = c.mla ? mla_scale(c) : 1.0 / std::sqrt(static_cast<double>(c.head_size));
  }
  const std::pair<const char*, double> drops[] = {
      {"dropout", c.dropout}, {"attn_drop", c.attn_drop}, {"out_drop", c.out_drop}};
  for (const auto& [key, p] : drops)
    if (!(p >= 0.0 && p < 1.0))
      fail(c, key, "expected a number in [0, 1), found " + json(p).dump());

  if (!c.weights.empty() && c.init_seed)
    fail(c, "weights",
         "weights and init exclude each other: drop \"init\" to load the weights, "
         "or drop \"weights\" to initialize from the seed");
  if (c.init_seed && !c.layout)
    fail(c, "layout",
         "init needs a layout to name the weights it creates; give one of " + layout_list());
  resolve_score_keys(c);
  resolve_residual_norm(c);
  check_layout(c);
  if (c.init_seed && c.layout) {
    const std::string problem = layout_init_problem(geometry_of(c), *c.layout);
    if (!problem.empty()) fail(c, "init", problem);
  }
  check_inline(c);
}

nlohmann::json config_to_json(const Config& c) {
  json j = json::object();
  j["attention"] = kind_name(c.kind);
  j["hidden_size"] = c.hidden_size;
  j["num_heads"] = c.num_heads;
  j["num_kv_heads"] = c.kv_heads();
  j["head_size"] = c.head_size;
  j["out_size"] = c.out_features();
  j["out_proj"] = c.out_proj;
  j["causal"] = c.causal;
  j["context_size"] = c.context_size ? json(*c.context_size) : json(nullptr);
  j["qkv_bias"] = c.qkv_bias;
  j["out_bias"] = c.out_bias;
  j["scale"] = c.scale;
  j["dropout"] = c.dropout;
  j["attn_drop"] = c.attn_drop;
  j["out_drop"] = c.out_drop;
  j["layout"] = c.layout ? json(layout_name(*c.layout)) : json(nullptr);
  j["weights"] = c.weights.empty() ? json(nullptr) : json(c.weights);
  j["weights_prefix"] = c.weights_prefix;
  json renames = json::object();
  for (const auto& [from, to] : c.weights_rename) renames[from] = to;
  j["weights_rename"] = renames;
  j["init"] = c.init_seed ? json{{"seed", *c.init_seed}} : json(nullptr);
  j["input"] = c.input_inline         ? json("inline")
               : c.input_path.empty() ? json(nullptr)
                                      : json(c.input_path);
  j["padding_mask"] = c.padding_mask_inline         ? json("inline")
                      : c.padding_mask_path.empty() ? json(nullptr)
                                                    : json(c.padding_mask_path);
  j["labels"] = c.labels;
  j["output"] = {{"dir", c.output_dir.empty() ? json(nullptr) : json(c.output_dir)},
                 {"attention", c.output_attention},
                 {"average_heads", c.output_average_heads}};
  score_keys_to_json(c, j);
  mla_to_json(c, j);
  residual_norm_to_json(c, j);
  return j;
}

Geometry geometry_of(const Config& cfg) {
  Geometry g;
  g.C = static_cast<std::size_t>(cfg.hidden_size);
  g.H = static_cast<std::size_t>(cfg.num_heads);
  g.Hkv = static_cast<std::size_t>(cfg.kv_heads());
  g.D = static_cast<std::size_t>(cfg.head_size);
  g.O = static_cast<std::size_t>(cfg.out_features());
  g.out_proj = cfg.out_proj;
  g.Ck = static_cast<std::size_t>(cfg.kdim ? cfg.kdim : cfg.hidden_size);
  g.Cv = static_cast<std::size_t>(cfg.vdim ? cfg.vdim : cfg.hidden_size);
  return g;
}

}  // namespace attn

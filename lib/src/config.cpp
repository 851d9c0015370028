// The JSON config of CONTRACT.md ("Config"): strict parsing into Config, the
// derived sizes (resolve_config) and the resolved config for run.json.
// Sizes follow the tutorial modules: Warner's SingleHeadAttention uses a head
// of hidden_size//4; Raschka's MultiHeadAttention splits d_out into num_heads
// heads of d_out // num_heads (and asserts divisibility).
#include "attn/config.h"

#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/geometry.h"
#include "attn/nested_array.h"
#include "config_json.h"
#include "config_vocab.h"

namespace attn {
namespace {

using json = nlohmann::json;
namespace cj = config_json;

const std::vector<std::string>& init_keys() {
  static const std::vector<std::string> k = {"seed"};
  return k;
}

const std::vector<std::string>& output_keys() {
  static const std::vector<std::string> k = {"dir", "attention"};
  return k;
}

std::string display_name(const Config& c) { return c.file.empty() ? "config" : c.file; }

[[noreturn]] void fail(const Config& c, const std::string& key, const std::string& what) {
  throw Error(Exit::config, display_name(c) + ": " + key + ": " + what);
}

std::string layout_list() {
  std::string s;
  for (const auto& n : layout_names()) s += (s.empty() ? "" : ", ") + n;
  return s;
}

void check_size(const Config& c, const char* key, std::int64_t v, std::int64_t max) {
  if (v < 1 || v > max)
    fail(c, key, "expected an integer in 1.." + std::to_string(max) + ", found " + std::to_string(v));
}

// "path or nested array" keys: a path string resolves against the config's
// folder ("-" stays standard input); an array is read inline.
std::string path_value(const Config& c, const json& v, const std::string& name) {
  std::string p = cj::get_string(v, name);
  if (p.empty()) throw Error(Exit::config, name + ": expected a path, found an empty string");
  if (p.find('\0') != std::string::npos)
    throw Error(Exit::config, name + ": expected a path, found a NUL character in it");
  return p == "-" ? p : resolve_path(c.dir, p);
}

void read_init(Config& c, const json& v, const std::string& name) {
  const json& o = cj::get_object(v, name);
  if (!o.contains("seed")) throw Error(Exit::config, name + ": expected {\"seed\": int}, \"seed\" is missing");
  c.init_seed = cj::get_uint(o.at("seed"), name + ".seed");
}

void read_output(Config& c, const json& v, const std::string& name) {
  const json& o = cj::get_object(v, name);
  if (o.contains("dir")) {
    std::string d = cj::get_string(o.at("dir"), name + ".dir");
    if (d.empty()) throw Error(Exit::config, name + ".dir: expected a folder, found an empty string");
    if (d.find('\0') != std::string::npos)
      throw Error(Exit::config, name + ".dir: expected a folder, found a NUL character in it");
    c.output_dir = resolve_path(c.dir, d);
  }
  if (o.contains("attention")) c.output_attention = cj::get_bool(o.at("attention"), name + ".attention");
}

void read_input(Config& c, const json& v, const std::string& name) {
  if (v.is_string()) {
    c.input_path = path_value(c, v, name);
    return;
  }
  if (!v.is_array()) throw Error(Exit::config, name + ": expected a path or a nested array, found " + cj::describe(v));
  Tensor t = tensor_from_json(v, name, Exit::config);
  if (t.ndim() != 2 && t.ndim() != 3)
    throw Error(Exit::config, name + ": expected a nested array of shape (S, C) or (B, S, C), found shape " +
                                  shape_str(t.shape));
  c.input_inline = std::move(t);
}

void read_padding_mask(Config& c, const json& v, const std::string& name) {
  if (v.is_string()) {
    c.padding_mask_path = path_value(c, v, name);
    return;
  }
  if (!v.is_array()) throw Error(Exit::config, name + ": expected a path or a nested array, found " + cj::describe(v));
  Mask m = mask_from_json(v, name, Exit::config);
  if (m.shape.size() != 1 && m.shape.size() != 2)
    throw Error(Exit::config, name + ": expected a nested array of shape (S,) or (B, S), found shape " +
                                  shape_str(m.shape));
  c.padding_mask_inline = std::move(m);
}

void read_labels(Config& c, const json& v, const std::string& name) {
  if (!v.is_array()) throw Error(Exit::config, name + ": expected an array of strings, found " + cj::describe(v));
  for (std::size_t i = 0; i < v.size(); ++i)
    c.labels.push_back(cj::get_string(v[i], name + "[" + std::to_string(i) + "]"));
}

// Shapes inline in the config must agree with each other and the sizes.
void check_inline(const Config& c) {
  std::size_t seq = 0, batch = 0;  // 0 = unknown (input from a file)
  if (c.input_inline) {
    const auto& s = c.input_inline->shape;
    if (static_cast<std::int64_t>(s.back()) != c.hidden_size)
      fail(c, "input", "expected rows of hidden_size " + std::to_string(c.hidden_size) +
                           " numbers, found shape " + shape_str(s));
    seq = s[s.size() - 2];
    batch = s.size() == 3 ? s[0] : 0;
    if (c.context_size && static_cast<std::int64_t>(seq) > *c.context_size)
      fail(c, "input", "sequence length " + std::to_string(seq) + " exceeds context_size " +
                           std::to_string(*c.context_size));
  }
  if (c.padding_mask_inline && seq) {
    const auto& m = c.padding_mask_inline->shape;
    if (m.back() != seq || (m.size() == 2 && batch && m[0] != batch))
      fail(c, "padding_mask", "expected shape " +
                                  (batch ? shape_str({batch, seq}) + " or " : std::string()) +
                                  shape_str({seq}) + " to match input " +
                                  shape_str(c.input_inline->shape) + ", found " + shape_str(m));
  }
  if (!c.labels.empty() && seq && c.labels.size() != seq)
    fail(c, "labels", "expected one label per token (" + std::to_string(seq) + "), found " +
                          std::to_string(c.labels.size()));
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

}  // namespace

std::string kind_name(Kind k) {
  return k == Kind::single ? "single" : k == Kind::multi ? "multi" : "causal";
}

const std::vector<std::string>& config_keys() {
  static const std::vector<std::string> keys = {
      "attention", "hidden_size", "num_heads",  "num_kv_heads", "head_size", "out_size", "out_proj",
      "causal",    "context_size", "bias",      "qkv_bias",  "out_bias",     "scale",
      "dropout",   "attn_drop",   "out_drop",   "layout",    "weights",      "weights_prefix",
      "init",      "input",       "padding_mask", "labels",  "output"};
  return keys;
}

Config parse_config(const std::string& text, const std::string& file) {
  Config c;
  c.file = file;
  c.dir = std::filesystem::path(file).parent_path().string();
  const std::string fname = display_name(c);
  if (text.size() > kMaxConfigBytes)
    throw Error(Exit::config, fname + ": config larger than 1 MiB (" + std::to_string(text.size()) + " bytes)");

  const json root = cj::parse_strict(text, fname, [](const std::string& path) -> const std::vector<std::string>* {
    if (path.empty()) return &config_keys();
    if (path == "init") return &init_keys();
    if (path == "output") return &output_keys();
    return nullptr;
  }, foreign_config_key);
  if (!root.is_object()) throw Error(Exit::config, fname + ": expected a JSON object at the top level, found " + cj::describe(root));

  auto has = [&](const char* k) { return root.contains(k); };
  auto name = [&](const std::string& k) { return fname + ": " + k; };

  if (!has("attention")) throw Error(Exit::config, name("attention") + ": required key missing (\"single\", \"multi\" or \"causal\")");
  const std::string kind = cj::get_string(root.at("attention"), name("attention"));
  if (kind == "single") c.kind = Kind::single;
  else if (kind == "multi") c.kind = Kind::multi;
  else if (kind == "causal") c.kind = Kind::causal;
  else throw Error(Exit::config, name("attention") + ": expected \"single\", \"multi\" or \"causal\", found " + cj::quote(kind));

  if (!has("hidden_size")) throw Error(Exit::config, name("hidden_size") + ": required key missing (int > 0, C)");
  c.hidden_size = cj::get_int(root.at("hidden_size"), name("hidden_size"));
  if (has("num_heads")) c.num_heads = cj::get_int(root.at("num_heads"), name("num_heads"));
  if (has("num_kv_heads")) c.num_kv_heads = cj::get_int(root.at("num_kv_heads"), name("num_kv_heads"));
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
  if (has("context_size")) c.context_size = cj::get_int(root.at("context_size"), name("context_size"));
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
    if (!c.layout) throw Error(Exit::config, name("layout") + ": expected one of " + layout_list() + ", found " + cj::quote(l));
  }
  if (has("weights")) c.weights = path_value(c, root.at("weights"), name("weights"));
  if (has("weights_prefix")) c.weights_prefix = cj::get_string(root.at("weights_prefix"), name("weights_prefix"));
  if (has("init")) read_init(c, root.at("init"), name("init"));
  if (has("input")) read_input(c, root.at("input"), name("input"));
  if (has("padding_mask")) read_padding_mask(c, root.at("padding_mask"), name("padding_mask"));
  if (has("labels")) read_labels(c, root.at("labels"), name("labels"));
  if (has("output")) read_output(c, root.at("output"), name("output"));

  resolve_config(c);
  return c;
}

Config load_config(const std::string& path) {
  std::vector<std::uint8_t> bytes;
  try {
    bytes = read_file(path, kMaxConfigBytes);
  } catch (const Error& e) {
    // read_file says Exit::data for an oversized file; for a config that is a
    // config error (CONTRACT.md: bad config is 78).
    if (e.code() != Exit::data) throw;
    throw Error(Exit::config, path + ": config file larger than 1 MiB (" +
                                  std::to_string(kMaxConfigBytes) + " bytes)");
  }
  return parse_config(std::string(bytes.begin(), bytes.end()), path);
}

void resolve_config(Config& c) {
  check_size(c, "hidden_size", c.hidden_size, kMaxSize);
  check_size(c, "num_heads", c.num_heads, kMaxSize);
  if (c.kind == Kind::single && c.num_heads != 1)
    fail(c, "num_heads", "\"single\" attention has one head, found num_heads " +
                             std::to_string(c.num_heads) + " (use \"multi\" for more)");
  if (c.num_kv_heads) {
    check_size(c, "num_kv_heads", *c.num_kv_heads, kMaxSize);
    // Hugging Face's repeat_kv: each KV head serves num_heads / num_kv_heads query heads.
    if (c.num_heads % *c.num_kv_heads != 0)
      fail(c, "num_kv_heads", "expected a divisor of num_heads " + std::to_string(c.num_heads) +
                                  ", found num_kv_heads " + std::to_string(*c.num_kv_heads));
  }
  if (c.out_size_given) check_size(c, "out_size", c.out_size, kMaxSize);
  const std::int64_t out = c.out_size_given ? c.out_size : c.hidden_size;

  if (c.head_size_given) {
    check_size(c, "head_size", c.head_size, kMaxSize);
  } else if (c.kind == Kind::single) {
    // Warner's SingleHeadAttention: nn.Linear(hidden_size, (hidden_size//4)*3).
    c.head_size = c.hidden_size / 4;
    if (c.head_size == 0)
      fail(c, "head_size", "the default hidden_size/4 is 0 for hidden_size " +
                               std::to_string(c.hidden_size) + "; give head_size");
  } else {
    // Raschka's MultiHeadAttention: assert d_out % num_heads == 0.
    if (out % c.num_heads != 0)
      fail(c, "head_size", "out_size " + std::to_string(out) + " is not divisible by num_heads " +
                               std::to_string(c.num_heads) + "; give head_size or change num_heads");
    c.head_size = out / c.num_heads;
  }
  if (c.inner_size() > kMaxSize)
    fail(c, "head_size", "num_heads*head_size = " + std::to_string(c.inner_size()) + " exceeds " +
                             std::to_string(kMaxSize));

  if (c.out_proj) {
    c.out_size = out;
  } else {
    // No output projection: the context is the concatenated heads.
    if (c.out_size_given && c.out_size != c.inner_size())
      fail(c, "out_size", "with out_proj false the output is num_heads*head_size = " +
                              std::to_string(c.inner_size()) + " wide, found out_size " +
                              std::to_string(c.out_size));
    c.out_size = c.inner_size();
  }

  if (c.kind == Kind::causal) {
    if (c.causal_given && !c.causal)
      fail(c, "causal", "\"causal\" attention always masks future keys, found causal false "
                        "(use \"multi\" without a mask)");
    c.causal = true;
  }
  if (c.context_size) check_size(c, "context_size", *c.context_size, kMaxContext);

  if (c.scale_given) {
    if (!(c.scale > 0.0) || !std::isfinite(static_cast<float>(c.scale)))
      fail(c, "scale", "expected a number > 0 that float32 holds (at most 3.4e38), found " +
                           json(c.scale).dump());
  } else {
    c.scale = 1.0 / std::sqrt(static_cast<double>(c.head_size));
  }
  const std::pair<const char*, double> drops[] = {
      {"dropout", c.dropout}, {"attn_drop", c.attn_drop}, {"out_drop", c.out_drop}};
  for (const auto& [key, p] : drops)
    if (!(p >= 0.0 && p < 1.0)) fail(c, key, "expected a number in [0, 1), found " + json(p).dump());

  if (!c.weights.empty() && c.init_seed)
    fail(c, "weights", "weights and init exclude each other: drop \"init\" to load the weights, "
                       "or drop \"weights\" to initialize from the seed");
  if (c.init_seed && !c.layout)
    fail(c, "layout", "init needs a layout to name the weights it creates; give one of " + layout_list());
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
  j["init"] = c.init_seed ? json{{"seed", *c.init_seed}} : json(nullptr);
  j["input"] = c.input_inline ? json("inline") : c.input_path.empty() ? json(nullptr) : json(c.input_path);
  j["padding_mask"] = c.padding_mask_inline ? json("inline")
                      : c.padding_mask_path.empty() ? json(nullptr)
                                                    : json(c.padding_mask_path);
  j["labels"] = c.labels;
  j["output"] = {{"dir", c.output_dir.empty() ? json(nullptr) : json(c.output_dir)},
                 {"attention", c.output_attention}};
  return j;
}

}  // namespace attn

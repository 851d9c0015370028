// Hugging Face model folders (model_folder.h): config.json read and unwrapped
// for its family's row, the weights found beside it, and each layer mapped by
// the row (families.cpp, layer_map.cpp).
#include "attn/model_folder.h"

#include <sys/stat.h>

#include "attn/error.h"
#include "attn/escape.h"
#include "containers/gguf.h"
#include "containers/mapped_file.h"
#include "family/family_row.h"
#include "family/gguf_arch.h"
#include "family/hf_config.h"
#include "family/layer_map.h"

namespace attn {

namespace {

using family::HfConfig;
using family::Row;
using nlohmann::json;

std::string join_types() {
  std::string s;
  for (const std::string& t : supported_model_types()) s += (s.empty() ? "" : ", ") + t;
  return s;
}

// The encoder-decoder model_types (rows with a decoder).
std::string encoder_decoder_types() {
  std::string s;
  for (const Row& r : family::rows())
    if (r.decoder.on) s += (s.empty() ? "" : ", ") + r.model_type;
  return s;
}

std::string in_folder(const std::string& dir, const std::string& name) {
  return dir + (!dir.empty() && dir.back() == '/' ? "" : "/") + name;
}

bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The row of `type`, or of a wrapper that nests one (Gemma 3's multimodal
// config.json keeps the language model in text_config): the row and the key.
// `wanted` (a model_type, "" = the first that fits) picks among the rows a
// folder holds: a CLIPModel folder is clip_text_model (text_config) or
// clip_vision_model (vision_config), as CLIPTextModel / CLIPVisionModel's
// from_pretrained read it.
// Whether `w` nests row `r`'s model in this config.json of model_type `type`.
bool nests(const Row& r, const family::Wrapper& w, const std::string& type, const json& hf) {
  if (w.outer != type || !hf.contains(w.key) || !hf[w.key].is_object()) return false;
  const json& inner = hf[w.key];
  return !w.typed || !inner.contains("model_type") || inner["model_type"] == r.model_type;
}

const Row* find_row(const std::string& type, const json& hf, const std::string& wanted,
                    std::string* nested_key) {
  for (const Row& r : family::rows())
    for (const family::Wrapper& w : r.wrappers)
      if ((wanted.empty() || r.model_type == wanted) && nests(r, w, type, hf)) {
        *nested_key = w.key;
        return &r;
      }
  return wanted.empty() || wanted == type ? family::row_of(type) : nullptr;
}

// The model_types a folder of this type holds (itself, or what its wrapper nests).
std::string held_types(const std::string& type, const json& hf) {
  std::string s;
  for (const Row& r : family::rows()) {
    bool holds = r.model_type == type;
    for (const family::Wrapper& w : r.wrappers) holds = holds || nests(r, w, type, hf);
    if (holds) s += (s.empty() ? "" : ", ") + r.model_type;
  }
  return s;
}

const Row& row_of(const ModelFolder& m) { return *family::row_of(m.model_type); }

std::string config_file(const ModelFolder& m) {
  return m.gguf_architecture.empty() ? in_folder(m.dir, "config.json") : m.dir;
}

// A GGUF file's metadata is data, not a config someone wrote: a value the
// row refuses (a head count that does not divide, a zero rope base) is
// Exit::data, as every malformed GGUF (CONTRACT.md "(v3) GGUF").
template <typename F>
auto gguf_checked(F f) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.code() != Exit::config) throw;
    throw Error(Exit::data, std::string(e.what()) + " (from the GGUF metadata)");
  }
}

// --model FILE.gguf: the metadata as the row's config.json (gguf_arch.cpp).
ModelFolder open_gguf(const std::string& path) {
  const detail::GgufFile f = detail::read_gguf(path);
  // The metadata is read from the mapped header: a truncation meanwhile is the error.
  const family::GgufModel g =
      detail::reading(*f.mapped(), path, [&] { return family::gguf_model(f); });
  ModelFolder m;
  m.dir = path;
  m.weights = path;
  m.gguf_architecture = g.architecture;
  m.model_type = g.model_type;
  m.hf = g.hf;
  for (const auto& [key, value] : family::row_of(m.model_type)->defaults.items())
    if (!m.hf.contains(key)) m.hf[key] = value;
  const Row& row = *family::row_of(m.model_type);
  m.num_layers = gguf_checked([&] { return family::num_layers_of(row, HfConfig(m.hf, path)); });
  return m;
}

}  // namespace

const std::vector<std::string>& supported_model_types() {
  static const std::vector<std::string> t = [] {
    std::vector<std::string> v;
    for (const Row& r : family::rows()) v.push_back(r.model_type);
    return v;
  }();
  return t;
}

bool is_hf_config(const json& j) {
  return j.is_object() && (j.contains("model_type") || j.contains("architectures"));
}

ModelFolder open_model_folder(const std::string& dir, const std::string& model_type) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    throw Error(Exit::no_input, printable(dir) + ": no such model folder");
  if (family::is_gguf_file(dir)) return open_gguf(dir);
  if (!S_ISDIR(st.st_mode))
    throw Error(Exit::no_input, printable(dir) +
                                    ": not a folder (--model takes a Hugging Face model folder: "
                                    "config.json beside its weights, or a .gguf file; for a "
                                    "weights file alone, use --config with --weights)");
  ModelFolder m;
  m.dir = dir;
  const std::string file = in_folder(dir, "config.json");
  m.hf = family::read_config_json(file);
  const HfConfig top(m.hf, file);
  const std::optional<std::string> type = top.string("model_type");
  if (!type)
    throw Error(Exit::config,
                printable(file) + ": \"model_type\" is missing (supported: " + join_types() + ")");
  std::string nested;
  const Row* row = find_row(*type, m.hf, model_type, &nested);
  if (!row && !model_type.empty() && find_row(*type, m.hf, "", &nested))
    throw Error(Exit::config, "model_type \"" + printable(model_type) + "\": " + printable(file) +
                                  " (model_type \"" + printable(*type) + "\") holds " +
                                  held_types(*type, m.hf));
  if (!row)
    throw Error(Exit::config,
                printable(file) + ": model_type \"" + printable(*type) +
                    "\" is not supported (supported: " + join_types() +
                    "); to run one of its layers anyway, write an attn-run config with its sizes "
                    "and \"weights\" plus \"weights_prefix\" set to the layer's key prefix (see "
                    "CONTRACT.md \"Config\")");
  if (!nested.empty()) {
    json inner = m.hf[nested];  // a copy: the wrapper goes
    // CLIPConfig: an older "text_config_dict" updates text_config's values.
    const std::string legacy = nested + "_dict";
    if (m.hf.contains(legacy) && m.hf[legacy].is_object())
      for (const auto& [key, value] : m.hf[legacy].items()) inner[key] = value;
    m.hf = std::move(inner);
  }
  m.model_type = row->model_type;
  // Keys the file leaves out mean the configuration class's defaults (a key
  // set to null stays null: Mistral's "sliding_window": null is no window).
  for (const auto& [key, value] : row->defaults.items())
    if (!m.hf.contains(key)) m.hf[key] = value;
  const HfConfig hf(m.hf, nested.empty() ? file : file + " (" + nested + ")");
  m.num_layers = family::num_layers_of(*row, hf);
  m.decoder_layers = family::decoder_layers_of(*row, hf);
  for (const char* w : {"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                        "pytorch_model.bin.index.json"})
    if (is_file(in_folder(dir, w))) {
      m.weights = in_folder(dir, w);
      break;
    }
  if (m.weights.empty())
    throw Error(Exit::no_input, printable(dir) +
                                    ": no weights in the model folder (expected model.safetensors, "
                                    "model.safetensors.index.json, pytorch_model.bin or "
                                    "pytorch_model.bin.index.json)");
  return m;
}

std::string layer_type(const ModelFolder& m, std::int64_t layer) {
  return family::layer_type_of(row_of(m), HfConfig(m.hf, config_file(m)), layer, m.num_layers);
}

std::optional<std::int64_t> kv_shared_from(const ModelFolder& m, std::int64_t layer) {
  return family::kv_shared_source(row_of(m), HfConfig(m.hf, config_file(m)), layer, m.num_layers);
}

bool layer_runs(const ModelFolder& m, std::int64_t layer) {
  return family::runs_attention(layer_type(m, layer)) && !kv_shared_from(m, layer);
}

const char* module_name(Module module) {
  return module == Module::decoder_self    ? "decoder_self"
         : module == Module::decoder_cross ? "decoder_cross"
                                           : "layer";
}

std::optional<ModuleRef> decoder_module_at(const ModelFolder& m, const std::string& prefix) {
  const family::DecoderRule& d = row_of(m).decoder;
  if (!d.on || !m.gguf_architecture.empty()) return std::nullopt;
  for (const auto& [module, patterns] : {std::pair{Module::decoder_self, &d.self_prefixes},
                                         {Module::decoder_cross, &d.cross_prefixes}})
    for (const std::string& p : *patterns) {
      // "model.decoder.layers.{N}.encoder_attn." against the prefix: the same
      // text around a number.
      const std::size_t at = p.find("{N}");
      const std::string head = p.substr(0, at), tail = p.substr(at + 3);
      if (prefix.size() <= head.size() + tail.size() || prefix.compare(0, head.size(), head) != 0 ||
          prefix.compare(prefix.size() - tail.size(), tail.size(), tail) != 0)
        continue;
      const std::string n = prefix.substr(head.size(), prefix.size() - head.size() - tail.size());
      if (n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::int64_t layer = std::stoll(n);
      if (layer < m.decoder_layers) return ModuleRef{layer, module};
    }
  return std::nullopt;
}

json layer_config(const ModelFolder& m, std::int64_t layer,
                  const std::vector<std::string>& weight_keys, bool residual_norm, Module module,
                  bool input_norm, bool embedding) {
  const Row& row = row_of(m);
  const HfConfig hf(m.hf, config_file(m));
  if (module != Module::layer) {
    const std::string flag = module == Module::decoder_cross ? " --cross" : "";
    if (!row.decoder.on || !m.gguf_architecture.empty())
      throw Error(Exit::usage, "--decoder-layer: " + printable(m.dir) + " (model_type " +
                                   m.model_type +
                                   ") has no decoder: it is not an encoder-decoder folder "
                                   "(those: " +
                                   encoder_decoder_types() + "); run its layers with --layer N");
    if (layer < 0 || layer >= m.decoder_layers)
      throw Error(Exit::usage, "--decoder-layer: the model's decoder has layers 0.." +
                                   std::to_string(m.decoder_layers - 1) + ", found " +
                                   std::to_string(layer));
    json out = family::map_layer(row, hf, layer, m.num_layers, weight_keys, residual_norm,
                                 module == Module::decoder_self ? 1 : 2, input_norm);
    out["weights"] = m.weights;
    return out;
  }
  if (layer < 0 || layer >= m.num_layers)
    throw Error(Exit::usage, "--layer: the model has layers 0.." +
                                 std::to_string(m.num_layers - 1) + ", found " +
                                 std::to_string(layer));
  const std::string type = family::layer_type_of(row, hf, layer, m.num_layers);
  if (!family::runs_attention(type)) {
    std::string runs;
    std::int64_t n = 0;
    for (std::int64_t l = 0; l < m.num_layers; ++l)
      if (family::runs_attention(family::layer_type_of(row, hf, l, m.num_layers))) {
        if (n++ < 24) runs += (runs.empty() ? "" : ", ") + std::to_string(l);
      }
    throw Error(Exit::usage, "--layer: layer " + std::to_string(layer) + " of " + printable(m.dir) +
                                 " is a " + type +
                                 " layer, which attn-run does not run (no softmax attention); " +
                                 (n ? "its attention layers are " + runs + (n > 24 ? ", ..." : "")
                                    : std::string("the model has no attention layer")));
  }
  // Gemma 4's num_kv_shared_layers: the layer attends with the keys and values
  // another layer computed from its own input, which one layer's run has not.
  if (const std::optional<std::int64_t> from =
          family::kv_shared_source(row, hf, layer, m.num_layers)) {
    std::string runs;
    std::int64_t n = 0, last = -1;
    for (std::int64_t l = 0; l < m.num_layers; ++l)
      if (family::runs_attention(family::layer_type_of(row, hf, l, m.num_layers)) &&
          !family::kv_shared_source(row, hf, l, m.num_layers)) {
        if (n++ < 24) runs += (runs.empty() ? "" : ", ") + std::to_string(l);
        last = l;
      }
    throw Error(Exit::usage,
                "--layer: layer " + std::to_string(layer) + " of " + printable(m.dir) +
                    " reuses the keys and values of layer " + std::to_string(*from) +
                    " (num_kv_shared_layers: the last layers attend with an earlier layer's "
                    "K/V, computed from that layer's input), which attn-run does not run; the "
                    "layers that run are " +
                    runs + (n > 24 ? ", ..., " + std::to_string(last) : ""));
  }
  json out;
  if (m.gguf_architecture.empty()) {
    out = family::map_layer(row, hf, layer, m.num_layers, weight_keys, residual_norm, 0, input_norm,
                            embedding);
  } else {
    out = gguf_checked([&] {
      return family::map_layer(row, hf, layer, m.num_layers, weight_keys, false, 0, input_norm,
                               embedding);
    });
    family::gguf_layer_config(m.gguf_architecture, m.hf, layer, out);
  }
  out["weights"] = m.weights;
  return out;
}

std::optional<ResidualNorm> residual_norm_of(const ModelFolder& m, std::string* why) {
  const Row& row = row_of(m);
  const family::ResidualNormRule& r = row.residual_norm;
  if (m.gguf_architecture.empty() && family::has_residual_norm(row, HfConfig(m.hf, config_file(m))))
    return ResidualNorm{r.module, r.in_attention};
  if (why) {
    std::string families;
    for (const Row& f : family::rows())
      if (f.residual_norm.name)
        families += (families.empty() ? "" : ", ") + f.model_type +
                    (f.residual_norm.before_key
                         ? std::string(" with ") + f.residual_norm.before_key + " false"
                         : "");
    if (!m.gguf_architecture.empty())
      *why = "a GGUF model's norms are not read";
    else if (r.name)
      *why = "model_type " + m.model_type + " with " + r.before_key +
             " true normalizes before its attention (" + r.name + "), not after it";
    else
      *why = "model_type " + m.model_type +
             " has no LayerNorm over its attention's output plus the input";
    *why += " (the families with one: " + families + ")";
  }
  return std::nullopt;
}

StateDict open_model_weights(const ModelFolder& m) {
  if (!m.gguf_architecture.empty()) return family::gguf_weights(m.weights);
  return open_state_dict(m.weights);
}

}  // namespace attn

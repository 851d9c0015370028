// Model folders under a config (CONTRACT.md "Invocation" and "(v2) Model
// folders"): --model DIR / "model" with --layer N / "layer" take the layer's
// settings from the folder (model_folder.h), and the config's own keys
// override them. A Hugging Face config.json given as the config means its
// folder.
#include <filesystem>
#include <memory>
#include <optional>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/model_folder.h"
#include "attn/state_dict.h"
#include "config/internal.h"
#include "config/json.h"

namespace attn {
namespace config_detail {
namespace {

namespace cj = config_json;

std::string folder_config(const std::string& dir) {
  // A .gguf model is its own configuration (its metadata).
  if (dir.size() >= 5 && dir.compare(dir.size() - 5, 5, ".gguf") == 0) return dir;
  return dir + (!dir.empty() && dir.back() == '/' ? "" : "/") + "config.json";
}

// The folder's layer config with the config's keys over it: top-level keys
// replace the folder's, a null removes it (JSON merge patch, RFC 7386), rope,
// qk_norm, relative_bias and residual_norm merge field by field (rope.scaling is replaced whole),
// and "bias" replaces the folder's qkv_bias/out_bias. A weights_prefix naming another module (T5's
// decoder) drops the folder's relative_bias.table, which belongs to the folder's layer: that
// module's own table is read, or the one the config names, never silently the encoder's.
json merge(json folder, const json& config) {
  if (config.contains("weights_prefix") && folder.contains("relative_bias") &&
      folder["relative_bias"].is_object() &&
      config["weights_prefix"] != folder.value("weights_prefix", json())) {
    const json& r = config.contains("relative_bias") ? config["relative_bias"] : json();
    if (!r.is_object() || !r.contains("table")) folder["relative_bias"].erase("table");
  }
  if (config.contains("bias")) {
    if (!config.contains("qkv_bias")) folder.erase("qkv_bias");
    if (!config.contains("out_bias")) folder.erase("out_bias");
  }
  for (const auto& [key, value] : config.items()) {
    if (value.is_null()) {
      folder.erase(key);
    } else if ((key == "rope" || key == "qk_norm" || key == "relative_bias" ||
                key == "residual_norm" || key == "input_norm" || key == "embedding") &&
               value.is_object() && folder.contains(key) && folder[key].is_object()) {
      for (const auto& [field, v] : value.items()) {
        if (v.is_null()) {
          folder[key].erase(field);
        } else {
          folder[key][field] = v;
        }
      }
    } else {
      folder[key] = value;
    }
  }
  return folder;
}

std::string hf_usage(const std::string& file, const std::string& dir) {
  return file + ": a Hugging Face config.json: run attn-run --model " + (dir.empty() ? "." : dir) +
         " --layer N (or add --layer N)";
}

std::string read_text(const std::string& path) {
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
  return std::string(bytes.begin(), bytes.end());
}

// --with-residual-norm over the config's "residual_norm": on (an object of the
// config's stays, its fields kept); with a cross-attention config, Exit::usage
// naming the flag.
void residual_norm_flag(json& root, const std::string& fname) {
  for (const char* k : {"kv_input", "key_input"})
    if (root.contains(k) && !root.at(k).is_null())
      throw Error(Exit::usage, std::string("--with-residual-norm: LayerNorm(o_proj(attention) + "
                                           "input) adds the queries' input, as self-attention "
                                           "does; ") +
                                   fname + " sets " + k + " (cross-attention)");
  if (!root.contains("residual_norm") || !root.at("residual_norm").is_object())
    root["residual_norm"] = true;
}

// Whether a config's residual_norm value asks for the norm (true or an object).
bool asks_residual_norm(const json& root) {
  if (!root.contains("residual_norm")) return false;
  const json& v = root.at("residual_norm");
  return v.is_object() || (v.is_boolean() && v.get<bool>());
}

std::string absolute_path(const std::string& p) {
  return std::filesystem::absolute(std::filesystem::path(p)).lexically_normal().string();
}

// The flags' layer: --layer N, or --decoder-layer N [--cross]; none without either.
Selection flag_selection(const ModelFlags& flags) {
  Selection s;
  s.flag = true;
  if (flags.cross && !flags.decoder_layer)
    throw Error(Exit::usage,
                "--cross: the cross-attention of a decoder layer: give "
                "--decoder-layer N with it");
  if (flags.decoder_layer && flags.layer)
    throw Error(Exit::usage,
                "--decoder-layer: cannot be combined with --layer: --layer N runs "
                "encoder layer N, --decoder-layer N the decoder's; choose one");
  if (flags.decoder_layer) {
    if (*flags.decoder_layer < 0)
      throw Error(Exit::usage, "--decoder-layer: expected an integer >= 0, found " +
                                   std::to_string(*flags.decoder_layer));
    s.layer = flags.decoder_layer;
    s.module = flags.cross ? Module::decoder_cross : Module::decoder_self;
  } else {
    s.layer = flags.layer;
  }
  return s;
}

// The config's layer: "layer", or "decoder_layer" with "cross_attention".
Selection config_selection(const json& root, const KeyName& name) {
  Selection s;
  auto index = [&](const char* key) -> std::optional<std::int64_t> {
    if (!root.contains(key)) return std::nullopt;
    const std::int64_t v = cj::get_int(root.at(key), name(key));
    if (v < 0)
      throw Error(Exit::config,
                  name(key) + ": expected an integer >= 0, found " + std::to_string(v));
    return v;
  };
  const std::optional<std::int64_t> layer = index("layer"), decoder = index("decoder_layer");
  const bool cross = root.contains("cross_attention") &&
                     cj::get_bool(root.at("cross_attention"), name("cross_attention"));
  if (layer && decoder)
    throw Error(Exit::config, name("decoder_layer") +
                                  ": cannot be combined with \"layer\" (\"layer\" is an "
                                  "encoder layer, \"decoder_layer\" the decoder's): choose one");
  if (cross && !decoder)
    throw Error(Exit::config, name("cross_attention") +
                                  ": the cross-attention of a decoder layer: give "
                                  "\"decoder_layer\" with it");
  s.layer = decoder ? decoder : layer;
  if (decoder) s.module = cross ? Module::decoder_cross : Module::decoder_self;
  return s;
}

// Whether a config's input_norm value asks for the norm (true or an object).
bool asks_input_norm(const json& root) {
  if (!root.contains("input_norm")) return false;
  const json& v = root.at("input_norm");
  return v.is_object() || (v.is_boolean() && v.get<bool>());
}

// --residual over the config's "input_norm": on (an object of the config's
// stays, its fields kept over the model's).
void input_norm_flag(json& root) {
  if (!root.contains("input_norm") || !root.at("input_norm").is_object()) root["input_norm"] = true;
}

// A config's text with --model/--layer over its own "model"/"layer".
Config config_from_text(const std::string& text, const std::string& file, const ModelFlags& flags) {
  Config c;
  c.file = file;
  c.dir = std::filesystem::path(file).parent_path().string();
  const std::string fname = display_name(c);
  json root = parse_config_json(text, fname);
  const KeyName name = [fname](const std::string& k) { return fname + ": " + k; };

  if (looks_like_hf_config(root)) {
    if (!flags.model.empty())
      throw Error(Exit::usage,
                  "--model: " + fname +
                      " is a Hugging Face config.json, which names "
                      "its own folder as the model: give --model or --config, not both");
    const Selection pick = flag_selection(flags);
    if (!pick.layer) throw Error(Exit::usage, hf_usage(fname, c.dir));
    json over = json::object();
    if (!flags.encoder_output.empty()) over["kv_input"] = absolute_path(flags.encoder_output);
    read_with_model(c, over, name, c.dir.empty() ? "." : c.dir, pick, flags.model_type,
                    flags.residual_norm, flags.input_norm, flags.tokens);
    return c;
  }
  // "model_type" beside a model picks the folder's tower (model_folder.h);
  // elsewhere it stays Hugging Face's key, which check_config_keys names.
  std::string model_type = flags.model_type;
  if (root.contains("model_type") && (root.contains("model") || !flags.model.empty())) {
    const std::string t = cj::get_string(root.at("model_type"), name("model_type"));
    if (model_type.empty()) model_type = t;
    root.erase("model_type");
  }
  check_config_keys(root, fname);

  std::string model = flags.model;
  if (model.empty() && root.contains("model"))
    model = path_value(c, root.at("model"), name("model"));
  // The layer to run: the flags' choice (--layer, or --decoder-layer [--cross])
  // replaces the config's ("layer", or "decoder_layer" [+ "cross_attention"]).
  Selection pick = flag_selection(flags);
  if (!pick.layer) pick = config_selection(root, name);
  std::optional<std::int64_t> layer = pick.layer;
  root.erase("model");
  root.erase("layer");
  root.erase("decoder_layer");
  root.erase("cross_attention");
  if (!flags.encoder_output.empty()) root["kv_input"] = absolute_path(flags.encoder_output);
  if (flags.residual_norm) residual_norm_flag(root, fname);
  if (flags.input_norm) input_norm_flag(root);

  if (!model.empty() && !layer) {
    if (!flags.model.empty())
      throw Error(Exit::usage,
                  "--layer: needed with --model and --config (the layer to run, or "
                  "--decoder-layer N for an encoder-decoder's decoder); --model DIR alone lists "
                  "the model's layers");
    throw Error(Exit::config, name("layer") +
                                  ": required with \"model\" (the layer to run, an "
                                  "integer >= 0, or \"decoder_layer\" for an encoder-decoder's "
                                  "decoder); attn-run --model DIR alone lists the model's layers");
  }
  if (model.empty() && !flags.model_type.empty())
    throw Error(Exit::usage,
                "--model-type: needs a model folder: --model DIR, or \"model\" in the config");
  if (model.empty() && layer) {
    const std::string which = pick.module == Module::layer ? "layer" : "decoder_layer";
    if (pick.flag)
      throw Error(Exit::usage,
                  "--" + std::string(pick.module == Module::layer ? "layer" : "decoder-layer") +
                      ": needs a model folder: --model DIR, or \"model\" in the "
                      "config");
    throw Error(Exit::config, name("model") + ": required with \"" + which +
                                  "\" (a Hugging Face model folder: config.json and weights)");
  }
  if (model.empty() && !flags.encoder_output.empty())
    throw Error(Exit::usage,
                "--encoder-output: needs a model folder's cross-attention: "
                "--model DIR --decoder-layer N --cross");
  if (!model.empty()) {
    read_with_model(c, root, name, model, pick, model_type, flags.residual_norm, flags.input_norm,
                    flags.tokens);
    return c;
  }
  if (flags.input_norm && !root.at("input_norm").is_object())
    throw Error(Exit::usage,
                "--residual: applies the block's own norm from a model (--model DIR or FILE.gguf "
                "--layer N); with a plain config give \"input_norm\": {\"kind\", \"eps\", "
                "\"weight\", \"bias\", \"offset\"} in " +
                    fname);
  read_config(c, root, name);
  return c;
}

}  // namespace

void read_with_model(Config& c, const json& root_in, const KeyName& config_name,
                     const std::string& model_dir, Selection pick, const std::string& model_type,
                     bool flag_residual_norm, bool flag_input_norm, bool flag_tokens) {
  const ModelFolder m = open_model_folder(model_dir, model_type);
  const std::int64_t layer = *pick.layer;
  const bool decoder = pick.module != Module::layer;
  const std::string key = decoder ? "decoder_layer" : "layer";
  auto refuse = [&](const std::string& what) -> Error {
    if (pick.flag) return Error(Exit::usage, (decoder ? "--decoder-layer: " : "--layer: ") + what);
    return Error(Exit::config, config_name(key) + ": " + what);
  };
  if (decoder && m.decoder_layers == 0)
    throw refuse(model_dir + " (model_type " + m.model_type +
                 ") is not an encoder-decoder: it has no decoder layers; run its layers with " +
                 (pick.flag ? "--layer N" : "\"layer\""));
  json root = root_in;
  // A weights_prefix that names a decoder module of the folder (the contract's
  // form: "layer" plus the module's weights_prefix) runs that module as the
  // decoder's settings say (its heads, causal self-attention, T5's decoder
  // table); its layer is the prefix's.
  ModuleRef module{layer, pick.module};
  bool named_by_prefix = false;
  if (!decoder && root.contains("weights_prefix") && root.at("weights_prefix").is_string())
    if (const std::optional<ModuleRef> named =
            decoder_module_at(m, root.at("weights_prefix").get<std::string>())) {
      module = *named;
      named_by_prefix = true;
    }
  const std::int64_t count = decoder ? m.decoder_layers : m.num_layers;
  if (!named_by_prefix && (layer < 0 || layer >= count))
    throw refuse("the model in " + model_dir + " has " + (decoder ? "decoder layers" : "layers") +
                 " 0.." + std::to_string(count - 1) + ", found " + std::to_string(layer));
  // --with-residual-norm (a config's cross-attention was refused before: residual_norm_flag).
  const bool norm_object = root.contains("residual_norm") && root.at("residual_norm").is_object();
  if (flag_residual_norm && !norm_object) root["residual_norm"] = true;
  // residual_norm: the family's LayerNorm, read only when asked (the flag,
  // true, or an object whose fields override the family's); a config's
  // object with its own prefix needs none from the family.
  std::string why;
  const std::optional<ResidualNorm> norm = residual_norm_of(m, &why);
  const bool want_norm = asks_residual_norm(root);
  if (want_norm && !norm &&
      (flag_residual_norm || !root.at("residual_norm").is_object() ||
       !root.at("residual_norm").contains("prefix"))) {
    if (flag_residual_norm) throw Error(Exit::usage, "--with-residual-norm: " + why);
    throw Error(Exit::config,
                config_name("residual_norm") + ": " + why +
                    "; give {\"eps\": ..., \"prefix\": \"<the norm's key prefix>\"} to name one");
  }
  if (want_norm && root.at("residual_norm").is_boolean()) root.erase("residual_norm");
  // input_norm: the block's pre-attention norm from the family row (or none
  // for a post-norm family), asked by --residual, true or an object whose
  // fields override the family's.
  // --tokens: layer 0's input from the family's embedding, then the block's input norm.
  if (flag_tokens && (decoder || module.layer != 0))
    throw Error(Exit::usage, "--tokens: builds layer 0's input from the embedding table; found " +
                                 std::string(decoder ? "decoder layer " : "layer ") +
                                 std::to_string(module.layer) +
                                 " (run --layer 0, or give the layer's input with --input)");
  if (flag_input_norm || flag_tokens) input_norm_flag(root);
  const bool want_input_norm = asks_input_norm(root);
  if (want_input_norm && root.at("input_norm").is_boolean()) root.erase("input_norm");
  // The weights' key names pick the prefix the file really uses.
  auto weights = std::make_shared<const StateDict>(open_model_weights(m));
  const json from = layer_config(m, module.layer, weights->keys(), want_norm && norm, module.module,
                                 want_input_norm, flag_tokens);
  const std::string folder_name =
      folder_config(model_dir) + " (layer " + std::to_string(layer) + ")";
  check_config_keys(from, folder_name);

  json folder = from;
  folder.erase("weights");  // a path beside the folder, not relative to the config
  // {"out_proj": false} over the folder: the context is the heads concatenated,
  // so the folder's out_size (o_proj's width) no longer applies.
  if (root.contains("out_proj") && root["out_proj"] == false && !root.contains("out_size"))
    folder.erase("out_size");
  const json merged = merge(std::move(folder), root);
  // The cross-attention's keys and values are the encoder's output, which only
  // the user has.
  if (module.module == Module::decoder_cross && !merged.contains("kv_input") &&
      !merged.contains("key_input")) {
    const std::string what =
        "the cross-attention of decoder layer " + std::to_string(module.layer) +
        " takes its keys and values from the encoder's output (the last encoder layer's "
        "hidden states after the encoder's final norm), (T, C) or (B, T, C)";
    if (pick.flag && decoder)
      throw Error(Exit::usage, "--cross: " + what + ": give --encoder-output FILE");
    throw Error(Exit::config, config_name(decoder ? "cross_attention" : "weights_prefix") + ": " +
                                  what + ": give \"kv_input\"");
  }
  c.model = model_dir;
  c.layer = module.layer;
  c.module = module.module == Module::layer ? "" : module_name(module.module);
  c.from_model = std::make_shared<const json>(from);
  if (norm) {
    c.residual_norm_module = norm->module;
    c.residual_norm_in_attention = norm->in_attention;
  }
  if (!root.contains("weights") && !root.contains("init")) {
    c.weights = m.weights;
    c.model_weights = std::move(weights);
  }
  const KeyName name = [&](const std::string& k) {
    const std::string top = k.substr(0, k.find_first_of(".["));
    return root.contains(top) ? config_name(k) : folder_name + ": " + k;
  };
  read_config(c, merged, name);
  // Only the config asks for a bias to be present: the folder's flags
  // describe its file (a missing bias there is the loader's to report).
  c.qkv_bias_given = c.qkv_bias && (root.contains("qkv_bias") || root.contains("bias"));
  c.out_bias_given = c.out_bias && (root.contains("out_bias") || root.contains("bias"));
}

}  // namespace config_detail

using namespace config_detail;

Config parse_config(const std::string& text, const std::string& file) {
  return config_from_text(text, file, ModelFlags{});
}

Config load_config(const std::string& path) { return load_config(path, ModelFlags{}); }

Config load_config(const std::string& path, const ModelFlags& flags) {
  if (!path.empty()) return config_from_text(read_text(path), path, flags);
  if (flags.model.empty()) {
    if (flags.decoder_layer)
      throw Error(Exit::usage,
                  "--decoder-layer: needs a model folder: --model DIR, or \"model\" in the config");
    throw Error(Exit::usage, "--config: give a config file, or --model DIR");
  }
  const Selection pick = flag_selection(flags);
  if (!pick.layer)
    throw Error(Exit::usage, "--layer: needed to run a layer of --model " + flags.model +
                                 " (--model DIR alone lists the model's layers)");
  Config c;
  c.file = folder_config(flags.model);
  c.dir = flags.model;
  json over = json::object();
  if (!flags.encoder_output.empty()) over["kv_input"] = absolute_path(flags.encoder_output);
  read_with_model(
      c, over, [&](const std::string& k) { return c.file + ": " + k; }, flags.model, pick,
      flags.model_type, flags.residual_norm, flags.input_norm, flags.tokens);
  return c;
}

ModelFlags run_model(const std::string& path, const ModelFlags& flags) {
  ModelFlags m = flags;
  m.layer.reset();
  if (path.empty() || !flags.model.empty()) return m;
  Config c;
  c.file = path;
  c.dir = std::filesystem::path(path).parent_path().string();
  const std::string fname = display_name(c);
  const json root = parse_config_json(read_text(path), fname);
  if (looks_like_hf_config(root)) {
    m.model = c.dir.empty() ? "." : c.dir;
  } else if (root.contains("model")) {
    m.model = path_value(c, root.at("model"), fname + ": model");
    if (m.model_type.empty() && root.contains("model_type"))
      m.model_type = cj::get_string(root.at("model_type"), fname + ": model_type");
  }
  return m;
}

Config load_model_config(const std::string& dir, std::int64_t layer) {
  return load_config("", ModelFlags{dir, layer, ""});
}

std::string hf_config_folder(const std::string& path) {
  const json root = parse_config_json(read_text(path), path);
  if (!looks_like_hf_config(root)) return "";
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

}  // namespace attn

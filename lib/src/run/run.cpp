// Model level: resolved config -> validated weights, input and mask.
//
// Letters: B batch, S sequence, C hidden.
#include "attn/run.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"
#include "attn/nested_array.h"
#include "attn/npy.h"
#include "attn/state_dict.h"
#include "containers/mapped_file.h"
#include "containers/npy_internal.h"
#include "containers/stored.h"
#include "run/disentangled_weights.h"
#include "run/residual_norm.h"

namespace attn {
namespace {

constexpr std::size_t kMaxJsonInputBytes = std::size_t(1) << 30;

bool looks_like_npy(const std::vector<std::uint8_t>& b) {
  return b.size() >= 6 && std::memcmp(b.data(), "\x93NUMPY", 6) == 0;
}

// T5's relative_attention_bias.weight (num_buckets, H) for relative_bias:
// the key relative_bias.table of the whole file when given (T5 keeps one
// table in block 0 of each stack), else the layer's own
// relative_attention_bias.weight (taken out of `layer`, which the layouts do
// not know). The layer's key without relative_bias is an error saying so.
Tensor relative_bias_table(const StateDict& all, StateDict& layer, const Config& cfg,
                           bool allow_nonfinite) {
  const std::string own = "relative_attention_bias.weight";
  if (!cfg.spec.relative_bias) {
    if (layer.contains(own))
      throw Error(Exit::data, cfg.weights + ": key \"" + cfg.weights_prefix + own +
                                  "\" (T5's relative position bias) found but config "
                                  "\"relative_bias\" is not set; set \"relative_bias\": {} to "
                                  "use it");
    return {};
  }
  const RelativeBiasSpec& r = *cfg.spec.relative_bias;
  const bool named = !r.table.empty();
  const StateDict& from = named ? all : layer;
  const std::string key = named ? r.table : own;
  const std::string shown = "\"" + printable(named ? key : cfg.weights_prefix + own) + "\"";
  const std::vector<std::size_t> shape = {std::size_t(r.num_buckets), std::size_t(cfg.num_heads)};
  const TensorInfo* info = from.find(key);
  if (!info) {
    // The file's table nearest the layer (longest common prefix: T5's block 0
    // of the same stack), to name in the message.
    std::string near;
    std::size_t best = 0;
    for (const std::string& k : all.keys()) {
      if (k.size() < own.size() || k.compare(k.size() - own.size(), own.size(), own) != 0) continue;
      std::size_t n = 0;
      while (n < k.size() && n < cfg.weights_prefix.size() && k[n] == cfg.weights_prefix[n]) ++n;
      if (near.empty() || n > best) near = k, best = n;
    }
    throw Error(Exit::data,
                cfg.weights + ": missing key " + shown + " (relative_bias's table, shape " +
                    shape_str(shape) + ")" +
                    (named || near.empty()
                         ? std::string()
                         : ": set relative_bias.table to the table's full key; the file has \"" +
                               printable(near) + "\" (T5 keeps one in block 0 of each stack)"));
  }
  if (info->shape != shape)
    throw Error(Exit::data,
                cfg.weights + ": key " + shown + ": expected shape " + shape_str(shape) +
                    " (relative_bias.num_buckets, num_heads), found " + shape_str(info->shape));
  Tensor t = from.read_f32(key, allow_nonfinite);
  layer.erase(own);  // the layer's own copy, when the table is named elsewhere too
  return t;
}

}  // namespace

std::size_t npy_input_length(const std::string& path,
                             const std::vector<std::uint8_t>& stdin_bytes) {
  // The header lies in its first kMaxNpyHeaderBytes + 12 bytes. Only a
  // regular file is peeked at: a pipe's bytes read here would be lost to the
  // real read.
  constexpr std::size_t kHead = 16384;
  std::vector<std::uint8_t> head;
  if (path == "-") {
    head.assign(stdin_bytes.begin(), stdin_bytes.begin() + std::min(kHead, stdin_bytes.size()));
  } else {
    struct stat st {};
    if (path.empty() || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    std::ifstream f(path, std::ios::binary);
    head.resize(kHead);
    f.read(reinterpret_cast<char*>(head.data()), std::streamsize(kHead));
    head.resize(std::size_t(std::max<std::streamsize>(0, f.gcount())));
  }
  try {
    const NpyHeader h = parse_npy_header_only(head.data(), head.size(), path);
    if (h.shape.size() == 2 || h.shape.size() == 3) return h.shape[h.shape.size() - 2];
  } catch (const Error&) {
  }
  return 0;
}

Tensor parse_input_bytes(const std::vector<std::uint8_t>& bytes, const std::string& name,
                         bool allow_nonfinite) {
  if (looks_like_npy(bytes))
    return to_float32(parse_npy(bytes.data(), bytes.size(), name), name, allow_nonfinite);
  std::size_t i = 0;
  while (i < bytes.size() && std::isspace(bytes[i])) ++i;
  if (i == bytes.size())
    throw Error(Exit::data, name + ": empty input; expected a .npy stream or a JSON nested array");
  if (bytes[i] != '[')
    throw Error(Exit::data,
                name + ": expected a .npy stream or a JSON nested array, found neither");
  if (bytes.size() > kMaxJsonInputBytes)
    throw Error(Exit::data, name + ": JSON input larger than 1 GiB; use .npy");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(bytes.begin(), bytes.end());
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(Exit::data, name + ": malformed JSON: " + e.what());
  }
  return tensor_from_json(j, name, Exit::data);
}

Tensor read_input_file(const std::string& path, bool allow_nonfinite) {
  // A .npy goes from the mapped file straight into the tensor in one
  // conversion; JSON is read whole (bounded) and parsed. Either is judged by
  // its first bytes before the file is mapped: a .npy header checked against
  // the file's size, or the '[' a JSON nested array starts with.
  const auto check = [&](const detail::FileEnds& e) {
    const bool npy_name = path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    std::size_t i = 0;
    while (i < e.head_n && std::isspace(e.head[i])) ++i;
    if ((e.head_n >= 6 && std::memcmp(e.head, "\x93NUMPY", 6) == 0) ||
        (npy_name && i < e.head_n && e.head[i] != '[')) {
      parse_npy_header_prefix(e.head, e.head_n, e.size, path);
      return;
    }
    if (i < e.head_n && e.head[i] != '[')
      throw Error(Exit::data,
                  path + ": expected a .npy file or a JSON nested array, found neither" +
                      (e.head[i] == 0 ? std::string(" (it starts with byte 0)") : std::string()));
    if (e.size > kMaxJsonInputBytes)
      throw Error(Exit::data, path + ": JSON input larger than 1 GiB; use .npy");
  };
  const auto file = detail::MappedFile::open(path, check);
  if (file->size() >= 6 && std::memcmp(file->data(), "\x93NUMPY", 6) == 0)
    return detail::read_stored_f32(*detail::open_npy(file), allow_nonfinite, path);
  if (file->size() > kMaxJsonInputBytes)
    throw Error(Exit::data, path + ": JSON input larger than 1 GiB; use .npy");
  // The text copied out of the mapping: a truncation meanwhile is the error.
  std::vector<std::uint8_t> text = detail::reading(*file, path, [&] {
    return std::vector<std::uint8_t>(file->data(), file->data() + file->size());
  });
  return parse_input_bytes(text, path, allow_nonfinite);
}

Tensor batch_input(Tensor t, const Config& cfg, const std::string& name, bool* batched) {
  if (t.ndim() != 2 && t.ndim() != 3)
    throw Error(Exit::data, name +
                                ": expected token embeddings of shape (S, C) or (B, S, C), found " +
                                shape_str(t.shape) +
                                (t.ndim() == 4 ? " (a stack of each layer's hidden states, "
                                                 "(layers, B, S, C) as .npy, is read with a "
                                                 "model's --layer N, all, A-B or a list)"
                                               : ""));
  *batched = t.ndim() == 3;
  const std::string as_found = shape_str(t.shape);  // messages give the file's own shape
  if (!*batched) t.shape.insert(t.shape.begin(), 1);
  const std::size_t B = t.shape[0], S = t.shape[1], C = t.shape[2];
  if (C != std::size_t(cfg.hidden_size))
    throw Error(Exit::data, name + ": expected last dimension C = hidden_size = " +
                                std::to_string(cfg.hidden_size) + ", found shape " + as_found);
  if (B == 0 || S == 0)
    throw Error(Exit::data, name + ": empty input " + as_found +
                                "; need at least one sequence of at least one token");
  if (cfg.context_size && S > std::size_t(*cfg.context_size))
    throw Error(Exit::data, name + ": sequence length " + std::to_string(S) +
                                " exceeds context_size " + std::to_string(*cfg.context_size));
  return t;
}

std::optional<Mask> read_padding_mask(const Config& cfg, const std::optional<std::string>& flag,
                                      std::string* name) {
  if (flag) {
    *name = *flag;
    return to_mask(read_npy(*flag), *flag);
  }
  if (cfg.padding_mask_inline) {
    *name = "padding_mask";
    return cfg.padding_mask_inline;
  }
  if (!cfg.padding_mask_path.empty()) {
    *name = cfg.padding_mask_path;
    return to_mask(read_npy(cfg.padding_mask_path), cfg.padding_mask_path);
  }
  return std::nullopt;
}

Mask batch_mask(const Mask& m, std::size_t B, std::size_t S, const std::string& name,
                const std::string& input) {
  if (m.shape.size() == 1 && m.shape[0] == S) {
    Mask out{{B, S}, {}};
    for (std::size_t b = 0; b < B; ++b)
      out.data.insert(out.data.end(), m.data.begin(), m.data.end());
    return out;
  }
  if (m.shape.size() == 2 && m.shape[0] == B && m.shape[1] == S) return m;
  throw Error(Exit::data, name + ": expected padding mask of shape (" + std::to_string(S) +
                              ",) or (" + std::to_string(B) + ", " + std::to_string(S) + ")" +
                              (input.empty() ? "" : " to fit " + input) + ", found " +
                              shape_str(m.shape));
}

AttentionSpec attention_spec(const Config& cfg) { return cfg.spec; }

Weights load_model_weights(const Config& cfg, bool allow_nonfinite, Layout* layout, bool* detected,
                           std::string* source) {
  if (!cfg.weights.empty()) {
    // The layer's keys (prefix stripped, buffers dropped), then its layout.
    // A model folder's weights were opened once already, for their key names.
    const bool reuse = cfg.model_weights && cfg.model_weights->source() == cfg.weights;
    const StateDict all = reuse ? *cfg.model_weights : open_state_dict(cfg.weights);
    if (!cfg.weights_prefix.empty() && all.select(cfg.weights_prefix).empty()) {
      std::string some;
      for (std::size_t i = 0; i < all.size() && i < 3; ++i)
        some += (i ? ", \"" : "\"") + all.keys()[i] + "\"";
      throw Error(Exit::data, cfg.weights + ": no key starts with weights_prefix \"" +
                                  cfg.weights_prefix + "\" (the file's keys are " + some +
                                  (all.size() > 3 ? ", ..." : "") + ")");
    }
    // The layer's keys, the family's tensor names renamed to its layout's,
    // buffers and neighbours dropped.
    StateDict layer = select_keys(all.select(cfg.weights_prefix).renamed(cfg.weights_rename), "");
    Tensor table = relative_bias_table(all, layer, cfg, allow_nonfinite);
    Weights disentangled;  // DeBERTa's tensors, taken out of the layer before its layout
    load_disentangled(all, layer, cfg, allow_nonfinite, disentangled);
    // mla's tensors have their own names (layer/mla_weights.cpp): reported as proj.
    const Layout l = cfg.layout ? *cfg.layout
                     : cfg.mla  ? Layout::proj
                                : detect_layout(layer, cfg.weights);
    *layout = l;
    *detected = !cfg.layout.has_value();
    *source = cfg.weights;
    Weights w = load_weights(layer, cfg, l, cfg.weights, allow_nonfinite);
    w.relative_bias = std::move(table);
    w.rel_embeddings = std::move(disentangled.rel_embeddings);
    w.pos_key_w = std::move(disentangled.pos_key_w);
    w.pos_key_b = std::move(disentangled.pos_key_b);
    w.pos_query_w = std::move(disentangled.pos_query_w);
    w.pos_query_b = std::move(disentangled.pos_query_b);
    load_residual_norm(all, cfg, allow_nonfinite, w);
    load_input_norm(all, cfg, allow_nonfinite, w);
    return w;
  }
  if (cfg.init_seed) {
    if (!cfg.layout) throw Error(Exit::config, "layout: required with \"init\"");
    if (cfg.spec.disentangled)
      throw Error(Exit::config,
                  "disentangled: its relative embeddings come from \"weights\"; \"init\" "
                  "follows the tutorial modules, which have none");
    if (cfg.spec.relative_bias)
      throw Error(Exit::config,
                  "relative_bias: its table (relative_attention_bias.weight) comes from "
                  "\"weights\"; \"init\" follows the tutorial modules, which have none");
    *layout = *cfg.layout;
    *detected = false;
    *source = "init(seed=" + std::to_string(*cfg.init_seed) + ")";
    return init_weights(cfg, *cfg.layout, *cfg.init_seed);
  }
  throw Error(Exit::config,
              "weights: no weights given; set \"weights\" (a folder of .npy, an .npz or a "
              ".safetensors) or \"init\": {\"seed\": N} in the config, or pass --weights");
}

LoadedRun load_run(const Config& cfg, const LoadOptions& opt) {
  Weights weights;
  Layout layout = Layout::fused;
  bool detected = false;
  std::string weights_source;
  weights = load_model_weights(cfg, opt.allow_nonfinite, &layout, &detected, &weights_source);

  // Input: the flag wins over the config (CONTRACT.md "Invocation").
  Tensor x;
  std::string source;
  std::optional<TokenIds> tokens;
  if (opt.tokens) {
    // The shape first: the config's positions, read with the other inputs,
    // number the learned positions too.
    if (!cfg.batch_first)
      throw Error(Exit::usage,
                  "--tokens: the ids are (B, S), batch first; the config sets batch_first false");
    tokens = read_token_ids(*opt.tokens);
    x = Tensor({tokens->shape[0], tokens->shape[1], std::size_t(cfg.hidden_size)});
    if (!tokens->batched) x.shape.erase(x.shape.begin());
    source = tokens->source;
  } else if (opt.input_path && *opt.input_path == "-") {
    source = "-";
    x = parse_input_bytes(opt.stdin_bytes, "-", opt.allow_nonfinite);
  } else if (opt.input_path) {
    source = *opt.input_path;
    x = read_input_file(*opt.input_path, opt.allow_nonfinite);
  } else if (cfg.input_inline) {
    source = "config";
    x = *cfg.input_inline;
  } else if (!cfg.input_path.empty()) {
    source = cfg.input_path;
    x = read_input_file(cfg.input_path, opt.allow_nonfinite);
  } else {
    // A --model run has no config to set it in: the flag is missing (usage).
    const std::string folder_json =
        cfg.model + (!cfg.model.empty() && cfg.model.back() == '/' ? "" : "/") + "config.json";
    // (A GGUF model's "config" is the .gguf file itself.)
    if (cfg.file.empty() ||
        (!cfg.model.empty() && (cfg.file == folder_json || cfg.file == cfg.model)))
      throw Error(Exit::usage,
                  "--input: needed with --model: the layer's input hidden states, (S, C) or "
                  "(B, S, C) as .npy or JSON (- = stdin), C = hidden_size = " +
                      std::to_string(cfg.hidden_size));
    throw Error(Exit::config, "input: no input given; set \"input\" in the config or pass --input");
  }
  LoadedRun r;
  static_cast<RunInputs&>(r) = load_inputs(cfg, opt, std::move(x), source);
  if (tokens)  // into the input's (B, S, C) rows: load_inputs batched the shape
    embed_tokens_into(cfg, *tokens, opt.allow_nonfinite,
                      cfg.positions.given() ? &*r.positions : nullptr, r.x, opt.threads);
  r.tokens = std::move(tokens);
  r.weights = std::move(weights);
  r.layout = layout;
  r.layout_detected = detected;
  r.weights_source = std::move(weights_source);
  return r;
}

}  // namespace attn

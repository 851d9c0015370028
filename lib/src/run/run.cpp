// Model level: resolved config -> validated weights, input and mask.
//
// Letters: B batch, S sequence, C hidden.
#include "attn/run.h"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/nested_array.h"
#include "attn/npy.h"
#include "attn/positions.h"
#include "attn/state_dict.h"
#include "containers/mapped_file.h"
#include "containers/stored.h"

namespace attn {
namespace {

constexpr std::size_t kMaxJsonInputBytes = std::size_t(1) << 30;

bool looks_like_npy(const std::vector<std::uint8_t>& b) {
  return b.size() >= 6 && std::memcmp(b.data(), "\x93NUMPY", 6) == 0;
}

}  // namespace

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
  // conversion; JSON is read whole (bounded) and parsed.
  const auto file = detail::MappedFile::open(path);
  if (file->size() >= 6 && std::memcmp(file->data(), "\x93NUMPY", 6) == 0)
    return detail::read_stored_f32(*detail::open_npy(file), allow_nonfinite, path);
  if (file->size() > kMaxJsonInputBytes)
    throw Error(Exit::data, path + ": JSON input larger than 1 GiB; use .npy");
  return parse_input_bytes(std::vector<std::uint8_t>(file->data(), file->data() + file->size()),
                           path, allow_nonfinite);
}

Tensor batch_input(Tensor t, const Config& cfg, const std::string& name, bool* batched) {
  if (t.ndim() != 2 && t.ndim() != 3)
    throw Error(Exit::data, name +
                                ": expected token embeddings of shape (S, C) or (B, S, C), found " +
                                shape_str(t.shape));
  *batched = t.ndim() == 3;
  if (!*batched) t.shape.insert(t.shape.begin(), 1);
  const std::size_t B = t.shape[0], S = t.shape[1], C = t.shape[2];
  if (C != std::size_t(cfg.hidden_size))
    throw Error(Exit::data, name + ": expected last dimension C = hidden_size = " +
                                std::to_string(cfg.hidden_size) + ", found shape " +
                                shape_str(t.shape));
  if (B == 0 || S == 0)
    throw Error(Exit::data, name + ": empty input " + shape_str(t.shape) +
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

AttentionSpec attention_spec(const Config& cfg) {
  AttentionSpec s;
  s.scale = static_cast<float>(cfg.scale);
  s.causal = cfg.causal;
  s.rope = cfg.rope;
  if (s.rope && s.rope->rotary_dim == 0) s.rope->rotary_dim = cfg.head_size;
  if (cfg.alibi) {
    const std::vector<double> slopes =
        cfg.alibi->slopes.empty() ? alibi_slopes(std::size_t(cfg.num_heads), cfg.alibi->max_bias)
                                  : cfg.alibi->slopes;
    for (double v : slopes) s.alibi_slopes.push_back(static_cast<float>(v));
  }
  s.sliding_window = cfg.sliding_window ? std::size_t(*cfg.sliding_window) : 0;
  s.softcap = cfg.softcap ? static_cast<float>(*cfg.softcap) : 0.0f;
  s.qk_norm = cfg.qk_norm;
  s.sinks = cfg.sinks;
  s.add_zero_attn = cfg.add_zero_attn;
  return s;
}

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
    const StateDict layer =
        select_keys(all.select(cfg.weights_prefix).renamed(cfg.weights_rename), "");
    // mla's tensors have their own names (layer/mla_weights.cpp): reported as proj.
    const Layout l = cfg.layout ? *cfg.layout
                     : cfg.mla  ? Layout::proj
                                : detect_layout(layer, cfg.weights);
    *layout = l;
    *detected = !cfg.layout.has_value();
    *source = cfg.weights;
    return load_weights(layer, cfg, l, cfg.weights, allow_nonfinite);
  }
  if (cfg.init_seed) {
    if (!cfg.layout) throw Error(Exit::config, "layout: required with \"init\"");
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
  if (opt.input_path && *opt.input_path == "-") {
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
    throw Error(Exit::config, "input: no input given; set \"input\" in the config or pass --input");
  }
  LoadedRun r;
  static_cast<RunInputs&>(r) = load_inputs(cfg, opt, std::move(x), source);
  r.weights = std::move(weights);
  r.layout = layout;
  r.layout_detected = detected;
  r.weights_source = std::move(weights_source);
  return r;
}

}  // namespace attn

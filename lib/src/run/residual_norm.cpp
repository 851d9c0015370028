// The norms' tensors (run/residual_norm.h): residual_norm's (BertSelfOutput's
// output.LayerNorm.weight and .bias) and input_norm's (the block's
// pre-attention norm), (C) each, as stored beside the layer.
#include "run/residual_norm.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "attn/error.h"
#include "attn/escape.h"

namespace attn {
namespace {

// The prefixes of the file's LayerNorm-like weights that share the longest
// start with `key` (the layer's own norms first), at most three, for a message.
std::string nearest_norms(const StateDict& all, const std::string& key) {
  std::vector<std::pair<std::size_t, std::string>> found;
  for (const std::string& k : all.keys()) {
    const auto ends = [&](const std::string& tail) {
      return k.size() >= tail.size() && k.compare(k.size() - tail.size(), tail.size(), tail) == 0;
    };
    const bool norm = ends("LayerNorm.weight") || ends("layer_norm.weight") ||
                      ends("layernorm.weight") || ends("norm.weight") || ends("ln_1.weight") ||
                      ends("norm1.weight") || ends("norm_1.weight") || ends("ln_attn.weight");
    if (!norm) continue;
    std::size_t n = 0;
    while (n < k.size() && n < key.size() && k[n] == key[n]) ++n;
    found.emplace_back(n, k.substr(0, k.size() - 6));  // the prefix: without "weight"
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string s;
  for (std::size_t i = 0; i < found.size() && i < 3; ++i)
    s += (i ? ", \"" : "\"") + printable(found[i].second) + "\"";
  return s;
}

}  // namespace

void load_residual_norm(const StateDict& all, const Config& cfg, bool allow_nonfinite, Weights& w) {
  if (!cfg.spec.residual_norm) return;
  const std::string& prefix = cfg.spec.residual_norm->prefix;
  const std::vector<std::size_t> shape = {std::size_t(cfg.hidden_size)};
  const std::string weight = prefix + "weight", bias = prefix + "bias";
  const TensorInfo* info = all.find(weight);
  if (!info) {
    const std::string near = nearest_norms(all, weight);
    throw Error(Exit::data, cfg.weights + ": missing key \"" + printable(weight) +
                                "\" (residual_norm's LayerNorm weight, shape " + shape_str(shape) +
                                ")" +
                                (near.empty() ? std::string("; the file has no LayerNorm")
                                              : "; set residual_norm.prefix to the norm's key "
                                                "prefix (the file has " +
                                                    near + ")"));
  }
  for (const std::string& key : {weight, bias}) {
    const TensorInfo* t = all.find(key);
    if (t && t->shape != shape)
      throw Error(Exit::data, cfg.weights + ": key \"" + printable(key) + "\": expected shape " +
                                  shape_str(shape) +
                                  " (residual_norm's LayerNorm over hidden_size), found " +
                                  shape_str(t->shape));
  }
  w.residual_norm_weight = all.read_f32(weight, allow_nonfinite);
  w.residual_norm_weight.shape = shape;
  if (all.find(bias)) {
    w.residual_norm_bias = all.read_f32(bias, allow_nonfinite);
    w.residual_norm_bias.shape = shape;
  }
}

void load_input_norm(const StateDict& all, const Config& cfg, bool allow_nonfinite, Weights& w) {
  if (!cfg.spec.input_norm || cfg.spec.input_norm->kind == InputNormKind::none) return;
  const InputNormSpec& n = *cfg.spec.input_norm;
  const std::vector<std::size_t> shape = {std::size_t(cfg.hidden_size)};
  const char* what = n.kind == InputNormKind::rms ? "RMSNorm" : "LayerNorm";
  if (!all.find(n.weight)) {
    const std::string near = nearest_norms(all, n.weight);
    throw Error(Exit::data, cfg.weights + ": missing key \"" + printable(n.weight) +
                                "\" (input_norm's " + what + " weight, shape " + shape_str(shape) +
                                ")" +
                                (near.empty() ? std::string("; the file has no norm")
                                              : "; set input_norm.weight to the norm's key (the "
                                                "file has " +
                                                    near + ")"));
  }
  if (!n.bias.empty() && !all.find(n.bias))
    throw Error(Exit::data, cfg.weights + ": missing key \"" + printable(n.bias) +
                                "\" (input_norm's LayerNorm bias, shape " + shape_str(shape) + ")");
  for (const std::string& key : {n.weight, n.bias}) {
    const TensorInfo* t = key.empty() ? nullptr : all.find(key);
    if (t && t->shape != shape)
      throw Error(Exit::data, cfg.weights + ": key \"" + printable(key) + "\": expected shape " +
                                  shape_str(shape) + " (input_norm's " + what +
                                  " over hidden_size), found " + shape_str(t->shape));
  }
  w.input_norm_weight = all.read_f32(n.weight, allow_nonfinite);
  w.input_norm_weight.shape = shape;
  if (!n.bias.empty()) {
    w.input_norm_bias = all.read_f32(n.bias, allow_nonfinite);
    w.input_norm_bias.shape = shape;
  }
}

}  // namespace attn

// The JSON config of CONTRACT.md ("Config"): parsing and checking the keys
// (the table of keys, config/keys.cpp, reads them), the derived sizes and
// defaults (resolve_config) and the resolved config for run.json.
// Sizes follow the tutorial modules: Warner's SingleHeadAttention uses a head
// of hidden_size//4; Raschka's MultiHeadAttention splits d_out into num_heads
// heads of d_out // num_heads (and asserts divisibility).
// The score keys' checks live in config/scores.cpp (rope.cpp, sources.cpp),
// the array keys in config/arrays.cpp, model folders in config/model.cpp.
#include "attn/config.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/geometry.h"
#include "attn/layout.h"
#include "config/internal.h"
#include "config/json.h"
#include "family/hf_vocab.h"

namespace attn {
namespace config_detail {
namespace {

namespace cj = config_json;

void check_size(const Config& c, const char* key, std::int64_t v, std::int64_t max) {
  if (v < 1 || v > max)
    fail(c, key,
         "expected an integer in 1.." + std::to_string(max) + ", found " + std::to_string(v));
}

// Layouts fix some sizes: their tensors cannot hold another shape
// (geometry.h's fit rule, shared with loading, init and export).
void check_layout(const Config& c) {
  if (!c.layout) return;
  // {"out_proj": false} over a model folder drops the layer's output
  // projection at load (layer/weights.cpp): the layout still holds it.
  Geometry g = geometry_of(c);
  g.out_proj = g.out_proj || (c.from_model && layout_has_out_proj(*c.layout));
  const std::string problem = layout_fit_problem(g, *c.layout);
  if (problem.empty()) return;
  if (!layout_has_out_proj(*c.layout) && c.out_proj)
    fail(c, "out_proj", problem + "; set \"out_proj\": false");
  if (problem.find("output projection") != std::string::npos)
    fail(c, "out_proj", problem + "; found out_proj false");
  fail(c, "layout", problem);
}

}  // namespace

std::string display_name(const Config& c) { return c.file.empty() ? "config" : c.file; }

[[noreturn]] void fail(const Config& c, const std::string& key, const std::string& what) {
  throw Error(Exit::config, display_name(c) + ": " + key + ": " + what);
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

}  // namespace config_detail

using namespace config_detail;

std::string kind_name(Kind k) {
  return k == Kind::single ? "single" : k == Kind::multi ? "multi" : "causal";
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
    if (c.causal_given && !c.spec.causal)
      fail(c, "causal",
           "\"causal\" attention always masks future keys, found causal false "
           "(use \"multi\" without a mask)");
    c.spec.causal = true;
  }
  if (c.context_size) check_size(c, "context_size", *c.context_size, kMaxContext);

  double& scale = c.spec.scale;
  if (c.scale_given) {
    if (!(scale > 0.0) || !std::isfinite(static_cast<float>(scale)))
      fail(
          c, "scale",
          "expected a number > 0 that float32 holds (at most 3.4e38), found " + json(scale).dump());
  } else {
    // DeBERTa: scores / sqrt(D * (1 + terms)) (DisentangledSelfAttention's scale_factor).
    const double factor = c.spec.disentangled ? 1.0 + c.spec.disentangled->terms() : 1.0;
    scale = c.mla ? mla_scale(c) : 1.0 / std::sqrt(static_cast<double>(c.head_size) * factor);
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
  resolve_input_norm(c);
  check_layout(c);
  if (c.init_seed && c.layout) {
    const std::string problem = layout_init_problem(geometry_of(c), *c.layout);
    if (!problem.empty()) fail(c, "init", problem);
  }
  check_inline(c);
}

nlohmann::json config_to_json(const Config& c) { return keys_to_json(c); }

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
  g.gate = cfg.spec.gate;
  if (cfg.mla)
    g.mla_latent = static_cast<std::size_t>(cfg.mla->q_lora_rank + cfg.mla->kv_lora_rank +
                                            cfg.mla->qk_rope_head_dim);
  return g;
}

}  // namespace attn

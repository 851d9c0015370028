// config.json of each supported model_type to attn-run config keys for one
// layer (model_folder.h). One table row per family; each names where that
// family keeps its sizes, positions and per-layer pattern, as the family's
// modeling_<type>.py and configuration_<type>.py in transformers read them.
#include "attn/model_folder.h"

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include "attn/error.h"

namespace attn {

namespace {

using nlohmann::json;

bool has(const json& j, const char* k) { return j.is_object() && j.contains(k) && !j[k].is_null(); }

// The first of `keys` that the config sets (families spell sizes differently).
const json* first(const json& hf, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (has(hf, k)) return &hf[k];
  return nullptr;
}

std::int64_t need_int(const json& hf, std::initializer_list<const char*> keys,
                      const std::string& file) {
  const json* v = first(hf, keys);
  if (!v || !v->is_number_integer())
    throw Error(Exit::config,
                file + ": \"" + std::string(*keys.begin()) + "\" (an integer) is missing");
  return v->get<std::int64_t>();
}

bool flag(const json& hf, const char* key, bool fallback) {
  return has(hf, key) && hf[key].is_boolean() ? hf[key].get<bool>() : fallback;
}

double number(const json& hf, const char* key, double fallback) {
  return has(hf, key) && hf[key].is_number() ? hf[key].get<double>() : fallback;
}

// What a family's row needs to know while it maps one layer.
struct Ctx {
  const json& hf;
  std::int64_t layer;
  std::string file;  // DIR/config.json, for messages
  std::int64_t C, H, Hkv, D;
  json out;
};

// The layer's type from `layer_types` when the config lists them.
std::string listed_layer_type(const Ctx& c) {
  if (!has(c.hf, "layer_types") || !c.hf["layer_types"].is_array()) return "";
  const json& t = c.hf["layer_types"];
  if (c.layer >= std::int64_t(t.size()) || !t[std::size_t(c.layer)].is_string()) return "";
  return t[std::size_t(c.layer)].get<std::string>();
}

// sliding_window on this layer when `sliding` says the layer slides.
void window(Ctx& c, bool sliding) {
  const std::string listed = listed_layer_type(c);
  if (!listed.empty()) sliding = listed == "sliding_attention";
  if (sliding && has(c.hf, "sliding_window") && c.hf["sliding_window"].is_number_integer())
    c.out["sliding_window"] = c.hf["sliding_window"];
}

// The rope object from rope_theta / rope_scaling, or transformers v5's
// rope_parameters (flat, or per layer type).
void rope(Ctx& c, double default_theta, double rotary_fraction,
          const std::string& layer_type = "full_attention") {
  json params = json::object();
  if (has(c.hf, "rope_parameters") && c.hf["rope_parameters"].is_object()) {
    params = c.hf["rope_parameters"];
    if (!params.contains("rope_theta") && params.contains(layer_type)) params = params[layer_type];
  }
  double theta = number(params, "rope_theta", number(c.hf, "rope_theta", default_theta));
  json scaling = nullptr;
  if (params.contains("rope_type")) {
    scaling = params;
    scaling.erase("rope_theta");
    scaling.erase("partial_rotary_factor");
  } else if (has(c.hf, "rope_scaling") && c.hf["rope_scaling"].is_object()) {
    scaling = c.hf["rope_scaling"];
  }
  if (scaling.is_object()) {
    const std::string type =
        scaling.value("rope_type", scaling.value("type", std::string("default")));
    if (type == "default") scaling = nullptr;
  }
  const double fraction = number(params, "partial_rotary_factor", rotary_fraction);
  json r = {
      {"theta", theta}, {"rotary_dim", std::int64_t(double(c.D) * fraction)}, {"style", "half"}};
  if (has(c.hf, "max_position_embeddings"))
    r["max_position_embeddings"] = c.hf["max_position_embeddings"];
  if (scaling.is_object()) {
    // Phi-3 keeps original_max_position_embeddings beside rope_scaling.
    if (!scaling.contains("original_max_position_embeddings") &&
        has(c.hf, "original_max_position_embeddings"))
      scaling["original_max_position_embeddings"] = c.hf["original_max_position_embeddings"];
    r["scaling"] = scaling;
  }
  c.out["rope"] = r;
}

void decoder(Ctx& c, const char* layout, bool bias) {
  c.out["attention"] = "causal";
  c.out["layout"] = layout;
  c.out["qkv_bias"] = bias;
  c.out["out_bias"] = bias;
}

void qk_norm(Ctx& c, const char* scope, int offset) {
  c.out["qk_norm"] = {
      {"eps", number(c.hf, "rms_norm_eps", 1e-6)}, {"scope", scope}, {"weight_offset", offset}};
}

// ---- the families ----------------------------------------------------------

void llama(Ctx& c) {  // q/k/v/o_proj, rope; LlamaAttention has no window (sliding_window unread)
  decoder(c, "proj", flag(c.hf, "attention_bias", false));
  rope(c, 10000.0, 1.0);
}

void mistral(Ctx& c) {  // mistral, mixtral: llama's attention with the window on every layer
  llama(c);
  window(c, true);
}

void qwen2(Ctx& c) {  // q/k/v bias, no o bias; window from max_window_layers up
  decoder(c, "proj", true);
  c.out["out_bias"] = false;
  rope(c, 10000.0, 1.0);
  window(c, flag(c.hf, "use_sliding_window", false) &&
                c.layer >= std::int64_t(number(c.hf, "max_window_layers", 0)));
}

void qwen3(Ctx& c) {
  decoder(c, "proj", flag(c.hf, "attention_bias", false));
  qk_norm(c, "head", 0);
  rope(c, 10000.0, 1.0);
  window(c, flag(c.hf, "use_sliding_window", false) &&
                c.layer >= std::int64_t(number(c.hf, "max_window_layers", 0)));
}

void gemma(Ctx& c) {
  decoder(c, "proj", flag(c.hf, "attention_bias", false));
  rope(c, 10000.0, 1.0);
}

void gemma2(Ctx& c) {  // sliding on even layers, softcap, query_pre_attn_scalar
  decoder(c, "proj", flag(c.hf, "attention_bias", false));
  rope(c, 10000.0, 1.0);
  if (has(c.hf, "query_pre_attn_scalar"))
    c.out["scale"] = 1.0 / std::sqrt(c.hf["query_pre_attn_scalar"].get<double>());
  if (has(c.hf, "attn_logit_softcapping")) c.out["softcap"] = c.hf["attn_logit_softcapping"];
  window(c, c.layer % 2 == 0);
}

void gemma3(Ctx& c) {  // qk_norm (1 + w), 5 local : 1 global, local rope base
  decoder(c, "proj", flag(c.hf, "attention_bias", false));
  qk_norm(c, "head", 1);
  if (has(c.hf, "query_pre_attn_scalar"))
    c.out["scale"] = 1.0 / std::sqrt(c.hf["query_pre_attn_scalar"].get<double>());
  if (has(c.hf, "attn_logit_softcapping")) c.out["softcap"] = c.hf["attn_logit_softcapping"];
  const std::int64_t pattern = std::int64_t(number(c.hf, "sliding_window_pattern", 6));
  bool sliding = pattern > 0 && (c.layer + 1) % pattern != 0;
  const std::string listed = listed_layer_type(c);
  if (!listed.empty()) sliding = listed == "sliding_attention";
  window(c, sliding);
  if (sliding) {
    // Local layers: transformers v5's rope_parameters["sliding_attention"] as
    // given; before v5, rope_local_base_freq and no scaling (rope_scaling is
    // for the global layers only).
    rope(c, 10000.0, 1.0, "sliding_attention");
    const json* p = has(c.hf, "rope_parameters") ? &c.hf["rope_parameters"] : nullptr;
    if (!p || !p->is_object() || !p->contains("sliding_attention")) {
      c.out["rope"]["theta"] = number(c.hf, "rope_local_base_freq", 10000.0);
      c.out["rope"].erase("scaling");
    }
  } else {
    rope(c, 1000000.0, 1.0);
  }
}

void phi3(Ctx& c) {  // fused qkv_proj, partial rotary, longrope
  decoder(c, "fused", false);
  rope(c, 10000.0, number(c.hf, "partial_rotary_factor", 1.0));
  // Phi3Config._rope_scaling_adjustment: the early "su" (and "yarn") names mean longrope.
  json& r = c.out["rope"];
  if (r.contains("scaling") && r["scaling"].contains("type") && r["scaling"]["type"].is_string()) {
    const std::string type = r["scaling"]["type"].get<std::string>();
    if (type == "su" || type == "yarn") r["scaling"]["type"] = "longrope";
  }
  window(c, true);
}

void gpt_neox(Ctx& c) {
  decoder(c, "neox", flag(c.hf, "attention_bias", true));
  const double pct = number(c.hf, "rotary_pct", number(c.hf, "partial_rotary_factor", 0.25));
  rope(c, number(c.hf, "rotary_emb_base", 10000.0), pct);
}

void falcon(Ctx& c) {
  const bool new_arch = flag(c.hf, "new_decoder_architecture", false);
  const bool multi_query = flag(c.hf, "multi_query", true);
  // Without the new architecture, multi-query is one KV group; otherwise each
  // head holds its own [q, k, v], which is the neox layout.
  decoder(c, new_arch || multi_query ? "falcon" : "neox", flag(c.hf, "bias", false));
  if (!new_arch) c.out["num_kv_heads"] = multi_query ? 1 : c.H;
  if (flag(c.hf, "alibi", false)) {
    c.out["alibi"] = true;
  } else {
    rope(c, 10000.0, 1.0);
  }
}

void bloom(Ctx& c) {
  decoder(c, "neox", true);
  c.out["alibi"] = true;
}

void mpt(Ctx& c) {
  const json a = has(c.hf, "attn_config") ? c.hf["attn_config"] : json::object();
  for (const char* unsupported : {"clip_qkv", "qk_ln", "rope"})
    if (has(a, unsupported) && a[unsupported] != false)
      throw Error(Exit::config,
                  c.file + ": attn_config." + unsupported + " is not supported by attn-run");
  decoder(c, "fused", !flag(c.hf, "no_bias", true));
  if (has(a, "kv_n_heads")) c.out["num_kv_heads"] = a["kv_n_heads"];
  if (has(a, "softmax_scale")) c.out["scale"] = a["softmax_scale"];
  // Multi-query keeps one K and one V head (Mosaic's MultiQueryAttention); GQA names kv_n_heads.
  if (a.value("attn_type", std::string()) == "multiquery_attention") c.out["num_kv_heads"] = 1;
  // MptAttentionConfig's alibi defaults to true (modeling_mpt always adds the bias).
  if (flag(a, "alibi", true)) c.out["alibi"] = {{"max_bias", number(a, "alibi_bias_max", 8.0)}};
}

void opt(Ctx& c) { decoder(c, "proj", flag(c.hf, "enable_bias", true)); }

void olmo2(Ctx& c) {
  decoder(c, "proj", flag(c.hf, "attention_bias", false));
  qk_norm(c, "all", 0);
  rope(c, 10000.0, 1.0);
}

void gpt_oss(Ctx& c) {
  decoder(c, "proj", flag(c.hf, "attention_bias", true));
  c.out["sinks"] = true;
  rope(c, 150000.0, 1.0);
  window(c, c.layer % 2 == 0);
}

void gpt2(Ctx& c) {
  decoder(c, "gpt2", true);
  double scale = flag(c.hf, "scale_attn_weights", true) ? 1.0 / std::sqrt(double(c.D)) : 1.0;
  if (flag(c.hf, "scale_attn_by_inverse_layer_idx", false)) scale /= double(c.layer + 1);
  c.out["scale"] = scale;
}

void bert(Ctx& c) {
  const std::string pos = has(c.hf, "position_embedding_type")
                              ? c.hf["position_embedding_type"].get<std::string>()
                              : "absolute";
  if (pos != "absolute")
    throw Error(Exit::config, c.file + ": position_embedding_type \"" + pos +
                                  "\" is not supported (only \"absolute\", which lives outside "
                                  "the attention layer)");
  c.out["attention"] = flag(c.hf, "is_decoder", false) ? "causal" : "multi";
  c.out["layout"] = "bert";
  c.out["qkv_bias"] = true;
  c.out["out_bias"] = true;
}

struct Family {
  const char* type;
  std::vector<const char*> prefixes;  // "{N}" = the layer; most usual first
  std::function<void(Ctx&)> map;
  // The configuration class's defaults (configuration_<type>.py) for keys a
  // config.json may leave out, where they differ from what the row assumes
  // without them: save_pretrained writes every key, but Gemma 3's multimodal
  // text_config keeps only the keys that differ from Gemma3TextConfig, and
  // hand-trimmed folders exist.
  json defaults = json::object();
};

const std::vector<Family>& families() {
  static const char* kLlama[] = {"model.layers.{N}.self_attn.", "layers.{N}.self_attn."};
  static const std::vector<const char*> llama_prefixes(std::begin(kLlama), std::end(kLlama));
  static const std::vector<Family> f = {
      {"gpt2", {"h.{N}.attn.", "transformer.h.{N}.attn."}, gpt2},
      {"bert", {"bert.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."}, bert},
      {"roberta", {"roberta.encoder.layer.{N}.attention.", "encoder.layer.{N}.attention."}, bert},
      {"llama", llama_prefixes, llama},
      {"mistral", llama_prefixes, mistral, {{"sliding_window", 4096}}},
      {"mixtral", llama_prefixes, mistral, {{"rope_theta", 1e6}}},
      {"qwen2", llama_prefixes, qwen2, {{"sliding_window", 4096}, {"max_window_layers", 28}}},
      {"qwen3",
       llama_prefixes,
       qwen3,
       {{"head_dim", 128}, {"sliding_window", 4096}, {"max_window_layers", 28}}},
      {"gemma", llama_prefixes, gemma, {{"head_dim", 256}}},
      {"gemma2",
       llama_prefixes,
       gemma2,
       {{"head_dim", 256},
        {"query_pre_attn_scalar", 256},
        {"attn_logit_softcapping", 50.0},
        {"sliding_window", 4096}}},
      {"gemma3_text",
       {"model.layers.{N}.self_attn.", "language_model.model.layers.{N}.self_attn.",
        "model.language_model.layers.{N}.self_attn.", "layers.{N}.self_attn."},
       gemma3,
       {{"hidden_size", 2304},
        {"num_hidden_layers", 26},
        {"num_attention_heads", 8},
        {"num_key_value_heads", 4},
        {"head_dim", 256},
        {"query_pre_attn_scalar", 256},
        {"sliding_window", 4096},
        {"rope_theta", 1e6},
        {"rope_local_base_freq", 10000.0},
        {"max_position_embeddings", 131072}}},
      {"phi3", llama_prefixes, phi3},
      {"gpt_neox", {"gpt_neox.layers.{N}.attention.", "layers.{N}.attention."}, gpt_neox},
      {"falcon", {"transformer.h.{N}.self_attention.", "h.{N}.self_attention."}, falcon},
      {"bloom", {"transformer.h.{N}.self_attention.", "h.{N}.self_attention."}, bloom},
      {"mpt", {"transformer.blocks.{N}.attn.", "blocks.{N}.attn."}, mpt},
      {"opt", {"model.decoder.layers.{N}.self_attn.", "decoder.layers.{N}.self_attn."}, opt},
      {"olmo2", llama_prefixes, olmo2, {{"rms_norm_eps", 1e-5}}},
      {"gpt_oss",
       llama_prefixes,
       gpt_oss,
       {{"num_attention_heads", 64},
        {"num_key_value_heads", 8},
        {"head_dim", 64},
        {"sliding_window", 128},
        {"rope_scaling",
         {{"rope_type", "yarn"},
          {"factor", 32.0},
          {"beta_fast", 32.0},
          {"beta_slow", 1.0},
          {"truncate", false},
          {"original_max_position_embeddings", 4096}}}}},
  };
  return f;
}

const Family* family_of(const std::string& type) {
  for (const Family& f : families())
    if (type == f.type) return &f;
  return nullptr;
}

std::string join_types() {
  std::string s;
  for (const std::string& t : supported_model_types()) s += (s.empty() ? "" : ", ") + t;
  return s;
}

bool is_file(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string replace_n(std::string p, std::int64_t layer) {
  const std::size_t at = p.find("{N}");
  return p.replace(at, 3, std::to_string(layer));
}

}  // namespace

const std::vector<std::string>& supported_model_types() {
  static const std::vector<std::string> t = [] {
    std::vector<std::string> v;
    for (const Family& f : families()) v.push_back(f.type);
    return v;
  }();
  return t;
}

bool is_hf_config(const json& j) {
  return j.is_object() && (j.contains("model_type") || j.contains("architectures"));
}

ModelFolder open_model_folder(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw Error(Exit::no_input, dir + ": no such model folder");
  ModelFolder m;
  m.dir = dir;
  const std::string file = dir + (dir.back() == '/' ? "" : "/") + "config.json";
  if (!is_file(file)) throw Error(Exit::no_input, file + ": no config.json in the model folder");
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > (1u << 20))
    throw Error(Exit::config, file + ": larger than 1 MiB, not a config.json");
  try {
    m.hf = json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw Error(Exit::config, file + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!m.hf.is_object() || !has(m.hf, "model_type") || !m.hf["model_type"].is_string())
    throw Error(Exit::config,
                file + ": \"model_type\" is missing (supported: " + join_types() + ")");
  m.model_type = m.hf["model_type"].get<std::string>();
  // Gemma 3's multimodal folders keep the language model's settings in text_config.
  if (m.model_type == "gemma3" && has(m.hf, "text_config")) {
    m.hf = m.hf["text_config"];
    m.model_type = "gemma3_text";
  }
  const Family* fam = family_of(m.model_type);
  if (!fam)
    throw Error(Exit::config, file + ": model_type \"" + m.model_type +
                                  "\" is not supported (supported: " + join_types() + ")");
  // Keys the file leaves out mean the configuration class's defaults (a key set
  // to null stays null: e.g. Mistral's "sliding_window": null is no window).
  for (const auto& [key, value] : fam->defaults.items())
    if (!m.hf.contains(key)) m.hf[key] = value;
  m.num_layers = need_int(m.hf, {"num_hidden_layers", "n_layer", "n_layers", "num_layers"}, file);
  const std::string base = dir + (dir.back() == '/' ? "" : "/");
  for (const char* w : {"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                        "pytorch_model.bin.index.json"})
    if (is_file(base + w)) {
      m.weights = base + w;
      break;
    }
  if (m.weights.empty())
    throw Error(Exit::no_input, dir +
                                    ": no weights in the model folder (expected model.safetensors, "
                                    "model.safetensors.index.json, pytorch_model.bin or "
                                    "pytorch_model.bin.index.json)");
  return m;
}

json layer_config(const ModelFolder& m, std::int64_t layer,
                  const std::vector<std::string>& weight_keys) {
  if (layer < 0 || layer >= m.num_layers)
    throw Error(Exit::usage, "--layer: the model has layers 0.." +
                                 std::to_string(m.num_layers - 1) + ", found " +
                                 std::to_string(layer));
  const std::string file = m.dir + "/config.json";
  const Family& fam = *family_of(m.model_type);
  const json& hf = m.hf;
  const std::int64_t C = need_int(hf, {"hidden_size", "n_embd", "d_model", "n_embed"}, file);
  const std::int64_t H = need_int(hf, {"num_attention_heads", "n_head", "n_heads"}, file);
  const json* kv = first(hf, {"num_key_value_heads", "num_kv_heads", "n_head_kv"});
  const std::int64_t Hkv = kv && kv->is_number_integer() ? kv->get<std::int64_t>() : H;
  const json* hd = first(hf, {"head_dim"});
  const std::int64_t D =
      hd && hd->is_number_integer() ? hd->get<std::int64_t>() : (H > 0 ? C / H : 0);
  Ctx c{hf, layer, file, C, H, Hkv, D, json::object()};
  c.out["hidden_size"] = C;
  c.out["num_heads"] = H;
  c.out["head_size"] = D;
  c.out["out_size"] = C;
  if (Hkv != H) c.out["num_kv_heads"] = Hkv;
  fam.map(c);
  c.out["weights"] = m.weights;
  std::string prefix = replace_n(fam.prefixes.front(), layer);
  for (const char* p : fam.prefixes) {
    const std::string cand = replace_n(p, layer);
    bool found = false;
    for (const std::string& k : weight_keys)
      if (k.compare(0, cand.size(), cand) == 0) {
        found = true;
        break;
      }
    if (found) {
      prefix = cand;
      break;
    }
  }
  c.out["weights_prefix"] = prefix;
  return c.out;
}

}  // namespace attn

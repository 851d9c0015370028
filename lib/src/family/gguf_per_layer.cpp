// Per-layer metadata of a GGUF file (gguf_per_layer.h), as llama.cpp's
// llama_model_loader::get_key_or_arr reads it (src/llama-model-loader.cpp:
// an array must hold exactly n_layer values; llama_hparams::n_head(il),
// swa_layers).
#include "family/gguf_per_layer.h"

#include "attn/error.h"
#include "attn/escape.h"
#include "containers/gguf.h"

namespace attn::family {

namespace {

using detail::GgufFile;
using detail::GgufValue;
using nlohmann::json;

constexpr std::int64_t kMaxHeads = std::int64_t(1) << 24;  // as gguf_arch.cpp's sizes

}  // namespace

std::vector<std::int64_t> gguf_layer_ints(const GgufFile& f, const std::string& key,
                                          std::int64_t layers, std::int64_t lo, std::int64_t hi) {
  const GgufValue* v = f.find(key);
  if (!v) return {};
  if (v->is_array() && v->size() != std::uint64_t(layers))
    f.key_error(key, "expected an integer or one per layer (" + std::to_string(layers) +
                         " integers), found " + v->summary());
  if (!v->is_array() && !v->is_integer())
    f.key_error(key,
                std::string("expected an integer, found ") + detail::gguf_type_name(v->type()));
  std::vector<std::int64_t> out;
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::int64_t n = v->int_for_layer(std::uint64_t(l));
    if (n < lo || n > hi)
      f.key_error(key, "expected integers in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                           "], found " + std::to_string(n) +
                           (v->is_array() ? " for layer " + std::to_string(l) : ""));
    out.push_back(n);
  }
  return out;
}

std::vector<bool> gguf_sliding_layers(const GgufFile& f, const std::string& key,
                                      std::int64_t layers) {
  const GgufValue* v = f.find(key);
  if (!v || v->is_integer()) return {};
  if (v->type() == detail::GgufType::boolean)
    return std::vector<bool>(std::size_t(layers), v->to_bool());
  if (!v->is_array() || v->element_type() != detail::GgufType::boolean ||
      v->size() != std::uint64_t(layers))
    f.key_error(key, "expected a bool per layer (" + std::to_string(layers) +
                         ", true for a sliding layer) or an integer, found " + v->summary());
  std::vector<bool> out;
  for (const GgufValue& e : v->elements()) out.push_back(e.to_bool());
  return out;
}

void gguf_heads(const GgufFile& f, const std::string& head_key, const std::vector<std::int64_t>& H,
                const std::vector<std::int64_t>& Hkv, json& hf) {
  std::size_t first = 0;  // the first layer with heads and KV heads
  while (first < H.size() && (H[first] == 0 || Hkv[first] == 0)) ++first;
  if (first == H.size())
    f.key_error(head_key,
                "expected an integer in [1, " + std::to_string(kMaxHeads) +
                    "] for some layer (heads and KV heads), found none (no attention to run)");
  hf["num_attention_heads"] = H[first];
  hf["num_key_value_heads"] = Hkv[first];
  bool differ = false;
  for (std::size_t l = 0; l < H.size(); ++l) {
    differ = differ || H[l] != H[first] || Hkv[l] != Hkv[first];
    if (Hkv[l] != 0 && H[l] % Hkv[l] != 0)  // (head_key + "_kv": attention.head_count_kv)
      f.key_error(head_key + "_kv", "layer " + std::to_string(l) + "'s " + std::to_string(Hkv[l]) +
                                        " KV heads do not divide its " + std::to_string(H[l]) +
                                        " heads");
  }
  if (differ) hf["gguf_layer_heads"] = {{"num_heads", H}, {"num_kv_heads", Hkv}};
}

std::pair<std::int64_t, std::int64_t> gguf_heads_at(const json& hf, std::int64_t layer) {
  const bool own = hf.contains("gguf_layer_heads") && layer >= 0 &&
                   std::size_t(layer) < hf["gguf_layer_heads"]["num_heads"].size();
  if (!own)
    return {hf["num_attention_heads"].get<std::int64_t>(),
            hf["num_key_value_heads"].get<std::int64_t>()};
  const json& t = hf["gguf_layer_heads"];
  return {t["num_heads"].at(std::size_t(layer)).get<std::int64_t>(),
          t["num_kv_heads"].at(std::size_t(layer)).get<std::int64_t>()};
}

void gguf_layer_heads_of(const json& hf, std::int64_t layer, json& out) {
  if (!hf.contains("gguf_layer_heads")) return;
  const auto [H, Hkv] = gguf_heads_at(hf, layer);
  if (H == 0 || Hkv == 0)
    throw Error(Exit::usage, "--layer: layer " + std::to_string(layer) + " has " +
                                 (H == 0 ? "0 attention heads" : "0 KV heads") +
                                 " in the GGUF metadata (llama.cpp runs no attention there), so "
                                 "attn-run has none to run");
  out["num_heads"] = H;
  if (Hkv != H)
    out["num_kv_heads"] = Hkv;
  else
    out.erase("num_kv_heads");
}

}  // namespace attn::family

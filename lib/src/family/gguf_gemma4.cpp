// Gemma 4 GGUF files onto the gemma4_text row (gguf_gemma4.h). Read, not
// copied, from llama.cpp: conversion/gemma.py's Gemma4Model.set_gguf_parameters
// and generate_extra_tensors (what the file holds), src/models/gemma4.cpp's
// load_arch_hparams / load_arch_tensors and its graph (how llama.cpp runs it:
// v is k's projection when attn_v is absent, rope_freqs on full layers only,
// the last shared_kv_layers layers without K/V, scale 1).
#include "family/gguf_gemma4.h"

#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "attn/error.h"
#include "attn/escape.h"
#include "containers/gguf.h"
#include "family/gguf_per_layer.h"

namespace attn::family {

namespace {

using detail::GgufFile;
using detail::GgufValue;
using nlohmann::json;

// An integer key in [1, 2^24], required when `need`.
std::optional<std::int64_t> gemma4_size(const GgufFile& f, const std::string& key, bool need) {
  const GgufValue* v = f.find(key);
  if (!v) {
    if (need) f.key_error(key, "is missing (Gemma 4 needs it)");
    return std::nullopt;
  }
  if (!v->is_integer())
    f.key_error(key,
                std::string("expected an integer, found ") + detail::gguf_type_name(v->type()));
  const std::int64_t n = v->to_int();
  if (n < 1 || n > (std::int64_t(1) << 24))
    f.key_error(key, "expected an integer in [1, 16777216], found " + std::to_string(n));
  return n;
}

// The one value of head_count_kv the layers of a type have (a number, or
// the per-layer array's entries for those layers, which must agree).
std::optional<std::int64_t> gemma4_kv_heads(const GgufFile& f, const std::string& key,
                                            const std::vector<bool>& sliding, bool of_sliding) {
  const GgufValue* v = f.find(key);
  if (!v) return std::nullopt;
  if (v->is_array() && v->size() != sliding.size())
    f.key_error(key, "expected an integer or one per layer (" + std::to_string(sliding.size()) +
                         "), found an array of " + std::to_string(v->size()));
  std::optional<std::int64_t> n;
  for (std::size_t l = 0; l < sliding.size(); ++l) {
    if (sliding[l] != of_sliding) continue;
    const std::int64_t x = v->int_for_layer(l);
    if (x < 1 || x > (std::int64_t(1) << 24))
      f.key_error(key, "expected integers in [1, 16777216], found " + std::to_string(x));
    if (n && *n != x)
      f.key_error(key, std::string("different values for the ") +
                           (of_sliding ? "sliding" : "full") + " layers (" + v->summary() +
                           ") are not supported");
    n = x;
  }
  return n;
}

// The full layers' proportional rope fraction from rope_freqs.weight (D / 2
// divisors): Gemma4Model.generate_extra_tensors writes 1 for each of the first
// int(D * p / 2) pairs and 1e30 (never turned) for the rest; ggml divides each
// pair's angle by its factor. The fraction is 2k / D for k leading ones.
double gemma4_fraction(const GgufFile& f, std::int64_t D) {
  const detail::GgufTensorInfo* t = f.find_tensor("rope_freqs.weight");
  if (!t) return 1.0;  // every pair turns
  if (t->elements != std::uint64_t(D / 2))
    f.key_error("rope_freqs.weight", "expected " + std::to_string(D / 2) +
                                         " factors (attention.key_length / 2), found " +
                                         std::to_string(t->elements));
  const std::vector<float> v = detail::dequantize_tensor(f, *t);
  std::size_t k = 0;
  while (k < v.size() && v[k] == 1.0f) ++k;
  for (std::size_t i = k; i < v.size(); ++i)
    if (!(v[i] >= 1e20f))
      f.key_error("rope_freqs.weight",
                  "expected 1 for each turned pair, then 1e30 for each unturned one (Gemma 4's "
                  "proportional rope), found " +
                      std::to_string(v[i]) + " at " + std::to_string(i));
  // floor(p * D / 2) must give k back (positions.cpp's proportional rope).
  double p = 2.0 * double(k) / double(D);
  while (std::floor(p * double(D) / 2.0) < double(k)) p = std::nextafter(p, 2.0);
  return p;
}

}  // namespace

void gguf_gemma4(const GgufFile& f, const std::string& p, std::int64_t layers, json& hf) {
  const std::string pattern_key = p + "attention.sliding_window_pattern";
  const std::vector<bool> sliding = gguf_sliding_layers(f, pattern_key, layers);
  if (sliding.empty())
    f.key_error(pattern_key, f.find(pattern_key)
                                 ? "expected a bool per layer (Gemma 4's layer types), found " +
                                       f.find(pattern_key)->summary()
                                 : "is missing (Gemma 4's layer types: true for a sliding layer)");
  json types = json::array();
  for (bool s : sliding) types.push_back(s ? "sliding_attention" : "full_attention");
  hf["layer_types"] = types;

  // Head sizes: key_length the full layers' (global_head_dim), key_length_swa
  // the sliding layers' (head_dim); llama.cpp requires value lengths equal.
  const std::int64_t D_full = *gemma4_size(f, p + "attention.key_length", true);
  const std::int64_t D_swa = *gemma4_size(f, p + "attention.key_length_swa", true);
  for (const auto& [key, want] :
       {std::pair{p + "attention.value_length", D_full}, {p + "attention.value_length_swa", D_swa}})
    if (const auto v = gemma4_size(f, key, false); v && *v != want)
      f.key_error(key, "differs from the key length (" + std::to_string(want) + ")");
  hf["head_dim"] = D_swa;
  hf["global_head_dim"] = D_full;

  // K/V sharing: the last shared_kv_layers layers read an earlier layer's.
  std::int64_t shared = 0;
  if (const GgufValue* v = f.find(p + "attention.shared_kv_layers")) {
    shared = v->is_integer() ? v->to_int() : -1;
    if (shared < 0 || shared >= layers)
      f.key_error(
          p + "attention.shared_kv_layers",
          "expected an integer in [0, " + std::to_string(layers - 1) + "], found " + v->summary());
  }
  hf["num_kv_shared_layers"] = shared;

  // k_eq_v (use_alternative_attention): Hugging Face's full layers have no
  // v_proj, so the converter writes no attn_v; llama.cpp takes v = k then.
  std::optional<bool> k_eq_v;
  for (std::int64_t l = 0; l < layers - shared; ++l) {
    if (sliding[std::size_t(l)]) continue;
    const std::string blk = "blk." + std::to_string(l) + ".";
    if (!f.find_tensor(blk + "attn_k.weight")) continue;
    const bool no_v = !f.find_tensor(blk + "attn_v.weight");
    if (k_eq_v && *k_eq_v != no_v)
      f.key_error(blk + "attn_v.weight",
                  "some full-attention layers have attn_v and others not (attention_k_eq_v is one "
                  "setting)");
    k_eq_v = no_v;
  }
  hf["attention_k_eq_v"] = k_eq_v.value_or(false);

  // KV heads per layer type (head_count_kv: the converter writes one per layer
  // when num_global_key_value_heads is set, else num_key_value_heads).
  const std::string kv_key = p + "attention.head_count_kv";
  const std::int64_t H = hf["num_attention_heads"];
  const auto kv_swa = gemma4_kv_heads(f, kv_key, sliding, true);
  const auto kv_full = gemma4_kv_heads(f, kv_key, sliding, false);
  const std::int64_t kv = kv_swa.value_or(kv_full.value_or(H));
  hf["num_key_value_heads"] = kv;
  if (kv_full && hf["attention_k_eq_v"] == true) {
    hf["num_global_key_value_heads"] = *kv_full;
  } else if (kv_full && *kv_full != kv) {
    json per_layer = json::object();  // the hook's per-layer override of a full layer
    for (std::int64_t l = 0; l < layers; ++l)
      if (!sliding[std::size_t(l)])
        per_layer[std::to_string(l)] = {{"num_key_value_heads", *kv_full}};
    hf["per_layer_config"] = per_layer;
  }

  // Rope per layer type. rope.dimension_count is the whole full head (the
  // fraction is in rope_freqs.weight); rope.dimension_count_swa the sliding
  // head (its default rope turns it whole).
  for (const auto& [key, want] :
       {std::pair{p + "rope.dimension_count", D_full}, {p + "rope.dimension_count_swa", D_swa}})
    if (const auto n = gemma4_size(f, key, false); n && *n != want)
      f.key_error(key, "expected the head size " + std::to_string(want) +
                           " (Gemma 4 turns the whole head, its full layers as rope_freqs.weight "
                           "says), found " +
                           std::to_string(*n));
  const double theta = hf.value("rope_theta", 10000.0);  // rope.freq_base, or llama.cpp's 10000
  double theta_swa = theta;                              // llama.cpp: the swa base defaults to it
  if (const GgufValue* v = f.find(p + "rope.freq_base_swa")) {
    if (!v->is_float() && !v->is_integer())
      f.key_error(p + "rope.freq_base_swa",
                  std::string("expected a number, found ") + detail::gguf_type_name(v->type()));
    theta_swa = v->to_double();
    if (!std::isfinite(theta_swa) || theta_swa <= 0)
      f.key_error(p + "rope.freq_base_swa", "expected a finite number > 0, found " + v->summary());
  }
  hf.erase("rope_theta");
  hf.erase("partial_rotary_factor");
  hf["rope_parameters"] = {
      {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", theta_swa}}},
      {"full_attention",
       {{"rope_type", "proportional"},
        {"partial_rotary_factor", gemma4_fraction(f, D_full)},
        {"rope_theta", theta}}}};
}

}  // namespace attn::family

// Per-layer metadata of a GGUF file (private to lib/src/family). llama.cpp
// reads {arch}.attention.head_count, head_count_kv and sliding_window_pattern
// with get_key_or_arr: one value for every layer, or an array of one per layer
// (OpenELM's converter writes head arrays; gguf-py's add_head_count /
// add_head_count_kv / add_sliding_window_pattern take either). The row maps one
// size for the model; the layers whose counts differ from it get their own
// num_heads / num_kv_heads when the layer's config is made.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace attn::detail {
class GgufFile;
}

namespace attn::family {

// `key` as one value per layer: a scalar repeated, or the array's elements
// (exactly `layers` of them), each in [lo, hi]. Empty when the key is absent.
// Exit::data naming the file and key for another type, another length or a
// value out of range.
std::vector<std::int64_t> gguf_layer_ints(const detail::GgufFile& f, const std::string& key,
                                          std::int64_t layers, std::int64_t lo, std::int64_t hi);

// attention.sliding_window_pattern as bools: one per layer (true: the layer
// slides, llama.cpp's swa_layers), or one bool for every layer. Empty when the
// key is absent or an integer (a period, which the architecture's own rule
// reads). Exit::data naming the file and key for an array of another type or
// length.
std::vector<bool> gguf_sliding_layers(const detail::GgufFile& f, const std::string& key,
                                      std::int64_t layers);

// The model-wide head counts (hf's num_attention_heads / num_key_value_heads)
// from the per-layer ones: layer 0's, or the first layer with heads (a layer
// with 0 heads runs no attention in llama.cpp). Where any layer differs, hf
// keeps both lists under "gguf_layer_heads" for gguf_layer_heads_of. Exit::data
// naming head_count_kv for a layer whose KV heads do not divide its heads.
void gguf_heads(const detail::GgufFile& f, const std::string& head_key,
                const std::vector<std::int64_t>& H, const std::vector<std::int64_t>& Hkv,
                nlohmann::json& hf);

// Layer `layer`'s (heads, KV heads): its own where hf keeps a list, else the
// model's.
std::pair<std::int64_t, std::int64_t> gguf_heads_at(const nlohmann::json& hf, std::int64_t layer);

// Layer `layer`'s own head counts over what the row mapped (out's num_heads,
// num_kv_heads). Exit::usage for a layer without heads (no attention to run).
void gguf_layer_heads_of(const nlohmann::json& hf, std::int64_t layer, nlohmann::json& out);

}  // namespace attn::family

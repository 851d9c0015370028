// Gemma 4's GGUF metadata as Gemma4TextConfig's fields (gguf_gemma4.cpp,
// private to lib/src/family): what llama.cpp's converter (Gemma4Model, a
// Gemma3Model) writes per layer type, read back for the gemma4_text row.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace attn::detail {
class GgufFile;
}

namespace attn::family {

// Over the common keys already in `hf` (prefix p = "gemma4."): layer_types from
// attention.sliding_window_pattern (true = sliding), head_dim / global_head_dim
// from key_length_swa / key_length, the KV heads of each layer type from
// head_count_kv (a number or one per layer), attention_k_eq_v when the full
// layers have no attn_v, num_kv_shared_layers from attention.shared_kv_layers,
// and rope_parameters per layer type: the sliding layers' default rope at
// rope.freq_base_swa, the full layers' proportional rope at rope.freq_base with
// the fraction its rope_freqs.weight says (1 for a turned pair, 1e30 for an
// unturned one). Exit::data naming the key for what Gemma 4 cannot be.
void gguf_gemma4(const detail::GgufFile& f, const std::string& p, std::int64_t layers,
                 nlohmann::json& hf);

}  // namespace attn::family

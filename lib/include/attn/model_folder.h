// Hugging Face model folders (CONTRACT.md "Model folders"): config.json of a
// supported model_type mapped to attn-run's own config keys for one layer,
// and the weights file(s) beside it. The mapping is a table per family
// (model_folder.cpp); the config parser then checks the result like any
// config, so a folder and a hand-written config obey the same rules.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn {

struct ModelFolder {
  std::string dir;         // the folder as given
  std::string model_type;  // config.json's model_type
  nlohmann::json hf;       // config.json as read (text_config unwrapped), with the
                           // configuration class's defaults for attention keys it leaves out
  std::string weights;     // model.safetensors, its index, pytorch_model.bin or its index
  std::int64_t num_layers = 0;
};

// Reads DIR/config.json (at most 1 MiB) and finds the weights beside it.
// Exit::no_input when the folder, config.json or any weights file is missing;
// Exit::config (78) for an unknown model_type, naming it and listing the
// supported ones, or a config.json without the sizes the family needs.
ModelFolder open_model_folder(const std::string& dir);

// True when a parsed JSON config is a Hugging Face config.json (it has
// "model_type" or "architectures"): --config FILE then means --model of its folder.
bool is_hf_config(const nlohmann::json& j);

// attn-run config keys for layer `layer` of the model (attention, hidden_size,
// num_heads, num_kv_heads, head_size, out_size, bias flags, scale, layout,
// weights, weights_prefix, rope, alibi, sliding_window, softcap, qk_norm,
// sinks), using the family's own field names and per-layer patterns
// (layer_types, sliding_window_pattern, Gemma 2's alternating layers, Gemma 3's
// local rope base, Qwen2's max_window_layers). `weight_keys` (the weights'
// tensor names, any order) picks the key prefix the file really uses
// ("model.layers.5.self_attn." or "layers.5.self_attn.", ...); empty = the
// family's usual one. Exit::usage when layer is out of range.
nlohmann::json layer_config(const ModelFolder& m, std::int64_t layer,
                            const std::vector<std::string>& weight_keys = {});

// The model_types understood, in CONTRACT.md order.
const std::vector<std::string>& supported_model_types();

}  // namespace attn

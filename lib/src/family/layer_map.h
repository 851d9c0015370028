// A family row applied to one layer of a config.json (private to lib/src/family).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "family/family_row.h"
#include "family/hf_config.h"

namespace attn::family {

// transformers' layer_types values attn-run knows: the ones it runs
// (runs_attention) and the ones it refuses (linear attention, Mamba, ...).
const std::vector<std::string>& known_layer_types();
bool runs_attention(const std::string& layer_type);

// The model's number of layers (num_hidden_layers, n_layer, ...), checked.
std::int64_t num_layers_of(const HfConfig& hf);
// The row's: an encoder-decoder's encoder layers (BART's encoder_layers), a
// hybrid's listed kinds when they count the layers (Nemotron-H), else the above.
std::int64_t num_layers_of(const Row& row, const HfConfig& hf);
// An encoder-decoder's decoder layers (0 for other rows).
std::int64_t decoder_layers_of(const Row& row, const HfConfig& hf);

// The layer's type: config.json's layer_types entry when it lists them
// (checked: one per layer, each known), else the row's window pattern.
std::string layer_type_of(const Row& row, const HfConfig& hf, std::int64_t layer,
                          std::int64_t num_layers);

// The row's residual_norm applies to this config.json (it has one, after the
// attention: not with OPT's do_layer_norm_before true).
bool has_residual_norm(const Row& row, const HfConfig& hf);

// The layer whose keys and values this layer reuses (the row's kv_shared_key,
// Gemma 4's num_kv_shared_layers: the last n layers take the K/V of the last
// earlier layer of their type), or none when it computes its own.
std::optional<std::int64_t> kv_shared_source(const Row& row, const HfConfig& hf, std::int64_t layer,
                                             std::int64_t num_layers);

// attn-run config keys for the layer (model_folder.h's layer_config):
// sizes, kind, layout and its tensor renames, biases, positions, window,
// scale, softcap, qk_norm, sinks, gate, mla, relative bias; then the row's
// refusals and consistency checks, the row's hook, and the weights_prefix
// the file really uses among the row's (`weight_keys`).
// `residual_norm`: also the row's residual_norm ({eps, prefix}) when it has one.
// `input_norm`: also the row's input_norm ({kind, eps, weight, bias, offset,
// module}; kind "none" for a post-norm layer), its tensors named under the
// block's module as the weights hold them.
// `module`: an encoder-decoder's 0 (the encoder layer), 1 (decoder layer
// `layer`'s causal self-attention) or 2 (its cross-attention).
json map_layer(const Row& row, const HfConfig& hf, std::int64_t layer, std::int64_t num_layers,
               const std::vector<std::string>& weight_keys, bool residual_norm = false,
               int module = 0, bool input_norm = false, bool embedding = false);

}  // namespace attn::family

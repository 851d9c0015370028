// Which kind each layer of a model is (layer_map.h's layer_type_of and its
// kin): config.json's layer_types, the row's own lists and patterns
// (LayerKindsRule), or its window rule (WindowRule: a global layer every n,
// listed names, from a layer on, the no-rope layers); how many layers a model
// and its decoder have. Used by layer_map.cpp, which maps one layer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "family/family_row.h"
#include "family/hf_config.h"

namespace attn::family {

// The largest size field attn-run reads (as its config's, config.h).
constexpr std::int64_t kMaxSize = std::int64_t(1) << 24;

// WindowRule::global_every: the global layer's place in each period of n
// (layer % n == it).
std::int64_t global_place(const WindowRule& w, const HfConfig& hf, std::int64_t n);

// Whether this layer slides, when config.json lists no layer_types.
bool slides_by_rule(const Row& row, const HfConfig& hf, std::int64_t layer,
                    std::int64_t num_layers);

// Whether this layer has rope (layer_map.cpp): SmolLM3Config's
// no_rope_layers, or its default from no_rope_layer_interval.
bool has_rope(const Row& row, const HfConfig& hf, std::int64_t layer, std::int64_t num_layers);

}  // namespace attn::family

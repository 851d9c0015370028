// The residual_norm's LayerNorm weight and bias from the weights file (private
// to lib/src/run).
#pragma once

#include "attn/config.h"
#include "attn/state_dict.h"
#include "attn/weights.h"

namespace attn {

// With cfg.residual_norm: w.residual_norm_weight (C) from `all`'s key
// prefix + "weight" (required) and w.residual_norm_bias from prefix + "bias"
// (zero when the file has none), full keys of the file. A missing weight or a
// wrong shape: Exit::data naming the key and, for a missing one, the file's
// LayerNorm keys nearest the layer.
void load_residual_norm(const StateDict& all, const Config& cfg, bool allow_nonfinite, Weights& w);

// With cfg.spec.input_norm of kind rms or layer: w.input_norm_weight (C) from
// `all`'s key input_norm.weight (required) and w.input_norm_bias from its bias
// key when given. Exit::data naming the key when missing or not (C).
void load_input_norm(const StateDict& all, const Config& cfg, bool allow_nonfinite, Weights& w);

}  // namespace attn

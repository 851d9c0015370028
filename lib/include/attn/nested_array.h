// JSON nested arrays (an inline "input" in a config, or JSON on stdin) to
// tensors and masks, with errors naming the element's index path.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "attn/error.h"
#include "attn/tensor.h"

namespace attn {

// A rectangular nested array of finite numbers, depth 1..4, to a tensor.
// Ragged rows, non-numbers, empty dimensions: Error(code) "<name>[1][2]: ...".
Tensor tensor_from_json(const nlohmann::json& j, const std::string& name, Exit code);

// A rectangular nested array of booleans or 0/1 numbers to a mask.
Mask mask_from_json(const nlohmann::json& j, const std::string& name, Exit code);

}  // namespace attn

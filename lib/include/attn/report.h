// Turning results into text: torch-style printing, JSON arrays.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "attn/tensor.h"

namespace attn {

// Laid out like print(torch_tensor): "tensor([[0.2595, 0.4014],\n ...])",
// 4 decimals (scientific when the range calls for it as torch does),
// summarised with "..." past 1000 elements (3 edge items), ending in '\n'.
std::string format_tensor_text(const Tensor& t);

// Nested JSON arrays of the tensor's values.
nlohmann::json tensor_to_json(const Tensor& t);

// The same as compact JSON text, each float in its shortest form that reads
// back to the identical float32 (std::to_chars), ending in '\n'.
std::string format_tensor_json(const Tensor& t);

}  // namespace attn

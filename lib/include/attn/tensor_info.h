// What a container's header says of one tensor, before any of its bytes are
// read: the containers' readers produce it, the StateDict index hands it out.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attn/dtype.h"
#include "attn/tensor.h"

namespace attn {

// What a header says of one tensor; nothing read yet.
struct TensorInfo {
  DType dtype = DType::f4;
  std::vector<std::size_t> shape;
  // Non-empty when the file's dtype is one attn-run cannot read ("F8_E4M3",
  // "C64", ...): the tensor is listed, and reading it is Exit::data.
  std::string unsupported_dtype;
  // A tensor of a .gguf file: its ggml type as gguf-py spells it ("Q4_K",
  // "F16", "IQ4_XS") and its bytes in the file. A quantized tensor reads as
  // float32 (dtype f4), dequantized as ggml does. Empty / 0 otherwise.
  std::string gguf_type;
  std::size_t stored_bytes = 0;

  std::size_t count() const { return Tensor::count(shape); }
};

}  // namespace attn

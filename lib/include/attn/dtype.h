// The element types attn-run reads, a fact below every reader and writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace attn {

// Element types attn-run reads. All but bf16 are NumPy's; bf16 ("bfloat16")
// comes from .safetensors ("BF16"): NumPy cannot write it. Anything else
// (object, strings, structured, complex) is refused by the readers.
enum class DType : std::uint8_t { f2, f4, f8, b1, u1, u2, u4, u8, i1, i2, i4, i8, bf16 };

std::size_t dtype_size(DType t);
std::string dtype_name(DType t);  // NumPy's name: "float32", "bool", "int64", "bfloat16"
bool dtype_is_float(DType t);     // f2, bf16, f4, f8

}  // namespace attn

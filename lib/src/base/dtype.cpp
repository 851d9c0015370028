#include "attn/dtype.h"

namespace attn {

std::size_t dtype_size(DType t) {
  static const std::size_t s[] = {2, 4, 8, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2};
  return s[int(t)];
}

std::string dtype_name(DType t) {
  static const char* const n[] = {"float16", "float32", "float64", "bool", "uint8",
                                  "uint16",  "uint32",  "uint64",  "int8", "int16",
                                  "int32",   "int64",   "bfloat16"};
  return n[int(t)];
}

bool dtype_is_float(DType t) {
  return t == DType::f2 || t == DType::bf16 || t == DType::f4 || t == DType::f8;
}

}  // namespace attn

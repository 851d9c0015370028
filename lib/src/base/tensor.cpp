#include "attn/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace attn {

std::size_t first_nonfinite(const float* v, std::size_t n) {
  constexpr std::size_t kBlock = 4096;
  for (std::size_t b0 = 0; b0 < n; b0 += kBlock) {
    const std::size_t b1 = std::min(n, b0 + kBlock);
    std::uint32_t bad = 0;  // inf and NaN: every exponent bit set
    for (std::size_t i = b0; i < b1; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, v + i, sizeof bits);
      bad |= (bits & 0x7f800000u) == 0x7f800000u;
    }
    if (bad)
      for (std::size_t i = b0; i < b1; ++i)
        if (!std::isfinite(v[i])) return i;
  }
  return n;
}

std::string shape_str(const std::vector<std::size_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

}  // namespace attn

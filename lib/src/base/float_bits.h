// A float32's bit pattern and back (memcpy: no aliasing, one move after
// optimization), for code that rounds or builds floats by their bits.
#pragma once

#include <cstdint>
#include <cstring>

namespace attn::detail {

inline std::uint32_t bits_of(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

inline float float_of(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

}  // namespace attn::detail

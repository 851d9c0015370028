// Byte-level helpers the GGUF reader's parts share (private to
// lib/src/containers: gguf.cpp parses, gguf_value.cpp decodes metadata values):
// little-endian loads at any alignment and the sizes of the value types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "attn/escape.h"
#include "containers/gguf.h"

namespace attn::detail {

template <class T>
T gguf_load(const std::uint8_t* p) {  // little-endian, any alignment
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= std::uint64_t(p[i]) << (8 * i);
  T out;
  if constexpr (sizeof(T) == 8) {
    std::memcpy(&out, &v, 8);
  } else {
    const auto narrow = static_cast<std::uint32_t>(v);
    if constexpr (sizeof(T) == 4) {
      std::memcpy(&out, &narrow, 4);
    } else if constexpr (sizeof(T) == 2) {
      const auto n16 = static_cast<std::uint16_t>(narrow);
      std::memcpy(&out, &n16, 2);
    } else {
      const auto n8 = static_cast<std::uint8_t>(narrow);
      std::memcpy(&out, &n8, 1);
    }
  }
  return out;
}

inline bool gguf_known_type(std::uint32_t t) {
  return t <= static_cast<std::uint32_t>(GgufType::f64);
}

// Bytes of a scalar value; 0 for string and array.
inline std::size_t gguf_fixed_size(GgufType t) {
  switch (t) {
    case GgufType::u8:
    case GgufType::i8:
    case GgufType::boolean:
      return 1;
    case GgufType::u16:
    case GgufType::i16:
      return 2;
    case GgufType::u32:
    case GgufType::i32:
    case GgufType::f32:
      return 4;
    case GgufType::u64:
    case GgufType::i64:
    case GgufType::f64:
      return 8;
    default:
      return 0;
  }
}

// The fewest bytes one value of type t takes.
inline std::uint64_t gguf_min_size(GgufType t) {
  if (t == GgufType::string) return 8;
  if (t == GgufType::array) return 12;
  return gguf_fixed_size(t);
}

// Names and keys from the file, safe for one line of a terminal (control
// characters escaped, at most 120 columns).
inline std::string gguf_shown(const std::string& s) { return printable_prefix(s, 120); }

}  // namespace attn::detail

// Escaping of user-supplied strings for stderr and terminals (escape.h).
#include "attn/escape.h"

#include <cstdint>
#include <cstdio>

namespace attn {

std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t* cp) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t n;
  std::uint32_t v;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    n = 2, v = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, v = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, v = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    v = (v << 6) | (b(k) & 0x3F);
  }
  if ((n == 3 && v < 0x800) || (n == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
      (v >= 0xD800 && v <= 0xDFFF))
    return 0;
  *cp = v;
  return n;
}

namespace {

bool noncharacter(std::uint32_t cp) {
  return (cp >= 0xFDD0 && cp <= 0xFDEF) || (cp & 0xFFFE) == 0xFFFE;
}

bool is_bidi_control(std::uint32_t cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

std::string hex_byte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", c);
  return buf;
}

// The escaped form of the code point or byte at s[i]; *used = bytes consumed.
std::string escape_one(std::string_view s, std::size_t i, std::size_t* used) {
  std::uint32_t cp = 0;
  const std::size_t n = decode_utf8(s, i, &cp);
  if (n == 0) {
    *used = 1;
    return hex_byte(static_cast<unsigned char>(s[i]));
  }
  *used = n;
  switch (cp) {
    case '\n':
      return "\\n";
    case '\t':
      return "\\t";
    case '\r':
      return "\\r";
    case 0x1B:
      return "\\e";
    case '\\':
      return "\\\\";
    default:
      break;
  }
  if (cp < 0x20 || cp == 0x7F) return hex_byte(static_cast<unsigned char>(cp));
  // C1 controls, and the bidirectional embeddings, overrides and isolates
  // (U+202A..U+202E, U+2066..U+2069): raw, an RLO would make the rest of the
  // line read backwards ("Trojan Source", CVE-2021-42574).
  if ((cp >= 0x80 && cp <= 0x9F) || is_bidi_control(cp)) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
    return buf;
  }
  return std::string(s.substr(i, n));
}

}  // namespace

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::size_t used = 1;
    out += escape_one(s, i, &used);
    i += used;
  }
  return out;
}

std::string printable_prefix(std::string_view s, std::size_t max_cols) {
  std::string out;
  std::size_t cols = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t used = 1;
    std::string piece = escape_one(s, i, &used);
    const std::size_t w = piece.size() > 1 && piece[0] == '\\' ? piece.size() : 1;
    if (cols + w > max_cols || (cols + w == max_cols && i + used < s.size())) {
      out += "\u2026";
      return out;
    }
    out += piece;
    cols += w;
    i += used;
  }
  return out;
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = decode_utf8(s, i, &cp);
    if (n == 0 || noncharacter(cp)) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      i += n == 0 ? 1 : n;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace attn

// Label text for pictures and terminals (plot_text.h).
#include "pictures/plot_text.h"

#include <cstdint>

#include "attn/error.h"
#include "attn/escape.h"

namespace app {
namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr const char* kEllipsis = "\xE2\x80\xA6";     // U+2026

bool control(std::uint32_t cp) { return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F); }

// Wide (two-column) ranges of Unicode's East Asian Width property, the
// common ones: Hangul Jamo, CJK, Hangul syllables, fullwidth forms, emoji.
bool wide(std::uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0x303E) ||
         (cp >= 0x3041 && cp <= 0xA4CF) || (cp >= 0xAC00 && cp <= 0xD7A3) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
         (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) ||
         (cp >= 0x1F300 && cp <= 0x1F64F) || (cp >= 0x1F900 && cp <= 0x1F9FF) ||
         (cp >= 0x20000 && cp <= 0x3FFFD);
}

bool combining(std::uint32_t cp) {
  return (cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0xFE00 && cp <= 0xFE0F);
}

std::size_t width_of(std::uint32_t cp) { return combining(cp) ? 0 : wide(cp) ? 2 : 1; }

}  // namespace

std::string picture_text(std::string_view s) {
  const std::string valid = attn::valid_utf8(s);  // invalid bytes, noncharacters: U+FFFD
  std::string out;
  out.reserve(valid.size());
  for (std::size_t i = 0; i < valid.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = attn::decode_utf8(valid, i, &cp);
    if (control(cp))
      out += kReplacement;
    else
      out.append(valid, i, n);
    i += n;
  }
  return out;
}

std::vector<std::uint32_t> code_points(std::string_view s) {
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = attn::decode_utf8(s, i, &cp);
    out.push_back(n == 0 ? 0xFFFD : cp);
    i += n == 0 ? 1 : n;
  }
  return out;
}

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : picture_text(s)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string shorten(const std::string& s, std::size_t max_chars) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (chars == max_chars) return s.substr(0, i) + kEllipsis;
    ++chars;
  }
  return s;
}

std::size_t columns_of(std::string_view s) {
  std::size_t cols = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    const std::size_t n = attn::decode_utf8(s, i, &cp);
    cols += n == 0 ? 1 : width_of(cp);
    i += n == 0 ? 1 : n;
  }
  return cols;
}

std::string fit_columns(std::string_view s, std::size_t cols) {
  if (columns_of(s) <= cols) return std::string(s);
  if (cols == 0) return "";
  std::string out;
  std::size_t used = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = 0;
    std::size_t n = attn::decode_utf8(s, i, &cp);
    const std::size_t w = n == 0 ? 1 : width_of(cp);
    if (n == 0) n = 1;
    if (used + w > cols - 1) break;  // keep one column for the ellipsis
    out.append(s.substr(i, n));
    used += w;
    i += n;
  }
  return out + kEllipsis;
}

std::string base64(std::string_view in) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < in.size(); i += 3) {
    std::uint32_t v = std::uint32_t(std::uint8_t(in[i])) << 16;
    if (i + 1 < in.size()) v |= std::uint32_t(std::uint8_t(in[i + 1])) << 8;
    if (i + 2 < in.size()) v |= std::uint8_t(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

std::string script_json(const nlohmann::json& j) {
  std::string out;
  for (char c : j.dump(-1, ' ', true)) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

void fill_marker(std::string& page, const char* template_name, const std::string& marker,
                 const std::string& value, std::size_t* from) {
  const std::size_t at = page.find(marker, *from);
  if (at == std::string::npos)
    throw attn::Error(attn::Exit::software, std::string(template_name) + ": no " + marker);
  page.replace(at, marker.size(), value);
  *from = at + value.size();
}

}  // namespace app

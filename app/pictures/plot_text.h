// Text for pictures and terminals: labels made safe for SVG, HTML and cairo
// (valid UTF-8 only), cut to a length, and measured in terminal columns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace app {

// `s` as valid UTF-8 that XML, HTML, JSON and cairo accept: attn::valid_utf8
// (a byte that starts no valid sequence and a Unicode noncharacter become
// U+FFFD), and a control character (C0, DEL, C1) becomes U+FFFD too.
std::string picture_text(std::string_view s);

// The code points of `s` (a byte that starts no valid sequence: U+FFFD).
std::vector<std::uint32_t> code_points(std::string_view s);

// picture_text(s) with & < > " ' written as XML entities (SVG text and attributes).
std::string xml_escape(std::string_view s);

// At most `max_chars` code points of valid UTF-8 `s`, with "…" marking a cut.
std::string shorten(const std::string& s, std::size_t max_chars);

// Terminal columns taken by valid, printable UTF-8 `s`: East Asian wide and
// fullwidth characters take two, combining marks none, others one.
std::size_t columns_of(std::string_view s);

// The longest prefix of `s` (valid, printable UTF-8) that fits `cols`
// terminal columns, with "…" marking a cut; never splits a character.
std::string fit_columns(std::string_view s, std::size_t cols);

// JSON safe inside an HTML <script>: ASCII only, and no '<' (no
// "</script>" or "<!--"), for the pages' embedded data.
std::string script_json(const nlohmann::json& j);

// A page template's next marker (at or after *from) replaced by `value`;
// *from moves past it, so a value is never searched for markers (the pages'
// markers are filled in the order they appear). Exit::software naming
// `template_name` when the marker is missing.
void fill_marker(std::string& page, const char* template_name, const std::string& marker,
                 const std::string& value, std::size_t* from);

// RFC 4648 base64 (with padding): PNG images in SVG, the HTML page's maps.
std::string base64(std::string_view bytes);

}  // namespace app

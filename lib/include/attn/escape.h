// One escaping routine for every user-supplied string (path, key, label,
// config name, archive member) on its way to stderr or a terminal
// (CONTRACT.md "Exit codes": control characters escaped, so one error line
// stays one line and nothing reaches the terminal as a command).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attn {

// Length of the valid UTF-8 sequence at s[i] and its code point in *cp; 0
// when the bytes there are not one (overlong forms, surrogates, code points
// past U+10FFFF, a sequence cut short).
std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t* cp);

// `s` with C0 controls, DEL, C1 controls (U+0080..U+009F), the bidirectional
// controls (U+202A..U+202E, U+2066..U+2069) and bytes that are not valid
// UTF-8 replaced by visible escapes: "\n", "\t", "\r", "\e" (ESC), "\\" for
// a backslash, "\xNN" for any other byte, "\u0085" for a C1 control,
// "\u202e" for a bidirectional control.
// Valid printable UTF-8 (accents, CJK, emoji) passes unchanged.
std::string printable(std::string_view s);

// At most `max_cols` code points of `s`, cut on a UTF-8 boundary, after
// escaping: an escape sequence is never cut in half. "…" marks a cut.
std::string printable_prefix(std::string_view s, std::size_t max_cols);

// `s` as well-formed UTF-8 for pictures (SVG text must be well-formed XML,
// cairo and fontconfig expect valid UTF-8): every byte that does not start a
// valid sequence and every Unicode noncharacter (U+FDD0..U+FDEF, U+xxFFFE,
// U+xxFFFF) becomes U+FFFD. Valid text passes unchanged.
std::string valid_utf8(std::string_view s);

}  // namespace attn

#include <doctest/doctest.h>

#include "attn/escape.h"

using attn::printable;
using attn::printable_prefix;

TEST_CASE("printable: control characters become visible escapes") {
  CHECK(printable("a\nb") == "a\\nb");
  CHECK(printable("\x1b]0;pwned\x07") == "\\e]0;pwned\\x07");
  CHECK(printable("tab\there") == "tab\\there");
  CHECK(printable("back\\slash") == "back\\\\slash");
  CHECK(printable(std::string("nul\0x", 5)) == "nul\\x00x");
  CHECK(printable("\x7f") == "\\x7f");
  CHECK(printable("\xc2\x9b"
                  "31m") == "\\u009b31m");  // C1 CSI
}

TEST_CASE("printable: bidirectional controls are escaped like control characters") {
  // U+202A..U+202E (LRE RLE PDF LRO RLO) and U+2066..U+2069 (LRI RLI FSI PDI).
  CHECK(printable("a\u202Eevil") == "a\\u202eevil");
  CHECK(printable("\u202A\u202B\u202C\u202D") == "\\u202a\\u202b\\u202c\\u202d");
  CHECK(printable("\u2066\u2067\u2068\u2069") == "\\u2066\\u2067\\u2068\\u2069");
  // Their neighbours are ordinary text.
  CHECK(printable("\u2029\u202F\u2065\u206A") == "\u2029\u202F\u2065\u206A");
  const std::string cut = printable_prefix("ab\u202Ecd", 4);
  CHECK(cut.find("\u202E") == std::string::npos);
  CHECK(cut == "ab\u2026");
}

TEST_CASE("printable: valid UTF-8 passes, invalid bytes are escaped") {
  CHECK(printable("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac") ==
        "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac");
  CHECK(printable("\xff\xfe") == "\\xff\\xfe");
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");           // overlong '/'
  CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // surrogate
  CHECK(printable("\xe6\x97") == "\\xe6\\x97");           // cut sequence
}

TEST_CASE("printable_prefix: never cuts an escape or a code point") {
  CHECK(printable_prefix("abc", 5) == "abc");
  CHECK(printable_prefix("abcdef", 4) == "abc\u2026");
  const std::string cut = printable_prefix("ab\x1b[2J", 4);
  CHECK(cut.find('\x1b') == std::string::npos);
  CHECK(cut == "ab\u2026");
  CHECK(printable_prefix("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", 2) == "\xe6\x97\xa5\u2026");
}

TEST_CASE("valid_utf8: invalid sequences and noncharacters become U+FFFD") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(attn::valid_utf8("caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80") ==
        "caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80");             // valid passes
  CHECK(attn::valid_utf8("caf\xE9") == "caf" + fffd);             // Latin-1 byte
  CHECK(attn::valid_utf8("\xC0\xAF") == fffd + fffd);             // overlong '/'
  CHECK(attn::valid_utf8("\xED\xA0\x80") == fffd + fffd + fffd);  // a surrogate
  CHECK(attn::valid_utf8("a\xE6\x97") == "a" + fffd + fffd);      // cut sequence
  CHECK(attn::valid_utf8("\xEF\xBF\xBE") == fffd);                // U+FFFE
  CHECK(attn::valid_utf8("\xEF\xB7\x90") == fffd);                // U+FDD0
  CHECK(attn::valid_utf8("\xF4\x8F\xBF\xBF") == fffd);            // U+10FFFF
  CHECK(attn::valid_utf8("\xEF\xBF\xBD") == fffd);                // U+FFFD itself stays
  CHECK(attn::valid_utf8("tab\tok") == "tab\tok");                // controls: the plot's job
}

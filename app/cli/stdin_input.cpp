#include "cli/stdin_input.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "attn/error.h"
#include "attn/npy.h"
#include "cli/memory_check.h"

namespace app {
namespace {

constexpr std::size_t kMaxHeader = 10000;  // NumPy's cap (CONTRACT.md)

[[noreturn]] void bad(const std::string& what) {
  throw attn::Error(attn::Exit::data, "-: standard input: " + what);
}

// Up to n bytes appended to `out`; returns how many arrived before EOF.
std::size_t read_some(std::vector<std::uint8_t>& out, std::size_t n) {
  const std::size_t start = out.size();
  out.resize(start + n);
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(STDIN_FILENO, out.data() + start + got, n - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw attn::Error(attn::Exit::no_input, std::string("-: cannot read standard input (") +
                                                  std::strerror(errno) + ")");
    }
    if (r == 0) break;
    got += std::size_t(r);
  }
  out.resize(start + got);
  return got;
}

// The value text after `key` in a .npy header dict ("'shape': (2, 3)" ->
// "(2, 3)..."), or "" when absent. Only to bound the read: the library's
// parser judges the header in full afterwards.
std::string after_key(const std::string& header, const std::string& key) {
  const auto at = header.find("'" + key + "'");
  if (at == std::string::npos) return "";
  const auto colon = header.find(':', at);
  return colon == std::string::npos ? "" : header.substr(colon + 1);
}

// Data bytes the header declares: product of the shape times the item size
// (saturating); 0 when the header cannot be read that way (then the parser
// reports what is wrong with it).
std::size_t declared_bytes(const std::string& header) {
  const std::string descr = after_key(header, "descr");
  const auto q1 = descr.find('\''), q2 = descr.find('\'', q1 + 1);
  if (q1 == std::string::npos || q2 == std::string::npos || q2 < q1 + 3) return 0;
  const std::string item = descr.substr(q1 + 3, q2 - q1 - 3);  // "<f4" -> "4"
  if (item.empty() || item.size() > 2 || item.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  std::size_t bytes = std::stoul(item);
  const std::string shape = after_key(header, "shape");
  const auto open = shape.find('('), close = shape.find(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return 0;
  const std::string dims = shape.substr(open + 1, close - open - 1);
  std::size_t pos = 0;
  while (pos < dims.size()) {
    const auto digit = dims.find_first_of("0123456789", pos);
    if (digit == std::string::npos) break;
    const auto end = dims.find_first_not_of("0123456789", digit);
    const std::string d = dims.substr(digit, end == std::string::npos ? end : end - digit);
    bytes = d.size() > 19 ? mul_sat(bytes, std::size_t(-1)) : mul_sat(bytes, std::stoull(d));
    pos = end == std::string::npos ? dims.size() : end;
  }
  return bytes;
}

// JSON on stdin (nested arrays, about 12 bytes a value) is read whole up to
// this size; larger inputs belong in a .npy, whose header bounds the read.
constexpr std::size_t kMaxJsonBytes = std::size_t(1) << 30;

std::vector<std::uint8_t> read_json_rest(std::vector<std::uint8_t> text) {
  read_some(text, kMaxJsonBytes + 1 - text.size());
  if (text.size() > kMaxJsonBytes)
    bad("a JSON input longer than " + std::to_string(kMaxJsonBytes) +
        " bytes (write larger inputs as .npy)");
  return text;
}

}  // namespace

std::vector<std::uint8_t> read_stdin_input() {
  std::vector<std::uint8_t> image;
  const std::size_t first = read_some(image, 8);
  const bool npy = first == 8 && std::memcmp(image.data(), "\x93NUMPY", 6) == 0;
  if (!npy) {
    // JSON: its first non-blank byte is '['. Eight blanks in a row: read on
    // (bounded) and let the JSON parser judge.
    std::size_t i = 0;
    while (i < image.size() &&
           (image[i] == ' ' || image[i] == '\t' || image[i] == '\r' || image[i] == '\n'))
      ++i;
    if ((i < image.size() && image[i] == '[') || (i == image.size() && first == 8))
      return read_json_rest(std::move(image));
    // The first bytes as characters: the error line escapes what is not
    // printable, but a NUL would end the message, so it shows as U+2400 (␀).
    std::string seen;
    for (std::size_t k = i; k < image.size(); ++k)
      seen += image[k] ? std::string(1, char(image[k])) : std::string("\xE2\x90\x80");
    bad("expected a .npy stream (byte 0x93 then NUMPY) or a JSON array ('['), found " +
        (i < image.size() ? "'" + seen + "'" : std::string("nothing")) + " at the start");
  }
  const int major = image[6];
  if (!((major == 1 || major == 2 || major == 3) && image[7] == 0))
    bad("unsupported .npy version " + std::to_string(major) + "." + std::to_string(image[7]) +
        " (expected 1.0, 2.0 or 3.0)");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (read_some(image, len_bytes) < len_bytes) bad("truncated .npy stream: header length cut off");
  std::size_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i) header_len |= std::size_t(image[8 + i]) << (8 * i);
  if (header_len > kMaxHeader)
    bad("the .npy header is " + std::to_string(header_len) + " bytes, more than the " +
        std::to_string(kMaxHeader) + " NumPy allows");
  const std::size_t start = image.size();
  if (read_some(image, header_len) < header_len) bad("truncated .npy stream: header cut off");
  const std::string header(image.begin() + std::ptrdiff_t(start), image.end());
  const std::size_t need = declared_bytes(header);
  check_memory(need, "-", "the .npy data declared by the header on standard input");
  read_some(image, need);
  read_some(image, 1);  // a byte past the declared data: the parser reports trailing bytes
  return image;
}

}  // namespace app

// The .npy reader and writer. Reference: numpy/lib/format.py (NumPy 1.24):
// magic "\x93NUMPY", a version byte pair, a little-endian header length (2
// bytes for 1.0, 4 bytes for 2.0/3.0), then a Python dict literal with
// exactly the keys 'descr', 'fortran_order' and 'shape', padded with spaces
// and ending in '\n'; the raw array data follows.
//
// Every size is checked against the bytes actually present before anything
// is allocated, so a hostile header cannot make us allocate or read beyond
// the file.
#include "attn/npy.h"

#include <cstring>

#include "attn/error.h"
#include "attn/files.h"
#include "containers/fail.h"
#include "containers/npy_internal.h"
#include "containers/stored.h"

namespace attn {

using detail::fail;

namespace {

constexpr std::size_t kMaxNpyHeaderBytes = 10000;  // format.py's max_header_size
constexpr std::size_t kMaxDims = 64;               // NPY_MAXDIMS of NumPy 2
constexpr std::size_t kArrayAlign = 64;            // format.py's ARRAY_ALIGN
constexpr std::size_t kGrowthAxisMaxDigits = 21;   // format.py's GROWTH_AXIS_MAX_DIGITS

// A strict parser for the header's dict literal: the subset of Python
// literal syntax that NumPy's writers produce (and ast.literal_eval accepts).
class HeaderParser {
 public:
  HeaderParser(const std::string& text, bool allow_long_suffix, const std::string& name)
      : s_(text), allow_long_(allow_long_suffix), name_(name) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_ws();
    expect('{');
    skip_ws();
    while (peek() != '}') {
      const std::string key = parse_string("a quoted key");
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        if (have_descr) bad("key 'descr' appears twice");
        have_descr = true;
        parse_descr(h);
      } else if (key == "fortran_order") {
        if (have_order) bad("key 'fortran_order' appears twice");
        have_order = true;
        h.fortran_order = parse_bool();
      } else if (key == "shape") {
        if (have_shape) bad("key 'shape' appears twice");
        have_shape = true;
        h.shape = parse_shape();
      } else {
        bad("unexpected key '" + key + "' (expected exactly 'descr', 'fortran_order', 'shape')");
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        skip_ws();
      } else if (peek() != '}') {
        bad_at("',' or '}'");
      }
    }
    ++pos_;  // '}'
    // Padding: spaces (and tabs) up to a final newline, as format.py writes.
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
    if (pos_ + 1 != s_.size() || s_[pos_] != '\n')
      bad("header must end with spaces and a newline after the dict");
    if (!have_descr) bad("header has no 'descr' key");
    if (!have_order) bad("header has no 'fortran_order' key");
    if (!have_shape) bad("header has no 'shape' key");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) { fail(name_, "invalid .npy header: " + what); }
  [[noreturn]] void bad_at(const std::string& expected) {
    std::string found = pos_ < s_.size() ? std::string("'") + s_[pos_] + "'" : "the end";
    bad("expected " + expected + " at byte " + std::to_string(pos_) + ", found " + found);
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void expect(char c) {
    if (peek() != c) bad_at(std::string("'") + c + "'");
    ++pos_;
  }
  // Whitespace inside the braces (Python allows newlines within brackets).
  void skip_ws() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  std::string parse_string(const char* what) {
    const char q = peek();
    if (q != '\'' && q != '"') bad_at(what);
    const std::size_t start = ++pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\' || s_[pos_] == '\n') bad("unsupported character in a string");
      ++pos_;
    }
    if (pos_ >= s_.size()) bad("unterminated string");
    return s_.substr(start, pos_++ - start);
  }
  bool parse_bool() {
    if (s_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    bad_at("True or False for 'fortran_order'");
  }
  std::size_t parse_int() {
    if (peek() < '0' || peek() > '9') bad_at("a non-negative integer in 'shape'");
    if (peek() == '0' && pos_ + 1 < s_.size() && s_[pos_ + 1] >= '0' && s_[pos_ + 1] <= '9')
      bad("integer with a leading zero in 'shape'");
    std::uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const unsigned d = unsigned(s_[pos_++] - '0');
      if (v > (UINT64_MAX - d) / 10) bad("shape entry too large");
      v = v * 10 + d;
    }
    // Python 2 wrote long integers as "3L"; format.py filters that for 1.0/2.0.
    if (allow_long_ && peek() == 'L') ++pos_;
    if (v > SIZE_MAX) bad("shape entry too large");
    return std::size_t(v);
  }
  std::vector<std::size_t> parse_shape() {
    if (peek() != '(') bad_at("a tuple for 'shape'");
    ++pos_;
    skip_ws();
    std::vector<std::size_t> shape;
    bool trailing_comma = false;
    while (peek() != ')') {
      shape.push_back(parse_int());
      if (shape.size() > kMaxDims) bad("more than " + std::to_string(kMaxDims) + " dimensions");
      skip_ws();
      trailing_comma = false;
      if (peek() == ',') {
        ++pos_;
        trailing_comma = true;
        skip_ws();
      } else if (peek() != ')') {
        bad_at("',' or ')' in 'shape'");
      }
    }
    ++pos_;
    // "(3)" is the integer 3 in Python, not a tuple.
    if (shape.size() == 1 && !trailing_comma) bad("'shape' (n) is not a tuple; expected (n,)");
    return shape;
  }
  void parse_descr(NpyHeader& h) {
    if (peek() == '[' || peek() == '(')
      fail(name_,
           "structured dtype is not supported (expected float16/32/64, or bool/int for "
           "masks); object arrays are never unpickled");
    const std::string d = parse_string("a quoted string for 'descr'");
    h.descr = d;
    if (!parse_descr_string(d, h.dtype, h.big_endian))
      fail(name_, "dtype '" + d +
                      "' is not supported (expected float16/32/64, or bool/int for masks); "
                      "object arrays are never unpickled");
  }

  const std::string& s_;
  bool allow_long_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

}  // namespace

// NumPy's descr strings: byte order '<' '>' '|' '=' then kind and size.
bool parse_descr_string(const std::string& d, DType& dtype, bool& big_endian) {
  if (d.size() != 3) return false;
  const char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') return false;
  static const struct {
    const char* code;
    DType t;
  } kCodes[] = {{"f2", DType::f2}, {"f4", DType::f4}, {"f8", DType::f8}, {"b1", DType::b1},
                {"u1", DType::u1}, {"u2", DType::u2}, {"u4", DType::u4}, {"u8", DType::u8},
                {"i1", DType::i1}, {"i2", DType::i2}, {"i4", DType::i4}, {"i8", DType::i8}};
  for (const auto& c : kCodes) {
    if (d.compare(1, 2, c.code) == 0) {
      dtype = c.t;
      big_endian = order == '>';  // '=' and '|' are native: this is a little-endian build
      return true;
    }
  }
  return false;
}

std::size_t checked_count(const std::vector<std::size_t>& shape, std::size_t elem_size,
                          const std::string& name) {
  // Multiply every dimension (zeros included would hide an overflow of the
  // others, so the product of the nonzero ones must fit too).
  std::size_t nonzero = 1, count = 1;
  for (std::size_t d : shape) {
    if (d == 0) {
      count = 0;
      continue;
    }
    if (nonzero > SIZE_MAX / d) fail(name, "shape " + shape_str(shape) + " is too large");
    nonzero *= d;
  }
  if (nonzero > SIZE_MAX / elem_size) fail(name, "shape " + shape_str(shape) + " is too large");
  return count == 0 ? 0 : nonzero;
}

void check_bool_bytes(const std::uint8_t* p, std::size_t n, const std::string& name) {
  for (std::size_t i = 0; i < n; ++i)
    if (p[i] > 1)
      fail(name, "bool array holds byte " + std::to_string(p[i]) + " at flat index " +
                     std::to_string(i) + " (expected 0 or 1)");
}

NpyHeader parse_npy_header(const std::uint8_t* data, std::size_t size, const std::string& name) {
  return parse_npy_header_prefix(data, size, size, name);
}

namespace {

// The header in the first `size` bytes, data_offset and count set; the data
// not looked at.
NpyHeader parse_header_only(const std::uint8_t* data, std::size_t size, const std::string& name) {
  static const std::uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (size < 8 || std::memcmp(data, kMagic, 6) != 0)
    fail(name, "not a .npy file (expected the magic \\x93NUMPY at the start)");
  const int major = data[6], minor = data[7];
  if (!((major == 1 || major == 2 || major == 3) && minor == 0))
    fail(name, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                   " (expected 1.0, 2.0 or 3.0)");
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  if (size < 8 + len_bytes) fail(name, "truncated .npy file: the header length is cut off");
  std::uint64_t header_len = 0;
  for (std::size_t i = 0; i < len_bytes; ++i) header_len |= std::uint64_t(data[8 + i]) << (8 * i);
  if (header_len > kMaxNpyHeaderBytes)
    fail(name, "the .npy header is " + std::to_string(header_len) + " bytes, more than the " +
                   std::to_string(kMaxNpyHeaderBytes) + " NumPy allows");
  const std::size_t start = 8 + len_bytes;
  if (size - start < header_len)
    fail(name, "truncated .npy file: header of " + std::to_string(header_len) + " bytes, only " +
                   std::to_string(size - start) + " present");
  const std::string text(reinterpret_cast<const char*>(data + start), std::size_t(header_len));
  for (std::size_t i = 0; i < text.size(); ++i)
    if (static_cast<unsigned char>(text[i]) >= 0x80 || text[i] == '\0')
      fail(name, "invalid .npy header: unexpected byte " +
                     std::to_string(static_cast<unsigned char>(text[i])) + " at byte " +
                     std::to_string(i));
  NpyHeader h = HeaderParser(text, major <= 2, name).parse();
  h.data_offset = start + std::size_t(header_len);
  h.count = checked_count(h.shape, dtype_size(h.dtype), name);
  return h;
}

}  // namespace

NpyHeader parse_npy_header_only(const std::uint8_t* data, std::size_t size,
                                const std::string& name) {
  return parse_header_only(data, size, name);
}

std::size_t npy_image_size(const std::uint8_t* data, std::size_t size, const std::string& name) {
  const NpyHeader h = parse_header_only(data, size, name);
  const std::size_t need = h.count * dtype_size(h.dtype);
  if (need > SIZE_MAX - h.data_offset) fail(name, "shape " + shape_str(h.shape) + " is too large");
  return h.data_offset + need;
}

NpyHeader parse_npy_header_prefix(const std::uint8_t* data, std::size_t size, std::size_t total,
                                  const std::string& name) {
  NpyHeader h = parse_header_only(data, size, name);
  const std::size_t need = h.count * dtype_size(h.dtype);
  const std::size_t have = total - h.data_offset;
  if (have < need)
    fail(name, "truncated .npy file: shape " + shape_str(h.shape) + " " + dtype_name(h.dtype) +
                   " needs " + std::to_string(need) + " data bytes, found " + std::to_string(have));
  if (have > need)
    fail(name, std::to_string(have - need) + " unexpected trailing bytes after the data of shape " +
                   shape_str(h.shape) + " " + dtype_name(h.dtype));
  return h;
}

RawArray parse_npy(const std::uint8_t* data, std::size_t size, const std::string& name) {
  const NpyHeader h = parse_npy_header(data, size, name);
  detail::Stored s;
  s.info.dtype = h.dtype;
  s.info.shape = h.shape;
  s.big_endian = h.big_endian;
  s.fortran_order = h.fortran_order;
  return detail::to_native(data + h.data_offset, s, name);
}

std::string npy_header_f32(const std::vector<std::size_t>& shape) {
  return npy_header(shape, "<f4");
}

std::string npy_header(const std::vector<std::size_t>& shape, const std::string& descr) {
  // Byte for byte what np.save writes (format.py _write_array_header and
  // _wrap_header, version 1.0): sorted keys, repr(shape), spare spaces for
  // growing axis 0, then spaces and '\n' up to a multiple of 64 bytes.
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_str(shape) + ", }";
  if (!shape.empty()) dict.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');
  const std::size_t hlen = dict.size() + 1;  // + '\n'
  const std::size_t pad = kArrayAlign - (6 + 2 + 2 + hlen) % kArrayAlign;
  const std::size_t total = hlen + pad;
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(total & 0xff);
  out += char((total >> 8) & 0xff);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  return out;
}

std::string encode_npy(const Tensor& t) {
  std::string out = npy_header_f32(t.shape);
  const std::size_t header = out.size();
  out.resize(header + t.data.size() * 4);
  // Little-endian float32: this build is little-endian (x86-64, aarch64).
  if (!t.data.empty()) std::memcpy(&out[header], t.data.data(), t.data.size() * 4);
  return out;
}

// ---- conversions (the engine is convert.cpp) -------------------------------

namespace {

double float_at(const RawArray& a, std::size_t i) {
  return detail::float_value(a.bytes.data(), a.dtype, i);
}

}  // namespace

Tensor to_float32(const RawArray& a, const std::string& name, bool allow_nonfinite) {
  detail::Stored s;
  s.info.dtype = a.dtype;
  s.info.shape = a.shape;
  detail::require_float(s.info, name);
  const std::size_t n = a.count();
  if (a.bytes.size() != n * dtype_size(a.dtype))
    throw Error(Exit::software, name + ": array bytes do not match its shape");
  Tensor t;
  t.shape = a.shape;
  t.data.resize(n);
  std::size_t R, K;
  detail::row_view(s.info, false, R, K, name);
  detail::convert_rows(a.bytes.data(), s, 0, R, false, t.ptr(), allow_nonfinite, name);
  return t;
}

Mask to_mask(const RawArray& a, const std::string& name) {
  const std::size_t n = a.count(), size = dtype_size(a.dtype);
  if (a.bytes.size() != n * size)
    throw Error(Exit::software, name + ": array bytes do not match its shape");
  Mask m;
  m.shape = a.shape;
  m.data.resize(n);
  if (dtype_is_float(a.dtype)) {
    for (std::size_t i = 0; i < n; ++i) {
      const double v = float_at(a, i);
      if (v != 0.0 && v != 1.0)
        fail(name, "mask value " + detail::value_str(v) + " at index " +
                       detail::index_str(i, a.shape) +
                       " (a float mask must hold only 0 and 1; or use a bool/int array)");
      m.data[i] = v != 0.0;
    }
    return m;
  }
  // Integers and bools: any nonzero byte of an element makes it true,
  // whatever the element size (bytes are already in native order).
  const std::uint8_t* p = a.bytes.data();
  for (std::size_t i = 0; i < n; ++i) {
    std::uint8_t any = 0;
    for (std::size_t b = 0; b < size; ++b) any |= p[i * size + b];
    m.data[i] = any != 0;
  }
  return m;
}

}  // namespace attn

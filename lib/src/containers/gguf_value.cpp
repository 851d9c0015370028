// GGUF metadata values (gguf.h's GgufValue): each a view of its bytes in the
// file, already bounds-checked by the parser (gguf.cpp), decoded when asked
// for, with the type checked and a message naming the file and key.
#include <cstdio>
#include <limits>

#include "attn/error.h"
#include "containers/gguf.h"
#include "containers/gguf_bytes.h"

namespace attn::detail {

namespace {

bool gguf_is_integer_type(GgufType t) {
  switch (t) {
    case GgufType::u8:
    case GgufType::i8:
    case GgufType::u16:
    case GgufType::i16:
    case GgufType::u32:
    case GgufType::i32:
    case GgufType::u64:
    case GgufType::i64:
      return true;
    default:
      return false;
  }
}

std::string gguf_format_double(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

const char* gguf_type_name(GgufType t) {
  switch (t) {
    case GgufType::u8:
      return "u8";
    case GgufType::i8:
      return "i8";
    case GgufType::u16:
      return "u16";
    case GgufType::i16:
      return "i16";
    case GgufType::u32:
      return "u32";
    case GgufType::i32:
      return "i32";
    case GgufType::f32:
      return "f32";
    case GgufType::boolean:
      return "bool";
    case GgufType::string:
      return "string";
    case GgufType::array:
      return "array";
    case GgufType::u64:
      return "u64";
    case GgufType::i64:
      return "i64";
    case GgufType::f64:
      return "f64";
  }
  return "unknown";
}

// ---- GgufValue ----

void GgufValue::wrong(const std::string& expected) const {
  std::string found = gguf_type_name(type_);
  if (is_array()) found = "array of " + std::to_string(count_) + " " + gguf_type_name(elem_);
  throw Error(Exit::data, where_ + ": expected " + expected + ", found " + found);
}

bool GgufValue::is_integer() const { return gguf_is_integer_type(type_); }

std::int64_t GgufValue::to_int() const {
  switch (type_) {
    case GgufType::u8:
      return gguf_load<std::uint8_t>(p_);
    case GgufType::i8:
      return gguf_load<std::int8_t>(p_);
    case GgufType::u16:
      return gguf_load<std::uint16_t>(p_);
    case GgufType::i16:
      return gguf_load<std::int16_t>(p_);
    case GgufType::u32:
      return gguf_load<std::uint32_t>(p_);
    case GgufType::i32:
      return gguf_load<std::int32_t>(p_);
    case GgufType::i64:
      return gguf_load<std::int64_t>(p_);
    case GgufType::u64: {
      const auto v = gguf_load<std::uint64_t>(p_);
      if (v > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
        throw Error(Exit::data, where_ + ": value " + std::to_string(v) + " is out of range");
      return std::int64_t(v);
    }
    default:
      wrong("an integer");
  }
}

std::uint64_t GgufValue::to_uint() const {
  if (type_ == GgufType::u64) return gguf_load<std::uint64_t>(p_);
  const std::int64_t v = to_int();
  if (v < 0)
    throw Error(Exit::data,
                where_ + ": expected a non-negative integer, found " + std::to_string(v));
  return std::uint64_t(v);
}

double GgufValue::to_double() const {
  if (type_ == GgufType::f32) return double(gguf_load<float>(p_));
  if (type_ == GgufType::f64) return gguf_load<double>(p_);
  if (type_ == GgufType::u64) return double(gguf_load<std::uint64_t>(p_));
  if (is_integer()) return double(to_int());
  wrong("a number");
}

bool GgufValue::to_bool() const {
  if (type_ != GgufType::boolean) wrong("a bool");
  return p_[0] != 0;
}

std::string GgufValue::to_string() const {
  if (type_ != GgufType::string) wrong("a string");
  const auto n = gguf_load<std::uint64_t>(p_);
  if (n > bytes_ - 8) throw Error(Exit::data, where_ + ": string runs past its value");
  return std::string(reinterpret_cast<const char*>(p_ + 8), std::size_t(n));
}

// Element i, given `at` pointing at it; advances `at` past it. Bounds are
// checked again (the file may have changed under the mapping).
GgufValue GgufValue::element(std::uint64_t i, const std::uint8_t*& at) const {
  const std::string where = where_ + "[" + std::to_string(i) + "]";
  const std::uint8_t* end = p_ + bytes_;
  auto need = [&](std::uint64_t n) {
    if (n > std::uint64_t(end - at)) throw Error(Exit::data, where + ": runs past its array");
  };
  if (elem_ == GgufType::string) {
    need(8);
    const auto n = gguf_load<std::uint64_t>(at);
    if (n > std::uint64_t(end - at) - 8) throw Error(Exit::data, where + ": runs past its array");
    GgufValue v(where, GgufType::string, GgufType::u8, 1, at, std::size_t(8 + n));
    at += 8 + n;
    return v;
  }
  if (elem_ == GgufType::array) {
    // Nested: its own element type and count, then its elements. Its byte
    // length is found by walking it.
    need(12);
    if (!gguf_known_type(gguf_load<std::uint32_t>(at)))
      throw Error(Exit::data, where + ": unknown type");
    const auto et = static_cast<GgufType>(gguf_load<std::uint32_t>(at));
    const auto count = gguf_load<std::uint64_t>(at + 4);
    GgufValue v(where, GgufType::array, et, count, at + 12, std::size_t(end - (at + 12)));
    const std::uint8_t* q = at + 12;
    if (gguf_fixed_size(et) != 0) {
      if (count > std::uint64_t(end - q) / gguf_fixed_size(et))
        throw Error(Exit::data, where + ": runs past its array");
      q += count * gguf_fixed_size(et);
    } else {
      for (std::uint64_t k = 0; k < count; ++k) v.element(k, q);
    }
    v.bytes_ = std::size_t(q - v.p_);
    at = q;
    return v;
  }
  const std::size_t s = gguf_fixed_size(elem_);
  if (s == 0) throw Error(Exit::data, where + ": unknown type");
  need(s);
  GgufValue v(where, elem_, GgufType::u8, 1, at, s);
  at += s;
  return v;
}

std::vector<GgufValue> GgufValue::elements() const { return first_elements(count_); }

std::vector<GgufValue> GgufValue::first_elements(std::uint64_t n) const {
  if (!is_array()) wrong("an array");
  std::vector<GgufValue> out;
  const std::uint8_t* at = p_;
  for (std::uint64_t i = 0; i < count_ && i < n; ++i) out.push_back(element(i, at));
  return out;
}

std::vector<std::int64_t> GgufValue::to_int_array() const {
  if (!is_array() || !gguf_is_integer_type(elem_)) wrong("an array of integers");
  std::vector<std::int64_t> out;
  out.reserve(std::size_t(count_));
  const std::uint8_t* at = p_;
  for (std::uint64_t i = 0; i < count_; ++i) out.push_back(element(i, at).to_int());
  return out;
}

std::vector<double> GgufValue::to_double_array() const {
  if (!is_array() ||
      !(gguf_is_integer_type(elem_) || elem_ == GgufType::f32 || elem_ == GgufType::f64))
    wrong("an array of numbers");
  std::vector<double> out;
  out.reserve(std::size_t(count_));
  const std::uint8_t* at = p_;
  for (std::uint64_t i = 0; i < count_; ++i) out.push_back(element(i, at).to_double());
  return out;
}

std::vector<std::string> GgufValue::to_string_array() const {
  if (!is_array() || elem_ != GgufType::string) wrong("an array of strings");
  std::vector<std::string> out;
  out.reserve(std::size_t(count_));
  const std::uint8_t* at = p_;
  for (std::uint64_t i = 0; i < count_; ++i) out.push_back(element(i, at).to_string());
  return out;
}

std::int64_t GgufValue::int_for_layer(std::uint64_t layer) const {
  if (!is_array()) return to_int();
  if (!gguf_is_integer_type(elem_)) wrong("an integer or an array of integers");
  if (layer >= count_)
    throw Error(Exit::data, where_ + ": has " + std::to_string(count_) +
                                " entries, none for layer " + std::to_string(layer));
  if (gguf_fixed_size(elem_) == 0) wrong("an integer or an array of integers");
  const std::uint8_t* at = p_ + layer * gguf_fixed_size(elem_);
  return element(layer, at).to_int();
}

std::string GgufValue::summary(std::size_t max_elements) const {
  switch (type_) {
    case GgufType::boolean:
      return to_bool() ? "true" : "false";
    case GgufType::f32:
    case GgufType::f64:
      return gguf_format_double(to_double());
    case GgufType::string: {
      // At most what gguf_shown() shows: a long chat template is not copied.
      if (bytes_ < 8) wrong("a string");
      const auto n = std::min<std::uint64_t>(gguf_load<std::uint64_t>(p_), bytes_ - 8);
      const std::string head(reinterpret_cast<const char*>(p_ + 8),
                             std::size_t(std::min<std::uint64_t>(n, 121)));
      return "\"" + gguf_shown(head) + "\"";
    }
    case GgufType::u64:
      return std::to_string(to_uint());
    case GgufType::array: {
      std::string s = std::string("[") + gguf_type_name(elem_) + " x " + std::to_string(count_);
      const std::uint8_t* at = p_;
      for (std::uint64_t i = 0; i < count_ && i < max_elements; ++i)
        s += (i == 0 ? ": " : ", ") + element(i, at).summary(max_elements);
      if (count_ > max_elements) s += ", ...";
      return s + "]";
    }
    default:
      return std::to_string(to_int());
  }
}

}  // namespace attn::detail

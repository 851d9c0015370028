// .safetensors files (the format spec in huggingface/safetensors README):
// an 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
//    ..., "__metadata__": {"k": "v"}}
// then the data section; offsets are relative to its start. As the
// reference implementation validates: the tensors, sorted by offset, must
// tile the data section exactly (no gap, no overlap, no trailing byte) and
// each must span exactly dtype size x element count bytes. Values are
// little-endian and row-major.
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/state_dict.h"
#include "npy_internal.h"

namespace attn {

namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;  // the reference's own cap
constexpr std::uint64_t kMaxFileBytes = std::uint64_t(16) << 30;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw Error(Exit::data, name + ": " + what);
}

bool safetensors_dtype(const std::string& s, DType& t) {
  static const struct {
    const char* name;
    DType t;
  } kTypes[] = {{"F16", DType::f2}, {"BF16", DType::bf16}, {"F32", DType::f4}, {"F64", DType::f8}, {"BOOL", DType::b1},
                {"U8", DType::u1},  {"I8", DType::i1},  {"I16", DType::i2}, {"I32", DType::i4},
                {"I64", DType::i8}, {"U16", DType::u2}, {"U32", DType::u4}, {"U64", DType::u8}};
  for (const auto& k : kTypes)
    if (s == k.name) {
      t = k.t;
      return true;
    }
  return false;
}

struct Entry {
  std::string key;
  DType dtype;
  std::vector<std::size_t> shape;
  std::uint64_t begin, end;
};

std::uint64_t as_uint(const nlohmann::json& v, const std::string& what) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    fail(what, "expected a non-negative integer, found " + v.dump());
  return v.get<std::uint64_t>();
}

Entry parse_entry(const std::string& path, const std::string& key, const nlohmann::json& v) {
  const std::string what = path + ":" + key;
  if (!v.is_object()) fail(what, "expected an object with dtype, shape and data_offsets");
  for (const auto& item : v.items())
    if (item.key() != "dtype" && item.key() != "shape" && item.key() != "data_offsets")
      fail(what, "unexpected field '" + item.key() + "'");
  if (!v.contains("dtype") || !v["dtype"].is_string()) fail(what, "missing string 'dtype'");
  if (!v.contains("shape") || !v["shape"].is_array()) fail(what, "missing array 'shape'");
  if (!v.contains("data_offsets") || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2)
    fail(what, "missing 'data_offsets' [begin, end]");
  Entry e;
  e.key = key;
  const std::string dtype = v["dtype"].get<std::string>();
  if (!safetensors_dtype(dtype, e.dtype))
    fail(what,
         "dtype '" + dtype +
             "' is not supported (expected F16/F32/F64, or BOOL/U8/I8/I16/I32/I64 for masks)");
  if (v["shape"].size() > 64) fail(what, "more than 64 dimensions");
  for (const auto& d : v["shape"]) {
    const std::uint64_t n = as_uint(d, what + " shape");
    if (n > SIZE_MAX) fail(what, "shape entry too large");
    e.shape.push_back(std::size_t(n));
  }
  e.begin = as_uint(v["data_offsets"][0], what + " data_offsets");
  e.end = as_uint(v["data_offsets"][1], what + " data_offsets");
  if (e.end < e.begin) fail(what, "data_offsets end is before begin");
  const std::size_t count = checked_count(e.shape, dtype_size(e.dtype), what);
  if (e.end - e.begin != std::uint64_t(count) * dtype_size(e.dtype))
    fail(what, "data_offsets span " + std::to_string(e.end - e.begin) + " bytes, but shape " +
                   shape_str(e.shape) + " " + dtype + " needs " +
                   std::to_string(count * dtype_size(e.dtype)));
  return e;
}

}  // namespace

StateDict read_safetensors(const std::string& path) {
  const std::vector<std::uint8_t> file = read_file(path, kMaxFileBytes);
  if (file.size() < 8) fail(path, "truncated .safetensors file (no header length)");
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= std::uint64_t(file[i]) << (8 * i);
  if (n > kMaxHeaderBytes)
    fail(path, "header length " + std::to_string(n) + " is more than the limit of " +
                   std::to_string(kMaxHeaderBytes) + " bytes");
  if (n > file.size() - 8)
    fail(path, "header length " + std::to_string(n) + " runs past the end of the " +
                   std::to_string(file.size()) + "-byte file");
  if (n == 0 || file[8] != '{') fail(path, "the header must be a JSON object starting with '{'");

  nlohmann::json header;
  try {
    // Duplicate tensor names would silently keep one of the two: refuse them.
    std::set<std::string> seen;
    auto no_duplicates = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& v) {
      if (depth == 1 && event == nlohmann::json::parse_event_t::key &&
          !seen.insert(v.get<std::string>()).second)
        fail(path, "key '" + v.get<std::string>() + "' appears twice in the header");
      return true;
    };
    header = nlohmann::json::parse(file.begin() + 8, file.begin() + 8 + std::ptrdiff_t(n),
                                   no_duplicates);
  } catch (const nlohmann::json::exception& e) {
    fail(path, std::string("the header is not valid JSON (") + e.what() + ")");
  }
  if (!header.is_object()) fail(path, "the header must be a JSON object");

  std::vector<Entry> entries;
  for (const auto& item : header.items()) {
    if (item.key() == "__metadata__") continue;  // free-form strings; not ours
    entries.push_back(parse_entry(path, item.key(), item.value()));
  }
  // Tile the data section exactly, like the reference's validate().
  const std::uint64_t data_size = file.size() - 8 - n;
  std::vector<const Entry*> order;
  for (const Entry& e : entries) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::uint64_t at = 0;
  for (const Entry* e : order) {
    if (e->begin < at) fail(path + ":" + e->key, "data_offsets overlap another tensor");
    if (e->begin > at)
      fail(path + ":" + e->key, "gap of " + std::to_string(e->begin - at) +
                                    " bytes before this tensor (the data must be covered exactly)");
    if (e->end > data_size)
      fail(path + ":" + e->key, "data_offsets end " + std::to_string(e->end) +
                                    " is past the data section of " + std::to_string(data_size) +
                                    " bytes");
    at = e->end;
  }
  if (at != data_size)
    fail(path, std::to_string(data_size - at) + " trailing bytes not covered by any tensor");

  StateDict sd(path);
  const std::uint8_t* data = file.data() + 8 + n;
  for (const Entry& e : entries) {
    RawArray a;
    a.dtype = e.dtype;
    a.shape = e.shape;
    a.bytes.assign(data + e.begin, data + e.end);
    if (a.dtype == DType::b1) check_bool_bytes(a.bytes.data(), a.bytes.size(), path + ":" + e.key);
    sd.add(e.key, std::move(a));
  }
  return sd;
}

}  // namespace attn

// .safetensors files (the format spec in huggingface/safetensors README):
// an 8-byte little-endian header length N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
//    ..., "__metadata__": {"k": "v"}}
// then the data section; offsets are relative to its start. As the
// reference implementation validates: the tensors, sorted by offset, must
// tile the data section exactly (no gap, no overlap, no trailing byte) and
// each must span exactly dtype size x element count bytes. Values are
// little-endian and row-major.
//
// The file is mapped and only the header is read when it opens. The spans'
// tiling is the file's structure and is checked at once; a tensor's own
// entry (its dtype, its shape, its span's length) is judged only when the
// tensor is used, so another layer's F8 or malformed entry never fails a run.
#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "attn/error.h"
#include "containers/fail.h"
#include "containers/mapped_file.h"
#include "containers/npy_internal.h"
#include "containers/readers.h"

namespace attn {

using detail::fail;

namespace {

constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;  // the reference's own cap

// The dtypes of the format; `size` 0: unknown to us, its span unchecked.
struct DTypeName {
  const char* name;
  DType t;
  std::size_t size;
  bool supported;
};
constexpr DTypeName kTypes[] = {{"F16", DType::f2, 2, true},      {"BF16", DType::bf16, 2, true},
                                {"F32", DType::f4, 4, true},      {"F64", DType::f8, 8, true},
                                {"BOOL", DType::b1, 1, true},     {"U8", DType::u1, 1, true},
                                {"I8", DType::i1, 1, true},       {"I16", DType::i2, 2, true},
                                {"I32", DType::i4, 4, true},      {"I64", DType::i8, 8, true},
                                {"U16", DType::u2, 2, true},      {"U32", DType::u4, 4, true},
                                {"U64", DType::u8, 8, true},      {"F8_E4M3", DType::u1, 1, false},
                                {"F8_E5M2", DType::u1, 1, false}, {"F8_E8M0", DType::u1, 1, false},
                                {"C64", DType::u8, 8, false}};

struct Entry {
  std::string key;
  std::uint64_t begin = 0, end = 0;
  std::shared_ptr<detail::Stored> stored;
};

std::uint64_t as_uint(const nlohmann::ordered_json& v, const std::string& what) {
  if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
    fail(what, "expected a non-negative integer, found " + v.dump());
  return v.get<std::uint64_t>();
}

// The tensor's own description; a problem with it is recorded in
// stored->problem (reported when the tensor is used), not thrown.
void parse_tensor(const nlohmann::ordered_json& v, detail::Stored& s, std::uint64_t span,
                  const std::string& what) {
  const std::string dtype = v["dtype"].get<std::string>();
  const DTypeName* t = nullptr;
  for (const auto& k : kTypes)
    if (dtype == k.name) t = &k;
  if (t == nullptr || !t->supported) s.info.unsupported_dtype = dtype;
  if (t != nullptr) s.info.dtype = t->t;
  if (v["shape"].size() > 64) {
    s.problem = what + ": more than 64 dimensions";
    return;
  }
  for (const auto& d : v["shape"]) {
    if (!d.is_number_unsigned() && !(d.is_number_integer() && d.get<std::int64_t>() >= 0)) {
      s.problem = what + ": shape: expected a non-negative integer, found " + d.dump();
      return;
    }
    const std::uint64_t n = d.get<std::uint64_t>();
    if (n > SIZE_MAX) {
      s.problem = what + ": shape entry too large";
      return;
    }
    s.info.shape.push_back(std::size_t(n));
  }
  if (t == nullptr) return;  // size unknown: the span cannot be judged
  try {
    const std::size_t count = checked_count(s.info.shape, t->size, "");
    if (span != std::uint64_t(count) * t->size)
      s.problem = what + ": data_offsets span " + std::to_string(span) + " bytes, but shape " +
                  shape_str(s.info.shape) + " " + dtype + " needs " +
                  std::to_string(count * t->size);
  } catch (const Error&) {
    s.problem = what + ": shape " + shape_str(s.info.shape) + " is too large";
  }
}

Entry parse_entry(const std::string& path, const std::string& key,
                  const nlohmann::ordered_json& v) {
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
  e.begin = as_uint(v["data_offsets"][0], what + " data_offsets");
  e.end = as_uint(v["data_offsets"][1], what + " data_offsets");
  if (e.end < e.begin) fail(what, "data_offsets end is before begin");
  e.stored = std::make_shared<detail::Stored>();
  parse_tensor(v, *e.stored, e.end - e.begin, what);
  return e;
}

}  // namespace

namespace detail {

StoredEntries safetensors_entries(const std::string& path) {
  // The 8-byte header length and the '{' after it, checked from the first
  // bytes before the file is mapped.
  std::uint64_t n = 0;
  const auto mapped = detail::MappedFile::open(path, [&](const FileEnds& e) {
    if (e.size < 8) fail(path, "truncated .safetensors file (no header length)");
    for (int i = 0; i < 8; ++i) n |= std::uint64_t(e.head[i]) << (8 * i);
    if (n > kMaxSafetensorsHeaderBytes)
      fail(path, "header length " + std::to_string(n) + " is more than the limit of " +
                     std::to_string(kMaxSafetensorsHeaderBytes) + " bytes");
    if (n > e.size - 8)
      fail(path, "header length " + std::to_string(n) + " runs past the end of the " +
                     std::to_string(e.size) + "-byte file");
    if (n == 0 || e.head[8] != '{')  // head_n > 8: n > 0 bytes follow the length
      fail(path, "the header must be a JSON object starting with '{'");
  });
  // The header parsed from the mapping: a truncation meanwhile is the error.
  return reading(*mapped, path, [&] {
    const std::uint8_t* file = mapped->data();

    nlohmann::ordered_json header;  // file order of the keys kept
    try {
      // Duplicate tensor names would silently keep one of the two: refuse them.
      std::set<std::string> seen;
      auto no_duplicates = [&](int depth, nlohmann::ordered_json::parse_event_t event,
                               nlohmann::ordered_json& v) {
        if (depth == 1 && event == nlohmann::ordered_json::parse_event_t::key &&
            !seen.insert(v.get<std::string>()).second)
          fail(path, "key '" + v.get<std::string>() + "' appears twice in the header");
        return true;
      };
      header = nlohmann::ordered_json::parse(file + 8, file + 8 + n, no_duplicates);
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
    const std::uint64_t data_size = mapped->size() - 8 - n;
    std::vector<const Entry*> order;
    for (const Entry& e : entries) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
      return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    std::uint64_t at = 0;
    for (const Entry* e : order) {
      if (e->begin < at) fail(path + ":" + e->key, "data_offsets overlap another tensor");
      if (e->begin > at)
        fail(path + ":" + e->key,
             "gap of " + std::to_string(e->begin - at) +
                 " bytes before this tensor (the data must be covered exactly)");
      if (e->end > data_size)
        fail(path + ":" + e->key, "data_offsets end " + std::to_string(e->end) +
                                      " is past the data section of " + std::to_string(data_size) +
                                      " bytes");
      at = e->end;
    }
    if (at != data_size)
      fail(path, std::to_string(data_size - at) + " trailing bytes not covered by any tensor");

    StoredEntries out;
    const std::size_t data = 8 + std::size_t(n);
    for (Entry& e : entries) {
      e.stored->region = std::make_shared<detail::MappedRegion>(mapped, data + std::size_t(e.begin),
                                                                std::size_t(e.end - e.begin));
      out.push_back({e.key, std::move(e.stored)});
    }
    return out;
  });
}

}  // namespace detail

}  // namespace attn

// What a GGUF file holds, for `--model FILE.gguf --info` (CONTRACT.md
// "(v4) Comparisons, statistics, intermediates"), as gguf-py's gguf-dump
// lists it: every metadata key with its GGUF type and value, and every
// tensor with its ggml type, shape and bytes. Only the header is read; a
// long array (a 150,000-token vocabulary) is summarized by its type, its
// count and its first few elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn {

// One metadata key. Scalars: `value` is the number, bool or string (strings
// as valid UTF-8). Arrays: type "array", `element_type` and `count`, and
// `value` the first min(count, max_items) elements (nested arrays the same
// way), `summarized` when count > max_items.
struct GgufMetadataEntry {
  std::string key;
  std::string type;          // "u8" .. "f64", "bool", "string", "array" (gguf.h's gguf_type)
  std::string element_type;  // arrays only
  std::uint64_t count = 1;   // arrays: their element count
  bool summarized = false;   // arrays longer than max_items: value holds the first ones
  nlohmann::ordered_json value;
};

// One tensor info, in file order.
struct GgufTensorEntry {
  std::string name;
  std::string type;                  // ggml's name of its type: "F32", "Q4_K", ...
  std::vector<std::uint64_t> shape;  // NumPy order: ggml's ne reversed
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;   // its data in the file
  std::uint64_t offset = 0;  // where its data starts in the file (absolute)
};

struct GgufInfo {
  std::string path;
  std::uint32_t version = 0;
  std::uint64_t alignment = 32;
  std::uint64_t data_offset = 0;  // start of the data section
  std::uint64_t file_bytes = 0;
  std::string name;          // general.name ("" when absent or not a string)
  std::string architecture;  // general.architecture ("" when absent)
  std::vector<GgufMetadataEntry> metadata;
  std::vector<GgufTensorEntry> tensors;
};

// Arrays longer than this are summarized (gguf-dump prints no array values
// unless asked; a few elements tell a vocabulary from a per-layer list).
constexpr std::size_t kGgufInfoArrayItems = 16;

// Reads `path`'s header (the checks of the GGUF reader: Exit::no_input for a
// missing file, Exit::data naming the file for a malformed one).
GgufInfo read_gguf_info(const std::string& path, std::size_t max_array_items = kGgufInfoArrayItems);

// general.name for pictures and run.json: "" when the file has none, or
// when `path` is not a readable GGUF file (pictures never fail over a title).
std::string gguf_model_name(const std::string& path);

}  // namespace attn

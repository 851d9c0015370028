// GGUF files (llama.cpp, Ollama, LM Studio models), versions 2 and 3, read
// from a mapped file (containers/mapped_file.h) or a byte span (private to
// lib/src; gguf_entries in readers.h hands its tensors to the index). Format: ggml docs/gguf.md;
// checks after ggml/src/gguf.cpp gguf_init_from_reader, made stricter where a hostile file could
// make a reader allocate, overflow or read out of bounds:
//
//   "GGUF" | u32 version | u64 tensor_count | u64 kv_count
//   kv_count x  (string key | u32 value_type | value)
//   tensor_count x (string name | u32 n_dims | u64 ne[n_dims] | u32 ggml_type
//                   | u64 offset)
//   padding to general.alignment (default 32) | data section
//
// A string is u64 length + bytes (no NUL); an array is u32 element type +
// u64 count + elements (nested arrays and arrays of strings included). All
// little-endian. ne[] is in ggml order, ne[0] the fastest-varying dimension:
// the REVERSE of the NumPy / PyTorch shape (a Linear weight (out, in) is
// stored as ne = [in, out]). A tensor's offset is relative to the data
// section and a multiple of the alignment.
//
// Metadata values are not copied: each is a view of its bytes in the file,
// checked once when the file opens and decoded when asked for, so a
// 250,000-entry vocabulary costs nothing unless it is read. The file's bytes
// must outlive the GgufFile (read_gguf's mapping does; parse_gguf takes an
// owner to keep).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/ggml_types.h"

namespace attn::detail {

class MappedFile;

// gguf.h's `enum gguf_type`: the value types of metadata.
enum class GgufType : std::uint32_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
};

// "u32", "f32", "bool", "string", "array", ...
const char* gguf_type_name(GgufType t);

// One metadata value: a scalar, a string or an array (of any type, nested
// arrays included), viewed in the file. The accessors check the type and
// throw Exit::data naming the file and key ("model.gguf: llama.rope.freq_base:
// expected a number, found string").
class GgufValue {
 public:
  GgufType type() const { return type_; }
  bool is_array() const { return type_ == GgufType::array; }
  bool is_integer() const;  // u8 .. i64 (not bool)
  bool is_float() const { return type_ == GgufType::f32 || type_ == GgufType::f64; }
  // Arrays: the element type and the element count.
  GgufType element_type() const { return elem_; }
  std::uint64_t size() const { return count_; }

  // Any integer type whose value fits (llama.cpp's converters write u32 for
  // most sizes; other writers use u64 or i32).
  std::int64_t to_int() const;
  std::uint64_t to_uint() const;
  // f32 or f64 (an f32 widened exactly); integers are accepted too.
  double to_double() const;
  bool to_bool() const;
  std::string to_string() const;
  // Arrays of integers, of numbers, of strings; the elements of any array.
  std::vector<std::int64_t> to_int_array() const;
  std::vector<double> to_double_array() const;
  std::vector<std::string> to_string_array() const;
  std::vector<GgufValue> elements() const;
  // The first min(n, size()) elements (a vocabulary's first few, not all of it).
  std::vector<GgufValue> first_elements(std::uint64_t n) const;
  // The value for a per-layer setting: a scalar, or element `layer` of an
  // array (llama.cpp's get_key_or_arr: head_count_kv, sliding-window
  // patterns and the like may be either).
  std::int64_t int_for_layer(std::uint64_t layer) const;

  // A short printable form: 32, 1e+06, "llama", [u32 x 32: 8, 8, 8, ...].
  std::string summary(std::size_t max_elements = 6) const;
  // "<file>: <key>" as the messages name it.
  const std::string& where() const { return where_; }

 private:
  friend class GgufParser;
  GgufValue(std::string where, GgufType type, GgufType elem, std::uint64_t count,
            const std::uint8_t* p, std::size_t bytes)
      : where_(std::move(where)), type_(type), elem_(elem), count_(count), p_(p), bytes_(bytes) {}
  [[noreturn]] void wrong(const std::string& expected) const;
  GgufValue element(std::uint64_t i, const std::uint8_t*& at) const;

  std::string where_;
  GgufType type_ = GgufType::u8;
  GgufType elem_ = GgufType::u8;     // arrays only
  std::uint64_t count_ = 1;          // arrays: element count
  const std::uint8_t* p_ = nullptr;  // scalars: the value; arrays: the first element
  std::size_t bytes_ = 0;            // bytes from p_ to the end of the value
};

struct GgufKeyValue {
  std::string key;
  GgufValue value;
};

struct GgufTensorInfo {
  std::string name;
  std::uint32_t type = 0;         // a ggml type id (GgmlType); ggml_type_name() names it
  std::vector<std::uint64_t> ne;  // ggml order, ne[0] fastest; n_dims entries (0..4)
  std::uint64_t offset = 0;       // absolute file offset of the data
  std::uint64_t nbytes = 0;       // ne product / block size x block bytes
  std::uint64_t elements = 0;     // product of ne (1 for n_dims 0)

  // NumPy / PyTorch order: ne reversed (a 2-D weight ne [in, out] is (out, in)).
  std::vector<std::size_t> shape() const;
  // A row is ne[0] consecutive elements (a whole number of blocks).
  std::uint64_t row_length() const { return ne.empty() ? 1 : ne[0]; }
  std::uint64_t rows() const { return row_length() == 0 ? 0 : elements / row_length(); }
  std::uint64_t row_bytes() const;
};

class GgufFile {
 public:
  const std::string& path() const { return path_; }
  std::uint32_t version() const { return version_; }
  std::uint64_t alignment() const { return alignment_; }
  std::uint64_t data_offset() const { return data_offset_; }  // start of the data section
  const std::uint8_t* bytes() const { return data_; }         // the first avail() bytes of the file
  std::size_t avail() const { return avail_; }                // the header (read_gguf) or all of it
  std::size_t size() const { return size_; }
  // The mapped file (read_gguf), null for parse_gguf's bytes.
  const std::shared_ptr<const MappedFile>& mapped() const { return mapped_; }

  // Metadata in file order.
  const std::vector<GgufKeyValue>& metadata() const { return kv_; }
  const GgufValue* find(const std::string& key) const;
  // Exit::data "<file>: metadata key '<key>' is missing" when absent.
  const GgufValue& at(const std::string& key) const;
  // Exit::data "<file>: <key>: <what>", for a key whose value the caller cannot use.
  [[noreturn]] void key_error(const std::string& key, const std::string& what) const;

  // Tensor infos in file order.
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(const std::string& name) const;
  const GgufTensorInfo& tensor(const std::string& name) const;  // Exit::data when absent

 private:
  friend class GgufParser;
  friend GgufFile read_gguf(const std::string& path);
  std::string path_;
  std::shared_ptr<const void> owner_;         // keeps data_ alive
  std::shared_ptr<const MappedFile> mapped_;  // read_gguf: the mapping (owner_ too)
  const std::uint8_t* data_ = nullptr;
  std::size_t avail_ = 0, size_ = 0;
  std::uint32_t version_ = 0;
  std::uint64_t alignment_ = 32;
  std::uint64_t data_offset_ = 0;
  std::vector<GgufKeyValue> kv_;
  std::vector<GgufTensorInfo> tensors_;
  std::unordered_map<std::string, std::size_t> kv_index_, tensor_index_;
};

// Maps `path`'s header read-only (the metadata and tensor table; not the
// tensors, which are mapped one at a time as they are read, so a 3 GB file
// costs the address space of its header and one tensor) and parses it.
// Exit::no_input when the path is missing, a folder or not a regular file;
// Exit::data, naming the file and what is wrong, for anything malformed.
GgufFile read_gguf(const std::string& path);

// The first part of the file read_gguf maps for the header; more when the
// header is longer (a large vocabulary).
constexpr std::size_t kGgufFirstWindow = std::size_t(1) << 20;

// Parses the bytes [data, data + size); `name` names them in messages and
// `owner` (may be null) is kept alive as long as the GgufFile.
GgufFile parse_gguf(const std::uint8_t* data, std::size_t size, const std::string& name,
                    std::shared_ptr<const void> owner = nullptr);

// Rows [first_row, first_row + n_rows) of tensor `t` (a row is ne[0]
// elements) as float32 into dst[0 .. n_rows * ne[0]), dequantized as ggml
// does. Exit::data naming the file, tensor and type when the type is not one
// gguf_dequant handles, or when the rows are out of range.
void dequantize_rows(const GgufFile& file, const GgufTensorInfo& t, std::uint64_t first_row,
                     std::uint64_t n_rows, float* dst);
// The whole tensor, in NumPy order of t.shape().
std::vector<float> dequantize_tensor(const GgufFile& file, const GgufTensorInfo& t);

}  // namespace attn::detail

// Writing .safetensors images in tests, laid out per the format spec
// (huggingface/safetensors README): u64 little-endian header length, the
// JSON header {name: {dtype, shape, data_offsets}} in the order given, then
// the data of each tensor in the same order. Raw dtypes and byte strings, so
// a test can write what NumPy cannot (BF16, F8, NaN bit patterns).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "attn/state_dict.h"
#include "attn/tensor.h"

namespace attn::test {

struct StTensor {
  std::string key, dtype;  // "F32", "BF16", "F8_E4M3", ...
  std::vector<std::size_t> shape;
  std::string bytes;
};

inline std::string safetensors_image(const std::vector<StTensor>& ts) {
  std::string header = "{", data;
  for (const StTensor& t : ts) {
    if (header.size() > 1) header += ", ";
    std::string shape;
    for (std::size_t d : t.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    header += "\"" + t.key + "\": {\"dtype\": \"" + t.dtype + "\", \"shape\": [" + shape +
              "], \"data_offsets\": [" + std::to_string(data.size()) + ", " +
              std::to_string(data.size() + t.bytes.size()) + "]}";
    data += t.bytes;
  }
  header += "}";
  while (header.size() % 8) header += ' ';
  std::string out;
  for (int i = 0; i < 8; ++i) out += char((std::uint64_t(header.size()) >> (8 * i)) & 0xff);
  return out + header + data;
}

inline std::string f32_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  if (!v.empty()) std::memcpy(&s[0], v.data(), s.size());
  return s;
}

// The top 16 bits of each float32: exact for values that are bf16 already.
inline std::string bf16_bytes_of(const std::vector<float>& v) {
  std::string s;
  for (float f : v) {
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    s += char((b >> 16) & 0xff), s += char(b >> 24);
  }
  return s;
}

inline std::string u16_bytes(const std::vector<std::uint16_t>& v) {
  std::string s;
  for (std::uint16_t x : v) s += char(x & 0xff), s += char(x >> 8);
  return s;
}

// Every tensor of a state dict as it is typed (F32, BOOL, ...), keys
// renamed by `rename`.
template <typename Rename>
std::vector<StTensor> entries_of(const StateDict& sd, Rename rename) {
  static const char* const kNames[] = {"F16", "F32", "F64", "BOOL", "U8",  "U16", "U32",
                                       "U64", "I8",  "I16", "I32",  "I64", "BF16"};
  std::vector<StTensor> out;
  for (const std::string& k : sd.keys()) {
    const RawArray a = sd.read_raw(k);
    out.push_back(
        {rename(k), kNames[int(a.dtype)], a.shape, std::string(a.bytes.begin(), a.bytes.end())});
  }
  return out;
}

}  // namespace attn::test

// The GGUF target (issues 25 and 27), shared by fuzz/fuzz_gguf.cpp and the
// replay test: the bytes parsed from memory (header, every metadata value
// decoded, printed and walked, tensor infos, every dequantizable tensor of up
// to 2^20 elements converted), then, when they parse, the same bytes as a
// .gguf file through the index (open_state_dict, every tensor read both ways)
// and as --model FILE.gguf (the architecture's settings for every layer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/error.h"
#include "attn/model_folder.h"
#include "containers/gguf.h"
#include "targets.h"

namespace attn::fuzz {

inline void walk_gguf_value(const detail::GgufValue& v) {
  (void)v.summary();
  if (v.is_array()) {
    if (v.size() <= 4096)
      for (const detail::GgufValue& e : v.elements()) walk_gguf_value(e);
    if (v.element_type() == detail::GgufType::string) (void)v.to_string_array();
    if (v.size() > 0) {
      try {
        (void)v.int_for_layer(0);
      } catch (const Error&) {
      }
    }
  } else if (v.is_integer()) {
    (void)v.to_int();
  } else if (v.type() == detail::GgufType::string) {
    (void)v.to_string();
  }
}

// --model FILE.gguf on the file: its settings, each layer's config.
inline void gguf_as_model(const std::string& path) {
  try {
    const ModelFolder m = open_model_folder(path);
    for (std::int64_t layer = 0; layer < m.num_layers && layer < 64; ++layer) {
      try {
        (void)layer_config(m, layer);
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
}

}  // namespace attn::fuzz

inline int fuzz_gguf(const std::uint8_t* data, std::size_t size) {
  bool parsed = false;
  try {
    const attn::detail::GgufFile f = attn::detail::parse_gguf(data, size, "fuzz.gguf");
    for (const attn::detail::GgufKeyValue& kv : f.metadata()) attn::fuzz::walk_gguf_value(kv.value);
    std::vector<float> out;
    for (const attn::detail::GgufTensorInfo& t : f.tensors()) {
      (void)t.shape();
      if (!attn::ggml_type_dequantized(t.type) || t.elements > (1u << 20)) continue;
      out.resize(std::size_t(t.elements));
      attn::detail::dequantize_rows(f, t, 0, t.rows(), out.data());
      if (t.rows() > 1) attn::detail::dequantize_rows(f, t, t.rows() - 1, 1, out.data());
    }
    parsed = true;
  } catch (const attn::Error&) {
  }
  if (!parsed) return 0;
  const std::string path = attn::fuzz::scratch_path(".gguf");
  attn::fuzz::write_scratch(path, data, size);
  try {
    attn::fuzz::read_all(attn::open_state_dict(path));
  } catch (const attn::Error&) {
  }
  attn::fuzz::gguf_as_model(path);
  ::unlink(path.c_str());
  return 0;
}

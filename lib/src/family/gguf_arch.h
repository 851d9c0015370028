// GGUF files as model folders (CONTRACT.md "(v3) GGUF", private to
// lib/src/family): a GGUF architecture maps onto the SAME family row as a
// Hugging Face folder. Its `{arch}.*` metadata is rewritten as the
// config.json fields that row reads (llama.cpp's per-architecture defaults for
// keys the converter leaves out), and its tensor names ("blk.N.attn_q.weight")
// as the row's (weights_rename), with what llama.cpp's converter changed in
// the tensors undone: the Q/K row permutation of llama-family models, the +1
// Gemma's converter adds to q/k norm weights. The table is gguf_arch.cpp.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "attn/state_dict.h"

namespace attn::detail {
class GgufFile;
}

namespace attn::family {

// True when `path` names a GGUF file (a regular file ending .gguf, or one
// starting with the bytes "GGUF").
bool is_gguf_file(const std::string& path);

struct GgufModel {
  std::string architecture;  // general.architecture
  std::string model_type;    // the family row it maps onto
  nlohmann::json hf;         // config.json's fields, as the row reads them
};

// The file's settings as the row's config.json. Exit::config naming the file
// and key for an unknown architecture or a missing / malformed key (a size
// of the wrong type, a per-layer array of the wrong length, ...).
GgufModel gguf_model(const detail::GgufFile& f);

// Layer N's config over what the row mapped from `hf` (gguf_model's): its own
// head counts where they differ per layer, weights_prefix "blk.N.", the GGUF
// names renamed to the row's layout, the converter's +1 on q/k norm weights
// accounted for.
void gguf_layer_config(const std::string& architecture, const nlohmann::json& hf,
                       std::int64_t layer, nlohmann::json& out);

// The file's tensors as --model FILE.gguf reads them: each layer's attention
// tensors (other block tensors left out), Q/K rows un-permuted where the
// architecture's converter permuted them.
StateDict gguf_weights(const std::string& path);

// The architectures understood, in table order.
std::vector<std::string> gguf_architectures();

}  // namespace attn::family

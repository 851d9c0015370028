// The table of GGUF architectures (gguf_table.cpp, private to lib/src/family):
// each general.architecture, the family row it maps onto and what llama.cpp
// keeps in C++ rather than in the file (its per-architecture defaults and
// hard-coded patterns: llama-model.cpp load_hparams; the converter's changes:
// convert_hf_to_gguf.py and its conversion/*.py). gguf_arch.cpp applies it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace attn::detail {
class GgufFile;
}

namespace attn::family {

// One GGUF architecture.
struct GgufArch {
  const char* architecture;  // general.architecture
  const char* model_type;    // the family row
  // llama.cpp's converter permuted the Q and K rows (LlamaModel.permute, for
  // the architectures llama.cpp ropes in NORM mode from rotate_half weights).
  bool permuted_qk = false;
  // The converter stored q_norm / k_norm weights as 1 + w (Gemma's norm_shift).
  bool norm_shift = false;
  double theta = 10000.0;  // rope.freq_base when the file has none
  // Gemma 2 / 3: query_pre_attn_scalar is hard-coded by size: C / H for the
  // 27B models (this many layers), else the head size.
  std::int64_t big_layers = 0;
  // Keys llama.cpp hard-codes for the architecture, as config.json fields.
  nlohmann::json fixed = nlohmann::json::object();
  // The layout the file's tensors have when the converter reordered them
  // (GPT-NeoX's and BLOOM's per-head [q, k, v] rows as all q, all k, all v).
  const char* layout = nullptr;
  // The config.json key of the row's q/k/v bias flag, set from the file's
  // tensors (StarCoder2's use_bias, InternLM2's bias, StableLM's use_qkv_bias).
  const char* bias_key = "attention_bias";
  // The config.json key of the row's output-projection bias flag, set from
  // the file's attn_output.bias (Seed-OSS's attention_out_bias).
  const char* out_bias_key = nullptr;
  // The config.json flag that turns the row's q/k norms on, set when the file
  // has attn_q_norm tensors (Cohere's use_qk_norm, StableLM's qk_layernorm).
  const char* qk_norm_key = nullptr;
  // The architecture's own metadata keys ({arch}.<suffix>) as config.json
  // fields (Granite's attention.scale as attention_multiplier, ...).
  std::vector<std::pair<const char*, const char*>> keys = {};
  std::vector<std::pair<const char*, const char*>> int_keys = {};  // integers
  // DeepSeek's multi-head latent attention: the sizes from attention.
  // q_lora_rank / kv_lora_rank / key_length_mla / value_length_mla, kv_b_proj
  // from the converter's attn_k_b and attn_v_b.
  bool mla = false;
  // Where layer N's tensors are: "blk.N." (T5's encoder: "enc.blk.N.").
  const char* blk = "blk.";
  // The architecture's own mapping of what differs per layer type (Gemma 4's
  // head sizes, KV heads and ropes: gguf_gemma4.cpp), run after the common
  // keys with the file, "{arch}." and the number of layers; the common code
  // then leaves head_count_kv and rope_freqs.weight to it.
  void (*per_layer_type)(const detail::GgufFile&, const std::string&, std::int64_t,
                         nlohmann::json&) = nullptr;
};

// The architectures in table order (CONTRACT.md v2's, then v3's families, then
// the decoders of families_text.cpp: gguf_table_text.cpp).
const std::vector<GgufArch>& gguf_table();
void add_text_archs(std::vector<GgufArch>& t);
void add_hybrid_archs(std::vector<GgufArch>& t);  // gguf_table_hybrid.cpp
// The entry of a general.architecture, or nullptr.
const GgufArch* gguf_arch_of(const std::string& name);

}  // namespace attn::family

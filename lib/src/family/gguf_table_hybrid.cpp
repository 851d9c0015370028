// The GGUF architectures of the hybrid models (families_hybrid.cpp; gguf_table.h),
// read, not copied, from llama.cpp's converter (conversion/granite.py
// GraniteHybridModel, nemotron.py NemotronHModel, jamba.py JambaModel,
// falcon_h1.py FalconH1Model) and src/models/<arch>.cpp: a layer runs attention
// where its attention.head_count_kv entry is not 0 (llama.cpp's is_recr_impl);
// the others are Mamba (or, in Nemotron-H, MLP / MoE) layers, refused by the
// family row by their kind.
#include <cmath>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/escape.h"
#include "containers/gguf.h"
#include "family/gguf_per_layer.h"
#include "family/gguf_table.h"

namespace attn::family {

namespace {

using detail::GgufFile;
using nlohmann::json;

constexpr std::int64_t kMaxHybridKvHeads = std::int64_t(1) << 24;

// {arch}.attention.head_count_kv, one per layer, 0 on the layers without
// attention; sets num_key_value_heads to the attention layers' count and
// returns which layers have attention.
std::vector<bool> attention_layers(const GgufFile& f, const std::string& p, std::int64_t layers,
                                   json& hf) {
  const std::string key = p + "attention.head_count_kv";
  const std::vector<std::int64_t> kv = gguf_layer_ints(f, key, layers, 0, kMaxHybridKvHeads);
  if (kv.empty()) f.key_error(key, "is missing (one per layer, 0 where the layer is Mamba)");
  std::vector<bool> attention;
  std::int64_t heads = 0;
  for (std::int64_t n : kv) {
    attention.push_back(n > 0);
    if (n > 0 && heads > 0 && n != heads)
      f.key_error(key, "different KV head counts on attention layers (" + std::to_string(heads) +
                           " and " + std::to_string(n) + ") are not supported");
    if (n > 0) heads = n;
  }
  if (heads == 0) f.key_error(key, "is 0 on every layer: no layer has attention to run");
  const std::int64_t H = hf["num_attention_heads"];
  if (H % heads != 0)
    f.key_error(
        key, std::to_string(heads) + " KV heads do not divide the " + std::to_string(H) + " heads");
  hf["num_key_value_heads"] = heads;
  return attention;
}

// Granite 4.0-H (granitehybrid): layer_types from the KV heads; rope only when
// rope.scaling.finetuned says so (true when absent: llama.cpp's default; the
// converter writes false for the hybrids that have Mamba layers); the scale
// attention.scale, else llama.cpp's 1/sqrt(D).
void granite_hybrid(const GgufFile& f, const std::string& p, std::int64_t layers, json& hf) {
  json types = json::array();
  for (bool a : attention_layers(f, p, layers, hf)) types.push_back(a ? "attention" : "mamba");
  hf["layer_types"] = types;
  const detail::GgufValue* rope = f.find(p + "rope.scaling.finetuned");
  hf["position_embedding_type"] = !rope || rope->to_bool() ? "rope" : "nope";
  if (!hf.contains("attention_multiplier"))
    hf["attention_multiplier"] = 1.0 / std::sqrt(double(hf["head_dim"].get<std::int64_t>()));
}

// Nemotron-H (nemotron_h, nemotron_h_moe): hybrid_override_pattern, a letter a
// layer: * attention, M Mamba2 (ssm_in), E MoE (ffn_gate_inp), - MLP.
void nemotron_h(const GgufFile& f, const std::string& p, std::int64_t layers, json& hf) {
  const std::vector<bool> attention = attention_layers(f, p, layers, hf);
  std::string pattern;
  for (std::int64_t l = 0; l < layers; ++l) {
    const std::string blk = "blk." + std::to_string(l) + ".";
    pattern += attention[std::size_t(l)]                    ? '*'
               : f.find_tensor(blk + "ssm_in.weight")       ? 'M'
               : f.find_tensor(blk + "ffn_gate_inp.weight") ? 'E'
                                                            : '-';
  }
  hf["hybrid_override_pattern"] = pattern;
}

// Jamba: layers_block_type from the KV heads (the converter's attn_layer_period
// and attn_layer_offset are not in the file).
void jamba(const GgufFile& f, const std::string& p, std::int64_t layers, json& hf) {
  json types = json::array();
  for (bool a : attention_layers(f, p, layers, hf)) types.push_back(a ? "attention" : "mamba");
  hf["layers_block_type"] = types;
}

GgufArch hybrid_entry(const char* architecture, const char* model_type, bool permuted_qk) {
  return GgufArch{architecture, model_type, permuted_qk};
}

}  // namespace

void add_hybrid_archs(std::vector<GgufArch>& t) {
  // GraniteHybridModel is a LlamaModel (undo_permute): Q/K rows permuted (NORM rope when on).
  GgufArch a = hybrid_entry("granitehybrid", "granitemoehybrid", true);
  a.keys = {{"attention.scale", "attention_multiplier"},
            {"embedding_scale", "embedding_multiplier"}};
  a.per_layer_type = granite_hybrid;
  t.push_back(a);
  // NemotronHModel is a GraniteHybridModel (Q/K permuted; no rope in llama.cpp's graph).
  for (const char* arch : {"nemotron_h", "nemotron_h_moe"}) {
    a = hybrid_entry(arch, "nemotron_h", true);
    a.per_layer_type = nemotron_h;
    t.push_back(a);
  }
  // JambaModel is a TextModel: tensors as Hugging Face's, no positions.
  a = hybrid_entry("jamba", "jamba", false);
  a.per_layer_type = jamba;
  t.push_back(a);
  // FalconH1Model (a Mamba2Model, tensors unpermuted, NEOX rope): the converter folds the
  // multipliers into the weights (q, v times attention_in_multiplier, k times key_multiplier
  // too, o times attention_out_multiplier, token_embd times embedding_multiplier), so the file
  // runs with them at 1: its context includes attention_out_multiplier.
  a = hybrid_entry("falcon-h1", "falcon_h1", false);
  a.theta = 100000.0;
  a.fixed = {
      {"key_multiplier", 1.0}, {"attention_in_multiplier", 1.0}, {"embedding_multiplier", 1.0}};
  t.push_back(a);
}

}  // namespace attn::family

// Hugging Face model folders (CONTRACT.md "Model folders"): config.json of a
// supported model_type mapped to attn-run's own config keys for one layer,
// and the weights file(s) beside it. Each model_type is a row of data
// (lib/src/family/families.cpp); the config parser then checks the result
// like any config, so a folder and a hand-written config obey the same rules.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attn/state_dict.h"

namespace attn {

struct ModelFolder {
  std::string dir;              // the folder as given
  std::string model_type;       // config.json's model_type
  nlohmann::json hf;            // config.json as read (text_config unwrapped), with the
                                // configuration class's defaults for attention keys it leaves out
  std::string weights;          // model.safetensors, its index, pytorch_model.bin or its index
  std::int64_t num_layers = 0;  // an encoder-decoder's: the encoder's
  std::int64_t decoder_layers = 0;  // an encoder-decoder's decoder layers, else 0
  // A GGUF file given as the model: its general.architecture; `dir` and
  // `weights` are then the file, and `hf` the config.json fields its
  // metadata means for the family row (CONTRACT.md "(v3) GGUF").
  std::string gguf_architecture;
};

// Which attention of a layer number (CONTRACT.md "(v4) Families and
// schedulers"): the layer's own (--layer N; an encoder-decoder's encoder layer
// N), or an encoder-decoder's decoder layer N: its causal self-attention
// (--decoder-layer N) or its cross-attention over the encoder's output
// (--decoder-layer N --cross, keys and values from kv_input).
enum class Module { layer, decoder_self, decoder_cross };

// "decoder_self", "decoder_cross" ("layer" for the layer's own).
const char* module_name(Module module);

// The decoder module of an encoder-decoder whose tensors sit under
// `weights_prefix` ("model.decoder.layers.3.encoder_attn."), with its layer;
// none for any other prefix (an encoder layer's, or another family's).
struct ModuleRef {
  std::int64_t layer = 0;
  Module module = Module::layer;
};
std::optional<ModuleRef> decoder_module_at(const ModelFolder& m, const std::string& weights_prefix);

// Reads DIR/config.json (at most 1 MiB) and finds the weights beside it.
// Exit::no_input when the folder, config.json or any weights file is missing
// (a path that is a file, a device or a FIFO is named as what it is);
// Exit::config (78) for an unknown model_type, naming it and listing the
// supported ones, or a field of the wrong type or range (named with the file).
// A .gguf file instead of a folder: its metadata mapped onto the same
// family row (family/gguf_arch.cpp); a malformed file is Exit::data, an
// architecture attn-run does not map Exit::config.
// `model_type` ("" = the first the folder holds) picks a tower of a folder
// that holds several: a CLIPModel folder ("clip") is clip_text_model, or
// clip_vision_model when asked; Exit::config listing what the folder holds
// when it holds no such model_type.
ModelFolder open_model_folder(const std::string& dir, const std::string& model_type = "");

// The model's weights as layer_config's keys name them: the folder's weights
// file opened (open_state_dict); of a GGUF file each layer's attention
// tensors, Q/K rows un-permuted where llama.cpp's converter permuted them.
StateDict open_model_weights(const ModelFolder& m);

// True when a parsed JSON config is a Hugging Face config.json (it has
// "model_type" or "architectures"): --config FILE then means --model of its folder.
bool is_hf_config(const nlohmann::json& j);

// attn-run config keys for layer `layer` of the model (attention, hidden_size,
// num_heads, num_kv_heads, head_size, out_size, bias flags, scale, layout,
// weights, weights_prefix, rope, alibi, sliding_window, softcap, qk_norm,
// sinks), using the family's own field names and per-layer patterns
// (layer_types, sliding_window_pattern, Gemma 2's alternating layers, Gemma 3's
// local rope base, Qwen2's max_window_layers). `weight_keys` (the weights'
// tensor names, any order) picks the key prefix the file really uses
// ("model.layers.5.self_attn." or "layers.5.self_attn.", ...); empty = the
// family's usual one. Exit::usage when layer is out of range or is not an
// attention layer (e.g. Qwen3-Next's linear attention: the message lists the
// model's attention layers).
// `residual_norm`: also the family's LayerNorm over o_proj's output plus the
// input, as config key residual_norm ({eps, prefix}), when the family has one
// (residual_norm_of; not for GGUF files).
// `module`: an encoder-decoder's decoder module of decoder layer `layer`
// (Exit::usage when the model has no decoder or no such layer): heads from
// the decoder's count, causal self-attention, or cross-attention (not causal,
// no position bias: its keys are kv_input's, which the config gives).
// `embedding`: also the family's embedding of token ids (layer 0's input,
// config key embedding); Exit::config naming the model_type when the family's
// is not covered.
nlohmann::json layer_config(const ModelFolder& m, std::int64_t layer,
                            const std::vector<std::string>& weight_keys = {},
                            bool residual_norm = false, Module module = Module::layer,
                            bool input_norm = false, bool embedding = false);

// The LayerNorm a family applies over its attention's output plus the
// layer's input (CONTRACT.md "residual_norm"): Hugging Face's module whose
// output includes it ("BertAttention"), and whether that module is the
// attention's own (BERT, RoBERTa, XLM-RoBERTa, ELECTRA; not DistilBERT's
// TransformerBlock, OPT-350m's OPTDecoderLayer). Empty when the family has
// none (pre-norm decoders, ViT, CLIP, T5, OPT with do_layer_norm_before, ...)
// or the model is a GGUF file; then `why`, when given, says so for a message
// ("model_type llama has no LayerNorm ... (the families with one: ...)").
struct ResidualNorm {
  std::string module;
  bool in_attention = false;
};
std::optional<ResidualNorm> residual_norm_of(const ModelFolder& m, std::string* why = nullptr);

// The layer's type: config.json's layer_types entry ("full_attention",
// "sliding_attention", "chunked_attention", "linear_attention", ...) or the
// family's pattern. Exit::config when layer_types is malformed.
std::string layer_type(const ModelFolder& m, std::int64_t layer);

// True when the layer is one attn-run runs (full, sliding or chunked
// softmax attention with its own keys and values), false for the types it
// refuses (linear attention, ...) and for a layer that reuses another's K/V.
bool layer_runs(const ModelFolder& m, std::int64_t layer);

// The earlier layer whose keys and values this layer reuses (Gemma 4's
// num_kv_shared_layers), or none. layer_config refuses such a layer.
std::optional<std::int64_t> kv_shared_from(const ModelFolder& m, std::int64_t layer);

// The model_types understood (the family table's rows), in CONTRACT.md order.
const std::vector<std::string>& supported_model_types();

}  // namespace attn

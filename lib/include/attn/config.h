// The JSON config of CONTRACT.md ("Config"): parsed strictly into a plain
// struct with every default applied and every size checked for consistency.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attn/geometry.h"
#include "attn/layout.h"
#include "attn/positions.h"
#include "attn/scores.h"
#include "attn/tensor.h"

namespace attn {

class StateDict;

enum class Kind { single, multi, causal };  // the tutorial modules
std::string kind_name(Kind k);

// A "path or nested array" key: a resolved path ("-" = standard input
// where the key allows it), or the array given inline in the config.
template <class T>
struct ArrayKey {
  std::string path;               // resolved ("" = none or inline)
  std::optional<T> inline_value;  // the nested array as given
  bool given() const { return !path.empty() || inline_value.has_value(); }
};

// embedding: layer 0's input built from token ids (--tokens), as the
// model family's embedding module builds it: the word rows (times `scale`),
// plus learned absolute positions and token type 0, then a LayerNorm. Keys
// are full keys of the weights file; "" = none.
enum class EmbeddingDtype { float32, table };
struct EmbeddingSpec {
  std::string word;  // (V, C): row i is token i's
  double scale = 1.0;
  // Where the scale multiplies: float32, or the word table's stored dtype
  // (table: a bf16/f16 table rounds the scale and each product to it, as
  // Gemma's normalizer in the model's dtype; float32 for other tables).
  EmbeddingDtype scale_dtype = EmbeddingDtype::float32;
  std::string positions;                   // (P, C): position p's row is p + position_offset
  std::int64_t position_offset = 0;        // OPT's 2
  std::optional<std::int64_t> padding_id;  // RoBERTa: positions from padding_id + 1, pads at it
  std::string token_types;                 // (T, C): row 0 is added
  std::string norm_weight, norm_bias;      // LayerNorm (C) after the sum
  double norm_eps = 1e-12;
  std::string module;  // the family's module, for run.json
};

// Each config key lands in one field, here or in `spec` (config/keys.cpp
// lists them: reader, checks, default and run.json form).
struct Config {
  std::string file;  // the config file as given (for messages); "" if from a string
  std::string dir;   // its folder: relative paths in the config resolve against it

  Kind kind = Kind::single;
  std::int64_t hidden_size = 0;              // C
  std::int64_t num_heads = 1;                // H
  std::optional<std::int64_t> num_kv_heads;  // Hkv as given; none = H, see kv_heads()
  std::int64_t head_size = 0;                // D (resolved default)
  std::int64_t out_size = 0;                 // O when out_proj (resolved default); = H*D otherwise
  bool out_proj = true;
  std::optional<std::int64_t> context_size;  // longest S accepted
  bool qkv_bias = true;
  bool out_bias = true;
  double dropout = 0.0, attn_drop = 0.0, out_drop = 0.0;  // accepted, unused

  std::optional<Layout> layout;
  std::string weights;  // resolved path ("" = none)
  std::string weights_prefix;
  // A layer key (weights_prefix stripped) starting with `first` starts with
  // `second` instead: a family's own tensor names to a layout's (v3).
  std::vector<std::pair<std::string, std::string>> weights_rename;
  std::optional<std::uint64_t> init_seed;

  std::string input_path;              // resolved path ("" = none or inline)
  std::optional<Tensor> input_inline;  // (S, C) or (B, S, C)
  std::string padding_mask_path;
  std::optional<Mask> padding_mask_inline;  // (S,) or (B, S)
  std::vector<std::string> labels;

  std::string output_dir;  // resolved ("" = none)
  bool output_attention = true;
  bool output_average_heads = false;  // output.average_heads / --average-heads

  // ---- what the forward pass applies (CONTRACT.md "Scores, in order"), resolved:
  // scale (1/sqrt(D) unless given), causal, rope (rotary_dim: D unless given),
  // alibi (its slopes), sliding_window, softcap, qk_norm, sinks, relative_bias
  // (bidirectional: !causal unless given), add_zero_attn, gate, attention_chunk,
  // attn_temperature, residual_norm (its prefix: weights_prefix +
  // "output.LayerNorm." unless given; none = o_proj's output as is), v_norm.
  AttentionSpec spec;

  ArrayKey<PositionIds> positions;  // (S,) or (B, S); none = 0..S-1
  bool k_eq_v = false;  // v = k_proj's output (before k's norm and rope); no v_proj (Gemma 4)
  std::optional<MlaSpec> mla;     // DeepSeek's latent attention: sets D, rope's part and the scale
  ArrayKey<Mask> attention_mask;  // Hugging Face's: 1 = attend (not with padding_mask)
  ArrayKey<AttnMask> attn_mask;   // torch's: bool (true = blocked) or float (added)
  std::optional<EmbeddingSpec> embedding;  // --tokens: layer 0's input from token ids

  // From a model folder whose family has such a norm (model_folder.h
  // residual_norm_of): Hugging Face's module whose output includes it
  // ("BertAttention"), and whether that module is the attention's own. "" else.
  std::string residual_norm_module;
  bool residual_norm_in_attention = false;

  // ---- cross-attention and torch MHA's options ----
  ArrayKey<Tensor> kv_input;                // (T, Ck) or (B, T, Ck): keys and values from here
  ArrayKey<Tensor> key_input, value_input;  // torch MHA's separate sources (both or neither)
  std::int64_t kdim = 0, vdim = 0;          // resolved: hidden_size unless given
  bool add_bias_kv = false;
  bool batch_first = true;             // false: input (S, B, C), context (S, B, O)
  std::vector<std::string> kv_labels;  // labels of the T keys (cross-attention pictures)

  // ---- model folders ----
  std::string model;  // resolved folder ("" = none)
  std::optional<std::int64_t> layer;
  // The module of `layer`: "" the layer's own, "decoder_self" or
  // "decoder_cross" (an encoder-decoder's decoder layer; model_folder.h Module).
  std::string module;
  // What the model folder says of this layer (model_folder.h's layer_config:
  // attn-run config keys, the weights path included), before the config's own
  // keys override it; null without a model. run.json shows it as "from_model".
  std::shared_ptr<const nlohmann::json> from_model;
  // The model folder's weights as opened to read their key names (the prefix
  // the file uses): load_run reuses this index while `weights` is still that
  // file, so a run opens (and a .bin parses) its weights once. Null otherwise.
  std::shared_ptr<const StateDict> model_weights;

  // What the config (or a flag) gave explicitly: resolve_config derives the
  // rest from these, so it gives the same result when called again after
  // flags changed fields.
  bool head_size_given = false;
  bool out_size_given = false;
  bool causal_given = false;
  bool scale_given = false;
  // A bias the config asks for explicitly (qkv_bias/out_bias, or bias, given
  // true) must be in the weights; otherwise a missing bias is zero
  // (CONTRACT.md "Weight layouts").
  bool qkv_bias_given = false;
  bool out_bias_given = false;
  // Given explicitly, else derived: rope.rotary_dim (= head_size), kdim
  // and vdim (= hidden_size; with kv_input, an unset one follows the other),
  // alibi.slopes (from max_bias), relative_bias.bidirectional (= !causal),
  // residual_norm.prefix.
  bool rotary_dim_given = false;
  bool kdim_given = false;
  bool vdim_given = false;
  bool alibi_slopes_given = false;
  bool relative_bias_bidirectional_given = false;
  bool residual_norm_prefix_given = false;

  std::int64_t kv_heads() const { return num_kv_heads.value_or(num_heads); }  // Hkv
  // Keys and values come from another source than the queries.
  bool cross() const { return kv_input.given() || key_input.given(); }
  std::int64_t inner_size() const { return num_heads * head_size; }  // H*D
  std::int64_t out_features() const { return out_proj ? out_size : inner_size(); }
};

// Parse config text. `file` names the config in messages and its folder
// resolves relative paths. Every problem: Exit::config with a message that
// names the key (an unknown key suggests the nearest known one) or, for
// syntax errors, the line and column.
Config parse_config(const std::string& text, const std::string& file);

// Read and parse a config file (at most 1 MiB). Missing/unreadable:
// Exit::no_input. A config with "model" and "layer" is that layer of the
// model folder with the config's keys overriding it (load_config below). A
// Hugging Face config.json (it has model_type or architectures, and neither
// attention nor model) needs a layer: without one, Exit::usage "<file> is a
// Hugging Face config.json: run attn-run --model <dir> --layer N".
Config load_config(const std::string& path);

// The command line's --model DIR and --layer N (CONTRACT.md
// "Invocation"). They override the config's "model" and "layer"; DIR is
// relative to the working directory.
struct ModelFlags {
  std::string model;  // "" = none
  std::optional<std::int64_t> layer;
  // --model-type / "model_type" beside "model": which model_type of a folder
  // that holds several to run (a CLIPModel's clip_vision_model); "" = the first.
  std::string model_type = "";
  // --with-residual-norm: config key residual_norm true; with a model folder,
  // its family's LayerNorm (Exit::usage naming the flag when it has none).
  bool residual_norm = false;
  // --residual: config key input_norm true; the input is the residual stream
  // and the model's block norm comes first (Exit::usage naming the flag
  // without a model, unless the config gives input_norm as an object).
  bool input_norm = false;
  // --tokens: the config key embedding from the model's family (layer 0
  // only: Exit::usage naming the flag for another layer; Exit::config naming
  // the model_type when its family's embedding is not covered). Sets input_norm.
  bool tokens = false;
  // --decoder-layer N [--cross] in place of --layer: an encoder-decoder's
  // decoder layer N, its causal self-attention or (cross) its cross-attention
  // (model_folder.h Module); they override the config's "decoder_layer" and
  // "cross_attention" (and a flag's layer choice replaces the config's).
  std::optional<std::int64_t> decoder_layer = std::nullopt;
  bool cross = false;
  // --encoder-output FILE: the cross-attention's keys and values (config
  // key kv_input), relative to the working directory.
  std::string encoder_output = "";
};

// The run's config from --config FILE ("" = none), --model and --layer:
//  - FILE alone: load_config(FILE).
//  - --model DIR --layer N without FILE: that layer of the model folder,
//    as model_folder.h's layer_config maps it; file = DIR/config.json.
//  - FILE and a model (its "model" key or --model) with a layer (its "layer"
//    key or --layer): the folder's layer config, then the config's own keys
//    override it key by key (CONTRACT.md "Invocation"): "rope" and "qk_norm"
//    objects merge field by field (rope.scaling is replaced whole), a key set
//    to null removes the folder's value (JSON merge patch, RFC 7386), "bias"
//    replaces the folder's qkv_bias/out_bias, and the folder's weights are
//    used unless the config gives "weights" or "init".
//  - FILE a Hugging Face config.json with --layer N: --model of its folder.
// Config.from_model records what the folder said. Errors: a model without a
// layer or a layer without a model is Exit::usage when a flag is involved
// (the app prints the model's table for --model DIR alone), Exit::config
// naming "layer" or "model" in a config; --model with a Hugging Face
// config.json as FILE is Exit::usage; a layer outside the model is
// Exit::usage (flag) or Exit::config (key); the folder's own errors are
// model_folder.h's.
Config load_config(const std::string& path, const ModelFlags& flags);

// The model a run names, without reading a layer (--layer all/3-7 lists the
// folder's layers first): flags.model, else the folder of a Hugging Face
// config.json at `path`, else the config's "model" key (resolved against its
// folder) and its "model_type"; `model` is "" when none. `layer` is unset.
// Exit::no_input / Exit::config as load_config.
ModelFlags run_model(const std::string& path, const ModelFlags& flags);

// --model DIR --layer N without a config: load_config("", {dir, layer}).
Config load_model_config(const std::string& dir, std::int64_t layer);

// The folder a Hugging Face config.json at `path` stands for ("" when the file
// is an attn-run config), so the app can treat --config DIR/config.json
// without --layer as --model DIR (its table). Reads and parses the file as
// load_config does (Exit::no_input, Exit::config for bad JSON).
std::string hf_config_folder(const std::string& path);

// Check sizes against each other and fill defaults; called by parse_config and
// again after command-line flags changed fields. Exit::config on conflict.
void resolve_config(Config& c);

// The config as resolved, for run.json (paths as resolved, defaults filled).
nlohmann::json config_to_json(const Config& c);

// The geometry of a resolved config (num_kv_heads already checked to divide num_heads).
Geometry geometry_of(const Config& cfg);

// What the context is, for run.json's "output": the output projection as is,
// or with the residual add and LayerNorm (residual_norm), naming the model
// family's module that includes them when there is one.
std::string output_description(const Config& c);

// Known top-level keys in table order (config/keys.cpp; for suggestions and docs).
const std::vector<std::string>& config_keys();

// Largest config file accepted (load_config) and largest size or head count.
constexpr std::size_t kMaxConfigBytes = 1u << 20;  // 1 MiB
constexpr std::int64_t kMaxSize = 1 << 24;         // hidden_size, head_size, out_size, H, H*D
constexpr std::int64_t kMaxContext = 1 << 30;      // context_size

}  // namespace attn

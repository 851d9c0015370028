// One Hugging Face model_type as data (CONTRACT.md "(v3) Model families"):
// how its config.json names sizes, positions, windows and per-layer patterns,
// its tensor names for one layer, the features it switches on and the
// settings it refuses. The table is families.cpp (its rows in families_*.cpp,
// built with table.h); layer_map.cpp applies a row to one layer; what no rule
// here can say is a named hook (hooks.cpp), one family's own logic. Adding a
// family is a row and a golden fixture (docs/adding-a-family.md).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace attn::family {

using nlohmann::json;
class HfConfig;

// A bias of the projections: set by config.json's `key` when present (true =
// bias; `inverted`: true = no bias, MPT's no_bias), else `fallback`.
struct BiasRule {
  const char* key = nullptr;
  bool fallback = false;
  bool inverted = false;
};

// The rotary embedding of the layers that have one.
struct RopeRule {
  bool on = false;
  std::vector<const char*> theta_keys = {"rope_theta"};
  double theta = 10000.0;
  // Partial rotary as a fraction of the head (partial_rotary_factor,
  // rotary_pct), or as a count of dimensions (GPT-J's rotary_dim).
  std::vector<const char*> fraction_keys = {"partial_rotary_factor"};
  double fraction = 1.0;
  const char* dims_key = nullptr;
  bool interleaved = false;  // GPT-J, Cohere, Llama 4: pairs (x[2i], x[2i+1])
  // A config.json bool that, when set, says interleaved (true) or half (DeepSeek-V3's
  // rope_interleave).
  const char* interleave_key = nullptr;
  // Sliding (local) layers' own base (Gemma 3's rope_local_base_freq,
  // ModernBERT's local_rope_theta); they take no rope_scaling unless said.
  const char* local_theta_key = nullptr;
  double local_theta = 10000.0;
  bool local_scaling = false;
  // Global layers' own base where the family names one (ModernBERT's global_rope_theta).
  const char* global_theta_key = nullptr;
  // Layers without rope (SmolLM3, Llama 4): no_rope_key lists one 0/1 per
  // layer (1 = rope, 0 = none); without it, every interval-th layer (counted
  // from 1) has none. Off when no_rope_key is null.
  const char* no_rope_key = nullptr;
  const char* no_rope_interval_key = nullptr;
  std::int64_t no_rope_interval = 0;
  // Rope only where config.json's on_key (or its default) is on_value: ESM's
  // position_embedding_type "rotary" (its "absolute" positions live outside
  // the attention). Always on when on_key is null.
  const char* on_key = nullptr;
  const char* on_value = nullptr;
  // The full-attention layers have no rope when config.json sets the window
  // (EXAONE 4's global NoPE layers: rope where `sliding_window is None or
  // is_sliding`).
  bool full_nope_with_window = false;
  // The sliding layers take the rope base without rope_scaling, which extends
  // the full layers only (OLMo 3: a "default" rope for sliding_attention).
  bool sliding_unscaled = false;
  // Multimodal rope (Qwen2-VL's mrope; RopeSpec's mrope_section): config.json's
  // mrope_section, in rope_scaling or rope_parameters (else mrope_default when
  // the family's code has one), splits the frequencies among three position
  // rows, in chunks or interleaved (Qwen3-VL's apply_interleaved_mrope, whatever
  // its mrope_interleaved says). Off when mrope is false.
  bool mrope = false;
  bool mrope_interleaved = false;
  std::vector<std::int64_t> mrope_default;
};

// Which layers slide (a local window) when config.json lists no layer_types
// (which, when present, decides per layer):
//   none          no layer slides;
//   all           every layer (Mistral);
//   global_every  every period-th layer is global, the rest slide: counted
//                 from the last of each period ((layer + 1) % N == 0: Gemma 2
//                 with N = 2, Gemma 3, Cohere 2) or the first (layer % N == 0:
//                 ModernBERT);
//   from_layer    layers >= from_key slide when enable_key is true (Qwen2's
//                 use_sliding_window and max_window_layers);
//   no_rope       the layers without rope (RopeRule's no_rope_key) slide when
//                 enable_key is true and the window is set (SmolLM3);
//   listed        config.json names each layer's attention (GPT-Neo's
//                 attention_layers, one of "global" / "local" per layer, or
//                 its attention_types runs [[["global", "local"], n], ...]):
//                 the layers named local_name slide.
// `all` and `global_every` slide only when enable_key (if set) is true, and
// `global_every` only below the layer below_key names (Qwen2-MoE's
// use_sliding_window and max_window_layers).
struct WindowRule {
  enum Kind { none, all, global_every, from_layer, no_rope, listed } kind = none;
  const char* window_key = "sliding_window";
  const char* period_key = nullptr;
  std::int64_t period = 0;
  bool global_first = false;
  const char* from_key = nullptr;
  std::int64_t from = 0;
  const char* enable_key = nullptr;
  const char* below_key = nullptr;
  // listed: the per-layer names, the runs that expand to them, and the two names.
  const char* list_key = nullptr;
  const char* runs_key = nullptr;
  const char* local_name = nullptr;
  const char* global_name = nullptr;
  // The contract's W from the family's number: W = value / div + add
  // (ModernBERT's local_attention covers half each side: W = n / 2 + 1).
  std::int64_t div = 1, add = 0;
  // The layer type of the layers this rule does not make global:
  // "sliding_attention" (a window), or another of transformers' layer_types
  // ("linear_attention": Qwen3-Next's full_attention_interval;
  // "chunked_attention": Llama 4's no_rope_layer_interval).
  const char* local_type = "sliding_attention";
  // The last layer is full attention whatever the pattern or layer_types say
  // (Gemma4TextConfig.__post_init__ forces it, with a warning).
  bool last_full = false;
  // global_every: the global layer's place in each period, layer % N == offset
  // (Jamba's attn_layer_offset), read from offset_key when set; without one,
  // global_first says (0 or N - 1).
  const char* offset_key = nullptr;
  std::int64_t offset = -1;
  // global_every: a config.json that lists layer_types as well must agree
  // with the period on every layer it runs, or the layer is refused naming
  // both; set to why they must (the family takes one thing from each).
  const char* layer_types_agree = nullptr;
};

// The softmax scale: 1/sqrt(D) unless the family says otherwise.
struct ScaleRule {
  enum Kind { inverse_sqrt_head, inverse_sqrt_of_key, value_of_key, one } kind = inverse_sqrt_head;
  const char* key = nullptr;  // query_pre_attn_scalar (1/sqrt), attention_multiplier (as is)
  // inverse_sqrt_head only, each written as the layer's "scale" when set: a
  // config.json bool that, when false, makes the scale 1 (GPT-2's
  // scale_attn_weights, default true), and one that, when true, also divides
  // it by the layer's number, layer + 1 (scale_attn_by_inverse_layer_idx,
  // default false).
  const char* enable_key = nullptr;
  const char* by_layer_key = nullptr;
  // inverse_sqrt_head: also times config.json's number (Falcon-H1's key_multiplier, which
  // multiplies k after its projection: the same scores), when set.
  const char* times_key = nullptr;
};

// T5's relative position bias (modeling_t5.T5Attention.compute_bias): a
// table of num_buckets x H learned logits, the bucket of each (query, key)
// distance up to max_distance, as attn-run's "relative_bias". The table is
// the first block's (`first_block`: T5Stack gives block 0 the table and
// passes its bias on to every later block of the stack; its name is the
// row's first prefix at layer 0 + `table`), or each layer's own (UMT5).
struct RelativeBiasRule {
  bool on = false;
  bool first_block = true;
  const char* table = "relative_attention_bias.weight";
  const char* buckets_key = "relative_attention_num_buckets";
  std::int64_t buckets = 32;
  const char* distance_key = "relative_attention_max_distance";
  std::int64_t distance = 128;
};

// A config.json setting attn-run does not run, refused by name. When `key`
// is set (present and not null; inside the object `within` when given, MPT's
// attn_config), its value must be one of `values` (`values_run`), or must
// not be (!`values_run`). `typed` (string or boolean `values`): a value of
// another JSON type is refused as the wrong type first. `why` follows the key in the
// message, "{value}" standing for the value as config.json writes it.
struct Refusal {
  const char* within = nullptr;
  const char* key = nullptr;
  std::vector<json> values;
  bool values_run = true;
  bool typed = false;
  std::string why;
};

// q/k norms: kind "rms" | "layer" | "l2", scope "head" | "all", weight offset
// 0 | 1 (Gemma: x * (1 + w)); on when enable_key is true (or always without one).
struct QkNormRule {
  bool on = false;
  const char* kind = "rms";
  const char* scope = "head";
  int offset = 0;
  const char* enable_key = nullptr;
  std::vector<const char*> eps_keys = {"rms_norm_eps"};
  double eps = 1e-6;
  bool per_head = false;    // weights (H, D) / (Hkv, D): Cohere, StableLM
  bool bias = false;        // kind "layer" with a bias: Phi's qk_layernorm
  bool after_rope = false;  // order "after_rope": on the rotated q and k (Hunyuan)
};

// The LayerNorm a family applies over the attention's output plus the layer's
// input (the residual), LayerNorm(o_proj(context) + x): BertSelfOutput's
// LayerNorm(dense(h) + input_tensor), DistilBERT's TransformerBlock
// sa_layer_norm(sa_output + x). attn-run's context is o_proj's output; this
// is applied only when asked (--with-residual-norm, config "residual_norm").
struct ResidualNormRule {
  // Its tensors' prefix (weight, bias) relative to the layer's module: the
  // attention prefix without its last part ("bert.encoder.layer.{N}." +
  // "attention.output.LayerNorm."). Null: the family has none.
  const char* name = nullptr;
  std::vector<const char*> eps_keys = {"layer_norm_eps"};
  double eps = 1e-12;  // BertConfig's layer_norm_eps; DistilBERT's fixed eps
  // Hugging Face's module whose output includes it ("BertAttention"), and
  // whether that module is the attention's own (so users compare with it):
  // false for DistilBERT, whose MultiHeadSelfAttention returns out_lin's output.
  const char* module = "";
  bool in_attention = true;
  // A config.json bool that, when true (its default), puts the norm before the
  // attention instead (OPT's do_layer_norm_before: only OPT-350m's false
  // normalizes residual + attention). Null: always after.
  const char* before_key = nullptr;
};

// An encoder-decoder (BART, Whisper, Marian, M2M-100, T5): the row's prefixes
// and layer numbers are the encoder's; each decoder layer holds a causal
// self-attention and a cross-attention over the encoder's output (kv_input,
// the encoder's padding on its keys), reached by --decoder-layer N [--cross]
// or by naming their weights_prefix (model_folder.h Module).
struct DecoderRule {
  bool on = false;
  std::vector<std::string> self_prefixes, cross_prefixes;  // "{N}" = the decoder layer
  // The stacks' layer and head counts where the family names them apart
  // (BART's encoder_layers, encoder_attention_heads, decoder_layers,
  // decoder_attention_heads); null: the model's own (T5's num_heads and
  // num_layers; its num_decoder_layers, when unset, is num_layers).
  const char* encoder_layers_key = nullptr;
  const char* encoder_heads_key = nullptr;
  const char* decoder_layers_key = nullptr;
  const char* decoder_heads_key = nullptr;
};

// What each layer of a hybrid model is where the family says it its own way:
// a list of layer kinds in its own words (Granite 4.0-H's layer_types of
// "attention" and "mamba"; Nemotron-H's layers_block_type) or one letter per
// layer (Nemotron-H's hybrid_override_pattern "M-M*-"), each mapped to
// attn-run's layer type ("full_attention", or a kind it does not run:
// "mamba", "mlp", "moe"). layer_types is read through the same names.
struct LayerKindsRule {
  std::vector<const char*> list_keys;  // read after layer_types
  const char* pattern_key = nullptr;
  std::vector<std::pair<std::string, std::string>> names;  // the family's word or letter -> type
  // The list (or pattern) has one entry per layer and so gives their number
  // (NemotronHConfig's num_hidden_layers is len(layers_block_type)).
  bool counts_layers = false;
};

// The block's pre-attention norm, applied to the residual stream when asked
// (--residual, config "input_norm": true). The default is Llama's
// input_layernorm (LlamaRMSNorm over rms_norm_eps); a family whose attention
// sees the residual stream itself (post-norm: BERT, OLMo 2) has kind none.
struct InputNormRule {
  enum Kind { none, rms, layer } kind = rms;
  // Its module under the block (the weight is name + "weight"); the first of
  // these the weights hold (Falcon: ln_attn with new_decoder_architecture's
  // two norms, else input_layernorm).
  std::vector<const char*> names = {"input_layernorm."};
  // How many trailing parts of the attention's prefix to drop for the block's
  // module: 1 ("model.layers.3.self_attn." -> "model.layers.3."), 2 for ViT's
  // "vit.encoder.layer.3.attention.attention.".
  int up = 1;
  std::vector<const char*> eps_keys = {"rms_norm_eps"};
  double eps = 1e-6;
  int offset = 0;  // 1: Gemma's x * (1 + w)
  // kind layer: whether it has a bias (MPT's no_bias inverted, ModernBERT's norm_bias).
  BiasRule bias = {nullptr, true, false};
  // A config.json bool that, when false, makes the family post-norm (OPT's
  // do_layer_norm_before, default true): kind none then.
  const char* before_key = nullptr;
  // Layer 0 has none (ModernBERT's attn_norm is nn.Identity on layer 0).
  bool none_on_first = false;
  // A norm attn-run does not build (OLMo's OlmoLayerNorm: a LayerNorm without
  // a weight): --residual is refused with this reason instead of a wrong input.
  const char* refused = nullptr;
  // Hugging Face's class of the norm, for run.json ("LlamaRMSNorm").
  const char* module = "LlamaRMSNorm";
  // A config.json number the norm's output is multiplied by before the
  // attention (Falcon-H1's attention_in_multiplier; absent: 1): run.json's
  // input_norm.multiplier.
  const char* multiplier_key = nullptr;
};

// Layer 0's input built from token ids (--tokens), as the family's embedding
// module builds it: word rows (nn.Embedding), times a scale (Gemma's
// sqrt(hidden_size) in the model's dtype, Granite's embedding_multiplier),
// plus learned absolute positions (GPT-2's wpe; OPT's offset of 2;
// RoBERTa's from padding_idx + 1) and token type 0 (BERT), then a LayerNorm
// (BERT's embeddings.LayerNorm, BLOOM's word_embeddings_layernorm). Off: the
// family's embedding is not covered, and --tokens is refused naming it.
struct EmbeddingRule {
  bool on = false;
  // The model's root: the attention prefix without its last `up` parts
  // ("model.layers.3.self_attn." -> "model."); the modules below are under it.
  int up = 3;
  // The word table's module, the first the weights hold ("embed_tokens.").
  std::vector<const char*> word = {"embed_tokens."};
  enum Scale { none, sqrt_hidden, multiplier } scale = none;
  const char* multiplier_key = nullptr;  // scale multiplier: config.json's number (absent: 1)
  const char* positions = nullptr;       // learned absolute positions' module ("wpe.")
  std::int64_t position_offset = 0;      // OPT's OPTLearnedPositionalEmbedding: 2
  // RoBERTa's create_position_ids_from_input_ids: positions count the
  // non-padding tokens from padding_idx + 1 (config.json's key), pads sit at padding_idx.
  const char* padding_key = nullptr;
  std::int64_t padding = 1;
  const char* token_types = nullptr;  // token type embeddings' module: row 0 added
  const char* norm = nullptr;         // the LayerNorm's module (weight and bias)
  std::vector<const char*> eps_keys = {"layer_norm_eps"};
  double eps = 1e-12;
  // A config.json size that, when set, must equal hidden_size: a projection
  // after the embedding otherwise (OPT's word_embed_proj_dim, ELECTRA's embedding_size).
  const char* same_size_key = nullptr;
  const char* module = "nn.Embedding";  // Hugging Face's module, for run.json
};

struct Row;
// One layer being mapped: what the row and the config.json say, and the
// attn-run config keys built so far (`out`). A hook reads and changes it.
struct LayerContext {
  const Row& row;
  const HfConfig& hf;
  std::int64_t layer = 0, num_layers = 0;
  std::string layer_type;  // "full_attention", "sliding_attention", "chunked_attention"
  // An encoder-decoder's module: 0 the layer's own (the encoder's), 1 the
  // decoder's self-attention, 2 its cross-attention (model_folder.h Module).
  int module = 0;
  std::int64_t C = 0, H = 0, Hkv = 0, D = 0;
  json out = json::object();
};
// What a row cannot say: called last with the layer's config being built.
using Hook = std::function<void(LayerContext&)>;

// A folder whose config.json nests this model: the outer model_type and the
// key, e.g. ("gemma3", "text_config"): the nested object is read as this
// model_type. `typed`: only when the nested object's model_type, if it has
// one, is this row's (Mistral 3 nests a mistral or a ministral3 text model).
struct Wrapper {
  std::string outer, key;
  bool typed = false;
};

struct Row {
  std::string model_type;
  std::vector<Wrapper> wrappers;
  std::vector<std::string> prefixes;  // "{N}" = the layer; the usual one first
  std::string layout = "proj";
  // Tensor names this family gives the layout's keys (after the prefix):
  // weights_rename of the layer config, e.g. {"q_lin.", "q_proj."}.
  std::vector<std::pair<std::string, std::string>> renames;
  enum Direction { causal, bidirectional, decoder_flag } direction = causal;
  BiasRule qkv_bias, out_bias;
  RopeRule rope;
  bool alibi = false;
  WindowRule window;
  ScaleRule scale;
  const char* softcap_key = nullptr;  // attn_logit_softcapping
  QkNormRule qk_norm;
  bool sinks = false;  // gpt-oss: one learned logit per head
  // q, k and v clamped to [-c, c] after their projections when config.json's
  // key is set (OLMo's and OLMoE's clip_qkv; null or absent: no clamp).
  const char* clip_qkv_key = nullptr;
  // The values RMS-normalized per head without a weight ("v_norm", eps from
  // the q/k norm's keys): Gemma 4's and Gemma 3n's v_norm (with_scale=False).
  bool v_norm = false;
  bool gate = false;  // Qwen3-Next: q_proj yields [query | gate] per head
  // DeepSeek's multi-head latent attention: config.json's q_lora_rank,
  // kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim as "mla".
  bool mla = false;
  RelativeBiasRule relative_bias;
  // DeBERTa-v2/v3's disentangled attention when config.json's relative_attention
  // is true: pos_att_type, position_buckets, max_relative_positions (< 1: max_position_embeddings),
  // share_att_key, norm_rel_ebd, layer_norm_eps as "disentangled", the table
  // under the model's root (the prefix before "encoder.layer."), and DeBERTa's
  // padding rule (mask_padded_queries).
  bool disentangled = false;
  ResidualNormRule residual_norm;  // none unless name is set
  InputNormRule input_norm;        // Llama's input_layernorm unless set
  EmbeddingRule embedding;         // none (--tokens refused) unless on
  // Gemma 4's num_kv_shared_layers: the last n layers reuse the keys and values
  // of the last earlier layer of their type (layer_map.h kv_shared_source).
  const char* kv_shared_key = nullptr;
  DecoderRule decoder;   // an encoder-decoder's decoder, none unless on
  LayerKindsRule kinds;  // a hybrid's own names of its layers' kinds
  // The configuration class's defaults for keys a config.json may leave out
  // (save_pretrained writes every key; a nested text_config keeps only the
  // ones that differ, and hand-trimmed folders exist).
  json defaults = json::object();
  std::vector<Refusal> refusals;  // checked in order, before the hook
  Hook hook;

  // Setters, so the table reads as rows of data.
  Row& wrapped_in(std::string outer, std::string key, bool typed = false) {
    wrappers.push_back({std::move(outer), std::move(key), typed});
    return *this;
  }
  Row& at(std::vector<std::string> p) { return prefixes = std::move(p), *this; }
  Row& with_layout(std::string l) { return layout = std::move(l), *this; }
  Row& rename(std::string from, std::string to) {
    renames.emplace_back(std::move(from), std::move(to));
    return *this;
  }
  Row& bidirectional_attention() { return direction = bidirectional, *this; }
  Row& causal_unless_encoder() { return direction = decoder_flag, *this; }
  Row& bias(const char* key, bool fallback) { return qkv_bias = out_bias = {key, fallback}, *this; }
  Row& biases(BiasRule qkv, BiasRule out) { return qkv_bias = qkv, out_bias = out, *this; }
  Row& with_rope(double theta, RopeRule r = {}) {
    r.on = true;
    r.theta = theta;
    return rope = std::move(r), *this;
  }
  // mrope on the row's rope (RopeRule::mrope), keeping its other fields.
  Row& with_mrope(bool interleaved, std::vector<std::int64_t> fallback = {}) {
    rope.mrope = true;
    rope.mrope_interleaved = interleaved;
    rope.mrope_default = std::move(fallback);
    return *this;
  }
  Row& with_alibi() { return alibi = true, *this; }
  Row& with_window(WindowRule w) { return window = w, *this; }
  Row& with_scale(ScaleRule s) { return scale = s, *this; }
  Row& softcap(const char* key) { return softcap_key = key, *this; }
  Row& with_qk_norm(QkNormRule q) {
    q.on = true;
    return qk_norm = std::move(q), *this;
  }
  Row& with_sinks() { return sinks = true, *this; }
  Row& clips_qkv(const char* key) { return clip_qkv_key = key, *this; }
  Row& with_v_norm() { return v_norm = true, *this; }
  Row& with_gate() { return gate = true, *this; }
  Row& with_mla() { return mla = true, *this; }
  Row& with_relative_bias(RelativeBiasRule r) {
    r.on = true;
    return relative_bias = r, *this;
  }
  Row& with_disentangled() { return disentangled = true, *this; }
  Row& with_residual_norm(ResidualNormRule r) { return residual_norm = std::move(r), *this; }
  Row& with_input_norm(InputNormRule r) { return input_norm = std::move(r), *this; }
  Row& with_embedding(EmbeddingRule e) {
    e.on = true;
    return embedding = std::move(e), *this;
  }
  Row& shares_kv(const char* key) { return kv_shared_key = key, *this; }
  Row& with_decoder(DecoderRule d) {
    d.on = true;
    return decoder = std::move(d), *this;
  }
  Row& with_kinds(LayerKindsRule k) { return kinds = std::move(k), *this; }
  // Added to the defaults so far (a row derived from a base row overrides its keys).
  Row& with_defaults(const json& d) { return defaults.update(d), *this; }
  Row& refuse(Refusal r) { return refusals.push_back(std::move(r)), *this; }
  Row& with_hook(Hook h) { return hook = std::move(h), *this; }
};

// The rows, in CONTRACT.md's order (families.cpp).
const std::vector<Row>& rows();
const Row* row_of(const std::string& model_type);

}  // namespace attn::family

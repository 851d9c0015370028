// Building the family table (private to lib/src/family): the rows are added in
// the supported list's order by families.cpp, each group of rows in a file of
// its own (families_*.cpp), from rule helpers the groups share. A row may be
// derived from a base row (an earlier row, or a base that is no row of its
// own) and override its fields, as gemma.cpp derives a model's config from a
// base config.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "family/family_row.h"

namespace attn::family {

class Table {
 public:
  // A new row: the usual decoder prefixes, every other field its default.
  Row& row(const char* type) {
    Row r;
    r.prefixes = {"model.layers.{N}.self_attn.", "layers.{N}.self_attn."};
    return row(type, std::move(r));
  }
  // A new row that starts as `base` (taken by value: a copy of an earlier row
  // stays valid while the table grows).
  Row& row(const char* type, Row base) {
    base.model_type = type;
    rows_.push_back(std::move(base));
    return rows_.back();
  }
  // An earlier row, to derive from.
  const Row& of(const std::string& type) const;
  std::vector<Row> take() { return std::move(rows_); }

 private:
  std::vector<Row> rows_;
};

// The groups of rows, in the supported list's order (families.cpp).
void add_core_rows(Table& t);     // GPT-2, BERT, RoBERTa, Llama ... gpt-oss
void add_decoder_rows(Table& t);  // StarCoder ... SmolLM3
void add_encoder_rows(Table& t);  // XLM-RoBERTa ... ModernBERT
void add_feature_rows(Table& t);  // gated attention ... MLA, relative position bias
void add_text_rows(Table& t);     // GLM-4 ... GPT-Neo (families_text.cpp)
void add_clipped_rows(Table& t);  // OLMo, OLMoE, Hunyuan, DBRX (families_clipped.cpp)
void add_vl_rows(Table& t);       // Qwen2.5-VL, Qwen3-VL text towers (families_vl.cpp)
void add_tower_rows(Table& t);    // ESM-2, DINOv2, SigLIP's towers (families_towers.cpp)
void add_seq2seq_rows(Table& t);  // BART ... Whisper: encoder-decoders
void add_hybrid_rows(Table& t);   // Granite 4.0-H ... Jamba: attention among Mamba layers

// ---- Rule helpers shared by the groups -----------------------------------------------------

inline BiasRule fixed(bool on) { return {nullptr, on, false}; }

inline WindowRule every_layer() {
  WindowRule w;
  w.kind = WindowRule::all;
  return w;
}

// Every period-th layer global, the rest sliding; counted from the last of
// each period unless global_first.
inline WindowRule global_every(std::int64_t period, const char* period_key = nullptr,
                               bool global_first = false) {
  WindowRule w;
  w.kind = WindowRule::global_every;
  w.period = period;
  w.period_key = period_key;
  w.global_first = global_first;
  return w;
}

inline QkNormRule rms_norm(const char* scope, int offset) {
  QkNormRule q;
  q.scope = scope;
  q.offset = offset;
  return q;
}

inline RopeRule rope_keys(std::vector<const char*> theta_keys,
                          std::vector<const char*> fraction_keys, double fraction) {
  RopeRule r;
  r.theta_keys = std::move(theta_keys);
  r.fraction_keys = std::move(fraction_keys);
  r.fraction = fraction;
  return r;
}

// Sliding layers' own rope base.
inline RopeRule local_base(const char* key, double theta) {
  RopeRule r;
  r.local_theta_key = key;
  r.local_theta = theta;
  return r;
}

// BertSelfOutput (RoBERTa's, XLM-RoBERTa's and ELECTRA's are copies of it):
// LayerNorm(dense(h) + input_tensor) with layer_norm_eps, inside `module`
// (BertAttention), so its output is what users compare with.
inline ResidualNormRule bert_self_output(const char* module) {
  ResidualNormRule r;
  r.name = "attention.output.LayerNorm.";
  r.module = module;
  return r;
}

// A block's pre-attention RMSNorm `name` (LlamaRMSNorm's x * rsqrt(mean(x^2) +
// eps) * w; Gemma's offset 1: * (1 + w)), eps from config.json's `eps_key`.
inline InputNormRule rms_input(const char* name, int offset, const char* module,
                               const char* eps_key = "rms_norm_eps", double eps = 1e-6) {
  InputNormRule r;
  r.names = {name};
  r.offset = offset;
  r.module = module;
  r.eps_keys = {eps_key};
  r.eps = eps;
  return r;
}

// A block's pre-attention LayerNorm `name` (nn.LayerNorm, with a bias unless
// `bias` says otherwise), eps from config.json's `eps_key` (none: `eps` fixed).
inline InputNormRule layer_input(const char* name, const char* eps_key, double eps,
                                 BiasRule bias = {nullptr, true, false},
                                 const char* module = "nn.LayerNorm") {
  InputNormRule r;
  r.kind = InputNormRule::layer;
  r.names = {name};
  r.eps_keys = eps_key ? std::vector<const char*>{eps_key} : std::vector<const char*>{};
  r.eps = eps;
  r.bias = bias;
  r.module = module;
  return r;
}

// A post-norm family: its attention sees the residual stream itself (`why`
// names the module that normalizes after it).
inline InputNormRule post_norm(const char* why) {
  InputNormRule r;
  r.kind = InputNormRule::none;
  r.names = {};
  r.module = why;
  return r;
}

// The word table alone (LlamaModel's embed_tokens: nn.Embedding, nothing
// added): `word` under the model's root, `up` parts above the attention prefix.
inline EmbeddingRule word_embedding(const char* word = "embed_tokens.", int up = 3) {
  EmbeddingRule e;
  e.word = {word};
  e.up = up;
  return e;
}

// Gemma's: the word rows times sqrt(hidden_size) in the model's dtype
// (GemmaModel's normalizer = torch.tensor(hidden_size**0.5, dtype=hidden.dtype);
// Gemma3TextScaledWordEmbedding's embed_scale.to(weight.dtype)).
inline EmbeddingRule gemma_embedding(const char* module) {
  EmbeddingRule e = word_embedding();
  e.scale = EmbeddingRule::sqrt_hidden;
  e.module = module;
  return e;
}

// The word rows times config.json's number `key` (1 when absent), in float32:
// GraniteModel's and FalconH1Model's inputs_embeds * embedding_multiplier.
inline EmbeddingRule times_multiplier(const char* key) {
  EmbeddingRule e = word_embedding();
  e.scale = EmbeddingRule::multiplier;
  e.multiplier_key = key;
  return e;
}

// The word rows plus learned absolute positions (GPT-2's wte + wpe).
inline EmbeddingRule learned_positions(const char* word, const char* positions,
                                       std::int64_t offset = 0, int up = 3) {
  EmbeddingRule e = word_embedding(word, up);
  e.positions = positions;
  e.position_offset = offset;
  return e;
}

// BertEmbeddings (and its copies): word + position + token type 0, then
// LayerNorm(layer_norm_eps), under "embeddings." of the model's root, which
// is four parts above "bert.encoder.layer.3.attention.".
inline EmbeddingRule bert_embeddings(const char* module) {
  EmbeddingRule e =
      learned_positions("embeddings.word_embeddings.", "embeddings.position_embeddings.", 0, 4);
  e.token_types = "embeddings.token_type_embeddings.";
  e.norm = "embeddings.LayerNorm.";
  e.module = module;
  return e;
}

// RobertaEmbeddings: BertEmbeddings whose positions count the non-padding
// tokens from padding_idx + 1 (config.json's pad_token_id, default 1).
inline EmbeddingRule roberta_embeddings(const char* module) {
  EmbeddingRule e = bert_embeddings(module);
  e.padding_key = "pad_token_id";
  e.padding = 1;
  return e;
}

}  // namespace attn::family

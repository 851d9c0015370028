// One run, model level: from a resolved config to loaded, validated weights
// and inputs, ready for forward(). Shared by the executable, the golden tests
// and the benchmark, so they all see the same loading rules.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/config.h"
#include "attn/layout.h"
#include "attn/masks.h"
#include "attn/tensor.h"
#include "attn/weights.h"

namespace attn {

// Token ids of --tokens, batch first: (B, S); `batched` false for a
// list on the command line or an (S,) file (the context drops B).
struct TokenIds {
  std::vector<std::size_t> shape;  // (B, S)
  std::vector<std::int64_t> ids;   // B * S, row-major
  bool batched = false;
  std::string source;  // "--tokens" or the file, for messages and run.json
};

struct LoadOptions {
  bool allow_nonfinite = false;
  // When set, replaces the config's input: a path, or "-" with stdin_bytes.
  std::optional<std::string> input_path;
  std::vector<std::uint8_t> stdin_bytes;  // the input when input_path == "-"
  std::optional<std::string> padding_mask_path;
  // --tokens LIST|FILE: layer 0's input built from these ids with the
  // config's embedding (embed_tokens) instead of an input file.
  std::optional<std::string> tokens;
  int threads = 1;  // for the token rows' reads (0 = the CPUs this process may use)
};

// One input's tensors for forward(), batch first, checked against the config
// and each other (CONTRACT.md "Config" v2 keys). Letters: L queries, T keys
// (T = L for self-attention).
struct RunInputs {
  std::string input_source;          // the query input: path, "-" or "config"
  Tensor x;                          // (B, L, C)
  bool batched = true;               // false: given as (L, C); context and maps drop B
  bool batch_first = true;           // false: given (L, B, C); the context goes back (L, B, O)
  std::optional<Tensor> key, value;  // (B, T, Ck), (B, T, Cv): cross-attention
  std::optional<Mask> padding;  // (B, T), 1 = padded key (padding_mask, or attention_mask inverted)
  std::optional<PositionIds> positions;  // (B, L)
  std::optional<ScoreMask> attn_mask;    // torch's attn_mask resolved for (B, H, L, T)
  // Where each came from (path, "config" or a flag), for run.json.
  std::map<std::string, std::string> sources;
  // The token ids the input was built from (--tokens), for labels.
  std::optional<TokenIds> tokens;
  // Likely user mistakes that give wrong numbers without failing (an inverted
  // mask): the caller prints them as warnings.
  std::vector<std::string> warnings;

  std::size_t keys() const { return key ? key->shape[1] : x.shape[1]; }  // T
  // Pointers into this, for forward().
  ForwardInputs forward_inputs() const;
};

struct LoadedRun : RunInputs {
  Weights weights;
  Layout layout = Layout::fused;
  bool layout_detected = false;  // false: from config/init
  std::string weights_source;    // path, or "init(seed=N)"
};

// Everything the run needs besides the weights, for query input `x` as
// given ((L, C) or (B, L, C); (L, B, C) with batch_first false) from
// `source`: the key/value inputs, the masks and positions of the config (and
// LoadOptions' flags), each read, batched and checked against x. H resolves
// the attn_mask's shape.
RunInputs load_inputs(const Config& cfg, const LoadOptions& opt, Tensor x,
                      const std::string& source);

// The context as the caller gave the input: (B, L, O) -> (L, O) for an
// unbatched input, (L, B, O) with batch_first false.
Tensor context_as_given(Tensor context, const RunInputs& in);

// Load the weights (from files or the seeded init) and the input and mask,
// checking every shape against the config.
LoadedRun load_run(const Config& cfg, const LoadOptions& opt);

// Load just the weights (for --dump-weights).
Weights load_model_weights(const Config& cfg, bool allow_nonfinite, Layout* layout, bool* detected,
                           std::string* source);

// Input bytes (a .npy image or JSON nested array text) to their values, as
// given: (S, C) or (B, S, C) before batch_input checks them.
Tensor parse_input_bytes(const std::vector<std::uint8_t>& bytes, const std::string& name,
                         bool allow_nonfinite);

// The same from a file (.npy or JSON), read with a sanity cap on its size.
Tensor read_input_file(const std::string& path, bool allow_nonfinite);

// The query length S of an input that is a .npy image, (B, S, C) or (S, C),
// from its header alone: a regular file at `path`, or stdin_bytes when path
// is "-". 0 when it is anything else or unreadable (a hint for
// prefault_forward, never an error: the input is read and judged later).
std::size_t npy_input_length(const std::string& path, const std::vector<std::uint8_t>& stdin_bytes);

// --tokens' value: ids "9906,11,1917" (one sequence, unbatched), or a
// .npy file of int32/int64 ids, (S,) or (B, S). A malformed list is
// Exit::usage naming the flag; a file of another dtype or shape Exit::data
// naming it (Exit::no_input when missing).
TokenIds read_token_ids(const std::string& spec);

// Layer 0's input from token ids with cfg.embedding (config.h
// EmbeddingSpec): (B, S, C), or (S, C) when !ids.batched. Reads only the rows
// the ids and positions name. An id outside the word table's rows, or a
// position past the learned positions: Exit::data naming the id (and its
// place) and ids.source. Without cfg.embedding: Exit::usage naming --tokens.
// `positions` (B, S), when given (the config's positions), number the learned
// positions (plus position_offset) as Hugging Face's position_ids do; else
// 0..S-1, or RoBERTa's from padding_id.
Tensor embed_tokens(const Config& cfg, const TokenIds& ids, bool allow_nonfinite,
                    const PositionIds* positions = nullptr);

// The same into x, whose B * S * C floats the caller sized (a run's input
// tensor, already of its shape: no second buffer of the embeddings and no
// copy), the word rows read on `threads` workers (0 = the CPUs this process
// may use).
void embed_tokens_into(const Config& cfg, const TokenIds& ids, bool allow_nonfinite,
                       const PositionIds* positions, Tensor& x, int threads = 1);

// Token embeddings checked against the config: (S, C) becomes (1, S, C) with
// *batched = false, (B, S, C) is kept; C must be hidden_size, B and S >= 1,
// S <= context_size. `name` (file, "-" or "input") starts every message.
Tensor batch_input(Tensor t, const Config& cfg, const std::string& name, bool* batched);

// The padding mask as given, before batching: from the --padding-mask flag
// when set, else the config's inline mask, else its padding_mask file;
// nullopt when there is none. *name is set to what names it in messages.
std::optional<Mask> read_padding_mask(const Config& cfg, const std::optional<std::string>& flag,
                                      std::string* name);

// A padding mask for a (B, S) batch: (S,) applies to every sequence, (B, S) as
// is; any other shape is Exit::data naming `name` (and `input`, when given,
// as what it had to fit).
Mask batch_mask(const Mask& m, std::size_t B, std::size_t S, const std::string& name,
                const std::string& input = "");

// What the forward pass applies for a resolved config: a copy of cfg.spec
// (which forward() can take as it is).
AttentionSpec attention_spec(const Config& cfg);

}  // namespace attn

// --save scores,q,k,v,z,result (CONTRACT.md "(v4) Comparisons, statistics,
// intermediates"): the forward pass's intermediates under TransformerLens'
// hook names, each streamed into NAME.npy (float32) as the forward pass makes
// it, the map selection (--heads, --queries, --keys) applied:
//   scores  (B, H', L', S')   hook_attn_scores: pre-softmax, after scale,
//                             softcap and the biases, -inf where masked
//   q       (B, L', H', D)    hook_q, after qk_norm, rope (and the temperature)
//   k, v    (B, S'', G', D)   hook_k, hook_v: the KV heads G' that the
//                             selected query heads read, the selected keys
//                             among the T real ones (S'')
//   z       (B, L', H', Dz)   hook_z: each head's weighted values (after the
//                             gate), the input of the output projection
//   result  (B, L', H', O)    hook_result: each head's share of the output
//                             projection, z_h W_O[:, h]^T, without the bias
// B is left out for an unbatched input, as attention.npy does. Nothing is
// held whole: q, k, v, z and result go out a chunk of rows at a time, the
// scores block by block.
//
// Letters: B batch, L queries, T keys (T' with torch MHA's extra columns),
// H heads, Hkv key/value heads, D head size, Dz a head's width into the
// output projection (D; Dv with mla), O out size.
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/layer_weights.h"
#include "attn/map_select.h"
#include "attn/output.h"

namespace attn {

// The names --save takes, in the order they are written and listed.
const std::vector<std::string>& saved_tensor_names();

// --save "scores,q,k": the names asked for, in saved_tensor_names' order,
// each once. An unknown or empty name is Error(Exit::usage) naming --save
// and listing the valid names.
std::vector<std::string> parse_save_list(const std::string& spec);

// One run's saved tensors: which, and the shapes of the run they come from.
struct SavePlan {
  std::vector<std::string> names;  // of saved_tensor_names
  std::size_t B = 0, L = 0, T = 0, T_ext = 0;
  bool batched = true;     // false: the input was (S, C), files have no B axis
  MapSelection selection;  // heads of H, queries of L, keys of T' (empty = all)
  bool has(const std::string& name) const;
  // The file's shape for `name` on weights w (after the selection).
  std::vector<std::size_t> shape(const Weights& w, const std::string& name) const;
  // The KV heads the selected query heads read (every KV head without --heads).
  std::vector<std::size_t> kv_heads(const Weights& w) const;
  // The selected keys among the T real ones (k and v have no extra columns).
  std::vector<std::size_t> real_keys() const;
  // Bytes the sink holds besides the forward pass's buffers (staging rows,
  // per-head output weights for result), for the memory check.
  std::size_t working_bytes(const Weights& w) const;
};

// Why `name` cannot be saved for this layer ("" = it can): result needs an
// output projection; q, k and v are not laid out per head with mla.
std::string save_unsupported(const Weights& w, const std::string& name);

// The forward pass's IntermediateSink writing each asked-for NAME.npy into `out`.
class SavedTensorsSink : public IntermediateSink {
 public:
  SavedTensorsSink(const Weights& w, SavePlan plan, OutputDir& out, int threads);
  ~SavedTensorsSink() override;
  bool wants_keys_values() const override;
  bool wants_scores() const override;
  void write_qkv(std::size_t b0, std::size_t nb, std::size_t L, const float* q, std::size_t ld_q,
                 std::size_t T, std::size_t T_ext, const float* k, const float* v,
                 std::size_t ld_kv) override;
  void write_scores(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                    const float* rows) override;
  void write_z(std::size_t b0, std::size_t nb, std::size_t L, const float* y,
               std::size_t ld_y) override;
  // The scores' last blocks on the disk; call after the forward pass.
  void finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// run.json's "saved": per name its file, shape and the indices each axis
// keeps (null = every index).
nlohmann::json saved_description(const Weights& w, const SavePlan& plan);

}  // namespace attn

// Private to the weights files: every layout of CONTRACT.md ("Weight layouts")
// described as a table of slots, each naming a state_dict key and the row
// blocks of the canonical weights it holds. Loading, exporting and the seeded
// init all walk the same table, so the three cannot disagree about a key or a
// shape.
//
// Letters: C hidden (in), H heads, Hkv key/value heads, D head size, O out features.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/config.h"
#include "attn/geometry.h"
#include "attn/layout.h"
#include "attn/state_dict.h"
#include "attn/tensor.h"
#include "attn/weights.h"

namespace attn::detail {

// qk_norm's weights: none, (D) each ("head": Qwen3, Gemma 3) or (H*D)
// and (Hkv*D) ("all": OLMo 2).
enum class QkNorm { none, head, all };

// The geometry and which biases and extras a layout's table lists.
struct Dims : Geometry {
  bool qkv_bias = true;
  bool out_bias = true;
  bool bias_kv = false;           // torch MHA add_bias_kv: bias_k, bias_v
  QkNorm qk_norm = QkNorm::none;  // q_norm.weight, k_norm.weight (none for kind "l2")
  bool qk_per_head = false;       // those weights (H, D) and (Hkv, D) (scope "head")
  bool qk_bias = false;           // q_norm.bias, k_norm.bias (kind "layer")
  // Per-head weights stored as one module per head, q_norm.norms.{h}.weight
  // (D) (StableLM's StableLmLayerNormPerHead), instead of one (H, D) tensor.
  // Loading sets it from the keys the file has; export writes the (H, D) form.
  bool qk_norm_list = false;
  bool sinks = false;  // sinks (H): gpt-oss
  bool gate = false;   // q_proj rows (H, 2D): per head [query | gate] (Qwen3-Next)
  // No v_proj: k_proj's rows fill both the k and the v rows (Gemma 4's
  // attention_k_eq_v); Weights::k_eq_v says so for export.
  bool k_eq_v = false;

  // q, k and v are three weights (torch MHA's q_proj_weight, k_proj_weight,
  // v_proj_weight) and the canonical w_qkv holds only the q rows: from a
  // config, torch's own rule (not _qkv_same_embed_dim: kdim or vdim differs
  // from embed_dim); from weights, w_k present.
  bool split_kv = false;

  std::size_t key_width() const { return Ck ? Ck : C; }    // Ck
  std::size_t value_width() const { return Cv ? Cv : C; }  // Cv
  std::size_t w_qkv_rows() const { return split_kv ? q_rows() : qkv_rows(); }
  std::size_t q_norm_size() const { return qk_norm == QkNorm::all || qk_per_head ? q_rows() : D; }
  std::size_t k_norm_size() const { return qk_norm == QkNorm::all || qk_per_head ? kv_rows() : D; }
  // As stored: (D), (H*D) / (Hkv*D), or per head (H, D) / (Hkv, D).
  std::vector<std::size_t> q_norm_shape() const {
    return qk_per_head ? std::vector<std::size_t>{H, D} : std::vector<std::size_t>{q_norm_size()};
  }
  std::vector<std::size_t> k_norm_shape() const {
    return qk_per_head ? std::vector<std::size_t>{Hkv, D} : std::vector<std::size_t>{k_norm_size()};
  }
};
Dims dims_of(const Config& cfg);
Dims dims_of(const Weights& w);  // an extra is listed when its tensor is non-empty

// Which canonical tensor a piece is a block of.
enum class Part {
  qkv_weight,
  qkv_bias,
  out_weight,
  out_bias,
  k_weight,  // w_k: torch MHA with kdim
  v_weight,  // w_v: torch MHA with vdim
  bias_k,    // torch MHA add_bias_kv
  bias_v,
  q_norm,  // qk_norm weights
  k_norm,
  q_norm_bias,  // qk_norm kind "layer" with a bias
  k_norm_bias,
  sinks,        // gpt-oss
  gate_weight,  // w_gate (H*D, C): gated attention (Qwen3-Next)
  gate_bias     // b_gate (H*D)
};

// Rows [src_row0, src_row0 + rows) of the stored tensor are rows
// [dst_row0, dst_row0 + rows) of the canonical tensor `part` (w_qkv
// ((H+2*Hkv)*D, C) or (H*D, C), b_qkv ((H+2*Hkv)*D), w_out (O, H*D), b_out (O),
// w_k (Hkv*D, Ck), w_v (Hkv*D, Cv); 1-D extras have rows of one value, except
// bias_k and bias_v, stored (1, 1, E): one row of Hkv*D values).
struct Piece {
  Part part = Part::qkv_weight;
  std::size_t src_row0 = 0, dst_row0 = 0, rows = 0;
};

// One state_dict entry and the canonical blocks it fills: one piece for most
// layouts, one per head (neox) or per KV group part (falcon) where the stored
// rows interleave q, k and v. transposed: stored (in, out), GPT-2's Conv1D.
struct Slot {
  std::string key;                   // the name export and init write
  std::vector<std::string> aliases;  // other names loading accepts (qkv_proj for Wqkv, ...)
  std::vector<Piece> pieces;
  bool transposed = false;
  std::vector<std::size_t> shape;  // as stored in the state_dict
  Part part() const { return pieces.front().part; }
  bool is_bias() const { return part() == Part::qkv_bias || part() == Part::out_bias; }
};

// The slots of `layout` for these dims, in constructor order (each weight
// followed by its bias when the dims list it). Assumes layout_fit_problem()
// is empty. No output projection slot without d.out_proj (a model
// folder's layer with {"out_proj": false} leaves it unread).
std::vector<Slot> layout_slots(const Dims& d, Layout layout);

// layout_fit_problem (geometry.h) plus the bias rule of torch_mha and the
// layouts that hold the extras (bias_k/bias_v: torch_mha; q_norm, k_norm,
// sinks: proj).
std::string fit_problem(const Dims& d, Layout layout);

// Registered buffers that ride along in state dicts (the tutorials' mask,
// causal_mask, heads.{i}.mask; GPT-2's bias, masked_bias; rotary_emb.inv_freq):
// never parameters.
bool is_buffer_key(const std::string& key);

// A block's other modules under the same prefix (norms, MLP, BERT's
// output.LayerNorm): recognized and ignored.
bool is_neighbour_key(const std::string& key);

// Canonical weights of these dims (b_qkv / b_out only when asked; w_k, w_v
// and the extras when the dims list them) read from `sd`: each stored tensor
// (slot, its key in sd; shapes already checked) converted straight into its
// canonical blocks, piece by piece. What no slot fills (a bias missing from
// the file, k_eq_v's v rows) is zero.
Weights read_weights(const Dims& d, bool qkv_bias, bool out_bias, const StateDict& sd,
                     const std::vector<std::pair<const Slot*, std::string>>& slots,
                     bool allow_nonfinite);

// The stored tensor of `s` cut from canonical weights (the inverse of read_slot).
Tensor slot_tensor(const Weights& w, const Slot& s);

// mla (config "mla"): DeepSeek's own tensor names instead of a layout's
// table (layer/mla_weights.cpp). Loading checks every key and shape as
// load_weights does (Exit::data naming the key); export writes them back.
Weights load_mla_weights(const StateDict& sd, const Config& cfg, const std::string& source,
                         bool allow_nonfinite);
StateDict export_mla_weights(const Weights& w);

}  // namespace attn::detail

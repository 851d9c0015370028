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

// The geometry and which biases a layout's table lists.
struct Dims : Geometry {
  bool qkv_bias = true;
  bool out_bias = true;
};
Dims dims_of(const Config& cfg);
Dims dims_of(const Weights& w);

// Which canonical tensor a piece is a block of.
enum class Part { qkv_weight, qkv_bias, out_weight, out_bias };

// Rows [src_row0, src_row0 + rows) of the stored tensor are rows
// [dst_row0, dst_row0 + rows) of the canonical tensor `part` (w_qkv
// ((H+2*Hkv)*D, C), b_qkv ((H+2*Hkv)*D), w_out (O, H*D), b_out (O)).
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
// is empty.
std::vector<Slot> layout_slots(const Dims& d, Layout layout);

// layout_fit_problem (geometry.h) plus the bias rule of torch_mha.
std::string fit_problem(const Dims& d, Layout layout);

// Registered buffers that ride along in state dicts (the tutorials' mask,
// causal_mask, heads.{i}.mask; GPT-2's bias, masked_bias; rotary_emb.inv_freq):
// never parameters.
bool is_buffer_key(const std::string& key);

// A block's other modules under the same prefix (norms, MLP, BERT's
// output.LayerNorm): recognized and ignored.
bool is_neighbour_key(const std::string& key);

// Canonical weights of these dims, zero-filled; b_qkv / b_out allocated only
// when asked.
Weights empty_weights(const Dims& d, bool qkv_bias, bool out_bias);

// Reads the stored tensor `key` (shape already checked) into the canonical
// blocks of `s`, piece by piece, converting straight into w's buffers.
void read_slot(const StateDict& sd, const std::string& key, const Slot& s, Weights& w,
               bool allow_nonfinite);

// The stored tensor of `s` cut from canonical weights (the inverse of read_slot).
Tensor slot_tensor(const Weights& w, const Slot& s);

}  // namespace attn::detail

// Private to the weights files: every layout of CONTRACT.md ("Weight layouts")
// described as a table of slots, each naming a state_dict key and the block of
// the canonical weights it holds. Loading, exporting and the seeded init all
// walk the same table, so the three cannot disagree about a key or a shape.
//
// Letters: C hidden (in), H heads, D head size, O out features.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attn/config.h"
#include "attn/layout.h"
#include "attn/tensor.h"
#include "attn/weights.h"

namespace attn::detail {

// The sizes and switches that decide a layout's keys and shapes.
struct Dims {
  std::size_t C = 0, H = 0, D = 0, O = 0;  // O = H*D without out_proj
  bool out_proj = true;
  bool qkv_bias = true;
  bool out_bias = true;
  std::size_t HD() const { return H * D; }
};
Dims dims_of(const Config& cfg);
Dims dims_of(const Weights& w);

// Which canonical tensor a slot is a block of.
enum class Part { qkv_weight, qkv_bias, out_weight, out_bias };

// One state_dict entry: rows [row0, row0 + rows) of a canonical tensor
// (w_qkv (3*H*D, C), b_qkv (3*H*D), w_out (O, H*D), b_out (O)), stored
// transposed for GPT-2's Conv1D (in, out).
struct Slot {
  std::string key;
  Part part = Part::qkv_weight;
  std::size_t row0 = 0, rows = 0;
  bool transposed = false;
  std::vector<std::size_t> shape;  // as stored in the state_dict
  bool is_bias() const { return part == Part::qkv_bias || part == Part::out_bias; }
};

// The slots of `layout` for these dims, in constructor order (each weight
// followed by its bias). Assumes layout_fit_problem() is empty.
std::vector<Slot> layout_slots(const Dims& d, Layout layout);

// Why `layout` cannot hold a model of these dims ("" when it can): the part of
// a message such as "layout per_head has no output projection". The same rule
// serves loading (Exit::config), exporting (Exit::usage) and init.
std::string layout_fit_problem(const Dims& d, Layout layout);

// Registered buffers that ride along in state dicts (the tutorials' mask,
// causal_mask, heads.{i}.mask; GPT-2's bias, masked_bias): never parameters.
bool is_buffer_key(const std::string& key);

// Layout-shaped float32 tensors keyed like the state_dict.
using TensorMap = std::map<std::string, Tensor>;

// Assemble canonical weights from tensors whose keys and shapes match
// layout_slots(d, layout) exactly.
Weights assemble(const Dims& d, Layout layout, const TensorMap& m);

// The layout's tensors cut from canonical weights.
TensorMap disassemble(const Weights& w, Layout layout);

}  // namespace attn::detail

// Loading attention weights into their canonical form (attn/layer_weights.h),
// whatever layout they came in, and exporting them back; the seeded init.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/config.h"
#include "attn/layer_weights.h"
#include "attn/layout.h"
#include "attn/state_dict.h"

namespace attn {

// The layout whose keys these are (after prefix stripping and dropping
// buffers). Exit::data naming `source` and a key when none fits.
Layout detect_layout(const StateDict& sd, const std::string& source);

// Keep only keys under `prefix` (stripped; other keys are ignored) and drop
// registered buffers (mask, causal_mask, heads.{i}.mask, GPT-2's bias and
// masked_bias, rotary_emb.inv_freq) and a block's neighbour modules (norms,
// MLP, BERT's output.LayerNorm). No parameter of any layout has such a name,
// so the layout is not needed: select first, then detect_layout on the result.
StateDict select_keys(const StateDict& sd, const std::string& prefix);

// Convert a state dict to canonical weights, checking every key and shape
// against the config; each tensor is read (StateDict::read_rows) piece by
// piece straight into the canonical buffers. A bias is used where the file
// has it; a missing one is zero unless the config asked for it explicitly.
// `source` names the weights file/folder in messages.
// Missing key, unexpected key, wrong shape: Exit::data naming the key, the
// expected shape and the shape found. Non-finite: Exit::data unless allowed.
Weights load_weights(const StateDict& sd, const Config& cfg, Layout layout,
                     const std::string& source, bool allow_nonfinite);

// Canonical weights as a state dict of float32 arrays in `layout`.
// Exit::usage when the layout cannot hold the model (per_head/kqv have no
// output projection; gpt2 needs O == C == H*D).
StateDict export_weights(const Weights& w, Layout layout);

// Exactly what torch.manual_seed(seed) followed by the tutorial module's
// constructor for `layout` would produce (CONTRACT.md init order), bit for
// bit. Like torch's CPU generator, only the low 32 bits of `seed` count.
// torch_mha follows nn.MultiheadAttention (out_proj's Linear init, then
// xavier_uniform_ in_proj_weight, zero biases). gpt2: Exit::config (Hugging
// Face initialises with normal(0, 0.02), not a tutorial module). A layout that
// cannot hold the config: Exit::config.
Weights init_weights(const Config& cfg, Layout layout, std::uint64_t seed);

// The key names and shapes a layout expects for this config, in constructor
// order (for messages, --dump-weights and tests). Exit::config when the
// layout cannot hold the config (per_head/kqv with out_proj, ...).
struct ParamSpec {
  std::string key;
  std::vector<std::size_t> shape;
};
std::vector<ParamSpec> expected_params(const Config& cfg, Layout layout);

}  // namespace attn

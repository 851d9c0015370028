// The attention forward pass over canonical weights.
//
// Letters: B batch, S sequence, C hidden, H heads, D head size, O out size.
// Equivalent to the tutorial modules (and torch.nn.MultiheadAttention):
//   qkv = x Wqkv^T + b                     (B, S, 3*H*D)
//   att = softmax(scale * q k^T + mask)    (B, H, S, S)
//   y   = (att v) concatenated over heads  (B, S, H*D)
//   out = y Wo^T + bo                      (B, S, O)
#pragma once

#include <cstdint>

#include "attn/tensor.h"
#include "attn/weights.h"

namespace attn {

struct AttentionSpec {
  float scale = 1.0f;   // multiplies q k^T
  bool causal = false;  // mask keys after the query position
};

struct ForwardOptions {
  // Destination for the softmax weights, (B, H, S, S) floats, or nullptr to
  // not produce them (the streaming path never holds S x S weights). May
  // point into a memory-mapped output file.
  float* attention_out = nullptr;
  int threads = 0;  // 0 = all cores
};

struct ForwardStats {
  std::int64_t fully_masked_rows = 0;  // (b, h, query) rows with every key masked
  double flops = 0.0;                  // multiply-adds x2 actually computed
};

// x: (B, S, C) row-major. key_padding: (B, S) bytes, 1 = padded key, or
// nullptr. context: resized to (B, S, O).
ForwardStats forward(const Weights& w, const AttentionSpec& spec, const Tensor& x,
                     const Mask* key_padding, Tensor& context, const ForwardOptions& opt);

// FLOPs of the dense forward pass (2 per multiply-add), counting causal
// score and P·V work halved (only the lower triangle is computed).
double forward_flops(const Weights& w, std::int64_t B, std::int64_t S, bool causal);

}  // namespace attn

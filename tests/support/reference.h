// The reference attention: the slow, obviously-correct version every fast
// path is checked against (STYLE.md rule 5). Written with xtensor and
// xtensor-blas so it reads like the tutorials' PyTorch, in double, and shares
// no code with the library's kernels.
//
// Letters: B batch, S sequence, C hidden, H query heads, Hkv key/value heads,
// D head size, O out size, n query rows.
#pragma once

#include <cstddef>
#include <vector>
#include <xtensor/xtensor.hpp>

#include "attn/layer_weights.h"
#include "attn/tensor.h"

namespace attn::ref {

// One attention layer in the canonical form, as plain xtensor arrays. Same
// math as torch.nn.Linear: y = x W^T + b with W (out, in).
struct RefLayer {
  std::size_t H = 0, Hkv = 0, D = 0;  // query head h reads KV head h / (H / Hkv)
  xt::xtensor<double, 2> w_qkv;       // ((H + 2*Hkv)*D, C): q of H heads, k of Hkv, v of Hkv
  xt::xtensor<double, 1> b_qkv;       // ((H + 2*Hkv)*D), zeros when the layer has no bias
  bool has_out_proj = true;
  xt::xtensor<double, 2> w_out;  // (O, H*D); unused without out_proj
  xt::xtensor<double, 1> b_out;  // (O), zeros when the layer has no bias
  // Each empty (size 0) when the layer has none (weights.h):
  xt::xtensor<double, 2> w_k, w_v;        // (Hkv*D, Ck), (Hkv*D, Cv): torch MHA kdim/vdim; then
                                          // w_qkv holds only the q rows (H*D, C)
  xt::xtensor<double, 1> bias_k, bias_v;  // (Hkv*D): torch MHA add_bias_kv
  xt::xtensor<double, 1> q_norm, k_norm;  // (D) scope "head"; (H*D), (Hkv*D) scope "all"
  xt::xtensor<double, 1> sinks;           // (H)
};

// The library's canonical Weights as a RefLayer (widened to double).
RefLayer from_weights(const Weights& w);

struct Result {
  Tensor context;              // (B, S, O), or (B, S, H*D) without out_proj
  Tensor attention;            // (B, H, S, S)
  long fully_masked_rows = 0;  // (b, h, query) rows with every key masked
};

// x: (B, S, C); key_padding: (B, S) 1 = padded, or nullptr. Computed in
// double, rounded to float at the end. Rows with every key masked get zero
// weights and zero attention output (context = output bias).
Result attention(const RefLayer& layer, const Tensor& x, const Mask* key_padding, double scale,
                 bool causal);

// The same computation for a few query rows of one batch row only, for
// checking long sequences where the full reference is too slow: keys and
// values are projected for every position of batch b, queries only for
// `rows`. context: (n, O); attention: (H, n, S); n = rows.size().
Result attention_rows(const RefLayer& layer, const Tensor& x, const Mask* key_padding, double scale,
                      bool causal, std::size_t b, const std::vector<std::size_t>& rows);

}  // namespace attn::ref

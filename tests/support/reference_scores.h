// The reference for CONTRACT.md "Scores, in order" with every v2 feature
// (qk_norm, rope, softcap, alibi, attn_mask, sliding window, sinks, cross-
// attention, torch MHA's bias_kv and zero_attn) and v3's (gate, qk_norm kinds layer and l2,
// per-head norm weights, relative_bias) and v4's (clip_qkv, qk_norm after rope, DeBERTa's
// disentangled terms and padded queries): plain loops in
// double, one query row at a time, written from the contract's list and sharing no code with the
// kernels (rope's inverse frequencies and ALiBi's slopes come from attn/positions.h, which
// test_positions checks against transformers, as do T5's relative position buckets).
//
// Letters: B batch, L queries, T keys, T' = T + extra keys, H heads, Hkv
// key/value heads, D head size, O out size.
#pragma once

#include "attn/attention.h"
#include "attn/layer_weights.h"
#include "attn/tensor.h"

namespace attn::ref {

struct ScoresResult {
  Tensor context;              // (B, L, O)
  Tensor attention;            // (B, H, L, T')
  long fully_masked_rows = 0;  // (b, h, query) rows with no allowed key
  // The intermediates under TransformerLens' names (--save), Dq the width of
  // a head's q and k, Dw of its v (D without mla):
  Tensor scores;  // (B, H, L, T') before the softmax, -inf where not allowed
  Tensor q;       // (B, L, H, Dq) after qk_norm, rope and the temperature
  Tensor k, v;    // (B, T, Hkv, Dq), (B, T, Hkv, Dw): the real keys
  Tensor z;       // (B, L, H, Dw) each head's weighted values (after the gate)
  Tensor result;  // (B, L, H, O) z_h W_O[:, h]^T, without the bias (empty without out_proj)
};

// Same inputs as attn::forward. Computed in double (rope angles too), rounded
// to float at the end.
ScoresResult attention_with_scores(const Weights& w, const AttentionSpec& spec,
                                   const ForwardInputs& in);

}  // namespace attn::ref

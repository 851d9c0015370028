// Plain-loop reference attention: the slow, obviously-correct version every
// fast path is checked against (STYLE.md rule 5). No BLAS, no blocking.
//
// Letters: B batch, S sequence, C hidden, H heads, D head size, O out size.
#pragma once

#include <vector>

#include "attn/tensor.h"
#include "attn/weights.h"

namespace attn::ref {

struct Result {
  Tensor context;    // (B, S, O)
  Tensor attention;  // (B, H, S, S)
  long fully_masked_rows = 0;
};

// x: (B, S, C); key_padding: (B, S) 1 = padded, or nullptr. Computed in
// double, rounded to float at the end. Rows with every key masked get zero
// weights and zero attention output (context = output bias).
Result attention(const Weights& w, const Tensor& x, const Mask* key_padding, double scale,
                 bool causal);

// The same computation for a few query rows of one batch row only, for
// checking long sequences where the full reference is too slow: keys and
// values are projected for every position of batch b, queries only for
// `rows`. context: (n, O); attention: (H, n, S); n = rows.size().
Result attention_rows(const Weights& w, const Tensor& x, const Mask* key_padding, double scale,
                      bool causal, std::size_t b, const std::vector<std::size_t>& rows);

}  // namespace attn::ref

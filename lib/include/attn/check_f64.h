// --check-f64: a few query rows of a run recomputed in float64 from the same
// stored weights and inputs, by a plain path of its own (projections,
// positions, scores, softmax, context: no tiles, no online softmax, no
// float32 anywhere after the weights and inputs were read), so a run can
// state its distance to float64 truth (CONTRACT.md "(v4) Comparisons,
// statistics, intermediates").
//
// The path covers the score terms of CONTRACT.md "Scores, in order" that
// most layers use: fused or separate q/k/v projections with biases, GQA,
// rope (exact angles from rope_frequencies), scale, softcap, ALiBi, the
// attn_mask, causal, sliding windows, attention chunks, key padding, sinks
// and the output projection; f64_unsupported names what it does not.
//
// Letters: B batch, L queries, T keys (= L: self-attention), C hidden, H
// heads, Hkv key/value heads, D head size, O out size, n rows checked.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attn/attention.h"

namespace attn {

// "" when the float64 path covers the layer and inputs, else the feature it
// lacks (a config key's name, e.g. "qk_norm").
std::string f64_unsupported(const Weights& w, const AttentionSpec& spec, const ForwardInputs& in);

struct F64Rows {
  std::vector<double> attention;  // (H, n, T) the softmax weights of rows[k]
  std::vector<double> context;    // (n, O) the output rows
};

// Rows `rows` (of L) of batch entry b in float64. threads: OpenBLAS's for
// the projections' GEMMs.
F64Rows attention_rows_f64(const Weights& w, const AttentionSpec& spec, const ForwardInputs& in,
                           std::size_t b, const std::vector<std::size_t>& rows, int threads);

// N query rows of L evenly spaced, first and last included (0 or N >= L: all).
std::vector<std::size_t> evenly_spaced_rows(std::size_t L, std::size_t N);

}  // namespace attn

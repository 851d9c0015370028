// --top-k: the largest weights of each map row, computed as the rows stream
// out of the forward pass (CONTRACT.md "(v3) Selecting and reducing maps"):
// one block of rows at a time, never an L x S map.
//
// Letters: B batch, H heads, L query rows, T keys (positions), T' keys of a
// map row (T plus torch MHA's bias_kv / zero_attn columns), K kept weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/attention.h"
#include "attn/output.h"
#include "attn/tensor.h"

namespace attn {

// The K largest of n weights, in decreasing order, equal weights in
// increasing key index (numpy's argsort(-row, kind="stable")[:K]); K <= n.
// One pass keeping a sorted list of K: O(n) plus K per insertion.
void top_k_row(const float* row, std::size_t n, std::size_t K, float* values,
               std::int64_t* indices);

// --top-k K: per row (b, h, i) the K largest weights and their key indices
// (of the T' columns), as (B, H, L, K) float32 values and int64 indices.
// Thread-safe (each block is written at its own place).
class TopKSink : public AttentionSink {
 public:
  // Kept in memory: `values` and `indices`, (B, H, L, K).
  TopKSink(std::size_t B, std::size_t H, std::size_t L, std::size_t T, std::size_t K);
  // Streamed into two .npy files staged in `out` (add_streamed_npy handles:
  // float32 values and "<i8" indices, both of B * H * L * K elements).
  TopKSink(std::size_t H, std::size_t L, std::size_t T, std::size_t K, OutputDir& out,
           int values_file, int indices_file);
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;
  // No rows needed: the streaming pass's top-k (attn/digest.h).
  DigestRequest digest_request() const override;
  void write_digests(std::size_t b, std::size_t h, std::size_t i0, const RowDigests& d) override;

  Tensor values;                      // (B, H, L, K) in memory
  std::vector<std::int64_t> indices;  // (B, H, L, K) in memory

 private:
  // Rows [i0, i0 + n) of (b, h): K values and indices per row, `stride` apart.
  void store(std::size_t b, std::size_t h, std::size_t i0, std::size_t n, const float* values,
             const std::int64_t* indices, std::size_t stride);

  std::size_t H_, L_, T_, K_;
  OutputDir* out_ = nullptr;
  int values_file_ = -1, indices_file_ = -1;
};

}  // namespace attn

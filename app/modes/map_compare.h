// --compare FILE.npy: attention maps produced elsewhere (Hugging Face eager,
// TransformerLens) against attn-run's, as the rows stream (CONTRACT.md "(v3)
// Many layers, resumable batches"): per head the largest absolute difference.
//
// Letters: B batch, H' heads, L' queries, T' keys of the maps as attention.npy
// holds them (after --heads / --queries / --keys).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/tensor.h"

namespace app {

class CompareSink : public attn::AttentionSink {
 public:
  // ref: the other maps, laid out as attention.npy ((B, H', L', T') or with
  // B or H' left out), B * H' * L' * T' values.
  CompareSink(const attn::Tensor& ref, std::size_t H, std::size_t L, std::size_t T);
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;
  // Per head (H'): max |attn-run - ref|; NaN where the two disagree on a NaN.
  std::vector<double> max_abs() const;

 private:
  const attn::Tensor& ref_;
  std::size_t H_, L_, T_;
  std::vector<double> worst_;
  std::unique_ptr<std::mutex[]> locks_;  // one per head
};

// The --compare table for stderr: one line per head with its largest error.
std::string compare_table(const std::vector<double>& max_abs,
                          const std::vector<std::size_t>& head_numbers);

}  // namespace app

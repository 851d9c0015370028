// --compare FILE.npy: attention maps produced elsewhere (Hugging Face eager,
// TransformerLens) against attn-run's, as the rows stream (CONTRACT.md "(v4)
// Comparisons, statistics, intermediates"): per head the largest absolute
// difference and where it is, the NMSE, and the largest row KL divergence.
// With --no-attn the rows stream to this sink alone: nothing but the report.
//
// Letters: B batch, H' heads, L' queries, T' keys of the maps as attention.npy
// holds them (after --heads / --queries / --keys).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/tensor.h"

namespace app {

// One head's comparison. Indices are the map's own (b, query row, key column
// of the selection); the caller names them as the model's.
struct HeadComparison {
  double max_abs = 0;  // max |attn-run - other|; NaN where one side alone is NaN
  std::size_t max_b = 0, max_query = 0, max_key = 0;
  double sum_sq_diff = 0, sum_sq_other = 0;  // NMSE = sum_sq_diff / sum_sq_other
  // The largest KL(attn-run row || other row) = sum_j a_j log(a_j / o_j) over
  // the compared columns (+inf where the other gives 0 to a key attn-run
  // weighs), and its row.
  double max_kl = 0;
  std::size_t kl_b = 0, kl_query = 0;
  double nmse() const;
};

class CompareSink : public attn::AttentionSink {
 public:
  // ref: the other maps, B * H' * L' * T' values in attention.npy's order.
  CompareSink(const attn::Tensor& ref, std::size_t H, std::size_t L, std::size_t T);
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;
  const std::vector<HeadComparison>& heads() const { return heads_; }

 private:
  const attn::Tensor& ref_;
  std::size_t H_, L_, T_;
  std::vector<HeadComparison> heads_;
  std::unique_ptr<std::mutex[]> locks_;  // one per head
};

// The other file's shape is accepted when it is attention.npy's up to leading
// 1s: transformers' (1, H, L, S) for an unbatched (S, C) input, or (H, L, S)
// for a batch of one.
bool same_maps_shape(const std::vector<std::size_t>& other, const std::vector<std::size_t>& want);

// The --compare table for stderr: one line per head. numbers: the model's
// head, query and key numbers of the selection (empty: the identity).
struct SelectionNumbers {
  std::vector<std::size_t> heads, queries, keys;
};
std::string compare_table(const std::vector<HeadComparison>& heads, const SelectionNumbers& n);

// run.json's "compare": the file, the heads, per head max_abs_error, max_abs_at
// (batch, query, key), nmse, max_row_kl ("inf" when infinite) and
// max_row_kl_at (batch, query), tol; NaN figures are null.
nlohmann::json compare_json(const std::vector<HeadComparison>& heads, const SelectionNumbers& n,
                            const std::string& file, std::optional<double> tol);

// The largest difference over the heads: NaN when any head's is.
double worst_difference(const std::vector<HeadComparison>& heads);

}  // namespace app

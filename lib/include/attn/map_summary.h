// --summary: per row and per head reductions of the maps, computed as the
// rows stream out of the forward pass (CONTRACT.md "(v3) Selecting and
// reducing maps"): one block of rows at a time, never an L x S map.
//
// Letters: B batch, H heads, L query rows, T keys (positions), T' keys of a
// map row (T plus torch MHA's bias_kv / zero_attn columns).
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "attn/attention.h"
#include "attn/tensor.h"

namespace attn {

// Their names in summary.csv and summary.json, in that order.
const std::vector<std::string>& summary_column_names();

// --summary: per row the five columns of SummaryColumn (attn/digest.h); per head the attention
// weight summed over every row it received, by distance bin (a histogram of attended distances).
// Rows arrive as (b, h, i) of (B, H, L) with T' weights each; query_position[i] is row i's position
// (its index in the full map, under --queries) for the distances. The extra T' - T columns have no
// position: they count in the entropy and argmax only. Thread-safe; the
// histograms are summed in (b, h, row) order whatever the threads did.
class SummarySink : public AttentionSink {
 public:
  SummarySink(std::size_t B, std::size_t H, std::size_t T, std::size_t T_row, std::size_t recent,
              std::vector<std::size_t> query_position);
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;
  // No rows needed: the streaming pass's summary (attn/digest.h).
  DigestRequest digest_request() const override;
  void write_digests(std::size_t b, std::size_t h, std::size_t i0, const RowDigests& d) override;

  const Tensor& rows() const { return rows_; }  // (B, H, L, 5)
  // (H, bins): the weight each head put at each distance bin, over every row.
  std::vector<std::vector<double>> histograms() const;
  std::size_t recent() const { return W_; }

 private:
  std::size_t H_, L_, T_, Tr_, W_, bins_;
  std::vector<std::size_t> pos_;
  Tensor rows_;
  mutable std::mutex mutex_;
  // (b, h, first row) -> that block's histogram
  std::map<std::tuple<std::size_t, std::size_t, std::size_t>, std::vector<double>> blocks_;
};

// summary.csv: a header, then one line per (b, h, i):
// batch,head,query,entropy,first_key,recent,mean_distance,argmax, with the
// heads and queries numbered as given (the selection's indices).
std::string summary_csv(const SummarySink& s, const std::vector<std::size_t>& heads,
                        const std::vector<std::size_t>& queries);
// summary.json: the columns, W, the bins' distance ranges, and per head its
// histogram (weight and fraction of the head's total per bin).
nlohmann::json summary_json(const SummarySink& s, const std::vector<std::size_t>& heads);

}  // namespace attn

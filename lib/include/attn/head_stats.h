// --head-stats: one row per head of the statistics DuoAttention (Xiao et al.
// 2024) and sink studies (arXiv 2410.10781) ask for, over the selected query
// rows of every batch entry (CONTRACT.md "(v4) Comparisons, statistics,
// intermediates"), computed as the rows stream, never an L x S map:
//   sink     mean weight on keys 0..N-1,
//   recent   mean weight on the keys j with i - R < j <= i and j >= N,
//   other    1 - sink - recent (DuoAttention's score of a head),
//   entropy  mean row entropy (nats; as --summary's, a row summing below
//            0.999 renormalized first),
//   distance mean attended distance (as --summary's mean_distance).
// Rows with every key masked are left out of the means (as --stats does).
// Per row values are kept (B, H, L, 5 + 3 floats) and averaged in (b, i)
// order at the end: the same numbers for any thread count.
//
// Letters: B batch, H heads, L query rows, T key positions, T' keys of a row.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/map_summary.h"
#include "attn/tensor.h"

namespace attn {

// Their names in head_stats.csv after layer and head, in this order.
const std::vector<std::string>& head_stats_column_names();

// One head's row.
struct HeadStatsRow {
  std::size_t layer = 0, head = 0;
  double sink = 0, recent = 0, other = 0, entropy = 0, distance = 0;
  std::size_t rows = 0;  // rows averaged (fully masked ones left out)
};

class HeadStatsSink : public AttentionSink {
 public:
  // query_position[i] is row i's position (its index in the full map).
  HeadStatsSink(std::size_t B, std::size_t H, std::size_t T, std::size_t T_row,
                std::size_t sink_keys, std::size_t recent, std::vector<std::size_t> query_position);
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;
  DigestRequest digest_request() const override;
  void write_digests(std::size_t b, std::size_t h, std::size_t i0, const RowDigests& d) override;

  // One row per head, heads numbered `heads[h]`, all with `layer`.
  std::vector<HeadStatsRow> result(std::size_t layer, const std::vector<std::size_t>& heads) const;
  std::size_t heads() const { return H_; }
  std::size_t sink_keys() const { return N_; }
  std::size_t recent() const { return summary_.recent(); }

 private:
  std::size_t B_, H_, L_, T_, Tr_, N_;
  std::vector<std::size_t> pos_;
  SummarySink summary_;  // entropy and distance per row
  Tensor head_;          // (B, H, L, kHeadColumns)
};

// head_stats.csv: layer,head,sink,recent,other,entropy,distance.
std::string head_stats_csv(const std::vector<HeadStatsRow>& rows);
// head_stats.json: the settings, the columns' meaning and the rows.
nlohmann::json head_stats_json(const std::vector<HeadStatsRow>& rows, std::size_t sink_keys,
                               std::size_t recent);

// A head_stats.json's rows as head_stats_json wrote them; Error(Exit::data)
// naming `what` (its path) when it is not such a table.
std::vector<HeadStatsRow> head_stats_rows(const nlohmann::json& j, const std::string& what);

// The tables of a batch's inputs merged per (layer, head): each column's mean
// over the inputs weighted by their rows (so the mean is the statistic of
// the inputs' rows put together, as one run over the concatenated inputs
// gives) and its standard deviation over the inputs, weighted the same way
// (ddof 0: one input gives 0).
struct MergedHeadStats {
  std::size_t layer = 0, head = 0, inputs = 0, rows = 0;
  double mean[5] = {}, std[5] = {};  // in head_stats_column_names' order
};
std::vector<MergedHeadStats> merge_head_stats(const std::vector<std::vector<HeadStatsRow>>& tables);
// head_stats.csv of a batch: layer,head,inputs,sink,sink_std,recent,recent_std,...
std::string merged_head_stats_csv(const std::vector<MergedHeadStats>& rows);
nlohmann::json merged_head_stats_json(const std::vector<MergedHeadStats>& rows,
                                      std::size_t sink_keys, std::size_t recent);

}  // namespace attn

// Per-head diagnostics of attention maps (--stats): what people look for when
// they inspect a layer. Computed as the maps stream through a sink, so a run
// of any size gets them without holding an S x S map.
//
// Letters: B batch, H heads, S sequence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "attn/attention.h"

namespace attn {

// One head's statistics over every (batch, query) row of its map.
struct HeadStats {
  // Mean over rows of -sum_j p_j ln p_j (nats; 0 * ln 0 = 0). 0 = one key
  // takes everything; ln(k) = spread evenly over k keys.
  double mean_entropy = 0.0;
  double mean_max_weight = 0.0;  // mean over rows of max_j p_j
  // Mean over rows of p_0, the weight on the first key ("attention sinks").
  double first_token_share = 0.0;
  // Mean over rows of sum_j p_j: 1 for softmax rows; less with sinks (the
  // sink's share is 1 minus it). Entropy is then that of the renormalized row.
  double mean_row_sum = 0.0;
  std::int64_t rows = 0;               // rows averaged (fully masked rows excluded)
  std::int64_t fully_masked_rows = 0;  // rows whose weights are all zero
};

// Statistics of one row of n softmax weights, added to `acc` (its means hold
// sums until finish_head_stats). A row of all zeros counts as fully masked.
void add_row_stats(const float* row, std::size_t n, HeadStats& acc);
// Turn the sums of add_row_stats into means.
void finish_head_stats(HeadStats& acc);

// Statistics of a whole (B, H, L, T) or (H, L, T) tensor, one entry per head.
std::vector<HeadStats> attention_stats(const Tensor& maps);

// A sink that accumulates per-head statistics from the blocks it receives
// and forwards every block to `next` (when not null) unchanged.
// Thread-safe like every AttentionSink: each block is summed locally, then
// added under a lock.
class StatsSink : public AttentionSink {
 public:
  StatsSink(std::size_t H, std::size_t S, AttentionSink* next = nullptr);
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;
  // The means so far, one entry per head.
  std::vector<HeadStats> result() const;

 private:
  std::size_t S_;
  AttentionSink* next_;
  mutable std::mutex mutex_;
  std::vector<HeadStats> sums_;
};

// [{"head": h, "mean_entropy": ..., ...}, ...] for run.json.
nlohmann::json stats_to_json(const std::vector<HeadStats>& stats);

// A fixed-width table, one line per head, ending in '\n'.
std::string format_stats_table(const std::vector<HeadStats>& stats);

}  // namespace attn

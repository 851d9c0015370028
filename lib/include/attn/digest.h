// Row digests: the map reductions (--top-k, --summary) computed by the
// streaming kernel's online pass, so a run that writes no maps never forms a
// softmax row. A sink chain says what it needs (AttentionSink::digest_request);
// when no listener needs the rows themselves the forward pass streams and
// hands each block's digests to AttentionSink::write_digests.
//
// Without maps in the same run the digests come from the online pass and
// equal the reductions of the maps within float rounding (top-k: the same
// keys but where two weights round to the same float); with maps written,
// the reductions are computed from the rows themselves.
//
// Letters: n rows of a block, K kept weights per row, T' keys of a row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attn {

// --summary's columns, per row.
enum SummaryColumn : std::size_t {
  kEntropy = 0,   // -sum p ln p over the row (nats); a row summing below 0.999 (sinks) is
                  // renormalized first, as --stats does
  kFirstKey = 1,  // p_0: the weight on key 0
  kRecent = 2,    // sum of p_j over the last W keys up to the query: i - W < j <= i
  kMeanDist = 3,  // sum_j p_j |i - j| / sum_j p_j over the T key positions (0: no weight)
  kArgmax = 4,    // the first j of the largest weight (numpy's argmax), of the T' columns
  kSummaryColumns = 5
};
// --head-stats' columns per row, beside the summary's (with the summary's W as R).
enum HeadColumn : std::size_t {
  kRowTotal = 0,    // sum of p_j over the row's T' keys (below 1 with a sink)
  kSinkKeys = 1,    // sum of p_j over the first N keys, j < N
  kRecentKeys = 2,  // sum of p_j over i - R < j <= i with j >= N
  kHeadColumns = 3
};
// Bins of attended distances |i - j|: bin 0 holds distance 0, bin k >= 1
// the distances [2^(k-1), 2^k). `bins` for distances up to max_distance.
std::size_t distance_bins(std::size_t max_distance);
// Bin k's distances [lo, hi): {0}, then [2^(k-1), 2^k).
std::size_t distance_bin_lo(std::size_t k);
std::size_t distance_bin_hi(std::size_t k);

// What a chain of sinks needs from each block of rows.
struct DigestRequest {
  bool rows = true;       // some listener needs the weights themselves (the maps path)
  std::size_t top_k = 0;  // the K largest weights per row (0 = none)
  bool summary = false;   // the summary columns and distance histograms (map_summary.h)
  // With the summary: its argmax column (each row's top 1, kept while the
  // rows stream). False where nothing reads it (the head statistics alone).
  bool argmax = true;
  std::size_t recent = 0;     // W of the summary's recent column
  bool head = false;          // the HeadColumn sums (with the summary)
  std::size_t sink_keys = 0;  // N of kSinkKeys
  // --key-stats: per query row i of the L the sink receives, 0 = not counted,
  // kKeyRowCounted = summed into the per-key statistics, kKeyRowVotes = also
  // one of the voting rows (the last W); empty = no per-key statistics.
  std::vector<std::uint8_t> key_rows;
};
constexpr std::uint8_t kKeyRowCounted = 1, kKeyRowVotes = 2;

// One query block's contribution to the per-key statistics of a (b, h): over
// the block's counted rows, per key j in [begin, begin + count) of the T'
// columns, the summed weight, the largest weight and the voting rows' summed
// weight (keys outside the range got no weight from the block).
struct KeySums {
  std::size_t begin = 0, count = 0;
  const double* sum = nullptr;    // (count)
  const float* max = nullptr;     // (count)
  const double* votes = nullptr;  // (count)
};

// Both requests at once (a tee of two chains): rows when either needs them.
DigestRequest merge(const DigestRequest& a, const DigestRequest& b);

// One block's digests, rows [i0, i0 + n) of (b, h), row-major with the strides given.
struct RowDigests {
  std::size_t n = 0;
  std::size_t K = 0;                           // kept per row (>= the request's top_k)
  const float* topk_values = nullptr;          // (n, K) decreasing, ties to the lower key index
  const std::int64_t* topk_indices = nullptr;  // (n, K) of the T' columns
  std::size_t columns = 0;                     // summary columns per row (kSummaryColumns)
  const float* summary = nullptr;              // (n, columns) in SummaryColumn order
  std::size_t bins = 0;                        // distance bins per row (>= the sink's own)
  const double* histogram = nullptr;           // (n, bins): the row's weight per distance bin
  const float* head = nullptr;                 // (n, kHeadColumns), or nullptr

  // Rows [r, r + len) of this block.
  RowDigests rows(std::size_t r, std::size_t len) const;
};

}  // namespace attn

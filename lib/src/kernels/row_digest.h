// The map reductions of --top-k and --summary as online state per query row,
// updated by the streaming kernel (attend_stream.cpp) on each scored key tile,
// so no softmax row is ever formed (attn/digest.h). The sums use the running
// max m of the online softmax and rescale with it as l does:
//   l_keys = sum e,  A = sum e (s - m),  e = exp(s - m) over the row's keys;
// per key position also sum e |i - j|, the recent window's sum and the
// distance bins. At the row's end, with the final m and l (l = l_keys plus
// the sink's exp(sink - m), gpt-oss), p = e / l and
//   -sum p ln p = ln(l) l_keys / l - A / l,
// or ln(l_keys) - A / l_keys for a row summing below 0.999 (renormalized, as
// the maps' SummarySink does). Top-k keeps the K largest raw scores (softmax
// is monotonic), ties to the lower key index; weights that underflow to 0
// tie with the masked keys, which the maps order by index, so they are
// replaced by the lowest-index keys of zero weight.
//
// Letters: n rows of the block, i a query's index, j a key's, K kept per
// row, T key positions, T' = T plus torch MHA's extra columns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/digest.h"
#include "kernels/key_sums.h"

namespace attn::kernels {

struct HeadView;

class RowDigest {
 public:
  // Starts the block of rows [i0, i0 + n) of hv for `req` (req.rows false).
  void begin(const DigestRequest& req, const HeadView& hv, std::size_t i0, std::size_t n);

  // Row r's raw scores s[0..cols) of keys j0.. (masked: -inf), before their
  // exp, and their max (a tile not above the row's K-th is skipped at once).
  void scores(std::size_t r, std::size_t j0, const float* s, std::size_t cols, float max);
  // Row r's running max rises from m_old to m_new: its sums rescale as l does.
  void rescale(std::size_t r, float m_old, float m_new);
  // row[j] = exp(row[j] - m) in place (the same exp as exp_shift_sum) and
  // row r's sums over keys j0..j0+cols; returns the sum of the new row, NaN
  // when a score is NaN or +inf (then `fallback` is set).
  float exp_tile(std::size_t r, std::size_t j0, float* row, std::size_t cols, float m);

  // The block's digests from each row's final max m[r], sum l[r] (the
  // sink's share included) and whether it allowed any key; valid until the
  // next begin.
  RowDigests finish(const float* m, const float* l, const std::uint8_t* allowed);

  // A score of the block was NaN or +inf (only under --allow-nonfinite; the
  // overflow checks stop the run otherwise): the block's digests are not
  // valid, and its rows must come from the maps path.
  bool fallback = false;

  // --key-stats: the request's key_rows (L), or nullptr; the streaming kernel
  // then records each tile's exponentials in key_sums and sums them once the
  // block's rows are final.
  const std::uint8_t* key_rows = nullptr;
  KeyColumnSums key_sums;

 private:
  void finish_summary(std::size_t r, float m, std::int64_t argmax);
  // e[0..cols) = exp(s - m) of keys j0.., summing to `total`.
  void add_position_sums(std::size_t r, std::size_t j0, const float* e, std::size_t cols,
                         float total);

  std::size_t n_ = 0, i0_ = 0, T_ = 0, Tx_ = 0, W_ = 0, K_ = 0, keep_ = 0, width_ = 0, bins_ = 0;
  bool summary_ = false, has_sink_ = false;
  float sink_ = 0.0f;
  // Per row: the kept scores (n, width) and their keys (top_k_list.h: keep
  // slots rounded up to whole vectors, the free ones -inf; keys fit int32, as
  // a row of 2^31 keys would be 8 GB of scores per query).
  std::vector<float> top_s_;
  std::vector<std::int32_t> top_j_;
  float* top_values_ = nullptr;  // in top_s_, top_j_: 64-byte aligned
  std::int32_t* top_keys_ = nullptr;
  // Per row, at the running max: l_keys, A, the sums over key positions
  // (weight, weight x distance, the recent window), key 0's raw score, and
  // the distance bins (n, bins).
  std::vector<double> l_keys_, plogp_, l_pos_, dist_, recent_, hist_;
  // --head-stats: per row the first N keys' and the recent keys' (j >= N) sums.
  bool head_ = false;
  std::size_t N_ = 0;
  std::vector<double> sink_sum_, recent_after_sink_;
  std::vector<float> head_out_;
  std::vector<float> first_;
  // finish's results.
  std::vector<float> values_, summary_out_;
  std::vector<std::int64_t> indices_;
  std::vector<double> hist_out_;
};

}  // namespace attn::kernels

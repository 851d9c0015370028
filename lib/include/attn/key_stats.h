// --key-stats: per head and key, reductions of the maps' columns over the
// selected query rows, computed as the forward pass streams (CONTRACT.md
// "(v4) Comparisons, statistics, intermediates"), never an L x S map:
//   [0] sum    the summed weight (H2O's accumulated attention, Zhang et al. 2023),
//   [1] max    the largest weight,
//   [2] votes  the summed weight of the last W query rows (SnapKV's observation
//              window, Li et al. 2024),
//   [3] pooled the votes max-pooled over keys, kernel K (odd), stride 1,
//              padding K / 2: torch.nn.functional.max_pool1d(votes, K, 1, K // 2)
//              as SnapKV's clustering does.
// Rows come as blocks (maps path: their weights) or as a block's column sums
// (streaming path: attn/digest.h's KeySums). Each block's sums, in double, are
// added as 128-bit fixed-point numbers (units of 2^-96, far below float32's
// resolution of a weight): integer sums do not depend on the order, so the
// statistics are the same bit for bit for any thread count.
//
// Letters: B batch, H heads (of the maps fed in), L query rows fed in, T'
// keys of a map row (T plus torch MHA's bias_kv / zero_attn columns).
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/tensor.h"

namespace attn {

// Their names in key_stats.csv, in key_stats.npy's last-axis order.
const std::vector<std::string>& key_stats_column_names();

class KeyStatsSink : public AttentionSink {
 public:
  // window W >= 1 (the last W of the L rows vote), pool K odd >= 1.
  KeyStatsSink(std::size_t B, std::size_t H, std::size_t L, std::size_t T_row, std::size_t window,
               std::size_t pool);
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;
  // No rows needed: every row counts, the last W vote.
  DigestRequest digest_request() const override;
  void write_key_sums(std::size_t b, std::size_t h, const KeySums& k) override;

  // (B, H, T', 4) float32 in the column order above.
  Tensor result() const;
  std::size_t window() const { return W_; }
  std::size_t pool() const { return K_; }

 private:
  __extension__ typedef unsigned __int128 Fixed;
  void add(std::size_t b, std::size_t h, const KeySums& k);

  std::size_t H_, L_, Tr_, W_, K_;
  std::mutex mutex_;
  // (B, H, T') each
  std::vector<Fixed> sum_, votes_;
  std::vector<float> max_;
};

// key_stats.csv: a header, then one line per (b, h, key):
// batch,head,key,sum,max,votes,pooled_votes, with the heads numbered as
// given (the selection's indices). stats: (B, H, T', 4) as result() gives.
std::string key_stats_csv(const Tensor& stats, const std::vector<std::size_t>& heads);

}  // namespace attn

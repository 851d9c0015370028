// --key-stats in the streaming pass: a query block's per-key column sums of
// the normalized weights, by a second sweep over the block's key tiles once
// the online softmax has the rows' final max m and sum l (the weights of a
// key need every row's normalizer, which the first sweep only has at its
// end). The second sweep re-scores the tiles (q k^T again, no P v) and adds
//   p_ij = exp(s_ij - m_i) / l_i
// of the counted rows into the columns, in row order, in double: the same
// exp and the same 1 / l scaling as the maps path (attend_maps.cpp).
// Costs one more score GEMM and exp per tile of a block with counted rows.
//
// Letters: n rows of the block, i a query's index, j a key's, T' keys of a
// row (T plus torch MHA's extra columns).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/digest.h"

namespace attn::kernels {

struct HeadView;
struct Scratch;

class KeyColumnSums {
 public:
  // Rows [i0, i0 + n) of hv: those with key_rows[i] != 0 (attn/digest.h) and
  // an allowed key (sc.allowed) add their weights, sc.m and sc.l their final
  // max and sum; q of the rows must still be intact. tile: n x kKeyBlock floats.
  void sweep(const HeadView& hv, std::size_t i0, std::size_t n, const std::uint8_t* key_rows,
             const Scratch& sc, float* tile);
  // The last sweep's sums; valid until the next sweep.
  KeySums result() const;

 private:
  std::size_t begin_ = 0, count_ = 0;
  std::vector<double> sum_, votes_;  // (count)
  std::vector<float> max_;           // (count)
};

}  // namespace attn::kernels

// --key-stats in the streaming pass: a query block's per-key column sums of
// the normalized weights. The weights of a key need every row's final max m
// and sum l, which the online softmax only has at the block's end, so the
// streaming kernel hands each tile's exponentials to `record` as it makes
// them (e_ij = exp(s_ij - m_i(t)), m_i(t) the row's running max after tile t)
// and `sweep` adds, once the rows are final,
//   p_ij = e_ij * (exp(m_i(t) - m_i) * (1 / l_i))
// of the counted rows into the columns, in row order, in double. Where a
// row's max did not move after tile t, the factor is 1 / l_i and p_ij has the
// bits of the maps path's exp(s - m) * (1 / l) (attend_maps.cpp); elsewhere a
// rounding or two of it (the tests hold both paths to the float64 map
// reductions). Costs a copy of each tile (n x kKeyBlock floats) and one read of it:
// the block's exponentials, n x T' floats per worker (16 MiB at 32k keys), in
// place of a second q k^T and exp over the tiles.
//
// Letters: n rows of the block, i a query's index, j a key's, T' keys of a
// row (T plus torch MHA's extra columns), t a tile of keys.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "attn/digest.h"
#include "attn/tensor.h"

namespace attn::kernels {

struct HeadView;
struct Scratch;

class KeyColumnSums {
 public:
  // Starts rows [i0, i0 + n) of hv; key_rows (L): attn/digest.h. Nothing is
  // recorded for a block without counted rows.
  void begin(const HeadView& hv, std::size_t i0, std::size_t n, const std::uint8_t* key_rows);
  // Tile (n, mb) of keys j0.. after the online step: each row's exponentials
  // (0 where masked or past the diagonal) and m (n), the running maxima they
  // are relative to.
  void record(std::size_t j0, std::size_t mb, const float* tile, const float* m);
  // The recorded tiles into the columns: the rows with key_rows[i] != 0 and
  // an allowed key (sc.allowed), sc.m and sc.l their final max and sum.
  void sweep(const Scratch& sc);
  // The last sweep's sums; valid until the next begin.
  KeySums result() const;

 private:
  struct Tile {
    std::size_t j0, mb;  // keys j0..; its (n, mb) exponentials at e_ + n * (j0 - begin_)
  };
  const std::uint8_t* rows_ = nullptr;  // the block's key_rows, from row i0
  std::size_t n_ = 0, begin_ = 0, count_ = 0;
  std::vector<Tile> tiles_;
  FloatBuffer e_;                    // the tiles' exponentials (n * count, resize leaves unset)
  std::vector<float> m_at_;          // (tiles, n) maxima
  std::vector<double> sum_, votes_;  // (count)
  std::vector<float> max_;           // (count)
};

}  // namespace attn::kernels

// Streaming attention for one (batch, head, query block): online softmax
// over key tiles, so the L x T weights never exist (FlashAttention's loop,
// Dao et al. 2022, on the CPU). Memory per task: an n x kKeyBlock score tile
// (128 x 512 floats = 256 KiB, stays in L2; 512 KiB for the long blocks of
// query_block) and an n x Dv accumulator.
//
// Letters: L queries, T keys, D q's and k's head size, Dv v's; n query rows in
// the block, mb keys in a tile.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/kernels.h"
#include "kernels/row_digest.h"

namespace attn::kernels {
namespace {

// One online-softmax step over a scored tile (n, mb): rescale what was
// accumulated to each row's new running max, exponentiate the tile in place,
// then acc += P v[j0:j0+mb]. With a digest, the raw scores and the
// exponentials update its row states too.
void accumulate_tile(const HeadView& hv, std::size_t i0, std::size_t n, std::size_t j0,
                     std::size_t mb, float* tile, Scratch& sc, RowDigest* digest) {
  const std::size_t Dv = hv.value_width();
  float* acc = sc.acc.data();  // (n, Dv)
  float* m = sc.m.data();      // (n) running max of the scores
  float* l = sc.l.data();      // (n) running sum of exp(score - m)
  const Diagonal diag =
      hv.causal && j0 < hv.T ? causal_diagonal(Diagonal::depth, i0, j0) : Diagonal{};
  // Unchanged scores are checked here, in the pass for the max (score_tile's prefix_only).
  const bool check_range = hv.check_overflow && hv.scores_unchanged();
  // Key sums read every column of the tile; P v as far as each row's block of rows needs.
  const bool whole_rows = digest && digest->key_rows;
  for (std::size_t r = 0; r < n; ++r) {
    float* row = tile + r * mb;
    // Past the causal diagonal the row is unset (score_tile's prefix_only):
    // weights 0 where they are read, no exp.
    const std::size_t cols = causal_prefix(hv, i0 + r, j0, mb);
    const std::size_t read = whole_rows ? mb : std::max(cols, depth_read(diag, r, mb));
    if (cols < read) std::memset(row + cols, 0, (read - cols) * sizeof(float));
    float tile_min = 0.0f;
    const float tile_max = check_range ? row_max(row, cols, tile_min) : row_max(row, cols);
    if (check_range && cols) check_score_range(hv, i0 + r, tile_max, tile_min);
    if (tile_max == kNegInf && !any_nan(row, cols)) {  // no allowed key in this tile for this row
      std::memset(row, 0, cols * sizeof(float));
      continue;
    }
    sc.allowed[r] = 1;
    const float m_new = std::max(m[r], tile_max);
    // exp(0) = 1 exactly, without the call, where the running max stands
    // (most tiles of a long row), and 1 for a row's first allowed tile (m = -inf,
    // l = 0: nothing summed, acc's row still 0 or a NaN that 0 would keep);
    // 0 only for a sink of -inf.
    const bool first = m[r] == kNegInf && l[r] == 0.0f;
    const float factor = m_new == m[r] || first ? 1.0f : std::exp(m[r] - m_new);
    if (digest) {
      digest->scores(r, j0, row, cols, tile_max);
      if (m_new != m[r]) digest->rescale(r, m[r], m_new);
    }
    const float s =
        digest ? digest->exp_tile(r, j0, row, cols, m_new) : exp_shift_sum(row, cols, m_new);
    check_row_sum(hv, i0 + r, s);
    if (factor != 1.0f) {
      scale_row(acc + r * Dv, Dv, factor);
      l[r] *= factor;
    }
    l[r] += s;
    m[r] = m_new;
  }
  // --key-stats: the tile's exponentials, for the column sums once the rows are final.
  if (whole_rows) digest->key_sums.record(j0, mb, tile, m);
  // acc += P v[j0:j0+mb]   (n, Dv); under causal P is 0 past the diagonal.
  tile_gemm(n, Dv, mb, 1.0f, tile, mb, hv.v.rows_from(j0), 1.0f, acc, Dv, diag);
}

}  // namespace

std::size_t attend_stream(const HeadView& hv, std::size_t i0, std::size_t n, Scratch& sc,
                          RowDigest* digest) {
  const std::size_t Dv = hv.value_width();
  const KeySpan keys = block_keys(hv, i0, n);

  sc.acc.assign(n * Dv, 0.0f);
  // A sink joins every row as one more logit: the running max and sum start
  // from it (exp(sink - sink) = 1), so rows sum to less than 1 (gpt-oss).
  sc.m.assign(n, hv.has_sink ? hv.sink : kNegInf);
  sc.l.assign(n, hv.has_sink ? 1.0f : 0.0f);
  sc.allowed.assign(n, 0);
  if (sc.scores.size() < n * kKeyBlock) sc.scores.resize(n * kKeyBlock);
  float* tile = sc.scores.data();
  const HeadView scored = queries_packed(hv, i0, n, sc.q);

  for (std::size_t j0 = keys.begin; j0 < keys.end; j0 += kKeyBlock) {
    const std::size_t mb = std::min(kKeyBlock, keys.end - j0);
    score_tile(scored, i0, n, j0, mb, tile, mb, /*prefix_only=*/true);
    accumulate_tile(hv, i0, n, j0, mb, tile, sc, digest);
  }
  // torch MHA's bias_kv / zero_attn keys, after the T real ones.
  if (hv.T_ext > hv.T) {
    const std::size_t mb = hv.T_ext - hv.T;
    score_tile(scored, i0, n, hv.T, mb, tile, mb, /*prefix_only=*/true);
    accumulate_tile(hv, i0, n, hv.T, mb, tile, sc, digest);
  }

  // A non-finite score: y (which may alias q) stays untouched for the maps path.
  if (digest && digest->fallback) return 0;
  // --key-stats: the recorded tiles into the columns, with the rows' final m and l.
  if (digest && digest->key_rows) digest->key_sums.sweep(sc);

  // y = acc / l; a row with no allowed key gets zeros, never NaN (with a sink
  // its acc is 0 and l = 1: zeros as well).
  std::size_t masked_rows = 0;
  for (std::size_t r = 0; r < n; ++r) {
    float* y = hv.y + (i0 + r) * hv.ld_y;
    if (sc.allowed[r]) {
      const float inv = 1.0f / sc.l[r];
      for (std::size_t d = 0; d < Dv; ++d) y[d] = sc.acc[r * Dv + d] * inv;
    } else {
      std::memset(y, 0, Dv * sizeof(float));
      ++masked_rows;
    }
  }
  check_output_rows(hv, i0, n);
  return masked_rows;
}

}  // namespace attn::kernels

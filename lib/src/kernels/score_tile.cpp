// The score tile of CONTRACT.md "Scores, in order", steps 3-7, shared by the
// streaming and the maps kernels, and the key range a query block may see.
//
//   3. s = scale * q·k           (one GEMM per tile)
//   4. s = c * tanh(s / c)       (softcap)
//   5. s += slope_h * (pos_j - pos_i)   (alibi)
//      s += table[bucket(pos_j - pos_i), h]   (T5's relative bias, CONTRACT.md v3)
//      s += c2p[i, r] + p2c[j, r], r of pos_i - pos_j   (DeBERTa's disentangled terms, v4)
//   6. s += attn_mask            (float mask)
//   7. s = -inf where not allowed: causal (j > i), sliding window, attention
//      chunk (i / n != j / n), padding (and a padded query's whole row, DeBERTa), bool mask
//
// Letters: L queries, T keys, D head size; n query rows of the block from i0,
// mb keys of the tile from j0.
#include <algorithm>
#include <cassert>
#include <limits>

#include "kernels/kernels.h"

namespace attn::kernels {
namespace {

void fill(float* p, std::size_t n, float v) { std::fill(p, p + n, v); }

}  // namespace

KeySpan block_keys(const HeadView& hv, std::size_t i0, std::size_t n) {
  const std::size_t last = i0 + n - 1;  // the block's last query row
  std::size_t kb = hv.key_begin, ke = hv.key_end;
  if (hv.causal) ke = std::min(ke, last + 1);
  if (hv.window) {
    // Row i sees j > i - W: the block's first row bounds the lowest key.
    if (i0 + 1 > hv.window) kb = std::max(kb, i0 + 1 - hv.window);
    // Without causal also j < i + W: the last row bounds the highest.
    if (!hv.causal) ke = std::min(ke, last + hv.window);
  }
  if (hv.chunk) {
    // Row i sees its own chunk [i - i % n, i - i % n + n): the first row's
    // chunk starts the block's keys, the last row's ends them.
    kb = std::max(kb, i0 - i0 % hv.chunk);
    ke = std::min(ke, last - last % hv.chunk + hv.chunk);
  }
  return {kb, std::max(kb, ke)};
}

HeadView queries_packed(const HeadView& hv, std::size_t i0, std::size_t n, WarmBuffer& buffer) {
  if (hv.ld_q == hv.D) return hv;
  const std::size_t D = hv.D;
  if (buffer.size() < n * D) buffer.resize(n * D);
  const float* from = hv.q + (i0 - hv.q_row0) * hv.ld_q;
  for (std::size_t r = 0; r < n; ++r)
    std::copy(from + r * hv.ld_q, from + r * hv.ld_q + D, buffer.data() + r * D);
  HeadView packed = hv;
  packed.q = buffer.data();
  packed.ld_q = D;
  packed.q_row0 = i0;
  return packed;
}

void score_tile(const HeadView& hv, std::size_t i0, std::size_t n, std::size_t j0, std::size_t mb,
                float* tile /* (n, mb), ld ldt */, std::size_t ldt, bool prefix_only) {
  assert(j0 + mb <= hv.T_ext && (j0 >= hv.T || j0 + mb <= hv.T) && ldt >= mb);
  // Row r's entries written: all mb, or (prefix_only) its causal prefix.
  const auto written = [&](std::size_t r) {
    return prefix_only ? causal_prefix(hv, i0 + r, j0, mb) : mb;
  };
  // 3. tile = scale * q[i0:i0+n] k[j0:j0+mb]^T; under causal, entries past the
  // diagonal (j > i, masked in step 7) are not computed.
  Diagonal diag;
  if (hv.causal && j0 < hv.T) {
    diag = causal_diagonal(Diagonal::columns, i0, j0);
    diag.zero_past = !prefix_only;
  }
  assert(i0 >= hv.q_row0);
  tile_gemm(n, mb, hv.D, hv.scale, hv.q + (i0 - hv.q_row0) * hv.ld_q, hv.ld_q, hv.kt.cols_from(j0),
            0.0f, tile, ldt, diag);
  // Before the masks add their own -inf.
  if (!prefix_only || !hv.scores_unchanged()) check_scores(hv, i0, n, j0, tile, ldt, mb);
  // 4. softcap (the extra columns too: torch MHA has no softcap, so this is moot there)
  if (hv.softcap > 0.0f)
    for (std::size_t r = 0; r < n; ++r) softcap_row(tile + r * ldt, written(r), hv.softcap);
  if (j0 >= hv.T) return;  // bias_kv / zero_attn columns: allowed, no position bias

  for (std::size_t r = 0; r < n; ++r) {
    const std::size_t i = i0 + r;
    float* row = tile + r * ldt;
    const std::size_t cols = written(r);  // the row's entries from here on
    // 5. alibi, relative to the query's position (softmax cannot tell it from
    // BLOOM's slope * pos_j, which differs by a constant per row)
    if (hv.alibi) {
      const std::int64_t pi = hv.pos_q[i];
      const std::int64_t* pk = hv.pos_k + j0;
      for (std::size_t j = 0; j < cols; ++j)
        row[j] += hv.alibi_slope * static_cast<float>(pk[j] - pi);
    }
    // 5b. T5's relative position bias, looked up by the clamped relative position
    if (hv.rel_bias && hv.rel_by_index) {
      // r = j0 + j - i rises by one per key: the last value of the table's low
      // end, then a slice of it, then its high end's.
      const float* at = hv.rel_bias - hv.rel_lo;  // at[r], r in [rel_lo, rel_hi]
      const std::int64_t r0 = std::int64_t(j0) - std::int64_t(i), n = std::int64_t(cols);
      const std::int64_t a = std::clamp(hv.rel_lo - r0, std::int64_t(0), n);
      const std::int64_t b = std::clamp(hv.rel_hi + 1 - r0, a, n);
      for (std::int64_t j = 0; j < a; ++j) row[j] += at[hv.rel_lo];
      for (std::int64_t j = a; j < b; ++j) row[j] += at[r0 + j];
      for (std::int64_t j = b; j < n; ++j) row[j] += at[hv.rel_hi];
    } else if (hv.rel_bias) {
      const std::int64_t pi = hv.pos_q[i];
      const std::int64_t* pk = hv.pos_k + j0;
      for (std::size_t j = 0; j < cols; ++j)
        row[j] += hv.rel_bias[std::clamp(pk[j] - pi, hv.rel_lo, hv.rel_hi) - hv.rel_lo];
    }
    // 5c. DeBERTa's c2p and p2c, by the bucket of the relative position pos_i - pos_j
    if (hv.dis_index) {
      const std::int32_t* at = hv.dis_index + (hv.pos_q[i] - hv.dis_lo);  // at[-pos_j]
      const std::int64_t* pk = hv.pos_k + j0;
      if (hv.c2p) {
        const float* c2p = hv.c2p + i * hv.dis_R2;
        for (std::size_t j = 0; j < cols; ++j) row[j] += c2p[at[-pk[j]]];
      }
      if (hv.p2c) {
        const float* p2c = hv.p2c + j0 * hv.dis_R2;
        for (std::size_t j = 0; j < cols; ++j) row[j] += p2c[j * hv.dis_R2 + at[-pk[j]]];
      }
    }
    // 6. torch's float attn_mask
    if (hv.mask_add) {
      const float* add = hv.mask_add + i * hv.T + j0;
      for (std::size_t j = 0; j < cols; ++j) row[j] += add[j];
    }
    // 7. keys not allowed. Causal and the window are bands: only the tile's
    // part outside [lo, hi) is filled, nothing when the tile lies inside.
    std::size_t lo = 0, hi = causal_prefix(hv, i, j0, cols);
    if (hv.window) {
      if (i + 1 > hv.window + j0) lo = std::min(cols, i + 1 - hv.window - j0);
      if (!hv.causal) hi = std::min(hi, i + hv.window > j0 ? i + hv.window - j0 : 0);
    }
    if (hv.chunk) {  // [c0, c0 + n): the chunk of query i
      const std::size_t c0 = i - i % hv.chunk, c1 = c0 + hv.chunk;
      if (c0 > j0) lo = std::max(lo, std::min(cols, c0 - j0));
      hi = std::min(hi, c1 > j0 ? c1 - j0 : 0);
    }
    if (hv.query_padding && hv.query_padding[i]) lo = hi = 0;  // a padded query: no key
    hi = std::max(lo, hi);
    fill(row, lo, kNegInf);
    fill(row + hi, cols - hi, kNegInf);
    if (hv.holes) {
      const std::uint8_t* pad = hv.padding + j0;
      for (std::size_t j = lo; j < hi; ++j)
        if (pad[j]) row[j] = kNegInf;
    }
    if (hv.mask_block) {
      const std::uint8_t* blocked = hv.mask_block + i * hv.T + j0;
      for (std::size_t j = lo; j < hi; ++j)
        if (blocked[j]) row[j] = kNegInf;
    }
  }
}

void score_rows(const HeadView& hv, std::size_t i0, std::size_t n, float* rows /* (n, T') */) {
  const std::size_t Tx = hv.T_ext;
  const KeySpan keys = block_keys(hv, i0, n);
  for (std::size_t r = 0; r < n; ++r) {
    float* row = rows + r * Tx;
    fill(row, keys.begin, kNegInf);
    fill(row + keys.end, hv.T - keys.end, kNegInf);
  }
  if (keys.end > keys.begin)
    score_tile(hv, i0, n, keys.begin, keys.end - keys.begin, rows + keys.begin, Tx);
  if (Tx > hv.T) score_tile(hv, i0, n, hv.T, Tx - hv.T, rows + hv.T, Tx);
}

}  // namespace attn::kernels

// DeBERTa-v2/v3's disentangled attention terms (forward/stages.h
// DisentangledTerms), as modeling_deberta_v2.DisentangledSelfAttention's
// disentangled_attention_bias computes them:
//   pos_key   = rel_embeddings Wk^T + bk   (R2, H*D)  key_proj (share_att_key) or pos_key_proj
//   pos_query = rel_embeddings Wq^T + bq   (R2, H*D)  query_proj or pos_query_proj
//   c2p[i, j] = q_i . pos_key[r(i, j)] / scale'    (torch.gather over c2p_att by c2p_pos)
//   p2c[i, j] = k_j . pos_query[r(i, j)] / scale'  (gathered by p2c_pos, then transposed)
// with r(i, j) = clamp(bucket(pos_i - pos_j) + span, 0, R2 - 1): p2c_pos is
// clamp(-bucket(pos_j - pos_i) + span), the same index, the buckets being odd
// in the relative position. scale' = sqrt(D * scale_factor), the content
// scores' own, so both rows carry the run's scale (1/scale' by default).
//
// Letters: B batch, L queries, T keys (= L), C hidden, H heads, Hkv key/value
// heads, D head size, R2 = 2 span.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "attn/linear.h"
#include "attn/positions.h"
#include "forward/stages.h"
#include "kernels/kernels.h"

namespace attn::detail {
namespace {

// (R2, heads*D) = rel (R2, C) W^T + b, times scale, into (heads, R2, D).
std::vector<float> project_positions(const Tensor& rel, const MatrixRef& W, const float* bias,
                                     std::size_t heads, std::size_t D, float scale, int threads) {
  const std::size_t R2 = rel.shape[0], C = rel.shape[1];
  std::vector<float> rows(R2 * heads * D), out(rows.size());
  linear(rel.ptr(), C, R2, W, bias, rows.data(), heads * D, threads);
  for (std::size_t r = 0; r < R2; ++r)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t d = 0; d < D; ++d)
        out[(h * R2 + r) * D + d] = scale * rows[r * heads * D + h * D + d];
  return out;
}

}  // namespace

DisentangledTerms disentangled_terms(const Weights& w, const AttentionSpec& spec,
                                     const PositionIds* positions, std::size_t L, int threads) {
  const DisentangledSpec& d = *spec.disentangled;
  const Geometry g = w.geometry();
  DisentangledTerms t;
  t.R2 = w.rel_embeddings.shape[0];
  const float scale = static_cast<float>(spec.scale);
  const float* bias = w.b_qkv.data.empty() ? nullptr : w.b_qkv.ptr();
  if (d.c2p) {
    t.key_heads = d.share_att_key ? g.Hkv : g.H;
    t.pos_key =
        d.share_att_key
            ? project_positions(w.rel_embeddings, w.k_weight(), bias ? bias + g.k_row0() : nullptr,
                                g.Hkv, g.D, scale, threads)
            : project_positions(w.rel_embeddings, MatrixRef{w.pos_key_w.ptr(), g.q_rows(), g.C},
                                w.pos_key_b.data.empty() ? nullptr : w.pos_key_b.ptr(), g.H, g.D,
                                scale, threads);
  }
  if (d.p2c)
    t.pos_query =
        d.share_att_key
            ? project_positions(w.rel_embeddings, w.q_weight(), bias ? bias + g.q_row0() : nullptr,
                                g.H, g.D, scale, threads)
            : project_positions(w.rel_embeddings, MatrixRef{w.pos_query_w.ptr(), g.q_rows(), g.C},
                                w.pos_query_b.data.empty() ? nullptr : w.pos_query_b.ptr(), g.H,
                                g.D, scale, threads);
  // The relative positions of the run: d in [-(pmax - pmin), pmax - pmin].
  std::int64_t pmin = 0, pmax = std::int64_t(L) - 1;
  if (positions) {
    const auto [a, b] = std::minmax_element(positions->data.begin(), positions->data.end());
    pmin = *a, pmax = *b;
  }
  t.lo = pmin - pmax;
  const std::int64_t span = d.span(), last = std::int64_t(t.R2) - 1;
  t.index.resize(std::size_t(2 * (pmax - pmin) + 1));
  for (std::int64_t rel = t.lo; rel <= pmax - pmin; ++rel) {
    const std::int64_t bucket =
        log_bucket_position(rel, d.position_buckets, d.max_relative_positions);
    t.index[std::size_t(rel - t.lo)] =
        std::int32_t(std::clamp(bucket + span, std::int64_t(0), last));
  }
  return t;
}

void disentangled_rows(const Geometry& g, const Projected& p, DisentangledTerms& t, int threads) {
  const std::size_t R2 = t.R2, D = g.D, H = g.H, nb = p.B, L = p.L, T = p.T;
  if (!t.pos_key.empty()) t.c2p.resize(nb * H * L * R2);
  if (!t.pos_query.empty()) t.p2c.resize(nb * H * T * R2);
  kernels::parallel_for(nb * H, threads, [&](std::size_t task, int) {
    const std::size_t b = task / H, h = task % H, kvh = g.kv_head(h);
    if (!t.pos_key.empty()) {  // c2p (L, R2) = q_h (L, D) pos_key^T
      const std::size_t kh = t.key_heads == H ? h : kvh;
      linear(p.q + b * L * p.ld_q + h * D, p.ld_q, L,
             MatrixRef{t.pos_key.data() + kh * R2 * D, R2, D}, nullptr,
             t.c2p.data() + task * L * R2, R2, 1);
    }
    if (!t.pos_query.empty())  // p2c (T, R2) = k of h's KV head (T, D) pos_query_h^T
      linear(p.k + b * p.T_ext * p.ld_kv + kvh * D, p.ld_kv, T,
             MatrixRef{t.pos_query.data() + h * R2 * D, R2, D}, nullptr,
             t.p2c.data() + task * T * R2, R2, 1);
  });
}

}  // namespace attn::detail

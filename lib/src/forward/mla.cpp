// Stage 1 of the forward pass for DeepSeek's multi-head latent attention
// (config "mla"; forward/stages.h), as modeling_deepseek_v3.DeepseekV3Attention
// (and modeling_deepseek_v2's) computes q, k and v:
//   q   = q_proj(x) or q_b_proj(RMSNorm(q_a_proj(x)))  (rows, H*Dqk), per head [nope | rope]
//   ckv = kv_a_proj_with_mqa(x)                         (rows, Rkv + Dr) = [latent | k_rot]
//   kv  = kv_b_proj(RMSNorm(latent))                    (rows, H*(Dn + Dv)), per head [k_nope | v]
// and lays them out in the buffers the score kernels read, one head size
// D = max(Dqk, Dv) for all three:
//   q head h = [q_rot (Dr) | q_nope (Dn) | 0 ...]
//   k head h = [k_rot (Dr) | k_nope_h (Dn) | 0 ...]
//   v head h = [v_h (Dv) | 0 ...]
// The same permutation of q's and k's dimensions and zeros on both sides
// leave every score q.k unchanged, and v's zero columns give zero context
// columns that forward.cpp drops before o_proj. With the rope part first, the
// position stage's partial rotary (rotary_dim = Dr) rotates exactly it, every
// head's copy of the shared k_rot alike.
//
// Letters: rows = B*L (a chunk), C hidden, H heads, D head size, Rq
// q_lora_rank, Rkv kv_lora_rank, Dn qk_nope_head_dim, Dr qk_rope_head_dim,
// Dv v_head_dim, Dqk = Dn + Dr.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "attn/linear.h"
#include "forward/stages.h"
#include "kernels/kernels.h"

namespace attn::detail {
namespace {

// One row's RMSNorm, in place.
void norm_row(float* v, std::size_t width, const float* w, float eps) {
  double ss = 0.0;
  for (std::size_t d = 0; d < width; ++d) ss += double(v[d]) * double(v[d]);
  const float inv = 1.0f / std::sqrt(static_cast<float>(ss / double(width)) + eps);
  for (std::size_t d = 0; d < width; ++d) v[d] = w[d] * (v[d] * inv);
}

// Rows per task of the passes over rows below.
constexpr std::size_t kRowBlock = 64;

// DeepseekV3RMSNorm (eps 1e-6, the modules' default: q_a_layernorm and
// kv_a_layernorm are built without config.rms_norm_eps), in float32 as
// torch: x * rsqrt(mean(x^2) + eps) * w, over `width` values of each of n
// rows at stride ld.
void mla_rms_norm(float* x, std::size_t n, std::size_t ld, std::size_t width, const float* w,
                  int threads) {
  constexpr float kEps = 1e-6f;
  kernels::parallel_row_blocks(n, kRowBlock, threads, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) norm_row(x + r * ld, width, w, kEps);
  });
}

}  // namespace

void mla_project(const Weights& w, const ForwardInputs& in, std::size_t b0, std::size_t nb,
                 int threads, Projected& p) {
  const Geometry g = w.geometry();
  const MlaWeights& m = *w.mla;
  const std::size_t C = g.C, H = g.H, D = g.D, HD = g.q_rows();
  const auto Rq = std::size_t(m.spec.q_lora_rank), Rkv = std::size_t(m.spec.kv_lora_rank);
  const auto Dn = std::size_t(m.spec.qk_nope_head_dim), Dr = std::size_t(m.spec.qk_rope_head_dim);
  const auto Dv = std::size_t(m.spec.v_head_dim), Dqk = Dn + Dr;
  const Tensor& x = *in.x;
  p.b0 = b0;
  p.B = nb;
  p.L = x.shape[1];
  p.T = p.T_ext = p.L;  // self-attention, no extra keys (resolve_mla)
  p.packed = false;
  const std::size_t rows = nb * p.L;
  const float* xb = x.ptr() + b0 * p.L * C;
  // Every product writes into buffers kept from chunk to chunk: q's latent
  // (rows, Rq), then [latent (Rkv) | k_rot (Dr)] (rows, A); q (rows, H*D) and
  // k | v (rows, 2*H*D), each projection at the start of its rows, laid out
  // in place below. (Fresh vectors for them, zeroed, took 70% of the stage
  // at S = 4096.)
  const std::size_t A = Rkv + Dr, KV = H * (Dn + Dv);
  float* const qa = reserve(p.latent_buf, p.latent_cap, rows * (Rq + A));
  float* const ckv = qa + rows * Rq;
  p.ld_q = HD;
  p.q = reserve(p.q_buf, p.q_cap, rows * HD);
  p.ld_kv = 2 * HD;
  p.k = reserve(p.kv_buf, p.kv_cap, rows * 2 * HD);
  p.v = p.k + HD;

  // q (rows, H*Dqk), per head [nope | rope]
  if (Rq == 0) {
    linear(xb, C, rows, MatrixRef{m.q_proj.ptr(), H * Dqk, C}, nullptr, p.q, HD, threads);
    p.flops += 2.0 * double(rows) * double(C) * double(H * Dqk);
  } else {
    linear(xb, C, rows, MatrixRef{m.q_a_proj.ptr(), Rq, C},
           m.q_a_bias.data.empty() ? nullptr : m.q_a_bias.ptr(), qa, Rq, threads);
    mla_rms_norm(qa, rows, Rq, Rq, m.q_a_norm.ptr(), threads);
    linear(qa, Rq, rows, MatrixRef{m.q_b_proj.ptr(), H * Dqk, Rq}, nullptr, p.q, HD, threads);
    p.flops += 2.0 * double(rows) * (double(C) * double(Rq) + double(Rq) * double(H * Dqk));
  }
  // [latent | k_rot] (rows, A), then k_nope | v (rows, KV), per head [k_nope | v].
  linear(xb, C, rows, MatrixRef{m.kv_a_proj.ptr(), A, C},
         m.kv_a_bias.data.empty() ? nullptr : m.kv_a_bias.ptr(), ckv, A, threads);
  mla_rms_norm(ckv, rows, A, Rkv, m.kv_a_norm.ptr(), threads);
  linear(ckv, A, rows, MatrixRef{m.kv_b_proj.ptr(), KV, Rkv}, nullptr, p.k, p.ld_kv, threads);
  p.flops += 2.0 * double(rows) * (double(C) * double(A) + double(Rkv) * double(KV));

  // Each row in place, through a copy of what was projected into it.
  kernels::parallel_row_blocks(rows, kRowBlock, threads, [&](std::size_t r0, std::size_t r1) {
    std::vector<float> was(std::max(H * Dqk, KV));
    for (std::size_t r = r0; r < r1; ++r) {
      float* qo = p.q + r * p.ld_q;
      std::copy(qo, qo + H * Dqk, was.data());
      for (std::size_t h = 0; h < H; ++h) {
        const float* qh = was.data() + h * Dqk;  // [nope | rope]
        float* o = qo + h * D;                   // [rope | nope | 0]
        std::copy(qh + Dn, qh + Dqk, o);
        std::copy(qh, qh + Dn, o + Dr);
        std::fill(o + Dqk, o + D, 0.0f);
      }
      float* ko = p.k + r * p.ld_kv;
      float* vo = p.v + r * p.ld_kv;
      const float* k_rot = ckv + r * A + Rkv;  // shared by every head
      std::copy(ko, ko + KV, was.data());
      for (std::size_t h = 0; h < H; ++h) {
        const float* kvh = was.data() + h * (Dn + Dv);  // [k_nope | v]
        float* k = ko + h * D;                          // [k_rot | k_nope | 0]
        float* v = vo + h * D;                          // [v | 0]
        std::copy(k_rot, k_rot + Dr, k);
        std::copy(kvh, kvh + Dn, k + Dr);
        std::fill(k + Dqk, k + D, 0.0f);
        std::copy(kvh + Dn, kvh + Dn + Dv, v);
        std::fill(v + Dv, v + D, 0.0f);
      }
    }
  });
}

}  // namespace attn::detail

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

namespace attn::detail {
namespace {

// DeepseekV3RMSNorm (eps 1e-6, the modules' default: q_a_layernorm and
// kv_a_layernorm are built without config.rms_norm_eps), in float32 as
// torch: x * rsqrt(mean(x^2) + eps) * w, over `width` values of each of n
// rows at stride ld.
void mla_rms_norm(float* x, std::size_t n, std::size_t ld, std::size_t width, const float* w) {
  constexpr float kEps = 1e-6f;
  for (std::size_t r = 0; r < n; ++r) {
    float* v = x + r * ld;
    double ss = 0.0;
    for (std::size_t d = 0; d < width; ++d) ss += double(v[d]) * double(v[d]);
    const float inv = 1.0f / std::sqrt(static_cast<float>(ss / double(width)) + kEps);
    for (std::size_t d = 0; d < width; ++d) v[d] = w[d] * (v[d] * inv);
  }
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

  // q (rows, H*Dqk)
  std::vector<float> q(rows * H * Dqk);
  if (Rq == 0) {
    linear(xb, C, rows, MatrixRef{m.q_proj.ptr(), H * Dqk, C}, nullptr, q.data(), H * Dqk, threads);
    p.flops += 2.0 * double(rows) * double(C) * double(H * Dqk);
  } else {
    std::vector<float> qa(rows * Rq);
    linear(xb, C, rows, MatrixRef{m.q_a_proj.ptr(), Rq, C},
           m.q_a_bias.data.empty() ? nullptr : m.q_a_bias.ptr(), qa.data(), Rq, threads);
    mla_rms_norm(qa.data(), rows, Rq, Rq, m.q_a_norm.ptr());
    linear(qa.data(), Rq, rows, MatrixRef{m.q_b_proj.ptr(), H * Dqk, Rq}, nullptr, q.data(),
           H * Dqk, threads);
    p.flops += 2.0 * double(rows) * (double(C) * double(Rq) + double(Rq) * double(H * Dqk));
  }
  // [latent (Rkv) | k_rot (Dr)] (rows, Rkv + Dr), then k_nope | v per head.
  const std::size_t A = Rkv + Dr, KV = H * (Dn + Dv);
  std::vector<float> ckv(rows * A), kv(rows * KV);
  linear(xb, C, rows, MatrixRef{m.kv_a_proj.ptr(), A, C},
         m.kv_a_bias.data.empty() ? nullptr : m.kv_a_bias.ptr(), ckv.data(), A, threads);
  mla_rms_norm(ckv.data(), rows, A, Rkv, m.kv_a_norm.ptr());
  linear(ckv.data(), A, rows, MatrixRef{m.kv_b_proj.ptr(), KV, Rkv}, nullptr, kv.data(), KV,
         threads);
  p.flops += 2.0 * double(rows) * (double(C) * double(A) + double(Rkv) * double(KV));

  // The layout of the score kernels: q (rows, H*D); k | v (rows, 2*H*D).
  p.ld_q = HD;
  if (p.q_cap < rows * HD) {
    p.q_buf = make_buffer(rows * HD);
    p.q_cap = rows * HD;
  }
  p.q = p.q_buf.get();
  p.ld_kv = 2 * HD;
  if (p.kv_cap < rows * 2 * HD) {
    p.kv_buf = make_buffer(rows * 2 * HD);
    p.kv_cap = rows * 2 * HD;
  }
  p.k = p.kv_buf.get();
  p.v = p.k + HD;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* qr = q.data() + r * H * Dqk;
    const float* k_rot = ckv.data() + r * A + Rkv;  // shared by every head
    const float* kvr = kv.data() + r * KV;
    float* qo = p.q + r * p.ld_q;
    float* ko = p.k + r * p.ld_kv;
    float* vo = p.v + r * p.ld_kv;
    std::memset(qo, 0, HD * sizeof(float));
    std::memset(ko, 0, 2 * HD * sizeof(float));  // k and v of the row
    for (std::size_t h = 0; h < H; ++h) {
      const float* qh = qr + h * Dqk;          // [nope | rope]
      const float* kvh = kvr + h * (Dn + Dv);  // [k_nope | v]
      std::copy(qh + Dn, qh + Dqk, qo + h * D);
      std::copy(qh, qh + Dn, qo + h * D + Dr);
      std::copy(k_rot, k_rot + Dr, ko + h * D);
      std::copy(kvh, kvh + Dn, ko + h * D + Dr);
      std::copy(kvh + Dn, kvh + Dn + Dv, vo + h * D);
    }
  }
}

}  // namespace attn::detail

// forward_flops (attn/attention.h): the FLOPs of a dense forward pass, 2 per
// multiply-add, as run.json's figures and the benchmarks' T_peak count them.
//
// Letters: B batch, S sequence, C hidden, H heads, D head size, O out size;
// with mla Rq, Rkv its ranks, Dn, Dr, Dv its head parts, Dqk = Dn + Dr.
#include <cstdint>

#include "attn/attention.h"

namespace attn {

double forward_flops(const Weights& w, std::int64_t B, std::int64_t S, bool causal) {
  const Geometry g = w.geometry();
  const double rows = double(B) * double(S);
  const double O = w.has_out_proj ? double(g.O) : 0.0;
  const double out = 2.0 * rows * double(w.context_width()) * O;  // o_proj from H*D (H*Dv: mla)
  double proj = 2.0 * rows * double(g.C) * double(g.qkv_rows()) + out;
  if (w.mla) {  // forward/mla.cpp's products
    const MlaSpec& m = w.mla->spec;
    const double Hd = double(g.H), Dqk = double(m.qk_head_dim()), Rq = double(m.q_lora_rank);
    const double Rkv = double(m.kv_lora_rank), Dr = double(m.qk_rope_head_dim);
    const double q = m.q_lora_rank ? double(g.C) * Rq + Rq * Hd * Dqk : double(g.C) * Hd * Dqk;
    const double kv =
        double(g.C) * (Rkv + Dr) + Rkv * Hd * double(m.qk_nope_head_dim + m.v_head_dim);
    proj = 2.0 * rows * (q + kv) + out;
  }
  // q k^T and P v: GEMMs of S x S x Dqk and S x S x Dv per (b, h), 2 FLOPs per multiply-add.
  double attend = 2.0 * double(B) * double(w.H) * double(S) * double(S) *
                  double(w.score_head_size() + w.value_head_size());
  if (causal) attend *= 0.5;
  return proj + attend;
}

}  // namespace attn

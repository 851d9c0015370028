// Attention weights in one canonical form, whatever layout they came in
// (loading, export and init: attn/weights.h). Same math as torch.nn.Linear
// everywhere: y = x W^T + b, W is (out, in).
//
// Letters: C hidden (in), H heads, Hkv key/value heads, D head size, O out features.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "attn/geometry.h"
#include "attn/scores.h"
#include "attn/tensor.h"

namespace attn {

// DeepSeek's multi-head latent attention (config "mla"): the tensors that
// make q, k and v, as modeling_deepseek_v3.DeepseekV3Attention names them
// (nn.Linear (out, in)). Letters: Rq q_lora_rank, Rkv kv_lora_rank, Dn
// qk_nope_head_dim, Dr qk_rope_head_dim, Dv v_head_dim, Dqk = Dn + Dr.
struct MlaWeights {
  MlaSpec spec;
  Tensor q_proj;     // (H*Dqk, C) when spec.q_lora_rank is 0 (null), else empty
  Tensor q_a_proj;   // (Rq, C)
  Tensor q_a_bias;   // (Rq) or empty (attention_bias)
  Tensor q_a_norm;   // (Rq): q_a_layernorm.weight, RMSNorm eps 1e-6
  Tensor q_b_proj;   // (H*Dqk, Rq); per head [nope (Dn) | rope (Dr)]
  Tensor kv_a_proj;  // (Rkv + Dr, C): kv_a_proj_with_mqa, [compressed kv | k_rot]
  Tensor kv_a_bias;  // (Rkv + Dr) or empty (attention_bias)
  Tensor kv_a_norm;  // (Rkv): kv_a_layernorm.weight, RMSNorm eps 1e-6
  Tensor kv_b_proj;  // (H*(Dn + Dv), Rkv); per head [k_nope (Dn) | v (Dv)]
};

struct Weights {
  std::int64_t C = 0, H = 0, D = 0, O = 0;  // O = out features (H*D without out_proj)
  std::int64_t Hkv = 0;  // key/value heads; 0 = H (weights built before GQA existed)
  // Widths of the key and value sources (torch MHA's kdim, vdim); 0 = C.
  std::int64_t Ck = 0, Cv = 0;
  // ((H+2*Hkv)*D, C): rows q of all heads, then k, then v (geometry.h). When
  // Ck or Cv differs from C (torch MHA's q_proj_weight/k_proj_weight/
  // v_proj_weight), only the q rows (H*D, C); k and v are in w_k and w_v.
  Tensor w_qkv;
  Tensor w_k, w_v;  // (Hkv*D, Ck), (Hkv*D, Cv) when Ck or Cv differs from C; else empty
  Tensor b_qkv;     // ((H+2*Hkv)*D) or empty (no qkv bias); a part the file lacks is zeros
  bool has_out_proj = true;
  Tensor w_out;  // (O, H*D) or empty (no output projection)
  Tensor b_out;  // (O) or empty (no out bias)
  // Extras, each empty when the layer has none:
  Tensor bias_k, bias_v;  // (Hkv*D) each: torch MHA's add_bias_kv, one more key/value position
  Tensor q_norm, k_norm;  // qk_norm weights: (D) for scope "head"; (H*D), (Hkv*D) for "all";
                          // (H, D), (Hkv, D) per head; empty for kind "l2"
  Tensor q_norm_bias, k_norm_bias;  // qk_norm kind "layer" with a bias: shaped as the weights
  Tensor sinks;                     // (H): one learned logit per head (gpt-oss)
  // Gated attention (Qwen3-Next): (H*D, C) and (H*D), the gate half of each
  // head's q_proj rows [query (D) | gate (D)]; b_gate empty without a qkv bias.
  Tensor w_gate, b_gate;
  // Gemma 4's attention_k_eq_v: the v rows of w_qkv (and b_qkv) are k_proj's
  // again, read from k_proj; export writes no v_proj.
  bool k_eq_v = false;
  // (num_buckets, H): T5's relative_attention_bias.weight (AttentionSpec::relative_bias)
  Tensor relative_bias;
  // mla: q, k and v come from these instead of w_qkv (empty); D = max(Dqk,
  // Dv), Hkv = H, and w_out is o_proj as stored, (O, H*Dv).
  std::optional<MlaWeights> mla;
  // residual_norm: the LayerNorm over o_proj's output plus the input, (C)
  // each (BertSelfOutput's LayerNorm); the bias empty when the file has none.
  Tensor residual_norm_weight, residual_norm_bias;
  // input_norm: the block's pre-attention norm, (C) each; empty when none.
  Tensor input_norm_weight, input_norm_bias;
  // disentangled: the relative embeddings' first 2 span rows through
  // their LayerNorm when the spec names one, (2 span, C); pos_key_proj's
  // weight (H*D, C) and bias (H*D) for c2p, pos_query_proj's for p2c, each
  // empty with share_att_key (the k and q rows of w_qkv and b_qkv serve).
  Tensor rel_embeddings;
  Tensor pos_key_w, pos_key_b, pos_query_w, pos_query_b;

  std::size_t key_width() const { return static_cast<std::size_t>(Ck ? Ck : C); }    // Ck
  std::size_t value_width() const { return static_cast<std::size_t>(Cv ? Cv : C); }  // Cv
  // k and v share w_qkv with q (the usual case: Ck == Cv == C).
  bool fused_qkv() const { return w_k.data.empty(); }
  // The three projections (torch.nn.Linear: (out, in)), viewed in place.
  MatrixRef q_weight() const { return {w_qkv.ptr(), geometry().q_rows(), std::size_t(C)}; }
  MatrixRef k_weight() const {
    const Geometry g = geometry();
    return fused_qkv() ? MatrixRef{w_qkv.ptr() + g.k_row0() * g.C, g.kv_rows(), g.C}
                       : MatrixRef{w_k.ptr(), g.kv_rows(), key_width()};
  }
  MatrixRef v_weight() const {
    const Geometry g = geometry();
    return fused_qkv() ? MatrixRef{w_qkv.ptr() + g.v_row0() * g.C, g.kv_rows(), g.C}
                       : MatrixRef{w_v.ptr(), g.kv_rows(), value_width()};
  }
  // With fused_qkv, k's and v's rows of w_qkv, contiguous: (2*Hkv*D, C).
  MatrixRef k_and_v_weights() const {
    const Geometry g = geometry();
    return {w_qkv.ptr() + g.k_row0() * g.C, 2 * g.kv_rows(), g.C};
  }

  // The head sizes of the scores (q.k) and of the values: D each, or with mla
  // Dqk and Dv, q, k and v being laid out padded to D = max(Dqk, Dv).
  std::size_t score_head_size() const {
    return static_cast<std::size_t>(mla ? mla->spec.qk_head_dim() : D);
  }
  std::size_t value_head_size() const {
    return static_cast<std::size_t>(mla ? mla->spec.v_head_dim : D);
  }
  // Columns of w_out: H*D, or H*Dv with mla.
  std::size_t context_width() const { return static_cast<std::size_t>(H) * value_head_size(); }
  Geometry geometry() const {
    Geometry g;
    g.C = static_cast<std::size_t>(C);
    g.H = static_cast<std::size_t>(H);
    g.Hkv = static_cast<std::size_t>(Hkv ? Hkv : H);
    g.D = static_cast<std::size_t>(D);
    g.O = static_cast<std::size_t>(has_out_proj ? O : H * D);
    g.out_proj = has_out_proj;
    g.Ck = key_width();
    g.Cv = value_width();
    return g;
  }
};

}  // namespace attn

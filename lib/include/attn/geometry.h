// The one attention geometry (ARCHITECTURE.md "geometry"): H query heads,
// Hkv key/value heads, head size D, hidden C, out features O. It owns where
// q, k and v live in the fused projection and which KV head a query head
// reads (which weight layouts can hold a model of this shape: attn/layout.h).
// Config checks, loading, init, export and the forward pass all ask it, so
// "3*H*D" is spelled nowhere else.
//
// Canonical fused projection w_qkv ((H + 2*Hkv)*D, C), rows in this order:
//   q of heads 0..H-1 (H*D rows), k of KV heads 0..Hkv-1, v of KV heads 0..Hkv-1,
// head-major inside each part (Warner's Wqkv; Hugging Face's q|k|v_proj stacked).
#pragma once

#include <cstddef>

namespace attn {

struct Geometry {
  std::size_t C = 0, H = 0, Hkv = 0, D = 0, O = 0;  // O = H*D without out_proj
  bool out_proj = true;
  // Key and value source widths (torch MHA's kdim, vdim); = C unless
  // given. Only torch_mha stores projections of other widths.
  std::size_t Ck = 0, Cv = 0;
  // DeepSeek's mla: floats per query row of its latent buffers (q_lora_rank +
  // kv_lora_rank + qk_rope_head_dim; forward/mla.cpp), 0 without mla.
  std::size_t mla_latent = 0;
  // The output gate's rows (B*L, H*D) beside q (Qwen3-Next; AttentionSpec::gate).
  bool gate = false;

  std::size_t q_rows() const { return H * D; }     // also the context width H*D
  std::size_t kv_rows() const { return Hkv * D; }  // rows of k, and of v
  std::size_t qkv_rows() const { return q_rows() + 2 * kv_rows(); }
  std::size_t q_row0() const { return 0; }
  std::size_t k_row0() const { return q_rows(); }
  std::size_t v_row0() const { return q_rows() + kv_rows(); }
  // Query heads per KV head: Hugging Face's n_rep (repeat_kv), ggml's rk2,
  // gemma.cpp's kHeadGroups.
  std::size_t group() const { return H / Hkv; }
  // The KV head query head h reads: repeat_kv's h // n_rep, ggml's ik2 = iq2 / rk2.
  std::size_t kv_head(std::size_t h) const { return h / group(); }
};

}  // namespace attn

// Private stages of the forward pass (forward/forward.cpp runs them in order):
//   1. project: q, k, v = the projections (with their biases), into buffers
//      the score kernels address by pointer and leading dimension;
//   2. position_stage: qk_norm, then rope, once per position (CONTRACT.md
//      "Scores, in order", steps 1-2), never per tile;
//   3. pack_keys_values: k^T and v per (batch row, KV head) in the panels the
//      tile products read (kernels.h Panels), made once instead of per tile.
//      Self-attention without extra keys, where the shape fits
//      (kernels::qkv_panels_fit), takes the fast path: project writes those
//      panels itself and does step 2 inside the projection, on each task's
//      rows of q and k while they are in cache (kernels::QkvFinish), so 2 and
//      3 have nothing to do (Projected::packed).
//
// Letters: B batch, L queries, T keys, T' = T plus torch MHA's bias_kv and
// zero_attn positions, H heads, Hkv key/value heads, D head size.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "attn/attention.h"
#include "base/warm_pool.h"
#include "kernels/kernels.h"

namespace attn::detail {

// A float buffer, left unset: from the warm pool that prefault_forward set
// aside when it has room (base/warm_pool.h), else from alloc_buffer (huge
// pages when large); back to the pool when freed, for the next pass.
struct BufferFree {
  std::size_t bytes = 0;
  void operator()(float* p) const noexcept { free_warm(p, bytes); }
};
using Buffer = std::unique_ptr<float[], BufferFree>;
inline Buffer make_buffer(std::size_t n) {
  return Buffer(static_cast<float*>(alloc_warm(n * sizeof(float))), BufferFree{n * sizeof(float)});
}

// `buf` holding at least n floats (unset), reused when it does.
inline float* reserve(Buffer& buf, std::size_t& cap, std::size_t n) {
  if (cap < n) {
    buf = make_buffer(n);
    cap = n;
  }
  return buf.get();
}

// The projections of one chunk of batch rows [b0, b0 + B): the forward pass
// runs chunk by chunk so its buffers stay bounded (about kChunkRows query
// rows) and are reused, whatever the batch.
struct Projected {
  std::size_t b0 = 0, B = 0, L = 0, T = 0, T_ext = 0;
  // q of batch b0 + b, head h: q + b*L*ld_q + h*D, rows of L (and y, written over q).
  float* q = nullptr;
  std::size_t ld_q = 0;
  // k and v of batch b0 + b, KV head g: k + b*T'*ld_kv + g*D, rows of T'.
  float* k = nullptr;
  float* v = nullptr;
  std::size_t ld_kv = 0;
  // Packed k^T (D, T') and v (T', D) of batch b0 + b, KV head g: at [b*Hkv + g].
  std::vector<kernels::Panels> kt, v_packed;
  bool packed = false;     // project wrote them, step 2 done (no k, v rows: linear_qkv_panels)
  bool keep_rows = false;  // set before project: k and v rows wanted (--save), never packed
  // Gated attention: the gate (B*L, H*D) of the chunk, x Wg^T + bg (nullptr without).
  float* gate = nullptr;
  // Self-attention without extra keys: one GEMM, into q (B*L, H*D) and the
  // panels when `packed`, else into one (B*L, (H+2*Hkv)*D) buffer. Otherwise
  // q (B*L, H*D) and k|v (B*T', 2*Hkv*D) apart. kt_buf and v_buf hold the
  // packed panels.
  Buffer q_buf, kv_buf, kt_buf, v_buf, gate_buf;
  // DeepSeek's mla: the latent rows of q, then of k and v (forward/mla.cpp).
  Buffer latent_buf;
  std::size_t latent_cap = 0;
  // When set, q rows of H*D (ld_q = H*D) go here instead of q_buf, if they fit
  // (q_into_cap floats) and the path writes them apart from k and v: the
  // context's own buffer (forward.cpp). p.q == q_into tells it was taken.
  float* q_into = nullptr;
  std::size_t q_into_cap = 0;
  std::size_t q_cap = 0, kv_cap = 0, kt_cap = 0, v_cap = 0, gate_cap = 0;  // sizes in floats
  double flops = 0.0;                                                      // of every chunk so far
};

// Query rows a chunk aims at: big enough for full-speed GEMMs (two slices
// of 512 rows on two cores), small enough that a long batch never holds its
// whole projection (B=4, S=1024, GPT-2-small: 9 MB instead of 38 MB).
constexpr std::size_t kChunkRows = 1024;

// Batch rows per chunk for queries of length L.
inline std::size_t chunk_batch(std::size_t L) { return std::max<std::size_t>(1, kChunkRows / L); }

// The bytes prefault_forward sets aside for geometry g on `threads` workers:
// what a pass over one chunk of max(L, kChunkRows) query rows
// (self-attention) takes from the warm pool.
std::size_t warm_bytes(const Geometry& g, int threads, std::size_t L);

// Step 1 for batch rows [b0, b0 + nb) into p (its buffers reused when big
// enough). The inputs' shapes are already checked against the weights.
void project(const Weights& w, const AttentionSpec& spec, const ForwardInputs& in, std::size_t b0,
             std::size_t nb, int threads, Projected& p);

// Step 1 for DeepSeek's multi-head latent attention (w.mla; forward/mla.cpp):
// q (B*L, H*D) and k | v (B*L, 2*H*D), each head [rope part | nope part | 0]
// for q and k, [v (Dv) | 0] for v. Self-attention only.
void mla_project(const Weights& w, const ForwardInputs& in, std::size_t b0, std::size_t nb,
                 int threads, Projected& p);

// Step 2, in place on p's q and k rows (the T real keys, not the extra ones):
// qk_norm when spec.qk_norm, then rope when spec.rope with in.positions (or
// 0..L-1), then the queries' attn_temperature at the same positions. Rope and
// the temperature need self-attention (T == L, keys at the queries' positions).
// Nothing when p.packed: project did the same per row, with the same code.
void position_stage(const Weights& w, const AttentionSpec& spec, const ForwardInputs& in,
                    Projected& p, int threads);

// Step 3: p.kt and p.v_packed from p.k and p.v, after step 2 (the extra keys included).
void pack_keys_values(const Geometry& g, Projected& p, int threads);

// After step 9's weighted sum, before the output projection: each head's
// context rows y (in p.q's columns) times sigmoid(p.gate), in place
// (modeling_qwen3_next: attn_output * torch.sigmoid(gate)).
void apply_gate(const Geometry& g, Projected& p, int threads);

// After step 9 (the output projection), for spec.residual_norm: each of
// the `rows` rows of `out` (C wide) becomes LayerNorm(out + x) with
// w.residual_norm_weight and _bias, in place (modeling_bert.BertSelfOutput:
// LayerNorm(hidden_states + input_tensor); forward/residual_norm.cpp).
void apply_residual_norm(const Weights& w, double eps, const float* x, float* out,
                         std::size_t rows);

// Before step 1, for spec.input_norm of kind rms or layer: the rows of x
// (rows, C) through the block's pre-attention norm with w.input_norm_weight and
// _bias into out, which may be x itself, row blocks on `threads` workers
// (forward/input_norm.cpp).
void apply_input_norm(const Weights& w, const InputNormSpec& n, const float* x, float* out,
                      std::size_t rows, std::size_t C, int threads);

// Step 0 of the forward pass: x itself without an input norm; else x normed in place where
// the caller lent its rows to the context (&x == &context, O == C, no residual norm: nothing
// reads the raw rows after this norm), or into `normed`. Returns the tensor to project.
const Tensor* input_norm_stage(const Weights& w, const AttentionSpec& spec, const Tensor& x,
                               Tensor& context, Tensor& normed, int threads);

// The norm of `heads` vectors of `width` floats each, in place (project.cpp):
// rms, layer (with b, or nullptr) or l2 (w nullptr), times (offset + w); w
// and b advance by `wstep` per vector (width for per-head weights, 0 when
// shared). The q/k norms, v_norm, and DeBERTa's LayerNorm of its relative
// embeddings (run/disentangled_weights.cpp).
void norm_vectors(float* x, std::size_t heads, std::size_t width, const float* w, const float* b,
                  std::size_t wstep, QkNormKind kind, float eps, float offset);

// DeBERTa's disentangled terms of one run (spec.disentangled;
// forward/disentangled.cpp). Letters: R2 = 2 span, the relative embeddings'
// rows the attention reads.
struct DisentangledTerms {
  std::size_t R2 = 0;
  // scale * the relative embeddings' projections, (heads, R2, D) each, empty
  // when the term is off: pos_key (c2p; Hkv heads from k_proj with
  // share_att_key, else H) and pos_query (p2c; H heads).
  std::vector<float> pos_key, pos_query;
  std::size_t key_heads = 0;
  // The clamped bucket r of a relative position d = pos_q - pos_k, at d - lo.
  std::vector<std::int32_t> index;
  std::int64_t lo = 0;
  // Of the chunk in hand: c2p (nb, H, L, R2) = q . pos_key and p2c (nb, H,
  // T, R2) = k . pos_query, per head (disentangled_rows).
  std::vector<float> c2p, p2c;
};

// The run's pos_key, pos_query and index (positions: (B, L) or nullptr = 0..L-1).
DisentangledTerms disentangled_terms(const Weights& w, const AttentionSpec& spec,
                                     const PositionIds* positions, std::size_t L, int threads);

// After step 2 (q and k rows in p, not packed): t.c2p and t.p2c of p's chunk.
void disentangled_rows(const Geometry& g, const Projected& p, DisentangledTerms& t, int threads);

}  // namespace attn::detail

// Stages 1-3 of the forward pass (forward/stages.h): the projections, then
// qk_norm and rope once per position, then k^T and v packed per KV head; or,
// self-attention's fast path, all three in one pass: the projection's tasks
// apply qk_norm, rope and the temperature to their rows of q and k while in
// cache and store k^T and v in their panels (PositionWork).
//
// Letters: B batch, L queries, T keys, T' = T + extra keys, C hidden,
// Ck/Cv key/value source widths, H heads, Hkv key/value heads, D head size.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "attn/positions.h"
#include "forward/stages.h"
#include "kernels/kernels.h"

namespace attn::detail {
namespace {

// p's q rows (n floats, H*D wide): p.q_into when given and big enough.
float* reserve_q(Projected& p, std::size_t n) {
  return p.q_into && p.q_into_cap >= n ? p.q_into : reserve(p.q_buf, p.q_cap, n);
}

// The buffers of k^T (D, T') and v (T', D) panels of every (batch row, KV
// head) of the chunk, and p.kt, p.v_packed sized for their views.
struct KeyValuePanels {
  float* kt;
  float* v;
  std::size_t kt_floats, v_floats;  // per (batch row, KV head)
};
KeyValuePanels reserve_panels(const Geometry& g, Projected& p) {
  const std::size_t heads = p.B * g.Hkv;
  const std::size_t kt_floats = kernels::panels_floats(g.D, p.T_ext);
  const std::size_t v_floats = kernels::panels_floats(p.T_ext, g.D);
  p.kt.resize(heads);
  p.v_packed.resize(heads);
  return {reserve(p.kt_buf, p.kt_cap, heads * kt_floats),
          reserve(p.v_buf, p.v_cap, heads * v_floats), kt_floats, v_floats};
}

// p.kt and p.v_packed viewing the panels that a projection wrote into kv
// (linear_qkv_panels: T' = T keys of every batch row).
void view_panels(const Geometry& g, const KeyValuePanels& kv, Projected& p) {
  for (std::size_t bg = 0; bg < p.B * g.Hkv; ++bg) {
    p.kt[bg] = kernels::panels_view(kv.kt + bg * kv.kt_floats, g.D, p.T);
    p.v_packed[bg] = kernels::panels_view(kv.v + bg * kv.v_floats, p.T, g.D);
  }
}

const float* bias_at(const Weights& w, std::size_t row0) {
  return w.b_qkv.data.empty() ? nullptr : w.b_qkv.ptr() + row0;
}

// torch MHA's extra key/value positions after the T projected ones of every
// batch row: bias_k | bias_v (add_bias_kv), then a zero key and value
// (add_zero_attn), as F.multi_head_attention_forward appends them.
void append_extra_keys(const Weights& w, const AttentionSpec& spec, Projected& p) {
  const std::size_t kv = w.geometry().kv_rows();
  for (std::size_t b = 0; b < p.B; ++b) {
    std::size_t t = p.T;
    if (!w.bias_k.data.empty()) {
      std::copy(w.bias_k.data.begin(), w.bias_k.data.end(), p.k + (b * p.T_ext + t) * p.ld_kv);
      std::copy(w.bias_v.data.begin(), w.bias_v.data.end(), p.v + (b * p.T_ext + t) * p.ld_kv);
      ++t;
    }
    if (spec.add_zero_attn) {
      std::memset(p.k + (b * p.T_ext + t) * p.ld_kv, 0, kv * sizeof(float));
      std::memset(p.v + (b * p.T_ext + t) * p.ld_kv, 0, kv * sizeof(float));
    }
  }
}

// qk_norm over n rows of heads x D at `base` (stride ld), the heads from
// head0 on: scope "head" normalizes each D-vector with the (D) weight, or its
// head's row of the (heads, D) weight (per_head); scope "all" the whole
// heads*D row with the (heads*D) weight (OLMo 2; every head, head0 = 0).
// Kind "l2" has no weight.
void qk_norm_rows(float* base, std::size_t n, std::size_t ld, std::size_t head0, std::size_t heads,
                  std::size_t D, const Tensor& weight, const Tensor& bias, const QkNormSpec& spec) {
  const float eps = static_cast<float>(spec.eps), off = static_cast<float>(spec.weight_offset);
  const std::size_t at = spec.per_head ? head0 * D : 0;
  const float* w = spec.has_weight() ? weight.ptr() + at : nullptr;
  const float* b = spec.bias && !bias.data.empty() ? bias.ptr() + at : nullptr;
  for (std::size_t r = 0; r < n; ++r) {
    if (spec.scope_all)
      norm_vectors(base + r * ld, 1, heads * D, w, b, 0, spec.kind, eps, off);
    else
      norm_vectors(base + r * ld, heads, D, w, b, spec.per_head ? D : 0, spec.kind, eps, off);
  }
}

// Llama 4's query temperature at `pos` (modeling_llama4: attn_scales =
// log1p(floor((pos + 1) / floor_scale)) * attn_scale + 1, in float32).
float temperature(const AttnTemperature& t, std::int64_t pos) {
  const float fs = static_cast<float>(t.floor_scale), as = static_cast<float>(t.attn_scale);
  return std::log1p(std::floor((static_cast<float>(pos) + 1.0f) / fs)) * as + 1.0f;
}

// The frequencies of a run's rope: max(position) + 1 over every batch row
// (transformers' dynamic_rope_update), or L without positions.
RopeFrequencies run_frequencies(const RopeSpec& rope, const ForwardInputs& in, std::size_t L) {
  std::int64_t max_pos = std::int64_t(L) - 1;
  if (in.positions)
    max_pos = *std::max_element(in.positions->data.begin(), in.positions->data.end());
  return rope_frequencies(rope, max_pos + 1);
}

// Position work of the projection into panels (kernels::QkvFinish): qk_norm,
// rope and the queries' temperature on rows of q or k as each GEMM task
// finishes them, per row exactly as position_stage's. cos | sin (R floats)
// of each position of the chunk are made once, before the GEMM: a row per
// position lo..hi when they are dense (as apply_rope's table), else per token.
struct PositionWork {
  const Weights& w;
  const AttentionSpec& spec;
  std::size_t D, L, R = 0;
  const std::int64_t* pos = nullptr;  // (nb, L) of the chunk, or nullptr = 0..L-1
  std::size_t row_stride = 0;         // mrope's rows: pos + row_stride, + 2 row_stride
  std::int64_t lo = 0;
  bool dense = true;
  std::vector<float> cs;  // rows of R floats: cos (R/2) then sin (R/2)

  PositionWork(const Weights& w_, const AttentionSpec& s, const ForwardInputs& in, std::size_t b0,
               std::size_t nb, std::size_t L_, int threads)
      : w(w_), spec(s), D(w_.geometry().D), L(L_) {
    if (in.positions) pos = in.positions->data.data() + b0 * L;
    if (!spec.rope) return;
    const RopeFrequencies f = run_frequencies(*spec.rope, in, L);
    if (in.positions && !f.row_of.empty()) row_stride = in.positions->row_stride();
    R = static_cast<std::size_t>(spec.rope->rotary_dim);
    const std::size_t n = nb * L;
    std::int64_t hi = std::int64_t(L) - 1;
    if (pos) {
      const auto [l, h] = std::minmax_element(pos, pos + n);
      lo = *l, hi = *h;
    }
    // mrope's three rows: a row of cos | sin per token, from its own rows.
    dense = row_stride == 0 && std::uint64_t(hi - lo) < 2 * std::uint64_t(n) + 64;
    const std::size_t rows = dense ? std::size_t(hi - lo) + 1 : n;
    cs.resize(rows * R);
    constexpr std::size_t kRows = 64;
    kernels::parallel_row_blocks(rows, kRows, threads, [&](std::size_t r0, std::size_t r1) {
      for (std::size_t r = r0; r < r1; ++r) {
        float* c = cs.data() + r * R;
        if (dense) {
          rope_angles(f, lo + std::int64_t(r), c, c + R / 2);
        } else {
          const std::int64_t at[3] = {pos[r], pos[r + row_stride], pos[r + 2 * row_stride]};
          rope_angles(f, at, c, c + R / 2);
        }
      }
    });
  }

  std::int64_t position(std::size_t token) const {
    return pos ? pos[token] : std::int64_t(token % L);
  }

  // n rows of `heads` heads from head0 (rows of one batch row, tokens token0..).
  void operator()(bool is_k, float* rows, std::size_t n, std::size_t ld, std::size_t token0,
                  std::size_t head0, std::size_t heads) const {
    const auto norm = [&] {
      qk_norm_rows(rows, n, ld, head0, heads, D, is_k ? w.k_norm : w.q_norm,
                   is_k ? w.k_norm_bias : w.q_norm_bias, *spec.qk_norm);
    };
    const bool after = spec.qk_norm && spec.qk_norm->after_rope;
    if (spec.qk_norm && !after) norm();
    if (spec.rope)
      for (std::size_t r = 0; r < n; ++r) {
        const std::int64_t at = position(token0 + r);
        const float* c = cs.data() + (dense ? std::size_t(at - lo) : token0 + r) * R;
        rope_rotate(rows + r * ld, heads, D, R, spec.rope->style, c, c + R / 2);
      }
    if (after) norm();
    if (spec.attn_temperature && !is_k)
      for (std::size_t r = 0; r < n; ++r) {
        const float t = temperature(*spec.attn_temperature, position(token0 + r));
        float* x = rows + r * ld;
        for (std::size_t c = 0; c < heads * D; ++c) x[c] *= t;
      }
  }
};

}  // namespace

// (stages.h) As Hugging Face's, in float32 (sums in double, then rounded):
//   rms    x * rsqrt(mean(x^2) + eps) * (offset + w)       (Qwen3RMSNorm, Gemma3RMSNorm)
//   layer  (x - mean) * rsqrt(var + eps) * (offset + w) + b (nn.LayerNorm, CohereLayerNorm)
//   l2     x * rsqrt(mean(x^2) + eps)                      (Llama4TextL2Norm; w is nullptr)
// w and b advance by `wstep` per vector (width for per-head weights, 0 when shared).
void norm_vectors(float* x, std::size_t heads, std::size_t width, const float* w, const float* b,
                  std::size_t wstep, QkNormKind kind, float eps, float offset) {
  for (std::size_t h = 0; h < heads; ++h) {
    float* v = x + h * width;
    const float* wh = w ? w + h * wstep : nullptr;
    const float* bh = b ? b + h * wstep : nullptr;
    if (kind == QkNormKind::layer) {
      double sum = 0.0;
      for (std::size_t d = 0; d < width; ++d) sum += v[d];
      const float mean = static_cast<float>(sum / double(width));
      double ss = 0.0;
      for (std::size_t d = 0; d < width; ++d) ss += double(v[d] - mean) * double(v[d] - mean);
      const float inv = 1.0f / std::sqrt(static_cast<float>(ss / double(width)) + eps);
      for (std::size_t d = 0; d < width; ++d)
        v[d] = (v[d] - mean) * inv * (offset + wh[d]) + (bh ? bh[d] : 0.0f);
      continue;
    }
    double ss = 0.0;
    for (std::size_t d = 0; d < width; ++d) ss += double(v[d]) * double(v[d]);
    const float inv = 1.0f / std::sqrt(static_cast<float>(ss / double(width)) + eps);
    if (!wh) {
      for (std::size_t d = 0; d < width; ++d) v[d] = v[d] * inv;
      continue;
    }
    for (std::size_t d = 0; d < width; ++d) v[d] = v[d] * inv * (offset + wh[d]);
  }
}

void project(const Weights& w, const AttentionSpec& spec, const ForwardInputs& in, std::size_t b0,
             std::size_t nb, int threads, Projected& p) {
  if (w.mla) return mla_project(w, in, b0, nb, threads, p);
  const Geometry g = w.geometry();
  const Tensor& x = *in.x;
  const Tensor& key = in.key ? *in.key : x;
  const Tensor& value = in.value ? *in.value : key;
  p.b0 = b0;
  p.B = nb;
  p.L = x.shape[1];
  p.T = key.shape[1];
  p.T_ext = map_keys(w, spec, p.T);
  const std::size_t C = g.C, HD = g.q_rows(), KV = g.kv_rows();
  const float* xb = x.ptr() + b0 * p.L * C;  // the chunk's first query row

  // Gated attention: gate = x Wg^T + bg   (B*L, H*D), the gate half of q_proj.
  p.gate = nullptr;
  if (spec.gate) {
    p.gate = reserve(p.gate_buf, p.gate_cap, nb * p.L * HD);
    linear(xb, C, nb * p.L, MatrixRef{w.w_gate.ptr(), HD, C},
           w.b_gate.data.empty() ? nullptr : w.b_gate.ptr(), p.gate, HD, threads);
    p.flops += 2.0 * double(nb * p.L) * double(C) * double(HD);
  }

  // Self-attention without extra keys: one GEMM over the chunk's rows,
  // qkv = x Wqkv^T + b. Where the shape fits, it writes the panels of k^T
  // and v itself (stage 3), with qk_norm, rope and the temperature (stage 2)
  // done by its tasks on rows still in cache (PositionWork). v_norm (Gemma 4)
  // and clip_qkv change v before it is packed, DeBERTa's p2c reads k's rows, and --save
  // keeps the projected rows: the plain path.
  const bool kv_rows_plain =
      p.T_ext == p.T && !spec.v_norm && !spec.clip_qkv && !spec.disentangled && !p.keep_rows;
  p.packed = !in.key && kv_rows_plain && kernels::qkv_panels_fit(nb, p.L, g.D);
  if (!in.key && p.T_ext == p.T) {
    const std::size_t ld = g.qkv_rows();
    const MatrixRef w_qkv{w.w_qkv.ptr(), ld, C};
    p.flops += 2.0 * double(nb * p.L) * double(C) * double(ld);
    if (p.packed) {  // q (B*L, H*D) and the panels
      p.ld_q = HD;
      p.q = reserve_q(p, nb * p.L * HD);
      const KeyValuePanels kv = reserve_panels(g, p);
      kernels::QkvPanels out{p.q, kv.kt, kv.v, nb, p.L, g.H, g.Hkv, g.D};
      kernels::QkvFinish finish;
      std::optional<PositionWork> work;
      if (spec.qk_norm || spec.rope || spec.attn_temperature) {
        work.emplace(w, spec, in, b0, nb, p.L, threads);
        finish.fn = std::cref(*work);
        finish.q = true;
        finish.k = spec.qk_norm || spec.rope;
        finish.whole = spec.qk_norm && spec.qk_norm->scope_all;
        out.finish = &finish;
      }
      kernels::linear_qkv_panels(xb, C, w_qkv, bias_at(w, 0), out, threads);
      view_panels(g, kv, p);
      return;
    }
    // (B*L, (H+2*Hkv)*D) in one buffer, k and v rows inside it
    p.q = reserve(p.q_buf, p.q_cap, nb * p.L * ld);
    linear(xb, C, nb * p.L, w_qkv, bias_at(w, 0), p.q, ld, threads);
    p.k = p.q + g.k_row0();
    p.v = p.q + g.v_row0();
    p.ld_q = p.ld_kv = ld;
    return;
  }

  // q = x Wq^T + bq   (B*L, H*D)
  p.ld_q = HD;
  p.q = reserve_q(p, nb * p.L * HD);
  linear(xb, C, nb * p.L, w.q_weight(), bias_at(w, g.q_row0()), p.q, HD, threads);
  const std::size_t Ck = key.shape[2], Cv = value.shape[2];
  const bool one_source = &key == &value && w.fused_qkv();  // k | v rows of w_qkv, one GEMM
  // Cross-attention, keys and values from one source (kv_input) through the
  // k | v rows of w_qkv: one GEMM over the chunk's key rows that writes the
  // panels of k^T and v itself, as self-attention's does, with no k | v rows
  // in between (a T5-large-shaped cross-attention's projections 1.03x
  // faster). Norms and positions on k go the plain path.
  if (one_source && kv_rows_plain && !spec.qk_norm && !spec.rope && !spec.attn_temperature &&
      kernels::qkv_panels_fit(nb, p.T, g.D)) {
    p.packed = true;
    const KeyValuePanels kv = reserve_panels(g, p);
    const kernels::QkvPanels out{nullptr, kv.kt, kv.v, nb, p.T, 0, g.Hkv, g.D};
    kernels::linear_qkv_panels(key.ptr() + b0 * p.T * Ck, Ck, w.k_and_v_weights(),
                               bias_at(w, g.k_row0()), out, threads);
    view_panels(g, kv, p);
    p.flops += 2.0 * double(nb * p.L) * double(C) * double(HD) +
               2.0 * double(nb * p.T) * double(2 * KV) * double(Ck);
    return;
  }
  // k | v   (B*T', 2*Hkv*D): per batch row, so the extra keys can follow its T.
  p.ld_kv = 2 * KV;
  p.k = reserve(p.kv_buf, p.kv_cap, nb * p.T_ext * p.ld_kv);
  p.v = p.k + KV;
  for (std::size_t b = 0; b < nb; ++b) {
    float* kb = p.k + b * p.T_ext * p.ld_kv;
    const float* ksrc = key.ptr() + (b0 + b) * p.T * Ck;
    if (one_source) {
      linear(ksrc, Ck, p.T, w.k_and_v_weights(), bias_at(w, g.k_row0()), kb, p.ld_kv, threads);
    } else {
      linear(ksrc, Ck, p.T, w.k_weight(), bias_at(w, g.k_row0()), kb, p.ld_kv, threads);
      linear(value.ptr() + (b0 + b) * p.T * Cv, Cv, p.T, w.v_weight(), bias_at(w, g.v_row0()),
             kb + KV, p.ld_kv, threads);
    }
  }
  append_extra_keys(w, spec, p);
  p.flops += 2.0 * double(nb * p.L) * double(C) * double(HD) +
             2.0 * double(nb * p.T) * double(KV) * double(Ck + Cv);
}

void position_stage(const Weights& w, const AttentionSpec& spec, const ForwardInputs& in,
                    Projected& p, int threads) {
  if (!spec.qk_norm && !spec.rope && !spec.attn_temperature && !spec.v_norm && !spec.clip_qkv)
    return;
  if (p.packed) return;  // project did it (PositionWork); never with v_norm or clip_qkv
  const Geometry g = w.geometry();
  if (spec.clip_qkv) {
    // modeling_olmo: query_states.clamp_(min=-clip_qkv, max=clip_qkv), and k
    // and v alike (DBRX and MPT clamp the fused qkv), right after the
    // projections: q (L, H*D) and the T projected keys and values (Hkv*D
    // each), never torch MHA's extra keys.
    const float c = static_cast<float>(*spec.clip_qkv);
    const std::size_t HD = g.q_rows(), KV = g.kv_rows();
    const auto clamp_row = [c](float* x, std::size_t n) {
      for (std::size_t d = 0; d < n; ++d) x[d] = std::clamp(x[d], -c, c);
    };
    kernels::parallel_for(p.B, threads, [&](std::size_t b, int) {
      for (std::size_t i = 0; i < p.L; ++i) clamp_row(p.q + (b * p.L + i) * p.ld_q, HD);
      for (std::size_t t = 0; t < p.T; ++t) {
        clamp_row(p.k + (b * p.T_ext + t) * p.ld_kv, KV);
        clamp_row(p.v + (b * p.T_ext + t) * p.ld_kv, KV);
      }
    });
    if (!spec.qk_norm && !spec.rope && !spec.attn_temperature && !spec.v_norm) return;
  }
  if (spec.v_norm) {
    // modeling_gemma4: value_states = v_norm(value_states), an RMSNorm of each
    // head without a weight (with_scale=False), on the T projected values.
    const float eps = static_cast<float>(spec.v_norm->eps);
    kernels::parallel_for(p.B, threads, [&](std::size_t b, int) {
      for (std::size_t t = 0; t < p.T; ++t)
        norm_vectors(p.v + (b * p.T_ext + t) * p.ld_kv, g.Hkv, g.D, nullptr, nullptr, 0,
                     QkNormKind::rms, eps, 0.0f);
    });
    if (!spec.qk_norm && !spec.rope && !spec.attn_temperature) return;
  }
  const std::size_t D = g.D;
  std::optional<RopeFrequencies> freqs;
  std::vector<std::int64_t> iota;
  if (spec.rope) freqs = run_frequencies(*spec.rope, in, p.L);
  if ((spec.rope || spec.attn_temperature) && !in.positions) {
    iota.resize(p.L);
    for (std::size_t i = 0; i < p.L; ++i) iota[i] = std::int64_t(i);
  }
  // Chunks of rows of one batch row each, spread over the workers; the keys
  // only when qk_norm or rope changes them (the temperature scales q alone,
  // and the keys may already sit in their panels).
  constexpr std::size_t kRows = 64;
  const bool keys = spec.qk_norm || spec.rope;
  const std::size_t q_chunks = (p.L + kRows - 1) / kRows,
                    k_chunks = keys ? (p.T + kRows - 1) / kRows : 0;
  const std::size_t per_batch = q_chunks + k_chunks;
  kernels::parallel_for(p.B * per_batch, threads, [&](std::size_t task, int) {
    const std::size_t b = task / per_batch, c = task % per_batch;
    const bool is_q = c < q_chunks;
    const std::size_t r0 = (is_q ? c : c - q_chunks) * kRows;
    const std::size_t n = std::min(kRows, (is_q ? p.L : p.T) - r0);
    float* rows = is_q ? p.q + (b * p.L + r0) * p.ld_q : p.k + (b * p.T_ext + r0) * p.ld_kv;
    const std::size_t ld = is_q ? p.ld_q : p.ld_kv;
    const std::size_t heads = is_q ? g.H : g.Hkv;
    const auto norm = [&] {
      qk_norm_rows(rows, n, ld, 0, heads, D, is_q ? w.q_norm : w.k_norm,
                   is_q ? w.q_norm_bias : w.k_norm_bias, *spec.qk_norm);
    };
    const bool after = spec.qk_norm && spec.qk_norm->after_rope;  // Hunyuan's order
    if (spec.qk_norm && !after) norm();
    if (spec.rope) {
      // Self-attention: the keys sit at the queries' positions.
      const std::int64_t* pos =
          (in.positions ? in.positions->data.data() + (p.b0 + b) * p.L : iota.data()) + r0;
      apply_rope(rows, n, ld, 0, is_q ? heads : 0, 0, is_q ? 0 : heads, D, pos, *spec.rope, *freqs,
                 in.positions ? in.positions->row_stride() : 0);
    }
    if (after) norm();
    if (spec.attn_temperature && is_q) {
      // Times every head of the query (after rope and the norm).
      const std::int64_t* pos =
          (in.positions ? in.positions->data.data() + (p.b0 + b) * p.L : iota.data()) + r0;
      for (std::size_t r = 0; r < n; ++r) {
        const float t = temperature(*spec.attn_temperature, pos[r]);
        float* q = rows + r * ld;
        for (std::size_t c = 0; c < heads * D; ++c) q[c] *= t;
      }
    }
  });
}

void pack_keys_values(const Geometry& g, Projected& p, int threads) {
  if (p.packed) return;  // project wrote the panels
  const std::size_t D = g.D, Tx = p.T_ext;
  const KeyValuePanels kv = reserve_panels(g, p);
  // Tasks of (batch row, KV head, k or v).
  kernels::parallel_for(p.B * g.Hkv * 2, threads, [&](std::size_t task, int) {
    const std::size_t bg = task / 2, b = bg / g.Hkv, kvh = bg % g.Hkv;
    const std::size_t at = b * Tx * p.ld_kv + kvh * D;  // (T', D) rows of k and v, stride ld_kv
    if (task % 2 == 0)                                  // k^T (D, T'): its row d is column d of k
      p.kt[bg] = kernels::pack_panels(p.k + at, 1, p.ld_kv, D, Tx, kv.kt + bg * kv.kt_floats);
    else
      p.v_packed[bg] = kernels::pack_panels(p.v + at, p.ld_kv, 1, Tx, D, kv.v + bg * kv.v_floats);
  });
}

void apply_gate(const Geometry& g, Projected& p, int threads) {
  if (!p.gate) return;
  const std::size_t HD = g.q_rows(), rows = p.B * p.L;
  constexpr std::size_t kRows = 64;
  kernels::parallel_row_blocks(rows, kRows, threads, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      float* y = p.q + r * p.ld_q;
      const float* gate = p.gate + r * HD;
      // torch.sigmoid in float32: 1 / (1 + exp(-x))
      for (std::size_t c = 0; c < HD; ++c) y[c] *= 1.0f / (1.0f + std::exp(-gate[c]));
    }
  });
}

}  // namespace attn::detail

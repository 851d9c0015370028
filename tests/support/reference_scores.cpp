#include "reference_scores.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "attn/positions.h"

namespace attn::ref {
namespace {

using Vec = std::vector<double>;

// torch.nn.Linear on one row: y = W x + b.   W: (out, in) row-major.
Vec linear_row(const float* x, std::size_t in, const float* W, std::size_t out, const float* b) {
  Vec y(out);
  for (std::size_t o = 0; o < out; ++o) {
    double s = b ? double(b[o]) : 0.0;
    for (std::size_t c = 0; c < in; ++c) s += double(W[o * in + c]) * double(x[c]);
    y[o] = s;
  }
  return y;
}

// qk_norm over `width` values at v, in double: RMSNorm x * rsqrt(mean(x^2)
// + eps) * (offset + w); LayerNorm (x - mean) / sqrt(var + eps) * (offset +
// w) + b; L2 x * rsqrt(mean(x^2) + eps) without a weight.
void qk_norm_vec(double* v, std::size_t width, const float* w, const float* b,
                 const QkNormSpec& n) {
  double mean = 0.0;
  if (n.kind == QkNormKind::layer) {
    for (std::size_t d = 0; d < width; ++d) mean += v[d];
    mean /= double(width);
  }
  double ss = 0.0;
  for (std::size_t d = 0; d < width; ++d) ss += (v[d] - mean) * (v[d] - mean);
  const double inv = 1.0 / std::sqrt(ss / double(width) + n.eps);
  for (std::size_t d = 0; d < width; ++d) {
    v[d] = (v[d] - mean) * inv;
    if (n.kind != QkNormKind::l2) v[d] *= double(n.weight_offset) + double(w[d]);
    if (b) v[d] += double(b[d]);
  }
}

// qk_norm of one q or k row of `heads` heads: the whole row (scope "all") or
// each head, with the shared (D) weight or its head's row (per_head).
void qk_norm_row(double* row, std::size_t heads, std::size_t D, const Tensor& w, const Tensor& b,
                 const QkNormSpec& n) {
  const float* wp = n.has_weight() ? w.ptr() : nullptr;
  const float* bp = n.bias ? b.ptr() : nullptr;
  if (n.scope_all) return qk_norm_vec(row, heads * D, wp, bp, n);
  for (std::size_t h = 0; h < heads; ++h) {
    const std::size_t at = n.per_head ? h * D : 0;
    qk_norm_vec(row + h * D, D, wp ? wp + at : nullptr, bp ? bp + at : nullptr, n);
  }
}

// A token's positions in mrope's three rows (time, height, width); a 1-D
// position is the same in all three.
using RowPositions = std::array<std::int64_t, 3>;

// The row whose position frequency i of R/2 turns at, written plainly from
// transformers: modeling_qwen2_vl.apply_multimodal_rotary_pos_emb splits the
// R-wide cos into chunks mrope_section * 2 = [t, h, w, t, h, w], chunk k from
// row k % 3; modeling_qwen3_vl.apply_interleaved_mrope overwrites the time
// row's freqs[..., 1:3h:3] with the height row's and [..., 2:3w:3] with the
// width row's.
std::size_t mrope_row(const RopeSpec& spec, std::size_t i) {
  if (spec.mrope_section.empty()) return 0;
  const std::size_t R = std::size_t(spec.rotary_dim);
  const auto t = std::size_t(spec.mrope_section[0]), h = std::size_t(spec.mrope_section[1]),
             w = std::size_t(spec.mrope_section[2]);
  if (spec.mrope_interleaved) {
    for (std::size_t j = 1; j < 3 * h; j += 3)
      if (j == i) return 1;
    for (std::size_t j = 2; j < 3 * w; j += 3)
      if (j == i) return 2;
    return 0;
  }
  const std::size_t chunks[6] = {t, h, w, t, h, w};
  std::size_t end = 0;
  for (std::size_t k = 0; k < 6; ++k) {
    end += chunks[k];
    if (i < end) return k % 3;
  }
  throw std::logic_error("mrope_section sums to less than rotary_dim / 2 = " +
                         std::to_string(R / 2));
}

// Rotates the first R dims of one head vector at angle pos * inv_freq[i],
// scaled by the attention factor (modeling_rope_utils), in double; with
// mrope, frequency i at its row's position.
void rope(double* v, const RopeSpec& spec, const RopeFrequencies& f, const RowPositions& pos) {
  const std::size_t R = std::size_t(spec.rotary_dim), half = R / 2;
  for (std::size_t i = 0; i < half; ++i) {
    const double a = double(pos[mrope_row(spec, i)]) * f.inv_freq[i];
    const double c = std::cos(a) * f.attention_factor, s = std::sin(a) * f.attention_factor;
    // half: (x[i], x[i + R/2]) as rotate_half; interleaved: (x[2i], x[2i+1]).
    const std::size_t i1 = spec.style == RopeStyle::half ? i : 2 * i;
    const std::size_t i2 = spec.style == RopeStyle::half ? i + half : 2 * i + 1;
    const double x1 = v[i1], x2 = v[i2];
    v[i1] = x1 * c - x2 * s;
    v[i2] = x2 * c + x1 * s;
  }
}

// DeepSeek's multi-head latent attention, written from
// modeling_deepseek_v3.DeepseekV3Attention.forward for one token x (C):
// q (H*Dqk) per head [q_pass (Dn) | q_rot (Dr)], k (H*Dqk) per head
// [k_pass_h | k_rot], k_rot shared, v (H*Dv); rope on the rot parts as
// apply_rotary_pos_emb_interleave (the rot part de-interleaved, then
// rotate_half) for the interleaved style, apply_rotary_pos_emb for half.
struct MlaToken {
  Vec q, k, v;
};

void mla_rms_norm(Vec& v, std::size_t n, const float* w) {  // DeepseekV3RMSNorm, eps 1e-6
  double ss = 0.0;
  for (std::size_t d = 0; d < n; ++d) ss += v[d] * v[d];
  const double inv = 1.0 / std::sqrt(ss / double(n) + 1e-6);
  for (std::size_t d = 0; d < n; ++d) v[d] = double(w[d]) * (v[d] * inv);
}

void mla_rope(double* x, std::size_t Dr, const RopeSpec& spec, const RopeFrequencies& f,
              std::int64_t pos) {
  Vec t(x, x + Dr);
  if (spec.style == RopeStyle::interleaved)  // view (Dr/2, 2).transpose: evens, then odds
    for (std::size_t i = 0; i < Dr / 2; ++i) t[i] = x[2 * i], t[Dr / 2 + i] = x[2 * i + 1];
  RopeSpec half = spec;
  half.style = RopeStyle::half;
  half.rotary_dim = std::int64_t(Dr);
  rope(t.data(), half, f, RowPositions{pos, pos, pos});
  std::copy(t.begin(), t.end(), x);
}

MlaToken mla_token(const Weights& w, const float* x, const RopeSpec* rope_spec,
                   const RopeFrequencies& f, std::int64_t pos) {
  const MlaWeights& m = *w.mla;
  const std::size_t C = std::size_t(w.C), H = std::size_t(w.H);
  const auto Rq = std::size_t(m.spec.q_lora_rank), Rkv = std::size_t(m.spec.kv_lora_rank);
  const auto Dn = std::size_t(m.spec.qk_nope_head_dim), Dr = std::size_t(m.spec.qk_rope_head_dim);
  const auto Dv = std::size_t(m.spec.v_head_dim), Dqk = Dn + Dr;
  MlaToken t;
  if (Rq == 0) {
    t.q = linear_row(x, C, m.q_proj.ptr(), H * Dqk, nullptr);
  } else {
    Vec qa = linear_row(x, C, m.q_a_proj.ptr(), Rq,
                        m.q_a_bias.data.empty() ? nullptr : m.q_a_bias.ptr());
    mla_rms_norm(qa, Rq, m.q_a_norm.ptr());
    std::vector<float> qa_f(qa.begin(), qa.end());
    t.q = linear_row(qa_f.data(), Rq, m.q_b_proj.ptr(), H * Dqk, nullptr);
  }
  Vec ckv = linear_row(x, C, m.kv_a_proj.ptr(), Rkv + Dr,
                       m.kv_a_bias.data.empty() ? nullptr : m.kv_a_bias.ptr());
  mla_rms_norm(ckv, Rkv, m.kv_a_norm.ptr());
  std::vector<float> latent(ckv.begin(), ckv.begin() + std::ptrdiff_t(Rkv));
  const Vec kv = linear_row(latent.data(), Rkv, m.kv_b_proj.ptr(), H * (Dn + Dv), nullptr);
  Vec k_rot(ckv.begin() + std::ptrdiff_t(Rkv), ckv.end());
  if (rope_spec) {
    mla_rope(k_rot.data(), Dr, *rope_spec, f, pos);
    for (std::size_t h = 0; h < H; ++h) mla_rope(t.q.data() + h * Dqk + Dn, Dr, *rope_spec, f, pos);
  }
  t.k.assign(H * Dqk, 0.0);
  t.v.assign(H * Dv, 0.0);
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t d = 0; d < Dn; ++d) t.k[h * Dqk + d] = kv[h * (Dn + Dv) + d];
    for (std::size_t d = 0; d < Dr; ++d) t.k[h * Dqk + Dn + d] = k_rot[d];
    for (std::size_t d = 0; d < Dv; ++d) t.v[h * Dv + d] = kv[h * (Dn + Dv) + Dn + d];
  }
  return t;
}

}  // namespace

ScoresResult attention_with_scores(const Weights& w, const AttentionSpec& spec,
                                   const ForwardInputs& in) {
  const Geometry g = w.geometry();
  const Tensor& x = *in.x;
  const Tensor& key = in.key ? *in.key : x;
  const Tensor& value = in.value ? *in.value : key;
  const std::size_t B = x.shape[0], L = x.shape[1], T = key.shape[1];
  const std::size_t H = g.H, D = g.D, HD = H * D, KV = g.kv_rows();
  const std::size_t C = g.C, Ck = key.shape[2], Cv = value.shape[2];
  const bool bias_kv = !w.bias_k.data.empty();
  const std::size_t Tx = T + (bias_kv ? 1 : 0) + (spec.add_zero_attn ? 1 : 0);
  // Widths of a head's q and k (Dq) and of its v (Dw): D, or mla's Dn + Dr and Dv.
  const std::size_t Dq = w.mla ? std::size_t(w.mla->spec.qk_head_dim()) : D;
  const std::size_t Dw = w.mla ? std::size_t(w.mla->spec.v_head_dim) : D;
  const std::size_t Y = H * Dw;  // the context width before o_proj
  const std::size_t O = w.has_out_proj ? g.O : HD;
  const double inf = std::numeric_limits<double>::infinity();
  const float* bq = w.b_qkv.data.empty() ? nullptr : w.b_qkv.ptr();

  ScoresResult r;
  r.context = Tensor({B, L, O});
  r.attention = Tensor({B, H, L, Tx});
  r.scores = Tensor({B, H, L, Tx});
  r.q = Tensor({B, L, H, Dq});
  r.k = Tensor({B, T, g.Hkv, Dq});
  r.v = Tensor({B, T, g.Hkv, Dw});
  r.z = Tensor({B, L, H, Dw});
  if (w.has_out_proj) r.result = Tensor({B, L, H, O});
  std::int64_t max_pos = std::int64_t(L) - 1;
  if (in.positions)
    max_pos = *std::max_element(in.positions->data.begin(), in.positions->data.end());
  RopeFrequencies freqs;
  if (spec.rope) freqs = rope_frequencies(*spec.rope, max_pos + 1);
  // The scores' settings in float32, as the forward pass takes them.
  const double scale = double(float(spec.scale));
  const double softcap = spec.softcap ? double(float(*spec.softcap)) : 0.0;
  const std::size_t window = spec.sliding_window ? std::size_t(*spec.sliding_window) : 0;
  const std::size_t chunk = spec.attention_chunk ? std::size_t(*spec.attention_chunk) : 0;
  auto pos = [&](std::size_t b, std::size_t i) -> std::int64_t {
    return in.positions ? in.positions->data[b * L + i] : std::int64_t(i);
  };
  // rope's positions of token (b, i): mrope's three rows of a (3, B, L) array.
  auto rope_pos = [&](std::size_t b, std::size_t i) -> RowPositions {
    if (!in.positions || in.positions->shape.size() != 3) return {pos(b, i), pos(b, i), pos(b, i)};
    const auto& p = in.positions->data;
    return {p[b * L + i], p[(B + b) * L + i], p[(2 * B + b) * L + i]};
  };

  for (std::size_t b = 0; b < B; ++b) {
    // 1. projections (the k/v rows of w_qkv, or torch MHA's kdim/vdim ones)
    const MatrixRef wk = w.k_weight(), wv = w.v_weight();
    std::vector<Vec> q(L), k(Tx, Vec(KV, 0.0)), v(Tx, Vec(KV, 0.0));
    if (w.mla) {  // self-attention: T == L; rope inside, as DeepseekV3Attention
      for (std::size_t i = 0; i < L; ++i) {
        MlaToken t = mla_token(w, x.ptr() + (b * L + i) * C, spec.rope ? &*spec.rope : nullptr,
                               freqs, pos(b, i));
        q[i] = std::move(t.q);
        k[i] = std::move(t.k);
        v[i] = std::move(t.v);
      }
    }
    for (std::size_t i = 0; i < L && !w.mla; ++i)
      q[i] = linear_row(x.ptr() + (b * L + i) * C, C, w.w_qkv.ptr(), HD, bq);
    for (std::size_t j = 0; j < T && !w.mla; ++j) {
      k[j] =
          linear_row(key.ptr() + (b * T + j) * Ck, Ck, wk.data, KV, bq ? bq + g.k_row0() : nullptr);
      v[j] = linear_row(value.ptr() + (b * T + j) * Cv, Cv, wv.data, KV,
                        bq ? bq + g.v_row0() : nullptr);
    }
    if (spec.clip_qkv) {  // q, k, v clamped to [-c, c] after the projections
      const double c = double(float(*spec.clip_qkv));
      const auto clip = [c](Vec& r) {
        for (double& x : r) x = std::min(std::max(x, -c), c);
      };
      for (std::size_t i = 0; i < L; ++i) clip(q[i]);
      for (std::size_t j = 0; j < T; ++j) clip(k[j]), clip(v[j]);
    }
    if (bias_kv)
      for (std::size_t d = 0; d < KV; ++d) k[T][d] = w.bias_k.data[d], v[T][d] = w.bias_v.data[d];
    // 1. qk_norm, 2. rope (the real keys only)
    // qk_norm's order "after_rope" (Hunyuan): the norm after 2., before the temperature
    const bool norm_first = spec.qk_norm && !spec.qk_norm->after_rope;
    const bool norm_after = spec.qk_norm && spec.qk_norm->after_rope;
    for (std::size_t i = 0; i < L && !w.mla; ++i) {
      if (norm_first) qk_norm_row(q[i].data(), H, D, w.q_norm, w.q_norm_bias, *spec.qk_norm);
      if (spec.rope)
        for (std::size_t h = 0; h < H; ++h)
          rope(q[i].data() + h * D, *spec.rope, freqs, rope_pos(b, i));
      if (norm_after) qk_norm_row(q[i].data(), H, D, w.q_norm, w.q_norm_bias, *spec.qk_norm);
      if (spec.attn_temperature) {  // Llama 4's temperature tuning, after rope
        const auto& t = *spec.attn_temperature;
        const double f = std::log1p(std::floor(double(pos(b, i) + 1) / t.floor_scale));
        for (std::size_t c = 0; c < HD; ++c) q[i][c] *= f * t.attn_scale + 1.0;
      }
    }
    for (std::size_t j = 0; j < T && !w.mla; ++j) {
      if (spec.v_norm)  // Gemma 4's v_norm: each head's v over its own RMS, no weight
        for (std::size_t h = 0; h < g.Hkv; ++h) {
          double ss = 0.0;
          for (std::size_t d = 0; d < D; ++d) ss += v[j][h * D + d] * v[j][h * D + d];
          const double inv = 1.0 / std::sqrt(ss / double(D) + spec.v_norm->eps);
          for (std::size_t d = 0; d < D; ++d) v[j][h * D + d] *= inv;
        }
      if (norm_first) qk_norm_row(k[j].data(), g.Hkv, D, w.k_norm, w.k_norm_bias, *spec.qk_norm);
      if (spec.rope)
        for (std::size_t h = 0; h < g.Hkv; ++h)
          rope(k[j].data() + h * D, *spec.rope, freqs, rope_pos(b, j));
      if (norm_after) qk_norm_row(k[j].data(), g.Hkv, D, w.k_norm, w.k_norm_bias, *spec.qk_norm);
    }

    // DeBERTa: the relative embeddings projected, pos_key (R2, heads*D) by
    // k_proj (share_att_key: KV heads) or pos_key_proj (H heads), pos_query by
    // q_proj or pos_query_proj (H heads)
    std::vector<Vec> pos_key, pos_query;
    std::size_t key_heads = 0;
    if (spec.disentangled) {
      const DisentangledSpec& dis = *spec.disentangled;
      const std::size_t R2 = w.rel_embeddings.shape[0];
      for (std::size_t r = 0; r < R2; ++r) {
        const float* e = w.rel_embeddings.ptr() + r * C;
        if (dis.c2p) {
          key_heads = dis.share_att_key ? g.Hkv : H;
          pos_key.push_back(
              dis.share_att_key
                  ? linear_row(e, C, w.k_weight().data, KV, bq ? bq + g.k_row0() : nullptr)
                  : linear_row(e, C, w.pos_key_w.ptr(), HD,
                               w.pos_key_b.data.empty() ? nullptr : w.pos_key_b.ptr()));
        }
        if (dis.p2c)
          pos_query.push_back(
              dis.share_att_key
                  ? linear_row(e, C, w.q_weight().data, HD, bq)
                  : linear_row(e, C, w.pos_query_w.ptr(), HD,
                               w.pos_query_b.data.empty() ? nullptr : w.pos_query_b.ptr()));
      }
    }

    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t c = 0; c < H * Dq; ++c) r.q.data[(b * L + i) * H * Dq + c] = float(q[i][c]);
    for (std::size_t j = 0; j < T; ++j) {
      for (std::size_t c = 0; c < g.Hkv * Dq; ++c)
        r.k.data[(b * T + j) * g.Hkv * Dq + c] = float(k[j][c]);
      for (std::size_t c = 0; c < g.Hkv * Dw; ++c)
        r.v.data[(b * T + j) * g.Hkv * Dw + c] = float(v[j][c]);
    }

    std::vector<double> y(Y, 0.0);
    for (std::size_t i = 0; i < L; ++i) {
      std::fill(y.begin(), y.end(), 0.0);
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t gk = g.kv_head(h);
        std::vector<double> s(Tx);
        std::vector<bool> ok(Tx, true);
        for (std::size_t j = 0; j < Tx; ++j) {
          double dot = 0.0;
          for (std::size_t d = 0; d < Dq; ++d) dot += q[i][h * Dq + d] * k[j][gk * Dq + d];
          s[j] = scale * dot;                                           // 3.
          if (softcap > 0) s[j] = softcap * std::tanh(s[j] / softcap);  // 4.
          if (j >= T) continue;  // the extra keys: allowed, nothing added
          if (spec.alibi)        // 5.
            s[j] += double(float(spec.alibi->slopes[h])) * double(pos(b, j) - pos(b, i));
          if (spec.relative_bias) {  // 5. T5's bucket of pos_j - pos_i, the table's column h
            const std::int64_t bucket =
                relative_position_bucket(pos(b, j) - pos(b, i), *spec.relative_bias);
            s[j] += double(w.relative_bias.data[std::size_t(bucket) * H + h]);
          }
          if (spec.disentangled) {  // 5. DeBERTa's c2p and p2c at r of pos_i - pos_j
            const DisentangledSpec& dis = *spec.disentangled;
            const std::int64_t last = std::int64_t(w.rel_embeddings.shape[0]) - 1;
            const std::int64_t bucket = log_bucket_position(
                pos(b, i) - pos(b, j), dis.position_buckets, dis.max_relative_positions);
            const auto r = std::size_t(std::clamp(bucket + dis.span(), std::int64_t(0), last));
            double c2p = 0.0, p2c = 0.0;
            const std::size_t kh = key_heads == H ? h : gk;
            for (std::size_t d = 0; d < D && dis.c2p; ++d)
              c2p += q[i][h * D + d] * pos_key[r][kh * D + d];
            for (std::size_t d = 0; d < D && dis.p2c; ++d)
              p2c += k[j][gk * D + d] * pos_query[r][h * D + d];
            s[j] += scale * (c2p + p2c);
          }
          if (in.attn_mask) {  // 6. and 7.
            const std::size_t off = in.attn_mask->row_offset(b, h, i) + j;
            if (in.attn_mask->additive)
              s[j] += in.attn_mask->add[off];
            else if (in.attn_mask->blocked[off])
              ok[j] = false;
          }
          if (spec.causal && j > i) ok[j] = false;  // 7.
          if (window && !(i < j + window)) ok[j] = false;
          if (window && !spec.causal && !(j < i + window)) ok[j] = false;
          if (chunk && i / chunk != j / chunk) ok[j] = false;  // attention_chunk
          if (in.key_padding && in.key_padding->data[b * T + j]) ok[j] = false;
          // DeBERTa: a padded query sees no key
          if (spec.mask_padded_queries && in.key_padding && in.key_padding->data[b * T + i])
            ok[j] = false;
          if (s[j] == -inf) ok[j] = false;
        }
        float* scores_row = r.scores.ptr() + ((b * H + h) * L + i) * Tx;
        for (std::size_t j = 0; j < Tx; ++j) scores_row[j] = ok[j] ? float(s[j]) : float(-inf);
        // 8. softmax over the allowed keys (and the sink); none allowed: zeros
        double mx = -inf;
        bool any = false;
        for (std::size_t j = 0; j < Tx; ++j)
          if (ok[j]) mx = std::max(mx, s[j]), any = true;
        float* row = r.attention.ptr() + ((b * H + h) * L + i) * Tx;
        if (!any) {
          ++r.fully_masked_rows;
          continue;  // zero weights, zero y
        }
        const double sink = spec.sinks ? double(w.sinks.data[h]) : -inf;
        mx = std::max(mx, sink);
        double sum = spec.sinks ? std::exp(sink - mx) : 0.0;
        for (std::size_t j = 0; j < Tx; ++j) sum += ok[j] ? std::exp(s[j] - mx) : 0.0;
        for (std::size_t j = 0; j < Tx; ++j) {
          const double p = ok[j] ? std::exp(s[j] - mx) / sum : 0.0;
          row[j] = float(p);
          for (std::size_t d = 0; d < Dw; ++d) y[h * Dw + d] += p * v[j][gk * Dw + d];  // 9.
        }
      }
      // gate: each head's context times sigmoid(x Wg^T + bg), before the output projection
      if (spec.gate) {
        const Vec gate = linear_row(x.ptr() + (b * L + i) * C, C, w.w_gate.ptr(), HD,
                                    w.b_gate.data.empty() ? nullptr : w.b_gate.ptr());
        for (std::size_t c = 0; c < HD; ++c) y[c] *= 1.0 / (1.0 + std::exp(-gate[c]));
      }
      for (std::size_t c = 0; c < Y; ++c) r.z.data[(b * L + i) * Y + c] = float(y[c]);
      // 9. heads concatenated, output projection
      float* out = r.context.ptr() + (b * L + i) * O;
      if (!w.has_out_proj) {
        for (std::size_t c = 0; c < HD; ++c) out[c] = float(y[c]);
        continue;
      }
      for (std::size_t o = 0; o < O; ++o) {
        double acc = w.b_out.data.empty() ? 0.0 : double(w.b_out.data[o]);
        for (std::size_t c = 0; c < Y; ++c) acc += double(w.w_out.data[o * Y + c]) * y[c];
        out[o] = float(acc);
      }
      for (std::size_t h = 0; h < H; ++h)  // each head's share, without the bias
        for (std::size_t o = 0; o < O; ++o) {
          double acc = 0.0;
          for (std::size_t d = 0; d < Dw; ++d)
            acc += double(w.w_out.data[o * Y + h * Dw + d]) * y[h * Dw + d];
          r.result.data[((b * L + i) * H + h) * O + o] = float(acc);
        }
    }
  }
  return r;
}

}  // namespace attn::ref

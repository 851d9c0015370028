// The float64 path of --check-f64 (attn/check_f64.h): the same math as
// forward.cpp (CONTRACT.md "Scores, in order"), written plainly in double.
//
// Letters: L queries, T keys (= L), C hidden, H heads, Hkv key/value heads,
// D head size, R rotary dims, O out size, n rows checked.
#include "attn/check_f64.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "attn/positions.h"
#include "kernels/kernels.h"

namespace attn {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

std::vector<double> widen(const float* p, std::size_t n) { return std::vector<double>(p, p + n); }

// out (rows, N) = x (rows, K) W^T + b, W (N, K) float32 widened.
std::vector<double> project(const std::vector<double>& x, std::size_t rows, std::size_t K,
                            const float* W, std::size_t N, const float* bias) {
  const std::vector<double> w = widen(W, N * K);
  std::vector<double> out(rows * N, 0.0);
  kernels::gemm_f64_nt(rows, N, K, x.data(), K, w.data(), K, out.data(), N);
  if (bias)
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < N; ++c) out[r * N + c] += double(bias[c]);
  return out;
}

// Rope on each head of a row (heads x D) at position pos: HF's
// x * cos + rotate_half(x) * sin, or GPT-J's pairs, on the first R dims.
void rope_row(double* x, std::size_t heads, std::size_t D, const RopeSpec& spec,
              const RopeFrequencies& f, const std::int64_t pos[3]) {
  const std::size_t R = std::size_t(spec.rotary_dim), half = R / 2;
  for (std::size_t h = 0; h < heads; ++h) {
    double* v = x + h * D;
    for (std::size_t i = 0; i < half; ++i) {
      // mrope: frequency i turns at its row's position (row_of), else pos[0].
      const double angle = double(pos[f.row_of.empty() ? 0 : f.row_of[i]]) * f.inv_freq[i];
      const double c = std::cos(angle) * f.attention_factor;
      const double s = std::sin(angle) * f.attention_factor;
      const std::size_t ia = spec.style == RopeStyle::half ? i : 2 * i;
      const std::size_t ib = spec.style == RopeStyle::half ? i + half : 2 * i + 1;
      const double a = v[ia], b = v[ib];
      v[ia] = a * c - b * s;
      v[ib] = b * c + a * s;
    }
  }
}

}  // namespace

std::string f64_unsupported(const Weights& w, const AttentionSpec& spec, const ForwardInputs& in) {
  if (in.key || in.value) return "key_input (cross-attention)";
  if (w.mla) return "mla";
  if (!w.bias_k.data.empty()) return "bias_kv";
  if (spec.add_zero_attn) return "add_zero_attn";
  if (spec.qk_norm) return "qk_norm";
  if (spec.relative_bias) return "relative_bias";
  if (spec.gate) return "gate";
  if (spec.attn_temperature) return "attn_temperature";
  if (spec.residual_norm) return "residual_norm";
  if (spec.v_norm) return "v_norm";
  if (spec.clip_qkv) return "clip_qkv";
  if (spec.disentangled) return "disentangled";
  if (spec.mask_padded_queries) return "mask_padded_queries";
  if (spec.input_norm && spec.input_norm->kind != InputNormKind::none) return "input_norm";
  return "";
}

std::vector<std::size_t> evenly_spaced_rows(std::size_t L, std::size_t N) {
  std::vector<std::size_t> rows;
  if (N == 0 || N >= L) {
    for (std::size_t i = 0; i < L; ++i) rows.push_back(i);
    return rows;
  }
  for (std::size_t k = 0; k < N; ++k) {
    const std::size_t i = N == 1 ? L - 1 : (k * (L - 1) + (N - 1) / 2) / (N - 1);
    if (rows.empty() || rows.back() != i) rows.push_back(i);
  }
  return rows;
}

F64Rows attention_rows_f64(const Weights& w, const AttentionSpec& spec, const ForwardInputs& in,
                           std::size_t b, const std::vector<std::size_t>& rows, int threads) {
  const Geometry g = w.geometry();
  const std::size_t L = in.x->shape[1], C = g.C, H = g.H, D = g.D, n = rows.size();
  const std::size_t T = L, KV = g.kv_rows();
  kernels::BlasThreads blas(std::max(threads, 1));

  // 1. q of the n rows, k and v of every position (self-attention).
  const std::vector<double> x = widen(in.x->ptr() + b * L * C, L * C);  // (L, C)
  std::vector<double> xq(n * C);
  for (std::size_t k = 0; k < n; ++k)
    std::copy(x.begin() + std::ptrdiff_t(rows[k] * C),
              x.begin() + std::ptrdiff_t((rows[k] + 1) * C), xq.begin() + std::ptrdiff_t(k * C));
  const float* bias = w.b_qkv.data.empty() ? nullptr : w.b_qkv.ptr();
  std::vector<double> q = project(xq, n, C, w.q_weight().data, g.q_rows(), bias);  // (n, H*D)
  std::vector<double> key = project(x, T, C, w.k_weight().data, KV,
                                    bias ? bias + g.k_row0() : nullptr);  // (T, Hkv*D)
  const std::vector<double> v = project(x, T, C, w.v_weight().data, KV,
                                        bias ? bias + g.v_row0() : nullptr);  // (T, Hkv*D)

  // 2. positions: rope on q and k at each token's position.
  const auto position = [&](std::size_t i) {
    return in.positions ? in.positions->data[b * L + i] : std::int64_t(i);
  };
  // A token's three mrope rows (time, height, width); one row: all three the same.
  const auto rope_position = [&](std::size_t i) {
    const std::size_t stride = in.positions ? in.positions->row_stride() : 0;
    const std::int64_t p = position(i);
    if (!stride) return std::array<std::int64_t, 3>{p, p, p};
    const std::int64_t* at = in.positions->data.data() + b * L + i;
    return std::array<std::int64_t, 3>{at[0], at[stride], at[2 * stride]};
  };
  if (spec.rope) {
    std::int64_t max_pos = std::int64_t(L) - 1;  // as forward's run_frequencies
    if (in.positions)
      max_pos = *std::max_element(in.positions->data.begin(), in.positions->data.end());
    RopeSpec exact = *spec.rope;  // float64 angles whatever the run's rope.precision
    exact.precision = RopePrecision::float64;
    const RopeFrequencies f = rope_frequencies(exact, max_pos + 1);
    for (std::size_t k = 0; k < n; ++k)
      rope_row(q.data() + k * g.q_rows(), H, D, *spec.rope, f, rope_position(rows[k]).data());
    for (std::size_t j = 0; j < T; ++j)
      rope_row(key.data() + j * KV, g.Hkv, D, *spec.rope, f, rope_position(j).data());
  }

  // 3-8. scores, masks, softmax (with the sink), y = P v per head.
  F64Rows out;
  out.attention.assign(H * n * T, 0.0);
  std::vector<double> y(n * g.q_rows(), 0.0), s(T);
  const std::uint8_t* pad = in.key_padding ? in.key_padding->data.data() + b * T : nullptr;
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t kv = g.kv_head(h);
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t i = rows[k];
      const double* qi = q.data() + k * g.q_rows() + h * D;
      double m = spec.sinks ? double(w.sinks.data[h]) : kNegInf;
      bool any = false;
      for (std::size_t j = 0; j < T; ++j) {
        const double* kj = key.data() + j * KV + kv * D;
        double dot = 0.0;
        for (std::size_t d = 0; d < D; ++d) dot += qi[d] * kj[d];
        double sc = dot * spec.scale;
        if (spec.softcap) sc = *spec.softcap * std::tanh(sc / *spec.softcap);
        if (spec.alibi) sc += spec.alibi->slopes[h] * double(position(j) - position(i));
        bool allowed = true;
        if (in.attn_mask) {
          if (in.attn_mask->additive)
            sc += double(in.attn_mask->add_row(b, h, i)[j]);
          else
            allowed = !in.attn_mask->blocked_row(b, h, i)[j];
        }
        if (spec.causal && j > i) allowed = false;
        if (spec.sliding_window) {
          const std::size_t W = std::size_t(*spec.sliding_window);
          if (j + W <= i) allowed = false;
          if (!spec.causal && j >= i + W) allowed = false;
        }
        if (spec.attention_chunk) {
          const std::size_t c = std::size_t(*spec.attention_chunk);
          if (i / c != j / c) allowed = false;
        }
        if (pad && pad[j]) allowed = false;
        s[j] = allowed ? sc : kNegInf;
        if (s[j] != kNegInf) any = true;
        m = std::max(m, s[j]);
      }
      if (!any) continue;  // every key masked: zero weights and output
      double z = spec.sinks ? std::exp(double(w.sinks.data[h]) - m) : 0.0;
      for (std::size_t j = 0; j < T; ++j) z += s[j] == kNegInf ? 0.0 : std::exp(s[j] - m);
      double* p = out.attention.data() + (h * n + k) * T;
      double* yk = y.data() + k * g.q_rows() + h * D;
      for (std::size_t j = 0; j < T; ++j) {
        p[j] = s[j] == kNegInf ? 0.0 : std::exp(s[j] - m) / z;
        if (p[j] == 0.0) continue;
        const double* vj = v.data() + j * KV + kv * D;
        for (std::size_t d = 0; d < D; ++d) yk[d] += p[j] * vj[d];
      }
    }
  }

  // 9. out = y Wo^T + bo.
  if (w.has_out_proj) {
    out.context = project(y, n, g.q_rows(), w.w_out.ptr(), g.O,
                          w.b_out.data.empty() ? nullptr : w.b_out.ptr());
  } else {
    out.context = y;
  }
  return out;
}

}  // namespace attn

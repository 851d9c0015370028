#include "reference.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace attn::ref {

// The whole map: every query row of every batch row through attention_rows.
Result attention(const Weights& w, const Tensor& x, const Mask* key_padding, double scale,
                 bool causal) {
  const std::size_t B = x.shape[0], S = x.shape[1], H = w.H;
  std::vector<std::size_t> all_rows(S);
  std::iota(all_rows.begin(), all_rows.end(), 0);
  Result r;
  r.attention = Tensor({B, H, S, S});
  for (std::size_t b = 0; b < B; ++b) {
    const Result rb = attention_rows(w, x, key_padding, scale, causal, b, all_rows);
    const std::size_t width = rb.context.shape[1];  // O, or H*D without out_proj
    if (b == 0) r.context = Tensor({B, S, width});
    std::copy(rb.context.data.begin(), rb.context.data.end(), r.context.data.begin() + b * S * width);
    // (H, S, S) of batch row b is contiguous in (B, H, S, S).
    std::copy(rb.attention.data.begin(), rb.attention.data.end(),
              r.attention.data.begin() + b * H * S * S);
    r.fully_masked_rows += rb.fully_masked_rows;
  }
  return r;
}

Result attention_rows(const Weights& w, const Tensor& x, const Mask* key_padding, double scale,
                      bool causal, std::size_t b, const std::vector<std::size_t>& rows) {
  const std::size_t S = x.shape[1], C = x.shape[2];
  const std::size_t H = w.H, D = w.D, HD = H * D, O = w.O, n = rows.size();
  // out[s][j] = sum_c x[b,s,c] * Wqkv[part*HD + j, c] + bqkv[part*HD + j]   (torch.nn.Linear)
  auto project = [&](std::size_t s, std::size_t part, std::vector<double>& out) {
    for (std::size_t j = 0; j < HD; ++j) {
      const std::size_t r = part * HD + j;
      double acc = w.b_qkv.empty() ? 0.0 : w.b_qkv.data[r];
      for (std::size_t c = 0; c < C; ++c)
        acc += double(x.data[(b * S + s) * C + c]) * w.w_qkv.data[r * C + c];
      out[j] = acc;
    }
  };
  std::vector<double> k(S * HD), v(S * HD), row(HD);
  for (std::size_t s = 0; s < S; ++s) {
    project(s, 1, row);
    std::copy(row.begin(), row.end(), k.begin() + s * HD);
    project(s, 2, row);
    std::copy(row.begin(), row.end(), v.begin() + s * HD);
  }
  Result r;
  r.attention = Tensor({H, n, S});
  Tensor y({n, HD});
  std::vector<double> q(HD);
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t i = rows[t];
    project(i, 0, q);
    for (std::size_t h = 0; h < H; ++h) {
      std::vector<double> p(S, 0.0);
      std::vector<bool> allowed(S);
      double mx = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < S; ++j) {
        allowed[j] = !(causal && j > i) && !(key_padding && key_padding->data[b * S + j]);
        if (!allowed[j]) continue;
        double dot = 0.0;
        for (std::size_t d = 0; d < D; ++d) dot += q[h * D + d] * k[j * HD + h * D + d];
        p[j] = dot * scale;
        mx = std::max(mx, p[j]);
      }
      double sum = 0.0;
      for (std::size_t j = 0; j < S; ++j) {
        p[j] = allowed[j] ? std::exp(p[j] - mx) : 0.0;
        sum += p[j];
      }
      if (sum == 0.0) ++r.fully_masked_rows;
      for (std::size_t j = 0; j < S; ++j) {
        p[j] = sum > 0.0 ? p[j] / sum : 0.0;
        r.attention.data[(h * n + t) * S + j] = float(p[j]);
      }
      for (std::size_t d = 0; d < D; ++d) {
        double acc = 0.0;
        for (std::size_t j = 0; j < S; ++j) acc += p[j] * v[j * HD + h * D + d];
        y.data[t * HD + h * D + d] = float(acc);
      }
    }
  }
  if (!w.has_out_proj) {
    r.context = y;
    return r;
  }
  r.context = Tensor({n, O});
  for (std::size_t t = 0; t < n; ++t)
    for (std::size_t o = 0; o < O; ++o) {
      double acc = w.b_out.empty() ? 0.0 : w.b_out.data[o];
      for (std::size_t j = 0; j < HD; ++j) acc += double(y.data[t * HD + j]) * w.w_out.data[o * HD + j];
      r.context.data[t * O + o] = float(acc);
    }
  return r;
}

}  // namespace attn::ref

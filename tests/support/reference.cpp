#include "reference.h"

#include <cmath>
#include <limits>
#include <vector>

namespace attn::ref {

Result attention(const Weights& w, const Tensor& x, const Mask* key_padding, double scale,
                 bool causal) {
  const std::size_t B = x.shape[0], S = x.shape[1], C = x.shape[2];
  const std::size_t H = w.H, D = w.D, HD = H * D, O = w.O;
  Result r;
  r.attention = Tensor({B, H, S, S});
  Tensor y({B, S, HD});  // concatenated head outputs

  for (std::size_t b = 0; b < B; ++b) {
    // qkv[s][j] = sum_c x[b,s,c] * Wqkv[j,c] + bqkv[j]   (torch.nn.Linear)
    std::vector<double> qkv(S * 3 * HD);
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t j = 0; j < 3 * HD; ++j) {
        double acc = w.b_qkv.empty() ? 0.0 : w.b_qkv.data[j];
        for (std::size_t c = 0; c < C; ++c)
          acc += double(x.data[(b * S + s) * C + c]) * w.w_qkv.data[j * C + c];
        qkv[s * 3 * HD + j] = acc;
      }
    auto q = [&](std::size_t s, std::size_t h, std::size_t d) { return qkv[s * 3 * HD + h * D + d]; };
    auto k = [&](std::size_t s, std::size_t h, std::size_t d) { return qkv[s * 3 * HD + HD + h * D + d]; };
    auto v = [&](std::size_t s, std::size_t h, std::size_t d) { return qkv[s * 3 * HD + 2 * HD + h * D + d]; };

    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t i = 0; i < S; ++i) {
        std::vector<double> p(S, 0.0);
        std::vector<bool> allowed(S);
        double mx = -std::numeric_limits<double>::infinity();
        for (std::size_t j = 0; j < S; ++j) {
          allowed[j] = !(causal && j > i) && !(key_padding && key_padding->data[b * S + j]);
          if (!allowed[j]) continue;
          double dot = 0.0;
          for (std::size_t d = 0; d < D; ++d) dot += q(i, h, d) * k(j, h, d);
          p[j] = dot * scale;
          mx = std::max(mx, p[j]);
        }
        double sum = 0.0;
        for (std::size_t j = 0; j < S; ++j) {
          p[j] = allowed[j] ? std::exp(p[j] - mx) : 0.0;
          sum += p[j];
        }
        if (sum == 0.0) ++r.fully_masked_rows;  // every key masked: zeros, not NaN
        for (std::size_t j = 0; j < S; ++j) {
          p[j] = sum > 0.0 ? p[j] / sum : 0.0;
          r.attention.data[((b * H + h) * S + i) * S + j] = float(p[j]);
        }
        for (std::size_t d = 0; d < D; ++d) {
          double acc = 0.0;
          for (std::size_t j = 0; j < S; ++j) acc += p[j] * v(j, h, d);
          y.data[(b * S + i) * HD + h * D + d] = float(acc);
        }
      }
  }

  if (!w.has_out_proj) {
    r.context = y;
    return r;
  }
  r.context = Tensor({B, S, O});
  for (std::size_t t = 0; t < B * S; ++t)
    for (std::size_t o = 0; o < O; ++o) {
      double acc = w.b_out.empty() ? 0.0 : w.b_out.data[o];
      for (std::size_t j = 0; j < HD; ++j) acc += double(y.data[t * HD + j]) * w.w_out.data[o * HD + j];
      r.context.data[t * O + o] = float(acc);
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

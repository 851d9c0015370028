// residual_norm (forward/stages.h apply_residual_norm): after the output
// projection, each row r of the context becomes
//   h = out[r] + x[r]                                  (C), the residual add in float32
//   out[r] = (h - mean(h)) / sqrt(var(h) + eps) * w + b (biased variance)
// as modeling_bert.BertSelfOutput: LayerNorm(dropout(dense(h)) + input_tensor)
// (dropout off at inference); torch.nn.LayerNorm over the last dimension.
// Mean and variance accumulate in double (torch's float accumulation agrees
// within float32 rounding).
//
// Letters: C hidden (= O, the output projection's width).
#include <cmath>
#include <vector>

#include "forward/stages.h"

namespace attn::detail {

void apply_residual_norm(const Weights& w, double eps, const float* x, float* out,
                         std::size_t rows) {
  const std::size_t C = std::size_t(w.C);
  const float* gamma = w.residual_norm_weight.ptr();
  const float* beta = w.residual_norm_bias.data.empty() ? nullptr : w.residual_norm_bias.ptr();
  std::vector<float> h(C);
  for (std::size_t r = 0; r < rows; ++r) {
    float* o = out + r * C;
    const float* xr = x + r * C;
    double sum = 0.0;
    for (std::size_t c = 0; c < C; ++c) {
      h[c] = o[c] + xr[c];
      sum += h[c];
    }
    const double mean = sum / double(C);
    double sq = 0.0;
    for (std::size_t c = 0; c < C; ++c) {
      const double d = double(h[c]) - mean;
      sq += d * d;
    }
    const double rstd = 1.0 / std::sqrt(sq / double(C) + eps);
    for (std::size_t c = 0; c < C; ++c) {
      const double y = (double(h[c]) - mean) * rstd * double(gamma[c]);
      o[c] = static_cast<float>(beta ? y + double(beta[c]) : y);
    }
  }
}

}  // namespace attn::detail

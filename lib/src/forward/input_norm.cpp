// input_norm (forward/stages.h apply_input_norm): the block's pre-attention
// norm of each input row, before the projections, as transformers computes it
// in float32:
//   rms    y = x * rsqrt(mean(x^2) + eps), then y * (offset + w)
//          (LlamaRMSNorm: weight * (x * rsqrt(var + eps)); Gemma's
//          GemmaRMSNorm: output * (1.0 + weight); T5LayerNorm: no mean subtracted)
//   layer  (x - mean(x)) * rsqrt(var(x) + eps) * w (+ b)   (nn.LayerNorm, biased var)
// Then times the multiplier in float32 when it is not 1 (Falcon-H1).
// Sums accumulate in double (torch's float accumulation agrees within float32
// rounding); each product is rounded to float32 as torch's float32 ops are.
//
// Letters: C hidden.
#include <cmath>

#include "forward/stages.h"

namespace attn::detail {

Tensor apply_input_norm(const Weights& w, const InputNormSpec& n, const Tensor& x) {
  const std::size_t C = x.shape.back(), rows = x.size() / C;
  Tensor out(x.shape);
  const float* gamma = w.input_norm_weight.ptr();
  const float* beta = w.input_norm_bias.data.empty() ? nullptr : w.input_norm_bias.ptr();
  const float offset = static_cast<float>(n.offset);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x.ptr() + r * C;
    float* o = out.ptr() + r * C;
    if (n.kind == InputNormKind::rms) {
      double sq = 0.0;
      for (std::size_t c = 0; c < C; ++c) sq += double(xr[c]) * double(xr[c]);
      const float rstd = static_cast<float>(1.0 / std::sqrt(float(sq / double(C)) + n.eps));
      for (std::size_t c = 0; c < C; ++c) o[c] = (xr[c] * rstd) * (offset + gamma[c]);
      continue;
    }
    double sum = 0.0;
    for (std::size_t c = 0; c < C; ++c) sum += xr[c];
    const double mean = sum / double(C);
    double sq = 0.0;
    for (std::size_t c = 0; c < C; ++c) {
      const double d = double(xr[c]) - mean;
      sq += d * d;
    }
    const double rstd = 1.0 / std::sqrt(sq / double(C) + n.eps);
    for (std::size_t c = 0; c < C; ++c) {
      const double y = (double(xr[c]) - mean) * rstd * double(offset + gamma[c]);
      o[c] = static_cast<float>(beta ? y + double(beta[c]) : y);
    }
  }
  if (n.multiplier != 1.0) {
    const float m = static_cast<float>(n.multiplier);
    for (float& v : out.data) v *= m;
  }
  return out;
}

}  // namespace attn::detail

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
// Rows in blocks on the workers; in place where the caller lent the input's
// rows (forward.cpp).
//
// Letters: C hidden.
#include <algorithm>
#include <cmath>

#include "forward/stages.h"
#include "kernels/kernels.h"

namespace attn::detail {
namespace {

// Rows per task: a 4096-wide row is 16 KiB, so a task reads and writes 1 MiB.
constexpr std::size_t kRowsPerTask = 64;

// sum_c f(x[c]) in double, in eight chains (one chain of 4096 dependent adds
// took 2-3 times what reading the row costs).
template <class F>
double row_sum(const float* x, std::size_t C, F f) {
  double s[8] = {};
  std::size_t c = 0;
  for (; c + 8 <= C; c += 8)
    for (std::size_t k = 0; k < 8; ++k) s[k] += f(x[c + k]);
  for (; c < C; ++c) s[0] += f(x[c]);
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// One row; o may be x (x[c] is read before o[c] is written).
void norm_row(const InputNormSpec& n, const float* gamma, const float* beta, float offset,
              float multiplier, const float* x, float* o, std::size_t C) {
  if (n.kind == InputNormKind::rms) {
    const double sq = row_sum(x, C, [](float v) { return double(v) * double(v); });
    const float rstd = static_cast<float>(1.0 / std::sqrt(float(sq / double(C)) + n.eps));
    for (std::size_t c = 0; c < C; ++c) o[c] = (x[c] * rstd) * (offset + gamma[c]);
  } else {
    const double mean = row_sum(x, C, [](float v) { return double(v); }) / double(C);
    const double sq = row_sum(x, C, [mean](float v) {
      const double d = double(v) - mean;
      return d * d;
    });
    const double rstd = 1.0 / std::sqrt(sq / double(C) + n.eps);
    for (std::size_t c = 0; c < C; ++c) {
      const double y = (double(x[c]) - mean) * rstd * double(offset + gamma[c]);
      o[c] = static_cast<float>(beta ? y + double(beta[c]) : y);
    }
  }
  if (multiplier != 1.0f)
    for (std::size_t c = 0; c < C; ++c) o[c] *= multiplier;
}

}  // namespace

void apply_input_norm(const Weights& w, const InputNormSpec& n, const float* x, float* out,
                      std::size_t rows, std::size_t C, int threads) {
  const float* gamma = w.input_norm_weight.ptr();
  const float* beta = w.input_norm_bias.data.empty() ? nullptr : w.input_norm_bias.ptr();
  const float offset = static_cast<float>(n.offset);
  const float multiplier = static_cast<float>(n.multiplier);
  kernels::parallel_row_blocks(rows, kRowsPerTask, threads, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r)
      norm_row(n, gamma, beta, offset, multiplier, x + r * C, out + r * C, C);
  });
}

const Tensor* input_norm_stage(const Weights& w, const AttentionSpec& spec, const Tensor& x,
                               Tensor& context, Tensor& normed, int threads) {
  if (!spec.input_norm || spec.input_norm->kind == InputNormKind::none) return &x;
  const std::size_t C = x.shape.back(), rows = x.size() / C;
  if (&x == &context && w.geometry().O == C && !spec.residual_norm) {
    apply_input_norm(w, *spec.input_norm, context.ptr(), context.ptr(), rows, C, threads);
    return &context;
  }
  normed = Tensor(x.shape);
  apply_input_norm(w, *spec.input_norm, x.ptr(), normed.ptr(), rows, C, threads);
  return &normed;
}

}  // namespace attn::detail

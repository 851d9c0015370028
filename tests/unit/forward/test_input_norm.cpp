// input_norm in the forward pass: the block's pre-attention norm of each input
// row (RMSNorm, LayerNorm with bias), checked against the forward pass without
// it on rows normed here in double, across the forward pass's chunks of batch
// rows (L = 600: one batch row a chunk, so B = 3 runs three) and with the
// output projection square (the context then takes the normed rows' buffer:
// each chunk's rows must be projected before its context rows overwrite them)
// and not (O != C), with the input's rows lent to the context (normed in
// place) and not.
//
// Letters: B batch, S sequence, C hidden, H heads, D head size, O out features.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attn/attention.h"
#include "test_util.h"

using namespace attn;

namespace {

Tensor scaled(Tensor t, double by, double plus = 0.0) {
  for (float& v : t.data) v = float(v * by + plus);
  return t;
}

Weights layer(std::size_t C, std::size_t H, std::size_t O, unsigned seed) {
  Weights w;
  w.C = std::int64_t(C), w.H = std::int64_t(H), w.D = std::int64_t(C / H), w.O = std::int64_t(O);
  w.w_qkv = scaled(test::random_tensor({3 * C, C}, seed), 2.0 / std::sqrt(double(C)));
  w.w_out = scaled(test::random_tensor({O, C}, seed + 1), 1.0 / std::sqrt(double(C)));
  w.input_norm_weight = scaled(test::random_tensor({C}, seed + 2), 0.3, 1.0);
  w.input_norm_bias = scaled(test::random_tensor({C}, seed + 3), 0.3);
  return w;
}

// The norm of each row of x in double: rms x / sqrt(mean(x^2) + eps) * w, or
// layer (x - mean) / sqrt(var + eps) * w + b.
Tensor normed_rows(const Tensor& x, const Weights& w, bool layer_norm, double eps) {
  const std::size_t C = x.shape.back(), rows = x.size() / C;
  Tensor y = x;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* v = x.ptr() + r * C;
    double mean = 0.0, ss = 0.0;
    if (layer_norm) {
      for (std::size_t c = 0; c < C; ++c) mean += v[c];
      mean /= double(C);
    }
    for (std::size_t c = 0; c < C; ++c) ss += (v[c] - mean) * (v[c] - mean);
    const double inv = 1.0 / std::sqrt(ss / double(C) + eps);
    for (std::size_t c = 0; c < C; ++c)
      y.data[r * C + c] = float((v[c] - mean) * inv * w.input_norm_weight.data[c] +
                                (layer_norm ? double(w.input_norm_bias.data[c]) : 0.0));
  }
  return y;
}

}  // namespace

TEST_CASE("input_norm: the forward pass on the normed rows, chunk by chunk, O = C and O != C") {
  const std::size_t B = 3, S = 600, H = 4;
  // C = 20: rows whose width is not a whole number of the sums' eight chains.
  for (const std::size_t C : {std::size_t(16), std::size_t(20)}) {
    const Tensor x = scaled(test::random_tensor({B, S, C}, 5), 2.0, 0.5);
    for (const std::size_t O : {C, std::size_t(24)})
      for (const bool layer_norm : {false, true})
        for (const bool lent : {false, true}) {
          if (lent && O != C) continue;
          CAPTURE(C);
          CAPTURE(O);
          CAPTURE(layer_norm);
          CAPTURE(lent);
          const Weights w = layer(C, H, O, 11);
          const AttentionSpec plain = AttentionSpec::plain(0.5f, true);
          AttentionSpec with_norm = plain;
          with_norm.input_norm = InputNormSpec{};
          with_norm.input_norm->kind = layer_norm ? InputNormKind::layer : InputNormKind::rms;
          with_norm.input_norm->eps = 1e-5;
          Tensor want, got;
          forward(w, plain, normed_rows(x, w, layer_norm, 1e-5), nullptr, want, {});
          if (lent) {  // the input's rows lent to the context, as attn-run's runs lend them
            got = x;
            ForwardInputs in;
            in.x = &got;
            forward(w, with_norm, in, got, {});
          } else {
            forward(w, with_norm, x, nullptr, got, {});
          }
          REQUIRE(got.shape == std::vector<std::size_t>{B, S, O});
          double worst = 0.0;
          for (std::size_t i = 0; i < got.size(); ++i)
            worst = std::max(worst, double(std::fabs(got.data[i] - want.data[i])));
          CHECK(worst < 2e-5);
        }
  }
}

// residual_norm in the forward pass: context =
// LayerNorm(o_proj(y) + x) with Weights::residual_norm_weight and _bias, as
// modeling_bert.BertSelfOutput, checked against the forward pass without it
// followed by a LayerNorm written here in double; on both kernels, across the
// forward pass's chunks of batch rows (context_done sees the normed rows), and
// its refusals (a key input, O != C, weights of the wrong size).
//
// Letters: B batch, S sequence, C hidden, H heads, D head size.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "attn/attention.h"
#include "attn/error.h"
#include "expect_error.h"
#include "test_util.h"

using namespace attn;

namespace {

Tensor shrink(Tensor t, double by) {
  for (float& v : t.data) v = float(v * by);
  return t;
}

// A BERT-like layer: C = H * D, q/k/v and output projections with biases, and
// a LayerNorm weight near 1 and bias near 0.
Weights bert_layer(std::size_t C, std::size_t H, unsigned seed) {
  Weights w;
  w.C = std::int64_t(C);
  w.H = std::int64_t(H);
  w.D = std::int64_t(C / H);
  w.O = std::int64_t(C);
  w.w_qkv = shrink(test::random_tensor({3 * C, C}, seed), 2.0 / std::sqrt(double(C)));
  w.b_qkv = shrink(test::random_tensor({3 * C}, seed + 1), 0.5);
  w.w_out = shrink(test::random_tensor({C, C}, seed + 2), 1.0 / std::sqrt(double(C)));
  w.b_out = shrink(test::random_tensor({C}, seed + 3), 0.5);
  w.residual_norm_weight = shrink(test::random_tensor({C}, seed + 4), 0.3);
  for (float& v : w.residual_norm_weight.data) v += 1.0f;
  w.residual_norm_bias = shrink(test::random_tensor({C}, seed + 5), 0.3);
  return w;
}

// torch.nn.functional.layer_norm(out + x, (C,), weight, bias, eps) in double.
Tensor layer_norm_of_sum(const Tensor& out, const Tensor& x, const Weights& w, double eps) {
  const std::size_t C = out.shape.back(), rows = out.size() / C;
  Tensor y = out;
  for (std::size_t r = 0; r < rows; ++r) {
    std::vector<double> h(C);
    double mean = 0.0, var = 0.0;
    for (std::size_t c = 0; c < C; ++c)
      mean += h[c] = double(out.data[r * C + c]) + x.data[r * C + c];
    mean /= double(C);
    for (std::size_t c = 0; c < C; ++c) var += (h[c] - mean) * (h[c] - mean);
    var /= double(C);
    for (std::size_t c = 0; c < C; ++c) {
      const double b = w.residual_norm_bias.data.empty() ? 0.0 : w.residual_norm_bias.data[c];
      y.data[r * C + c] =
          float((h[c] - mean) / std::sqrt(var + eps) * w.residual_norm_weight.data[c] + b);
    }
  }
  return y;
}

double max_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape == b.shape);
  double d = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    d = std::max(d, std::fabs(double(a.data[i]) - b.data[i]));
  return d;
}

}  // namespace

TEST_CASE("residual_norm: LayerNorm(o_proj + x) on both kernels, every chunk") {
  // B * S past the forward pass's chunk of 1024 rows: the later chunks' rows
  // read their own inputs (b0 > 0).
  for (const auto& [B, S] : std::vector<std::pair<std::size_t, std::size_t>>{{2, 7}, {300, 5}}) {
    CAPTURE(B);
    const std::size_t C = 16, H = 4;
    Weights w = bert_layer(C, H, 11);
    const Tensor x = test::random_tensor({B, S, C}, 99);
    for (bool with_bias : {true, false}) {
      if (!with_bias) w.residual_norm_bias = Tensor{};
      for (bool maps : {false, true}) {
        CAPTURE(maps);
        TensorSink sink(B, H, S);
        ForwardOptions opt;
        opt.threads = 2;
        if (maps) opt.attention = &sink;
        AttentionSpec plain = AttentionSpec::plain(float(1.0 / std::sqrt(4.0)), false);
        Tensor ctx;
        forward(w, plain, x, nullptr, ctx, opt);
        AttentionSpec normed = plain;
        normed.residual_norm = ResidualNormSpec{1e-12, ""};
        Tensor got;
        std::size_t rows_done = 0;
        opt.context_done = [&](std::size_t b0, std::size_t nb) {
          // The rows handed out are final: already normed (mean about beta's).
          CHECK(b0 * S == rows_done);
          rows_done += nb * S;
        };
        forward(w, normed, x, nullptr, got, opt);
        CHECK(rows_done == B * S);
        const Tensor want = layer_norm_of_sum(ctx, x, w, 1e-12);
        CHECK(max_diff(got, want) <= 1e-5);
        CHECK(max_diff(got, ctx) > 0.1);  // it did something
      }
    }
  }
  // eps counts: a constant row (zero variance) is beta, not NaN.
  Weights w = bert_layer(8, 2, 5);
  Tensor zero_x({1, 3, 8});
  AttentionSpec spec = AttentionSpec::plain(0.5f, false);
  spec.residual_norm = ResidualNormSpec{1e-5, ""};
  w.w_out = Tensor({8, 8});
  w.b_out = Tensor({8});
  Tensor got;
  forward(w, spec, zero_x, nullptr, got, {});
  for (std::size_t i = 0; i < got.size(); ++i)
    CHECK(got.data[i] == doctest::Approx(w.residual_norm_bias.data[i % 8]));
}

TEST_CASE("residual_norm: self-attention with O == C and (C) weights only") {
  const std::size_t C = 8, H = 2;
  AttentionSpec spec = AttentionSpec::plain(0.5f, false);
  spec.residual_norm = ResidualNormSpec{1e-12, ""};
  const Tensor x = test::random_tensor({1, 3, C}, 3);
  Tensor out;
  {
    const Weights w = bert_layer(C, H, 1);
    ForwardInputs in;
    in.x = &x;
    in.key = &x;
    test::expect_error([&] { forward(w, spec, in, out, {}); }, Exit::config,
                       "residual_norm: needs self-attention");
  }
  {
    Weights w = bert_layer(C, H, 1);
    w.O = 4;
    w.w_out = Tensor({4, C});
    w.b_out = Tensor({4});
    test::expect_error([&] { forward(w, spec, x, nullptr, out, {}); }, Exit::config,
                       "residual_norm: adds the input (8 features) to the output projection's 4");
  }
  {
    Weights w = bert_layer(C, H, 1);
    w.residual_norm_weight = Tensor({4});
    test::expect_error([&] { forward(w, spec, x, nullptr, out, {}); }, Exit::data,
                       "residual_norm: expected LayerNorm weight and bias (8)");
  }
}

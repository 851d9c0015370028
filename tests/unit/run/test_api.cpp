// The xtensor API (attn/api.h): PyTorch's golden numbers through it, weights
// viewed in place, any xtensor expression as input, masks, errors.
//
// Letters: B batch, S sequence, C hidden, H heads, O out size.
#include <doctest/doctest.h>

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "attn/api.h"
#include "attn/npy.h"
#include "expect_error.h"
#include "test_util.h"

using attn::test::expect_error;

namespace attn {
namespace {

template <class E>
Tensor to_tensor(const xt::xexpression<E>& x) {
  const auto& e = x.derived_cast();
  Tensor t(std::vector<std::size_t>(e.shape().begin(), e.shape().end()));
  std::copy(e.begin(), e.end(), t.data.begin());
  return t;
}

Tensor golden(const std::string& path) {
  return to_float32(read_npy(test::source_path(path)), path, false);
}

TEST_CASE("api: a golden case through the xtensor API gives PyTorch's context and maps") {
  const std::string dir = "tests/golden/cases/fused_causal_C16H4_bias_right_S5_ctx9/";
  const Example ex = load_example(test::source_path(dir + "config.json"));
  REQUIRE(ex.key_padding.has_value());
  RunSpec spec;
  spec.key_padding = ex.key_padding;
  spec.maps = true;
  const auto [context, maps, masked] = run_attention(ex.layer, ex.x, spec);
  const test::Diff dc = test::compare(to_tensor(context), golden(dir + "expected/context.npy"));
  INFO("context: " << test::describe(dc));
  CHECK(dc.shape_ok);
  CHECK(dc.relative() <= 1e-5);
  REQUIRE(maps.has_value());
  const test::Diff dm = test::compare(to_tensor(*maps), golden(dir + "expected/attention.npy"));
  INFO("maps: " << test::describe(dm));
  CHECK(dm.shape_ok);
  CHECK(dm.max_abs <= 1e-5);
  CHECK(masked == 0);
}

TEST_CASE("api: the README's tutorial numbers, and the same without maps") {
  const Example ex = load_example(test::source_path("configs/raschka_mha_causal.json"));
  REQUIRE(ex.x.shape() == std::array<std::size_t, 3>{2, 6, 3});
  const Output out = run_attention(ex.layer, ex.x);
  CHECK_FALSE(out.maps.has_value());
  REQUIRE(out.context.shape() == std::array<std::size_t, 3>{2, 6, 2});
  // Raschka's notebook prints tensor([[[0.3190, 0.4858], ... [0.2575, 0.4028]], ...
  CHECK(out.context(0, 0, 0) == doctest::Approx(0.3190).epsilon(2e-4));
  CHECK(out.context(0, 0, 1) == doctest::Approx(0.4858).epsilon(2e-4));
  CHECK(out.context(1, 5, 0) == doctest::Approx(0.2575).epsilon(2e-4));
  CHECK(out.context(1, 5, 1) == doctest::Approx(0.4028).epsilon(2e-4));

  // Any expression is an input: one sequence as a view, unbatched (S, C).
  const Output one = run_attention(ex.layer, xt::view(ex.x, 1));
  REQUIRE(one.context.shape() == std::array<std::size_t, 3>{1, 6, 2});
  CHECK(xt::amax(xt::abs(xt::view(one.context, 0) - xt::view(out.context, 1)))() <= 1e-6f);
}

TEST_CASE("api: load_layer and load_input give what load_example gives") {
  const std::string config = test::source_path("configs/raschka_mha_causal.json");
  const Example ex = load_example(config);
  const Layer layer = load_layer(config);
  CHECK(layer.source == ex.layer.source);
  CHECK(layer.layout == Layout::separate);
  CHECK(layer.w_qkv() == ex.layer.w_qkv());
  CHECK(layer.b_out() == ex.layer.b_out());
  CHECK(load_input(layer, test::source_path("data/sentence_batch.npy")) == ex.x);
  // An (S, C) file becomes (1, S, C): the first sentence of the batch.
  const Array<3> one = load_input(layer, test::source_path("data/sentence.npy"));
  REQUIRE(one.shape() == std::array<std::size_t, 3>{1, 6, 3});
  CHECK(xt::view(one, 0) == xt::view(ex.x, 0));
  expect_error([&] { load_input(layer, test::source_path("data/sentence_c8.npy")); }, Exit::data,
               test::source_path("data/sentence_c8.npy"));
}

TEST_CASE("api: weights are views of the layer, and writing them changes the run") {
  Example ex = load_example(test::source_path("configs/raschka_mha_causal.json"));
  Layer& layer = ex.layer;
  const std::size_t H = 2, D = 1, C = 3, O = 2;
  CHECK(layer.w_qkv().shape() == std::array<std::size_t, 2>{3 * H * D, C});
  CHECK(layer.b_qkv().size() == 0);  // qkv_bias false
  CHECK(layer.w_out().shape() == std::array<std::size_t, 2>{O, H * D});
  CHECK(layer.b_out().shape() == std::array<std::size_t, 1>{O});
  CHECK(layer.w_qkv().data() == layer.weights.w_qkv.ptr());  // no copy
  CHECK(layer.w_qkv()(4, 2) == layer.weights.w_qkv.data[4 * C + 2]);

  // out = y Wo^T + bo: with Wo = 0 every position gives the bias.
  layer.w_out().fill(0.0f);
  layer.b_out() = xt::xtensor<float, 1>{0.5f, -2.0f};
  const Output out = run_attention(layer, ex.x);
  CHECK(xt::all(xt::equal(xt::view(out.context, xt::all(), xt::all(), 0), 0.5f)));
  CHECK(xt::all(xt::equal(xt::view(out.context, xt::all(), xt::all(), 1), -2.0f)));
}

TEST_CASE("api: a padding mask, fully padded rows and bad shapes") {
  const Example ex = load_example(test::source_path("configs/raschka_mha_causal.json"));
  RunSpec spec;
  spec.maps = true;
  spec.key_padding = xt::xtensor<bool, 2>(
      {{true, true, true, true, true, true}, {false, false, false, false, true, true}});
  const Output out = run_attention(ex.layer, ex.x, spec);
  CHECK(out.fully_masked_rows == 2 * 6);  // both heads of every row of sequence 0
  const auto& maps = *out.maps;           // (B, H, S, S)
  CHECK(xt::all(xt::equal(xt::view(maps, 0), 0.0f)));
  CHECK(xt::all(xt::equal(xt::view(maps, 1, xt::all(), xt::all(), xt::range(4, 6)), 0.0f)));
  const auto row_sums = xt::eval(xt::sum(xt::view(maps, 1), {2}));  // (H, S)
  CHECK(xt::amax(xt::abs(row_sums - 1.0f))() <= 1e-6f);

  expect_error(
      [&] {
        run_attention(ex.layer, xt::xtensor<float, 3>::from_shape({1, 6, 4}));
      },
      Exit::data, "input");
  RunSpec bad;
  bad.key_padding = xt::xtensor<bool, 2>(xt::zeros<bool>({3, 6}));  // (B, S) should be (1, 6)
  expect_error([&] { run_attention(ex.layer, ex.x, bad); }, Exit::data, "key_padding");
  expect_error([&] { load_layer(test::source_path("configs/no_such.json")); }, Exit::no_input,
               test::source_path("configs/no_such.json"));
}

}  // namespace
}  // namespace attn

// mla's tensors (DeepSeek's names, layer/mla_weights.cpp): loaded into
// Weights::mla with every key and shape checked, the errors naming the key
// and what to change, and --dump-weights writing them back.
#include <doctest/doctest.h>

#include <string>

#include "attn/config.h"
#include "attn/error.h"
#include "attn/state_dict.h"
#include "attn/weights.h"
#include "expect_error.h"
#include "test_util.h"

using namespace attn;
using attn::test::expect_error;

namespace {

// C = 16, H = 4, Rq (given or null), Rkv = 10, Dn = 8, Dr = 4, Dv = 6.
Config mla_cfg(const std::string& q_lora = "12", const std::string& extra = "") {
  return parse_config(R"({"attention": "causal", "hidden_size": 16, "num_heads": 4, "mla": {
      "q_lora_rank": )" + q_lora +
                          R"(, "kv_lora_rank": 10, "qk_nope_head_dim": 8,
      "qk_rope_head_dim": 4, "v_head_dim": 6})" +
                          extra + "}",
                      "c.json");
}

StateDict mla_state(bool low_rank_q, bool bias) {
  StateDict sd("w");
  unsigned seed = 1;
  auto add = [&](const std::string& k, std::vector<std::size_t> shape) {
    sd.add(k, test::random_tensor(shape, seed++));
  };
  if (low_rank_q) {
    add("q_a_proj.weight", {12, 16});
    if (bias) add("q_a_proj.bias", {12});
    add("q_a_layernorm.weight", {12});
    add("q_b_proj.weight", {48, 12});
  } else {
    add("q_proj.weight", {48, 16});
  }
  add("kv_a_proj_with_mqa.weight", {14, 16});
  if (bias) add("kv_a_proj_with_mqa.bias", {14});
  add("kv_a_layernorm.weight", {10});
  add("kv_b_proj.weight", {56, 10});
  add("o_proj.weight", {16, 24});
  if (bias) add("o_proj.bias", {16});
  return sd;
}

}  // namespace

TEST_CASE("weights mla: DeepSeek's tensors in, geometry, export back") {
  const StateDict sd = mla_state(true, true);
  const Weights w = load_weights(sd, mla_cfg(), Layout::proj, "w", false);
  REQUIRE(w.mla.has_value());
  CHECK(w.D == 12);
  CHECK(w.geometry().Hkv == 4);
  CHECK(w.context_width() == 24);
  CHECK(w.w_qkv.data.empty());
  CHECK(w.mla->q_b_proj.shape == std::vector<std::size_t>{48, 12});
  CHECK(w.mla->kv_a_bias.data == sd.read_f32("kv_a_proj_with_mqa.bias", false).data);
  CHECK(w.w_out.data == sd.read_f32("o_proj.weight", false).data);
  const StateDict back = export_weights(w, Layout::proj);
  CHECK(back.keys().size() == sd.keys().size());
  for (const std::string& k : sd.keys())
    CHECK_MESSAGE(back.read_f32(k, false).data == sd.read_f32(k, false).data, k);
  expect_error([&] { export_weights(w, Layout::fused); }, Exit::usage, "--layout fused",
               "own names");

  // V2-Lite: q_proj, no biases.
  const Weights lite =
      load_weights(mla_state(false, false), mla_cfg("null"), Layout::proj, "w", false);
  CHECK(lite.mla->q_proj.shape == std::vector<std::size_t>{48, 16});
  CHECK(lite.b_out.data.empty());
}

TEST_CASE("weights mla: missing, misshapen and unexpected keys name the key") {
  expect_error([] { load_weights(mla_state(false, false), mla_cfg(), Layout::proj, "w", false); },
               Exit::data, "w: missing key \"q_a_proj.weight\"", "q_lora_rank\": null");
  expect_error(
      [] { load_weights(mla_state(true, false), mla_cfg("null"), Layout::proj, "w", false); },
      Exit::data, "w: missing key \"q_proj.weight\"", "set mla \"q_lora_rank\" to 12");
  StateDict bad = mla_state(true, false);
  bad.add("kv_b_proj.weight", test::random_tensor({56, 12}, 9));
  expect_error([&] { load_weights(bad, mla_cfg(), Layout::proj, "w", false); }, Exit::data,
               "w: key \"kv_b_proj.weight\": expected shape (56, 10)", "found (56, 12)");
  StateDict extra = mla_state(true, false);
  extra.add("k_proj.weight", test::random_tensor({48, 16}, 9));
  expect_error([&] { load_weights(extra, mla_cfg(), Layout::proj, "w", false); }, Exit::data,
               "w: unexpected key \"k_proj.weight\" for mla", "kv_a_proj_with_mqa.weight");
  // DeepSeek's tensors under a config without "mla": the errors say to set it.
  const Config plain = parse_config(
      R"({"attention": "causal", "hidden_size": 16, "num_heads": 4, "head_size": 12})", "c.json");
  expect_error([] { detect_layout(mla_state(true, false), "w"); }, Exit::data,
               "w: key \"kv_a_proj_with_mqa.weight\" fits no layout", "set the config's \"mla\"");
  expect_error([&] { load_weights(mla_state(false, false), plain, Layout::proj, "w", false); },
               Exit::data, "w: missing key \"k_proj.weight\"", "set the config's \"mla\"");
  StateDict fp8 = mla_state(true, false);
  fp8.add("q_a_proj.weight_scale_inv", test::random_tensor({1, 1}, 9));
  expect_error([&] { load_weights(fp8, mla_cfg(), Layout::proj, "w", false); }, Exit::data,
               "w: key \"q_a_proj.weight_scale_inv\": FP8 block-quantized", "bf16");
  expect_error(
      [] {
        load_weights(mla_state(true, true), mla_cfg("12", R"(, "qkv_bias": false)"), Layout::proj,
                     "w", false);
      },
      Exit::data, "w: key \"q_a_proj.bias\" found but config \"qkv_bias\" is false");
  expect_error(
      [] {
        load_weights(mla_state(true, false), mla_cfg("12", R"(, "out_bias": true)"), Layout::proj,
                     "w", false);
      },
      Exit::data, "w: missing key \"o_proj.bias\"", "out_bias");
}

// The config key "mla" (CONTRACT.md "(v3) More of the forward pass"):
// DeepSeek's multi-head latent attention. Its head size, rope's part, the
// softmax scale with yarn's mscale (as DeepseekV3Attention.__init__), run.json's
// form, and every key it excludes as an Exit::config error naming the key.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "attn/config.h"
#include "attn/error.h"
#include "expect_error.h"

using attn::Config;
using attn::Exit;
using attn::test::expect_error;
using nlohmann::json;

namespace {

// C = 16, H = 4, mla with Dn = 8, Dr = 4, Dv = 6 (D = 12), `extra` keys appended.
std::string mla_config(const std::string& extra, const std::string& mla = "") {
  const std::string m = mla.empty()
                            ? R"({"q_lora_rank": 12, "kv_lora_rank": 10, "qk_nope_head_dim": 8,
                        "qk_rope_head_dim": 4, "v_head_dim": 6})"
                            : mla;
  return R"({"attention": "causal", "hidden_size": 16, "num_heads": 4, "mla": )" + m +
         (extra.empty() ? std::string() : ", " + extra) + "}";
}

Config parse(const std::string& text) { return attn::parse_config(text, "c.json"); }

void expect_config_error(const std::string& text, const std::string& key,
                         const std::string& part = "") {
  CAPTURE(text);
  expect_error([&] { parse(text); }, Exit::config, "c.json: " + key + ":", part);
}

}  // namespace

TEST_CASE("config mla: head size, rope's part, the scale, run.json") {
  const Config c = parse(mla_config(R"("rope": {"theta": 10000})"));
  REQUIRE(c.mla.has_value());
  CHECK(c.mla->q_lora_rank == 12);
  CHECK(c.head_size == 12);             // max(8 + 4, 6)
  CHECK(c.spec.rope->rotary_dim == 4);  // qk_rope_head_dim
  CHECK(c.spec.scale == doctest::Approx(1.0 / std::sqrt(12.0)).epsilon(1e-15));
  const json j = attn::config_to_json(c);
  CHECK(j["mla"]["q_lora_rank"] == 12);
  CHECK(j["mla"]["v_head_dim"] == 6);
  CHECK(j["head_size"] == 12);

  // v wider than q.k: D = Dv; q_lora_rank null (DeepSeek-V2-Lite).
  const Config wide = parse(mla_config("", R"({"q_lora_rank": null, "kv_lora_rank": 10,
      "qk_nope_head_dim": 4, "qk_rope_head_dim": 2, "v_head_dim": 9})"));
  CHECK(wide.mla->q_lora_rank == 0);
  CHECK(wide.head_size == 9);
  CHECK(wide.spec.scale == doctest::Approx(1.0 / std::sqrt(6.0)).epsilon(1e-15));
  CHECK(attn::config_to_json(wide)["mla"]["q_lora_rank"].is_null());
  CHECK_FALSE(parse(R"({"attention": "multi", "hidden_size": 8})").mla.has_value());
}

TEST_CASE("config mla: yarn's mscale_all_dim enters the scale squared (DeepSeek-V3, V2-Lite)") {
  // DeepSeek-V3's rope_scaling: factor 40, mscale = mscale_all_dim = 1.
  const Config v3 = parse(mla_config(R"("rope": {"theta": 10000, "max_position_embeddings": 163840,
      "scaling": {"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
                  "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1}})"));
  const double m3 = 0.1 * 1.0 * std::log(40.0) + 1.0;
  CHECK(v3.spec.scale == doctest::Approx(m3 * m3 / std::sqrt(12.0)).epsilon(1e-12));
  // DeepSeek-V2-Lite's: 0.707.
  const Config v2 = parse(mla_config(R"("rope": {"theta": 10000, "max_position_embeddings": 163840,
      "scaling": {"type": "yarn", "factor": 40, "mscale": 0.707, "mscale_all_dim": 0.707,
                  "original_max_position_embeddings": 4096}})"));
  const double m2 = 0.1 * 0.707 * std::log(40.0) + 1.0;
  CHECK(v2.spec.scale == doctest::Approx(m2 * m2 / std::sqrt(12.0)).epsilon(1e-12));
  // Without mscale_all_dim (or factor <= 1) the scale stays 1/sqrt(Dn + Dr).
  const Config plain = parse(mla_config(R"("rope": {"theta": 10000, "max_position_embeddings": 8192,
      "scaling": {"type": "yarn", "factor": 4, "original_max_position_embeddings": 2048}})"));
  CHECK(plain.spec.scale == doctest::Approx(1.0 / std::sqrt(12.0)).epsilon(1e-15));
  // A given scale wins.
  CHECK(parse(mla_config(R"("scale": 0.25)")).spec.scale == 0.25);
}

TEST_CASE("config mla: misuses name the key") {
  expect_config_error(mla_config("", "5"), "mla", "expected an object");
  expect_config_error(mla_config("", R"({"kv_lora_rank": 4, "qk_nope_head_dim": 2,
      "qk_rope_head_dim": 2})"),
                      "mla.v_head_dim", "required");
  expect_config_error(mla_config("", R"({"kv_lora_rank": 4, "qk_nope_head_dim": 2,
      "qk_rope_head_dim": 3, "v_head_dim": 2})"),
                      "mla.qk_rope_head_dim", "even");
  expect_config_error(mla_config("", R"({"kv_lora_rank": 0, "qk_nope_head_dim": 2,
      "qk_rope_head_dim": 2, "v_head_dim": 2})"),
                      "mla.kv_lora_rank", "1..");
  expect_error(
      [] {
        parse(mla_config("", R"({"kv_lora_rank": 4, "qk_nope_head_dim": 2,
      "qk_rope_head_dim": 2, "v_head_dim": 2, "q_lora": 3})"));
      },
      Exit::config, "c.json: key \"mla.q_lora\"", "did you mean \"q_lora_rank\"");
  expect_config_error(mla_config(R"("head_size": 8)"), "head_size", "max(");
  expect_config_error(mla_config(R"("num_kv_heads": 2)"), "num_kv_heads", "kv_b_proj");
  expect_config_error(mla_config(R"("out_proj": false)"), "out_proj", "o_proj");
  expect_config_error(mla_config(R"("qk_norm": {})"), "qk_norm", "not with mla");
  expect_config_error(mla_config(R"("add_zero_attn": true)"), "add_zero_attn", "not with mla");
  expect_config_error(mla_config(R"("kv_input": [[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]])"),
                      "kv_input", "not with mla");
  expect_config_error(mla_config(R"("layout": "fused")"), "layout", "kv_a_proj_with_mqa");
  expect_config_error(mla_config(R"("init": {"seed": 1}, "layout": "proj")"), "init", "weights");
  expect_config_error(mla_config(R"("rope": {"rotary_dim": 12})"), "rope.rotary_dim",
                      "qk_rope_head_dim");
}

// The config keys of the score terms of CONTRACT.md "(v4) Families and
// schedulers": clip_qkv, qk_norm's order (before or after rope), mrope's
// sections and their (3, S) / (3, B, S) positions, and the misuses of each
// as an Exit::config error naming the key; run.json's form.
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

// A multi-head config of C = 8, H = 2 (D = 4) with `extra` keys appended.
std::string multi(const std::string& extra) {
  return R"({"attention": "multi", "hidden_size": 8, "num_heads": 2)" +
         (extra.empty() ? std::string() : ", " + extra) + "}";
}

Config parse(const std::string& text) { return attn::parse_config(text, "c.json"); }

void expect_config_error(const std::string& text, const std::string& key,
                         const std::string& part = "") {
  CAPTURE(text);
  expect_error([&] { parse(text); }, Exit::config, "c.json: " + key + ":", part);
}

}  // namespace

TEST_CASE("config score terms: clip_qkv, a number > 0 or null, in run.json") {
  const Config off = parse(multi(""));
  CHECK_FALSE(off.spec.clip_qkv.has_value());
  CHECK(attn::config_to_json(off)["clip_qkv"].is_null());
  CHECK_FALSE(parse(multi(R"("clip_qkv": null)")).spec.clip_qkv.has_value());
  const Config c = parse(multi(R"("clip_qkv": 8)"));
  REQUIRE(c.spec.clip_qkv.has_value());
  CHECK(*c.spec.clip_qkv == 8.0);
  CHECK(attn::config_to_json(c)["clip_qkv"] == json(8.0));
  expect_config_error(multi(R"("clip_qkv": 0)"), "clip_qkv", "expected a number c > 0");
  expect_config_error(multi(R"("clip_qkv": -1)"), "clip_qkv", "expected a number c > 0");
  expect_config_error(multi(R"("clip_qkv": 1e300)"), "clip_qkv", "float32");
  expect_config_error(multi(R"("clip_qkv": "8")"), "clip_qkv");
  expect_config_error(R"({"attention": "causal", "hidden_size": 16, "num_heads": 4, "mla":
                        {"q_lora_rank": null, "kv_lora_rank": 10, "qk_nope_head_dim": 8,
                         "qk_rope_head_dim": 4, "v_head_dim": 6}, "clip_qkv": 2})",
                      "clip_qkv", "mla");
}

TEST_CASE("config score terms: qk_norm order, before_rope (default) or after_rope") {
  const Config before = parse(multi(R"("qk_norm": {})"));
  CHECK_FALSE(before.spec.qk_norm->after_rope);
  CHECK(attn::config_to_json(before)["qk_norm"]["order"] == "before_rope");
  const Config after = parse(multi(R"("qk_norm": {"eps": 1e-5, "order": "after_rope"})"));
  CHECK(after.spec.qk_norm->after_rope);
  CHECK(attn::config_to_json(after)["qk_norm"]["order"] == "after_rope");
  expect_config_error(multi(R"("qk_norm": {"order": "after"})"), "qk_norm.order",
                      "\"before_rope\" (Qwen3, Gemma 3, OLMo 2) or \"after_rope\"");
  expect_config_error(multi(R"("qk_norm": {"order": true})"), "qk_norm.order");
}

TEST_CASE("config score terms: disentangled (DeBERTa) fields, defaults, scale, misuses") {
  const Config off = parse(multi(""));
  CHECK_FALSE(off.spec.disentangled.has_value());
  CHECK(attn::config_to_json(off)["disentangled"].is_null());
  // {}: DeBERTa-v3's, both terms: scale 1 / sqrt(D * 3) (D = 4).
  const Config v3 = parse(multi(R"("disentangled": {})"));
  REQUIRE(v3.spec.disentangled.has_value());
  CHECK(v3.spec.disentangled->position_buckets == 256);
  CHECK(v3.spec.disentangled->span() == 256);
  CHECK(v3.spec.scale == doctest::Approx(1.0 / std::sqrt(12.0)));
  const json j = attn::config_to_json(v3)["disentangled"];
  CHECK(j["pos_att_type"] == json{"c2p", "p2c"});
  CHECK(j["share_att_key"] == true);
  CHECK(j["table"].is_null());
  // As DebertaV2Config spells it: "p2c|c2p" (any case, spaces), or a list; one term: D * 2.
  const Config one = parse(multi(R"("disentangled": {"pos_att_type": " C2P ",
                                     "position_buckets": -1, "max_relative_positions": 64,
                                     "share_att_key": false, "table": "encoder.rel_embeddings.weight",
                                     "norm_weight": "encoder.LayerNorm.weight",
                                     "norm_bias": "encoder.LayerNorm.bias", "eps": 1e-7})"));
  CHECK(one.spec.disentangled->c2p);
  CHECK_FALSE(one.spec.disentangled->p2c);
  CHECK(one.spec.disentangled->span() == 64);
  CHECK(one.spec.scale == doctest::Approx(1.0 / std::sqrt(8.0)));
  CHECK(parse(multi(R"("disentangled": {"pos_att_type": ["p2c"]})")).spec.disentangled->p2c);
  CHECK(parse(multi(R"("disentangled": {}, "scale": 0.5)")).spec.scale == 0.5);  // given: kept
  expect_config_error(multi(R"("disentangled": {"pos_att_type": "c2p|p2p"})"),
                      "disentangled.pos_att_type", "the term \"p2p\"");
  expect_config_error(multi(R"("disentangled": {"pos_att_type": []})"), "disentangled.pos_att_type",
                      "found none");
  expect_config_error(multi(R"("disentangled": {"pos_att_type": 3})"), "disentangled.pos_att_type");
  expect_config_error(multi(R"("disentangled": {"max_relative_positions": 0})"),
                      "disentangled.max_relative_positions", "an integer > 0");
  expect_config_error(multi(R"("disentangled": {"table": ""})"), "disentangled.table");
  expect_config_error(multi(R"("disentangled": {"buckets": 3})"), "key \"disentangled.buckets\"");
  expect_config_error(multi(R"("disentangled": {}, "kv_input": [[1,2,3,4,5,6,7,8]])"), "kv_input",
                      "cross-attention takes no disentangled terms");
  // DeBERTa's padding rule: a padded query row masked too; self-attention only.
  CHECK(parse(multi(R"("mask_padded_queries": true)")).spec.mask_padded_queries);
  CHECK(attn::config_to_json(parse(multi("")))["mask_padded_queries"] == false);
  expect_config_error(multi(R"("mask_padded_queries": true, "kv_input": [[1,2,3,4,5,6,7,8]])"),
                      "kv_input", "self-attention only");
}

TEST_CASE("config score terms: rope.mrope_section and mrope_interleaved, checks, run.json") {
  // D = 4: R/2 = 2 frequencies.
  const Config plain = parse(multi(R"("rope": {})"));
  CHECK(plain.spec.rope->mrope_section.empty());
  CHECK_FALSE(attn::config_to_json(plain)["rope"].contains("mrope_section"));
  const Config m = parse(multi(R"("rope": {"mrope_section": [1, 0, 1]})"));
  CHECK(m.spec.rope->mrope_section == std::vector<std::int64_t>{1, 0, 1});
  CHECK_FALSE(m.spec.rope->mrope_interleaved);
  const json j = attn::config_to_json(m)["rope"];
  CHECK(j["mrope_section"] == json{1, 0, 1});
  CHECK(j["mrope_interleaved"] == false);
  const Config i =
      parse(multi(R"("rope": {"mrope_section": [0, 1, 1], "mrope_interleaved": true})"));
  CHECK(i.spec.rope->mrope_interleaved);
  CHECK(attn::config_to_json(i)["rope"]["mrope_interleaved"] == true);
  // Partial rotary: the sections split rotary_dim / 2 (Qwen3.5's 64 of 256).
  CHECK(parse(R"({"attention": "multi", "hidden_size": 16, "num_heads": 2,
                  "rope": {"rotary_dim": 4, "mrope_section": [1, 1, 0]}})")
            .spec.rope->mrope_section.size() == 3);
  expect_config_error(multi(R"("rope": {"mrope_section": [1, 1, 1]})"), "rope.mrope_section",
                      "summing to rotary_dim / 2 = 2");
  expect_config_error(multi(R"("rope": {"mrope_section": [2, 0]})"), "rope.mrope_section",
                      "found 2 elements");
  expect_config_error(multi(R"("rope": {"mrope_section": [3, -1, 0]})"), "rope.mrope_section[1]",
                      "an integer >= 0");
  expect_config_error(multi(R"("rope": {"mrope_section": "2,0,0"})"), "rope.mrope_section");
  expect_config_error(multi(R"("rope": {"mrope_interleaved": true})"), "rope.mrope_interleaved",
                      "give rope.mrope_section too");
  // The rows of an inline input: (3, S) and (3, B, S) with sections; (B, S) and (S,) still.
  const std::string x = R"("input": [[[1,2,3,4,5,6,7,8],[1,2,3,4,5,6,7,8]]])";  // (1, 2, 8)
  for (const char* pos : {"[[0,1],[0,2],[0,3]]", "[[[0,1]],[[0,2]],[[0,3]]]", "[0,1]", "[[0,1]]"})
    CHECK(parse(multi(x + R"(, "rope": {"mrope_section": [1, 0, 1]}, "positions": )" + pos))
              .positions.given());
  expect_config_error(
      multi(x +
            R"(, "rope": {"mrope_section": [1, 0, 1]}, "positions": [[0,1,2],[0,1,2],[0,1,2]])"),
      "positions", "or mrope's rows (3, 2)");
  expect_config_error(multi(R"("rope": {}, "positions": [[[[0]]]])"), "positions",
                      "found a deeper one");
}

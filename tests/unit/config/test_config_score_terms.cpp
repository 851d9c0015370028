// The config keys of the score terms of CONTRACT.md "(v4) Families and
// schedulers": clip_qkv, qk_norm's order (before or after rope), and the
// misuses of each as an Exit::config error naming the key; run.json's form.
#include <doctest/doctest.h>

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

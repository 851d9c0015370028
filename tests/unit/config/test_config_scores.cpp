// The version 2 config keys (CONTRACT.md "(v2) New keys", "Positions",
// "Model folders"): each key's default and happy path, each misuse the
// contract names as an Exit::config error naming the key, run.json's form,
// the golden variants' configs, and model folders merged under a config.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/config.h"
#include "attn/error.h"
#include "attn/positions.h"
#include "expect_error.h"
#include "golden_manifest.h"
#include "test_util.h"

using attn::Config;
using attn::Error;
using attn::Exit;
using attn::parse_config;
using attn::test::expect_error;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A multi-head config of C = 8, H = 2 (D = 4) with `extra` keys appended.
std::string multi(const std::string& extra) {
  return R"({"attention": "multi", "hidden_size": 8, "num_heads": 2)" +
         (extra.empty() ? std::string() : ", " + extra) + "}";
}

Config parse(const std::string& text) { return parse_config(text, "c.json"); }

// Exit::config, the message starting with "c.json: <key>:" and holding `part`.
void expect_config_error(const std::string& text, const std::string& key,
                         const std::string& part = "") {
  CAPTURE(text);
  expect_error([&] { parse(text); }, Exit::config, "c.json: " + key + ":", part);
}

// Eight tokens of C = 8 inline, for the shape checks: (S, C) = (3, 8).
const std::string kInput3 = R"("input": [[1,2,3,4,5,6,7,8],[1,2,3,4,5,6,7,8],[1,2,3,4,5,6,7,8]])";

std::string tiny_llama() { return attn::test::source_path("data/tiny-llama"); }

}  // namespace

TEST_CASE("config scores: a version 1 config gets every v2 default") {
  const Config c = parse(multi(""));
  CHECK_FALSE(c.num_kv_heads.has_value());
  CHECK_FALSE(c.spec.rope.has_value());
  CHECK_FALSE(c.positions.given());
  CHECK_FALSE(c.spec.alibi.has_value());
  CHECK_FALSE(c.spec.sliding_window.has_value());
  CHECK_FALSE(c.spec.softcap.has_value());
  CHECK_FALSE(c.spec.qk_norm.has_value());
  CHECK_FALSE(c.spec.sinks);
  CHECK_FALSE(c.attention_mask.given());
  CHECK_FALSE(c.attn_mask.given());
  CHECK_FALSE(c.cross());
  CHECK_FALSE(c.value_input.given());
  CHECK(c.kdim == 8);
  CHECK(c.vdim == 8);
  CHECK_FALSE(c.add_bias_kv);
  CHECK_FALSE(c.spec.add_zero_attn);
  CHECK(c.batch_first);
  CHECK(c.kv_labels.empty());
  CHECK_FALSE(c.output_average_heads);
  CHECK(c.model.empty());
  CHECK_FALSE(c.layer.has_value());
  CHECK(c.from_model == nullptr);
}

TEST_CASE("config scores: rope with every field, and its defaults") {
  const Config d = parse(multi(R"("rope": {})"));
  REQUIRE(d.spec.rope.has_value());
  CHECK(d.spec.rope->theta == 10000.0);
  CHECK(d.spec.rope->rotary_dim == 4);  // D
  CHECK(d.spec.rope->style == attn::RopeStyle::half);
  CHECK_FALSE(d.spec.rope->max_position_embeddings.has_value());
  CHECK_FALSE(d.spec.rope->scaling.has_value());
  CHECK_FALSE(parse(multi(R"("rope": null)")).spec.rope.has_value());

  const Config c = parse(R"({"attention": "causal", "hidden_size": 32, "num_heads": 2, "rope": {
      "theta": 500000, "rotary_dim": 8, "style": "interleaved", "max_position_embeddings": 256,
      "scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1, "high_freq_factor": 4,
                  "original_max_position_embeddings": 32}}})");
  REQUIRE(c.spec.rope.has_value());
  CHECK(c.spec.rope->theta == 500000.0);
  CHECK(c.spec.rope->rotary_dim == 8);
  CHECK(c.spec.rope->style == attn::RopeStyle::interleaved);
  CHECK(*c.spec.rope->max_position_embeddings == 256);
  REQUIRE(c.spec.rope->scaling.has_value());
  CHECK(c.spec.rope->scaling->type == "llama3");
  CHECK(*c.spec.rope->scaling->factor == 8.0);
  CHECK(*c.spec.rope->scaling->low_freq_factor == 1.0);
  CHECK(*c.spec.rope->scaling->high_freq_factor == 4.0);
  CHECK(*c.spec.rope->scaling->original_max_position_embeddings == 32);

  // The default rotary_dim follows head_size when a later change re-resolves.
  Config r = parse(multi(R"("rope": {"theta": 100})"));
  r.head_size = 6;
  r.head_size_given = true;
  attn::resolve_config(r);
  CHECK(r.spec.rope->rotary_dim == 6);
}

TEST_CASE("config scores: rope scaling as Hugging Face writes each type") {
  const std::string pre = R"({"attention": "causal", "hidden_size": 16, "num_heads": 2, "rope": {)";
  const Config lin = parse(pre + R"("scaling": {"type": "linear", "factor": 2}}})");
  CHECK(lin.spec.rope->scaling->type == "linear");
  const Config dyn = parse(
      pre + R"("max_position_embeddings": 64, "scaling": {"rope_type": "dynamic", "factor": 2}}})");
  CHECK(dyn.spec.rope->scaling->type == "dynamic");
  // gpt-oss's yarn, both names of the type given and agreeing.
  const Config yarn =
      parse(pre + R"("theta": 150000, "scaling": {"rope_type": "yarn", "type": "yarn",
      "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0, "original_max_position_embeddings": 4096,
      "truncate": false, "mscale": 1, "mscale_all_dim": 1, "attention_factor": 1.2}}})");
  CHECK(yarn.spec.rope->scaling->type == "yarn");
  CHECK_FALSE(yarn.spec.rope->scaling->truncate);
  CHECK(*yarn.spec.rope->scaling->attention_factor == 1.2);
  CHECK(*yarn.spec.rope->scaling->beta_slow == 1.0);
  // Phi-3's longrope: rotary_dim / 2 = 4 factors each.
  const Config lr = parse(pre + R"("max_position_embeddings": 1024, "scaling": {"type": "longrope",
      "short_factor": [1, 1, 1, 1], "long_factor": [1, 2, 3, 4], "original_max_position_embeddings": 64}}})");
  CHECK(lr.spec.rope->scaling->long_factor == std::vector<double>{1, 2, 3, 4});
  // "default" is no scaling, as in transformers.
  CHECK_FALSE(
      parse(pre + R"("scaling": {"rope_type": "default"}}})").spec.rope->scaling.has_value());
  CHECK_FALSE(parse(pre + R"("scaling": null}})").spec.rope->scaling.has_value());
  // A field the type does not use is accepted (transformers only warns).
  CHECK(
      parse(
          pre +
          R"("scaling": {"rope_type": "linear", "factor": 2, "original_max_position_embeddings": 8}}})")
          .spec.rope->scaling.has_value());
}

TEST_CASE("config scores: rope errors name the field") {
  expect_config_error(multi(R"("rope": {"rotary_dim": 3})"), "rope.rotary_dim",
                      "even integer in 2..head_size 4, found 3");
  expect_config_error(multi(R"("rope": {"rotary_dim": 6})"), "rope.rotary_dim", "found 6");
  expect_config_error(multi(R"("rope": {"rotary_dim": 0})"), "rope.rotary_dim");
  expect_config_error(multi(R"("rope": {"rotary_dim": -2})"), "rope.rotary_dim");
  expect_config_error(multi(R"("rope": {"rotary_dim": 2.5})"), "rope.rotary_dim", "integer");
  expect_config_error(R"({"attention": "multi", "hidden_size": 6, "num_heads": 2, "rope": {}})",
                      "rope.rotary_dim", "head_size 3, which is odd");
  expect_config_error(multi(R"("rope": {"theta": 0})"), "rope.theta", "> 0");
  expect_config_error(multi(R"("rope": {"theta": -1})"), "rope.theta");
  expect_config_error(multi(R"("rope": {"theta": "1e4"})"), "rope.theta", "string");
  expect_config_error(multi(R"("rope": {"style": "neox"})"), "rope.style", "\"half\"");
  expect_config_error(multi(R"("rope": {"max_position_embeddings": 0})"),
                      "rope.max_position_embeddings");
  expect_config_error(multi(R"("rope": true)"), "rope", "{} for theta 10000");
  expect_config_error(multi(R"("rope": {"thetta": 1})"), "key \"rope.thetta\"",
                      "did you mean \"theta\"");
  expect_config_error(multi(R"("rope": {"rope_theta": 1})"), "key \"rope.rope_theta\"",
                      "attn-run's key is rope.theta");
  // scaling
  expect_config_error(multi(R"("rope": {"scaling": {"factor": 2}})"), "rope.scaling", "rope_type");
  expect_config_error(multi(R"("rope": {"scaling": {"rope_type": "su", "factor": 2}})"),
                      "rope.scaling.rope_type", "linear, dynamic, yarn, llama3, longrope");
  expect_config_error(multi(R"("rope": {"scaling": {"rope_type": "yarn", "type": "linear"}})"),
                      "rope.scaling", "disagree");
  expect_config_error(multi(R"("rope": {"scaling": {"rope_type": "linear", "factr": 2}})"),
                      "key \"rope.scaling.factr\"", "did you mean \"factor\"");
  expect_config_error(
      multi(R"("rope": {"scaling": {"rope_type": "linear", "mrope_section": [1]}})"),
      "key \"rope.scaling.mrope_section\"", "unknown key");
  expect_config_error(multi(R"("rope": {"scaling": {"rope_type": "linear"}})"), "rope.scaling",
                      "needs \"factor\"");
  expect_config_error(multi(R"("rope": {"scaling": {"rope_type": "linear", "factor": 0}})"),
                      "rope.scaling.factor");
  expect_config_error(multi(R"("rope": {"scaling": {"rope_type": "dynamic", "factor": 2}})"),
                      "rope.max_position_embeddings", "dynamic");
  expect_config_error(multi(R"("rope": {"scaling": {"rope_type": "yarn", "factor": 2}})"),
                      "rope.max_position_embeddings", "yarn");
  expect_config_error(
      multi(R"("rope": {"scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1,
                                        "high_freq_factor": 4}})"),
      "rope.scaling", "original_max_position_embeddings");
  expect_config_error(
      multi(R"("rope": {"scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 4,
                                        "high_freq_factor": 2, "original_max_position_embeddings": 8}})"),
      "rope.scaling.high_freq_factor", ">= low_freq_factor");
  expect_config_error(
      multi(R"("rope": {"max_position_embeddings": 64, "scaling": {"rope_type": "longrope",
                                        "short_factor": [1, 1, 1], "long_factor": [1, 1]}})"),
      "rope.scaling.short_factor", "rotary_dim / 2 = 2 numbers, found 3");
  expect_config_error(
      multi(R"("rope": {"max_position_embeddings": 64, "scaling": {"rope_type": "longrope",
                                        "short_factor": [1, 1], "long_factor": [1, 0]}})"),
      "rope.scaling.long_factor[1]", "> 0");
  expect_config_error(multi(R"("rope": {"scaling": {"rope_type": "yarn", "truncate": 0}})"),
                      "rope.scaling.truncate");
  expect_config_error(
      multi(
          R"("rope": {"scaling": {"rope_type": "longrope", "short_factor": [1, 1], "long_factor": [1, 1]}})"),
      "rope.max_position_embeddings", "longrope");
}

TEST_CASE("config scores: positions, (S,) or (B, S) integers >= 0") {
  const Config s = parse(multi(R"("rope": {}, "positions": [0, 1, 2])"));
  REQUIRE(s.positions.inline_value.has_value());
  CHECK(s.positions.inline_value->shape == std::vector<std::size_t>{3});
  CHECK(s.positions.inline_value->data == std::vector<std::int64_t>{0, 1, 2});
  const Config b =
      parse(multi(R"("alibi": true, "positions": [[5, 6], [0, 9223372036854775807]], )" +
                  kInput3.substr(0, 0) + R"("labels": ["a", "b"])"));
  CHECK(b.positions.inline_value->shape == std::vector<std::size_t>{2, 2});
  CHECK(b.positions.inline_value->data[3] == INT64_MAX);
  CHECK(parse(multi(R"("rope": {}, "positions": [2.0])")).positions.inline_value->data[0] == 2);
  const Config p = parse_config(multi(R"("rope": {}, "positions": "pos.npy")"), "d/c.json");
  CHECK(p.positions.path == "d/pos.npy");
  CHECK_FALSE(p.positions.inline_value.has_value());
  // Against the inline input: S = 3 positions.
  CHECK(parse(multi(R"("rope": {}, "positions": [[0, 1, 2]], )" + kInput3)).positions.given());

  expect_config_error(multi(R"("rope": {}, "positions": [0, -1])"), "positions[1]",
                      ">= 0, found -1");
  expect_config_error(multi(R"("rope": {}, "positions": [0, 1.5])"), "positions[1]", "integer");
  expect_config_error(multi(R"("rope": {}, "positions": [0, "1"])"), "positions[1]", "string");
  expect_config_error(multi(R"("rope": {}, "positions": [[[0]]])"), "positions", "(S,) or (B, S)");
  expect_config_error(multi(R"("rope": {}, "positions": [[0, 1], [2]])"), "positions[1]", "ragged");
  expect_config_error(multi(R"("rope": {}, "positions": [])"), "positions", "empty");
  expect_config_error(multi(R"("rope": {}, "positions": 3)"), "positions",
                      "path or a nested array");
  expect_config_error(multi(R"("rope": {}, "positions": [9223372036854775808])"), "positions[0]",
                      "range");
  expect_config_error(multi(R"("rope": {}, "positions": "-")"), "positions", "only for input");
  expect_config_error(multi(R"("positions": [0, 1])"), "positions", "none of them is set");
  expect_config_error(multi(R"("rope": {}, "positions": [0, 1], )" + kInput3), "positions",
                      "(3,) to match input (3, 8)");
}

TEST_CASE("config scores: alibi true, max_bias or slopes") {
  CHECK_FALSE(parse(multi(R"("alibi": false)")).spec.alibi.has_value());
  const Config t = parse(multi(R"("alibi": true)"));
  REQUIRE(t.spec.alibi.has_value());
  CHECK(t.spec.alibi->max_bias == 8.0);
  CHECK_FALSE(t.alibi_slopes_given);  // BLOOM's and MPT's slopes for max_bias 8, H = 2
  CHECK(t.spec.alibi->slopes == attn::alibi_slopes(2, 8.0));
  CHECK(parse(multi(R"("alibi": {"max_bias": 16})")).spec.alibi->max_bias == 16.0);
  CHECK(parse(multi(R"("alibi": {"slopes": [0.5, -0.25]})")).spec.alibi->slopes ==
        std::vector<double>{0.5, -0.25});
  expect_config_error(multi(R"("alibi": {"slopes": [0.5]})"), "alibi.slopes",
                      "num_heads 2), found 1");
  expect_config_error(multi(R"("alibi": {"slopes": [0.5, 0.1, 0.2]})"), "alibi.slopes", "found 3");
  expect_config_error(multi(R"("alibi": {"slopes": []})"), "alibi.slopes");
  expect_config_error(multi(R"("alibi": {"slopes": [0.5, "x"]})"), "alibi.slopes[1]");
  expect_config_error(multi(R"("alibi": {"max_bias": 0})"), "alibi.max_bias", "> 0");
  expect_config_error(multi(R"("alibi": {"max_bias": 8, "slopes": [1, 2]})"), "alibi", "both");
  expect_config_error(multi(R"("alibi": {"alibi_bias_max": 8})"), "key \"alibi.alibi_bias_max\"",
                      "alibi.max_bias");
  expect_config_error(multi(R"("alibi": 1)"), "alibi", "true, false");
  expect_config_error(multi(R"("alibi": null)"), "alibi", "found null");
}

TEST_CASE("config scores: sliding_window, softcap, sinks") {
  const Config c = parse(multi(R"("sliding_window": 3, "softcap": 50.0, "sinks": true)"));
  CHECK(*c.spec.sliding_window == 3);
  CHECK(*c.spec.softcap == 50.0);
  CHECK(c.spec.sinks);
  expect_config_error(multi(R"("sliding_window": 0)"), "sliding_window", "> 0");
  expect_config_error(multi(R"("sliding_window": -4)"), "sliding_window");
  expect_config_error(multi(R"("sliding_window": 2.5)"), "sliding_window", "integer");
  expect_config_error(multi(R"("sliding_window": "4")"), "sliding_window", "string");
  expect_config_error(multi(R"("softcap": 0)"), "softcap", "> 0");
  expect_config_error(multi(R"("softcap": -30)"), "softcap");
  expect_config_error(multi(R"("softcap": 1e39)"), "softcap", "float32");
  expect_config_error(multi(R"("sinks": 1)"), "sinks", "true or false");
}

TEST_CASE("config scores: relative_bias (v3, T5)") {
  const Config d = parse(multi(R"("relative_bias": {})"));
  REQUIRE(d.spec.relative_bias.has_value());
  CHECK(d.spec.relative_bias->num_buckets == 32);  // T5Config's defaults
  CHECK(d.spec.relative_bias->max_distance == 128);
  CHECK(d.spec.relative_bias->bidirectional);  // not causal: T5's encoder
  CHECK(d.spec.relative_bias->table.empty());
  const Config dec = parse(R"({"attention": "causal", "hidden_size": 8, "num_heads": 2, "scale": 1,
                "relative_bias": {"num_buckets": 8, "max_distance": 20,
                "table": "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"}})");
  CHECK_FALSE(dec.spec.relative_bias->bidirectional);  // causal: T5's decoder
  CHECK(dec.spec.relative_bias->num_buckets == 8);
  CHECK(dec.spec.relative_bias->max_distance == 20);
  CHECK(dec.spec.relative_bias->table ==
        "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  CHECK(parse(multi(R"("causal": true, "relative_bias": {"bidirectional": true})"))
            .spec.relative_bias->bidirectional);
  CHECK(parse(multi(R"("relative_bias": {}, "positions": [3, 4, 5])")).positions.given());
  CHECK_FALSE(parse(multi(R"("relative_bias": null)")).spec.relative_bias.has_value());

  expect_config_error(multi(R"("relative_bias": true)"), "relative_bias", "an object");
  // T5Config's spellings name attn-run's keys
  expect_config_error(multi(R"("relative_bias": {"buckets": 8})"), "key \"relative_bias.buckets\"",
                      "attn-run's key is relative_bias.num_buckets");
  expect_config_error(multi(R"("relative_bias": {"relative_attention_max_distance": 8})"),
                      "key \"relative_bias.relative_attention_max_distance\"",
                      "attn-run's key is relative_bias.max_distance");
  expect_config_error(multi(R"("relative_attention_num_buckets": 8)"),
                      "key \"relative_attention_num_buckets\"",
                      "attn-run's key is relative_bias.num_buckets");
  expect_config_error(multi(R"("relative_bias": {"num_buckets": 8, "mx_distance": 8})"),
                      "key \"relative_bias.mx_distance\"", "did you mean \"max_distance\"");
  expect_config_error(multi(R"("relative_bias": {"num_buckets": 0})"), "relative_bias.num_buckets",
                      "> 0");
  expect_config_error(multi(R"("relative_bias": {"num_buckets": 3})"), "relative_bias.num_buckets",
                      "4..");
  expect_config_error(multi(R"("relative_bias": {"num_buckets": 16, "max_distance": 4})"),
                      "relative_bias.max_distance", "5..");
  expect_config_error(multi(R"("relative_bias": {"bidirectional": 1})"),
                      "relative_bias.bidirectional", "true or false");
  expect_config_error(multi(R"("relative_bias": {"table": ""})"), "relative_bias.table",
                      "the table's key");
  expect_config_error(multi(R"("relative_bias": {}, "kv_input": [[1,2,3,4,5,6,7,8]])"), "kv_input",
                      "no relative_bias");
}

TEST_CASE("config scores: qk_norm") {
  const Config d = parse(multi(R"("qk_norm": {})"));
  REQUIRE(d.spec.qk_norm.has_value());
  CHECK(d.spec.qk_norm->eps == 1e-6);
  CHECK_FALSE(d.spec.qk_norm->scope_all);
  CHECK(d.spec.qk_norm->weight_offset == 0);
  const Config c = parse(multi(R"("qk_norm": {"eps": 1e-5, "scope": "all", "weight_offset": 1})"));
  CHECK(c.spec.qk_norm->eps == 1e-5);
  CHECK(c.spec.qk_norm->scope_all);
  CHECK(c.spec.qk_norm->weight_offset == 1);
  CHECK_FALSE(parse(multi(R"("qk_norm": null)")).spec.qk_norm.has_value());
  expect_config_error(multi(R"("qk_norm": {"scope": "layer"})"), "qk_norm.scope", "\"head\"");
  expect_config_error(multi(R"("qk_norm": {"weight_offset": 2})"), "qk_norm.weight_offset",
                      "found 2");
  expect_config_error(multi(R"("qk_norm": {"weight_offset": true})"), "qk_norm.weight_offset");
  expect_config_error(multi(R"("qk_norm": {"eps": 0})"), "qk_norm.eps");
  expect_config_error(multi(R"("qk_norm": {"eps": 1e-50})"), "qk_norm.eps", "float32");
  expect_config_error(multi(R"("qk_norm": {"esp": 1e-6})"), "key \"qk_norm.esp\"",
                      "did you mean \"eps\"");
  expect_config_error(multi(R"("qk_norm": {"rms_norm_eps": 1e-6})"), "key \"qk_norm.rms_norm_eps\"",
                      "qk_norm.eps");
  expect_config_error(multi(R"("qk_norm": true)"), "qk_norm", "{} for eps 1e-6");
}

TEST_CASE("config scores: attention_mask (1 = attend), never with padding_mask") {
  const Config c = parse(multi(R"("attention_mask": [[1, 1, 0]], )" + kInput3));
  REQUIRE(c.attention_mask.inline_value.has_value());
  CHECK(c.attention_mask.inline_value->shape == std::vector<std::size_t>{1, 3});
  CHECK(c.attention_mask.inline_value->data == std::vector<std::uint8_t>{1, 1, 0});  // as given
  CHECK(parse_config(multi(R"("attention_mask": "am.npy")"), "x/c.json").attention_mask.path ==
        "x/am.npy");
  expect_config_error(multi(R"("attention_mask": [1, 1], "padding_mask": [0, 0])"),
                      "attention_mask", "padding_mask");
  expect_config_error(multi(R"("attention_mask": "a.npy", "padding_mask": "p.npy")"),
                      "attention_mask", "give one of them");
  expect_config_error(multi(R"("attention_mask": [1, 1], )" + kInput3), "attention_mask",
                      "(3,) to match input (3, 8)");
  expect_config_error(multi(R"("attention_mask": [1, 2])"), "attention_mask[1]");
  expect_config_error(multi(R"("attention_mask": [[[1]]])"), "attention_mask", "(S,) or (B, S)");
  expect_config_error(multi(R"("attention_mask": [[[[1, 0], [1, 1]]]])"), "attention_mask",
                      "give it as attn_mask");
  expect_config_error(multi(R"("attention_mask": "")"), "attention_mask", "empty");
}

TEST_CASE("config scores: attn_mask, bool or additive, rank 2 to 4") {
  const Config b = parse(
      multi(R"("attn_mask": [[false, true, true], [false, false, true], [false, false, false]], )" +
            kInput3));
  REQUIRE(b.attn_mask.inline_value.has_value());
  CHECK_FALSE(b.attn_mask.inline_value->additive);
  CHECK(b.attn_mask.inline_value->shape() == std::vector<std::size_t>{3, 3});
  CHECK(b.attn_mask.inline_value->blocked.data[1] == 1);
  const Config f = parse(multi(R"("attn_mask": [[[[0, -1e9, 0.5]]]])"));
  REQUIRE(f.attn_mask.inline_value.has_value());
  CHECK(f.attn_mask.inline_value->additive);
  CHECK(f.attn_mask.inline_value->shape() == std::vector<std::size_t>{1, 1, 1, 3});
  CHECK(f.attn_mask.inline_value->add.data[1] == -1e9f);
  // Numbers 0/1 are an additive mask, not a bool one (torch: a float mask).
  CHECK(parse(multi(R"("attn_mask": [[0, 1]])")).attn_mask.inline_value->additive);
  CHECK(parse_config(multi(R"("attn_mask": "m.npy")"), "x/c.json").attn_mask.path == "x/m.npy");

  expect_config_error(multi(R"("attn_mask": [[true, 0]])"), "attn_mask[0][1]", "all booleans");
  expect_config_error(multi(R"("attn_mask": [[0, false]])"), "attn_mask[0][1]",
                      "expected a number");
  expect_config_error(multi(R"("attn_mask": [true, false])"), "attn_mask", "(L, S), (B, L, S)");
  expect_config_error(multi(R"("attn_mask": [[[[[0]]]]])"), "attn_mask", "deeper");
  expect_config_error(multi(R"("attn_mask": [[0, 1], [0]])"), "attn_mask[1]", "ragged");
  expect_config_error(multi(R"("attn_mask": [[true, true]], )" + kInput3), "attn_mask",
                      "L = 3 queries and S = 3 keys");
  expect_config_error(multi(R"("attn_mask": 0)"), "attn_mask", "path or a nested array");
}

TEST_CASE("config scores: cross-attention sources, kdim and vdim") {
  // kv_input of C features: kdim = vdim = hidden_size.
  const Config kv = parse(multi(
      R"("kv_input": [[1,2,3,4,5,6,7,8],[1,2,3,4,5,6,7,8]], "kv_labels": ["x", "y"], )" + kInput3));
  CHECK(kv.cross());
  CHECK(kv.kv_input.inline_value->shape == std::vector<std::size_t>{2, 8});
  CHECK(kv.kdim == 8);
  CHECK(kv.kv_labels == std::vector<std::string>{"x", "y"});
  // With kv_input one width given sets both.
  const Config k5 = parse(multi(R"("kv_input": [[1, 2, 3, 4, 5]], "kdim": 5)"));
  CHECK(k5.kdim == 5);
  CHECK(k5.vdim == 5);
  CHECK(parse(multi(R"("kv_input": "kv.npy", "vdim": 6)")).kdim == 6);
  // torch MHA's key and value of other widths; padding masks apply to T = 2.
  const Config kvs =
      parse(multi(R"("key_input": [[1, 2, 3], [4, 5, 6]], "value_input": [[1, 2], [3, 4]],
                                    "kdim": 3, "vdim": 2, "padding_mask": [false, true], "layout": "torch_mha",
                                    "add_bias_kv": true, "add_zero_attn": true, )" +
                  kInput3));
  CHECK(kvs.kdim == 3);
  CHECK(kvs.vdim == 2);
  CHECK(kvs.add_bias_kv);
  CHECK(kvs.spec.add_zero_attn);
  const Config paths = parse_config(
      multi(R"("key_input": "k.npy", "value_input": "v.npy", "kdim": 12)"), "d/c.json");
  CHECK(paths.key_input.path == "d/k.npy");
  CHECK(paths.value_input.path == "d/v.npy");
  CHECK(paths.vdim == 8);

  expect_config_error(multi(R"("key_input": "k.npy")"), "key_input", "found only key_input");
  expect_config_error(multi(R"("value_input": "v.npy")"), "value_input", "found only value_input");
  expect_config_error(
      multi(R"("kv_input": "kv.npy", "key_input": "k.npy", "value_input": "v.npy")"), "kv_input",
      "feeds both keys and values");
  expect_config_error(multi(R"("kv_input": "kv.npy", "causal": true)"), "kv_input", "causal true");
  expect_config_error(
      R"({"attention": "causal", "hidden_size": 8, "num_heads": 2, "kv_input": "kv.npy"})",
      "kv_input", "attention \"causal\"");
  expect_config_error(multi(R"("kv_input": "kv.npy", "rope": {})"), "kv_input", "rope");
  expect_config_error(multi(R"("key_input": "k.npy", "value_input": "v.npy", "alibi": true)"),
                      "key_input", "alibi");
  expect_config_error(multi(R"("kv_input": "kv.npy", "sliding_window": 4)"), "kv_input",
                      "sliding_window");
  expect_config_error(multi(R"("kdim": 12)"), "kdim", "kdim 12 differs from hidden_size 8");
  expect_config_error(multi(R"("vdim": 4)"), "vdim", "key_input and value_input");
  expect_config_error(multi(R"("kdim": 0, "kv_input": "kv.npy")"), "kdim", "1..");
  expect_config_error(multi(R"("kv_input": "kv.npy", "kdim": 4, "vdim": 6)"), "vdim",
                      "kdim 4 and vdim 6");
  expect_config_error(multi(R"("kv_input": [[1, 2, 3]])"), "kv_input",
                      "kdim 8 numbers, found shape (1, 3) (set kdim)");
  expect_config_error(multi(R"("key_input": [[1, 2, 3]], "value_input": [[1, 2, 3]], "kdim": 3)"),
                      "value_input", "vdim 8");
  expect_config_error(
      multi(R"("key_input": [[1, 2, 3]], "value_input": [[1, 2], [3, 4]], "kdim": 3, "vdim": 2)"),
      "value_input", "rows of key_input (1, 3)");
  expect_config_error(multi(R"("kv_input": [[[1,2,3,4,5,6,7,8]]], )" + kInput3), "kv_input",
                      "(T, kdim)");
  expect_config_error(
      R"({"attention": "multi", "hidden_size": 2, "input": [[[1, 2]], [[3, 4]]], "num_heads": 1, "kv_input": [[[1, 2]]]})",
      "kv_input", "batch of 2");
  expect_config_error(multi(R"("kv_input": [[1,2,3,4,5,6,7,8]], "padding_mask": [0, 0])"),
                      "padding_mask", "to match kv_input (1, 8)");
  expect_config_error(multi(R"("kv_input": [[1,2,3,4,5,6,7,8]], "kv_labels": ["a", "b"])"),
                      "kv_labels", "one label per key (1");
  expect_config_error(multi(R"("kv_labels": ["a"])"), "kv_labels", "use labels");
  expect_config_error(multi(R"("kv_labels": [1])"), "kv_labels[0]", "string");
  expect_config_error(multi(R"("kv_input": "-")"), "kv_input", "only for input");
  expect_config_error(multi(R"("kv_input": [1, 2])"), "kv_input", "(T, Ck)");
  expect_config_error(multi(R"("add_bias_kv": true, "layout": "proj")"), "add_bias_kv",
                      "torch_mha");
  expect_config_error(multi(R"("add_zero_attn": "yes")"), "add_zero_attn");
  expect_config_error(
      multi(R"("kdim": 4, "key_input": "k.npy", "value_input": "v.npy", "layout": "fused")"),
      "layout", "torch_mha");
}

TEST_CASE("config scores: batch_first false reads inline (S, B, C)") {
  // (S, B, C) = (3, 2, 2): S = 3 tokens, B = 2.
  const std::string in = R"("input": [[[1, 2], [3, 4]], [[1, 2], [3, 4]], [[1, 2], [3, 4]]])";
  const std::string pre = R"({"attention": "multi", "hidden_size": 2, "batch_first": false, )";
  const Config c =
      parse(pre + in + R"(, "labels": ["a", "b", "c"], "padding_mask": [[0, 0, 1], [0, 0, 0]]})");
  CHECK_FALSE(c.batch_first);
  expect_config_error(pre + in + R"(, "labels": ["a", "b"]})", "labels", "(3)");
  expect_config_error(pre + in + R"(, "padding_mask": [[0, 0, 1], [0, 0, 0], [0, 0, 0]]})",
                      "padding_mask", "(2, 3) or (3,)");
  // Keys of torch MHA's (T, B, Ck).
  CHECK(parse(pre + in + R"(, "kv_input": [[[1, 2], [3, 4]]], "attention_mask": [[1], [1]]})")
            .cross());
  expect_config_error(pre + in + R"(, "batch_first": 0})", "key \"batch_first\"", "duplicate");
  expect_config_error(multi(R"("batch_first": "false")"), "batch_first");
}

TEST_CASE("config scores: output.average_heads") {
  CHECK(parse(multi(R"("output": {"average_heads": true})")).output_average_heads);
  CHECK_FALSE(parse(multi(R"("output": {"average_heads": false})")).output_average_heads);
  expect_config_error(multi(R"("output": {"average_heads": 1})"), "output.average_heads");
  expect_config_error(multi(R"("output": {"average_attn_weights": true})"),
                      "key \"output.average_attn_weights\"", "output.average_heads");
}

TEST_CASE("config scores: path keys resolve against the config's folder; NUL and - are refused") {
  const Config c = parse_config(
      multi(R"("attn_mask": "/abs/m.npy", "kv_input": "../kv.npy", "kv_labels": ["k"])"),
      "cfg/c.json");
  CHECK(parse_config(multi(R"("rope": {}, "positions": "p.npy")"), "cfg/c.json").positions.path ==
        "cfg/p.npy");
  CHECK(c.attn_mask.path == "/abs/m.npy");
  CHECK(c.kv_input.path == "cfg/../kv.npy");
  for (const char* key : {"positions", "attention_mask", "attn_mask", "kv_input", "model",
                          "weights", "padding_mask"}) {
    CAPTURE(key);
    const std::string extra = std::string(key) == "positions" ? R"("rope": {}, )"
                              : std::string(key) == "model"   ? R"("layer": 0, )"
                                                              : "";
    expect_config_error(multi(extra + "\"" + key + R"(": "a\u0000b")"), key, "NUL");
  }
  for (const char* key :
       {"weights", "padding_mask", "attention_mask", "attn_mask", "value_input"}) {
    CAPTURE(key);
    const std::string extra = std::string(key) == "value_input" ? R"("key_input": "k.npy", )" : "";
    expect_config_error(multi(extra + "\"" + key + R"(": "-")"), key, "only for input");
  }
  CHECK(parse(multi(R"("input": "-")")).input_path == "-");
}

TEST_CASE("config scores: config_to_json holds every v2 key as resolved") {
  const Config c =
      parse_config(R"({"attention": "causal", "hidden_size": 16, "num_heads": 4, "num_kv_heads": 2,
      "rope": {"theta": 500000, "max_position_embeddings": 64,
               "scaling": {"type": "yarn", "factor": 4, "original_max_position_embeddings": 16}},
      "positions": [0, 1], "alibi": true, "sliding_window": 2, "softcap": 30, "sinks": true,
      "qk_norm": {"scope": "all"}, "attention_mask": "am.npy", "attn_mask": [[0, 0], [0, 0]],
      "output": {"average_heads": true}})",
                   "d/c.json");
  const json j = attn::config_to_json(c);
  CHECK(j["num_kv_heads"] == 2);
  CHECK(j["rope"]["theta"] == 500000.0);
  CHECK(j["rope"]["rotary_dim"] == 4);
  CHECK(j["rope"]["style"] == "half");
  CHECK(j["rope"]["max_position_embeddings"] == 64);
  CHECK(j["rope"]["scaling"] == json{{"rope_type", "yarn"},
                                     {"factor", 4.0},
                                     {"original_max_position_embeddings", 16},
                                     {"truncate", true}});
  CHECK(j["positions"] == "inline");
  CHECK(j["alibi"]["max_bias"] == 8.0);
  REQUIRE(j["alibi"]["slopes"].size() == 4);
  CHECK(j["alibi"]["slopes"][0].get<double>() == doctest::Approx(0.25));  // 2^(-8/4)
  CHECK(j["sliding_window"] == 2);
  CHECK(j["softcap"] == 30.0);
  CHECK(j["sinks"] == true);
  CHECK(j["qk_norm"] == json{{"eps", 1e-6},
                             {"scope", "all"},
                             {"weight_offset", 0},
                             {"kind", "rms"},
                             {"per_head", false},
                             {"bias", false},
                             {"order", "before_rope"}});
  CHECK(j["attention_mask"] == "d/am.npy");
  CHECK(j["attn_mask"] == "inline");
  CHECK(j["kv_input"].is_null());
  CHECK(j["kdim"] == 16);
  CHECK(j["vdim"] == 16);
  CHECK(j["batch_first"] == true);
  CHECK(j["add_bias_kv"] == false);
  CHECK(j["output"]["average_heads"] == true);
  CHECK(j["model"].is_null());
  CHECK(j["layer"].is_null());
  CHECK(j["from_model"].is_null());

  const json x =
      attn::config_to_json(parse(R"({"attention": "multi", "hidden_size": 16, "num_heads": 4,
      "layout": "torch_mha", "key_input": "k.npy", "value_input": [[1, 2]], "kdim": 12, "vdim": 2,
      "add_bias_kv": true, "add_zero_attn": true, "batch_first": false, "kv_labels": ["a"],
      "alibi": false})"));
  CHECK(x["rope"].is_null());
  CHECK(x["alibi"] == false);
  CHECK(x["key_input"] == "k.npy");
  CHECK(x["value_input"] == "inline");
  CHECK(x["kdim"] == 12);
  CHECK(x["vdim"] == 2);
  CHECK(x["add_bias_kv"] == true);
  CHECK(x["add_zero_attn"] == true);
  CHECK(x["batch_first"] == false);
  CHECK(x["kv_labels"] == json{"a"});
  CHECK(x["sliding_window"].is_null());
  CHECK(x["qk_norm"].is_null());
  const json s = attn::config_to_json(parse(multi(R"("alibi": {"slopes": [1, 2]})")));
  CHECK(s["alibi"] == json{{"slopes", {1.0, 2.0}}});

  // resolve_config again changes nothing.
  Config again = c;
  attn::resolve_config(again);
  attn::resolve_config(again);
  CHECK(attn::config_to_json(again) == j);
}

TEST_CASE("config scores: Hugging Face's and torch's names get attn-run's key") {
  const std::vector<std::pair<std::string, std::string>> same = {
      {"rope_theta", "rope.theta"},
      {"rotary_emb_base", "rope.theta"},
      {"rope_scaling", "rope.scaling"},
      {"rotary_pct", "rope.rotary_dim (= rotary_pct * head_size)"},
      {"partial_rotary_factor", "rope.rotary_dim (= partial_rotary_factor * head_size)"},
      {"attn_logit_softcapping", "softcap"},
      {"query_pre_attn_scalar", "scale (= query_pre_attn_scalar^-0.5)"},
      {"need_weights", "output.attention"},
      {"average_attn_weights", "output.average_heads (or --average-heads)"},
      {"key", "key_input"},
      {"value", "value_input"},
      {"key_padding_mask", "padding_mask"},
      {"position_ids", "positions"},
      {"alibi_bias_max", "alibi.max_bias"},
      {"encoder_hidden_states", "kv_input"},
      {"rms_norm_eps", "qk_norm.eps"},
      //
      {"attention_chunk_size", "attention_chunk"},
      {"attn_temperature_tuning", "attn_temperature"},
      {"floor_scale", "attn_temperature.floor_scale"},
      {"attn_output_gate", "gate"},
      {"attention_k_eq_v", "k_eq_v"}};
  for (const auto& [theirs, ours] : same) {
    CAPTURE(theirs);
    expect_error([&] { parse(multi("\"" + theirs + "\": 1")); }, Exit::config,
                 "c.json: key \"" + theirs + "\":", "attn-run's key is " + ours);
  }
  for (const char* per_layer :
       {"use_sliding_window", "max_window_layers", "layer_types", "sliding_window_pattern",
        "global_head_dim", "num_kv_shared_layers"}) {
    CAPTURE(per_layer);
    expect_error([&] { parse(multi("\"" + std::string(per_layer) + "\": 1")); }, Exit::config,
                 "c.json: key \"" + std::string(per_layer) + "\":",
                 "per-layer settings come from a model folder: give \"model\" and \"layer\"");
  }
  // No longer "not supported yet" anywhere; attention_mask is ours.
  for (const char* k : {"rope_theta", "rotary_pct", "attn_logit_softcapping", "rope_scaling"}) {
    try {
      parse(multi("\"" + std::string(k) + "\": 1"));
    } catch (const Error& e) {
      CHECK_MESSAGE(std::string(e.what()).find("not supported") == std::string::npos, e.what());
    }
  }
  CHECK(parse(multi(R"("attention_mask": [1])")).attention_mask.given());
  // Real spelling mistakes still get the nearest key.
  expect_error([&] { parse(multi(R"("sliding_windw": 4)")); }, Exit::config,
               "c.json: key \"sliding_windw\":", "did you mean \"sliding_window\"");
}

TEST_CASE("config scores: the golden variants' configs parse") {
  const fs::path root = attn::test::source_path("tests/golden/variants");
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(root)) {
    const fs::path file = entry.path() / "config.json";
    if (!fs::exists(file)) continue;
    CAPTURE(file.string());
    const Config c = attn::load_config(file.string());
    CHECK(c.input_path == (entry.path() / "input.npy").string());
    CHECK(c.weights == (entry.path() / "weights").string());
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  CHECK(names == attn::test::golden_case_names("variants"));  // tests/golden/manifest.json
  auto load = [&](const char* name) {
    return attn::load_config((root / name / "config.json").string());
  };

  const Config t5 = load("t5_decoder_relative_bias");
  REQUIRE(t5.spec.relative_bias.has_value());
  CHECK_FALSE(t5.spec.relative_bias->bidirectional);  // causal: the decoder's buckets
  CHECK(t5.spec.relative_bias->table ==
        "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  CHECK(t5.spec.scale == 1.0);

  const Config mistral = load("mistral_window");
  CHECK(*mistral.spec.sliding_window == 3);
  CHECK(mistral.kv_heads() == 2);
  CHECK(mistral.spec.rope->rotary_dim == 8);
  CHECK(mistral.attention_mask.path == (root / "mistral_window" / "attention_mask.npy").string());
  CHECK(mistral.positions.path == (root / "mistral_window" / "positions.npy").string());
  for (const char* name : {"mha_cross_bool_mask", "mha_cross_float_mask_avg"}) {
    CAPTURE(name);
    const Config m = load(name);
    CHECK(m.cross());
    CHECK(m.kdim == 12);
    CHECK(m.vdim == 10);
    CHECK_FALSE(m.batch_first);
    CHECK(m.add_bias_kv);
    CHECK(m.spec.add_zero_attn);
    CHECK(m.key_input.path == (root / name / "key.npy").string());
    CHECK(m.attn_mask.path == (root / name / "attn_mask.npy").string());
    CHECK(m.output_average_heads == (std::string(name) == "mha_cross_float_mask_avg"));
  }
  const Config g2 = load("gemma2_softcap_window");
  CHECK(*g2.spec.softcap == 2.0);
  CHECK(g2.spec.scale == doctest::Approx(0.20412414523193154));
  CHECK(g2.spec.rope->rotary_dim == 16);
  const Config g3 = load("gemma3_qknorm_offset");
  CHECK(g3.spec.qk_norm->weight_offset == 1);
  const Config oss = load("gptoss_sinks_window");
  CHECK(oss.spec.sinks);
  CHECK(oss.spec.rope->scaling->type == "yarn");
  CHECK_FALSE(oss.spec.rope->scaling->truncate);
  CHECK(load("llama3_gqa_rope_left").spec.rope->scaling->type == "llama3");
  CHECK(load("neox_partial_rotary").spec.rope->rotary_dim == 4);
  CHECK(load("mpt_alibi_h12").spec.alibi->max_bias == 16.0);
  CHECK(load("bloom_alibi_h6").spec.alibi->max_bias == 8.0);
  CHECK(load("qwen3_qknorm").spec.qk_norm->scope_all == false);
}

TEST_CASE("config scores: --model DIR --layer N reads the folder's layer") {
  const Config c = attn::load_model_config(tiny_llama(), 1);
  CHECK(c.model == tiny_llama());
  CHECK(*c.layer == 1);
  CHECK(c.file == tiny_llama() + "/config.json");
  CHECK(c.kind == attn::Kind::causal);
  CHECK(c.hidden_size == 64);
  CHECK(c.num_heads == 4);
  CHECK(c.kv_heads() == 2);
  CHECK(c.head_size == 16);
  CHECK(c.out_size == 64);
  CHECK(*c.layout == attn::Layout::proj);
  CHECK_FALSE(c.qkv_bias);
  CHECK_FALSE(c.out_bias);
  CHECK_FALSE(c.qkv_bias_given);
  CHECK(c.weights == tiny_llama() + "/model.safetensors");
  CHECK(c.weights_prefix == "model.layers.1.self_attn.");
  REQUIRE(c.spec.rope.has_value());
  CHECK(c.spec.rope->theta == 10000.0);
  CHECK(c.spec.rope->rotary_dim == 16);
  CHECK(*c.spec.rope->max_position_embeddings == 128);
  CHECK_FALSE(c.spec.rope->scaling.has_value());
  CHECK(c.spec.scale == doctest::Approx(0.25));
  REQUIRE(c.from_model != nullptr);
  CHECK((*c.from_model)["weights_prefix"] == "model.layers.1.self_attn.");
  const json j = attn::config_to_json(c);
  CHECK(j["model"] == tiny_llama());
  CHECK(j["layer"] == 1);
  CHECK(j["from_model"]["num_kv_heads"] == 2);
  CHECK(j["from_model"]["rope"]["theta"] == 10000.0);

  // The same through load_config with the flags, and through the folder's config.json.
  CHECK(attn::config_to_json(attn::load_config("", {tiny_llama(), 1})) == j);
  const Config hf = attn::load_config(tiny_llama() + "/config.json", {"", 1});
  CHECK(hf.model == tiny_llama());
  CHECK(hf.weights_prefix == "model.layers.1.self_attn.");
  CHECK(attn::hf_config_folder(tiny_llama() + "/config.json") == tiny_llama());
  CHECK(attn::hf_config_folder(
            attn::test::source_path("tests/golden/variants/mistral_window/config.json"))
            .empty());

  expect_error([] { attn::load_model_config(tiny_llama(), 2); }, Exit::usage,
               "--layer:", "layers 0..1, found 2");
  expect_error([] { attn::load_model_config(tiny_llama(), -1); }, Exit::usage, "--layer:");
  expect_error(
      [] {
        attn::load_config("", {tiny_llama(), std::nullopt});
      },
      Exit::usage, "--layer:");
  expect_error([] { attn::load_config("", {}); }, Exit::usage, "--config:");
  expect_error([] { attn::load_model_config("/nonexistent/model", 0); }, Exit::no_input,
               "/nonexistent/model");
}

TEST_CASE("config scores: a Hugging Face config.json as the config needs a layer") {
  const std::string file = tiny_llama() + "/config.json";
  expect_error([&] { attn::load_config(file); }, Exit::usage, file + ": a Hugging Face config.json",
               "run attn-run --model " + tiny_llama() + " --layer N");
  expect_error(
      [&] {
        attn::load_config(file, {tiny_llama(), 0});
      },
      Exit::usage, "--model:", "not both");
  // parse_config of the text alone says the same.
  expect_error([&] { parse_config(attn::test::read_text(file), "m/config.json"); }, Exit::usage,
               "m/config.json: a Hugging Face config.json", "--model m ");
  // A stray model_type in an attn-run config is the vocabulary's error.
  expect_config_error(multi(R"("model_type": "llama")"), "key \"model_type\"",
                      "not an attn-run config key");
}

TEST_CASE("config scores: model + layer in a config: the config's keys override the folder's") {
  attn::test::TempDir tmp;
  const std::string rel = fs::relative(tiny_llama(), tmp.path).string();
  attn::test::write_text(tmp / "c.json", R"({"model": ")" + rel + R"(", "layer": 0,
      "sliding_window": 8, "rope": {"theta": 20000}, "bias": false, "input": "in.npy",
      "output": {"average_heads": true}})");
  const Config c = attn::load_config(tmp / "c.json");
  CHECK(c.model == tmp / rel);  // relative to the config's folder
  CHECK(*c.layer == 0);
  CHECK(c.weights_prefix == "model.layers.0.self_attn.");
  CHECK(c.weights == tmp / rel + "/model.safetensors");
  CHECK(*c.spec.sliding_window == 8);
  CHECK(c.spec.rope->theta == 20000.0);  // overridden
  CHECK(c.spec.rope->rotary_dim == 16);  // kept from the folder
  CHECK(*c.spec.rope->max_position_embeddings == 128);
  CHECK_FALSE(c.qkv_bias);
  CHECK_FALSE(c.qkv_bias_given);
  CHECK(c.input_path == tmp / "in.npy");
  CHECK(c.output_average_heads);
  CHECK((*c.from_model)["rope"]["theta"] == 10000.0);  // what the folder said
  CHECK_FALSE(c.from_model->contains("sliding_window"));

  // --layer overrides "layer"; null removes the folder's key.
  attn::test::write_text(tmp / "n.json", R"({"model": ")" + rel + R"(", "layer": 0, "rope": null,
      "num_heads": 2, "num_kv_heads": null, "weights": "w.safetensors", "qkv_bias": true})");
  const Config n = attn::load_config(tmp / "n.json", {"", 1});
  CHECK(*n.layer == 1);
  CHECK(n.weights_prefix == "model.layers.1.self_attn.");
  CHECK_FALSE(n.spec.rope.has_value());
  CHECK(n.num_heads == 2);
  CHECK(n.kv_heads() == 2);
  CHECK(n.weights == tmp / "w.safetensors");
  CHECK(n.qkv_bias_given);

  // An override that breaks the folder's sizes is named.
  attn::test::write_text(tmp / "bad.json",
                         R"({"model": ")" + rel + R"(", "layer": 0, "num_heads": 3})");
  expect_error([&] { attn::load_config(tmp / "bad.json"); }, Exit::config,
               tmp / "bad.json: num_kv_heads:", "divisor of num_heads 3");
  attn::test::write_text(tmp / "rd.json",
                         R"({"model": ")" + rel + R"(", "layer": 1, "rope": {"rotary_dim": 15}})");
  expect_error([&] { attn::load_config(tmp / "rd.json"); }, Exit::config,
               tmp / "rd.json: rope.rotary_dim:");
  // Errors of the model and layer keys.
  attn::test::write_text(tmp / "m.json", R"({"model": ")" + rel + R"("})");
  expect_error([&] { attn::load_config(tmp / "m.json"); }, Exit::config,
               tmp / "m.json: layer:", "required with \"model\"");
  CHECK(*attn::load_config(tmp / "m.json", {"", 1}).layer == 1);  // --layer supplies it
  attn::test::write_text(tmp / "l.json", R"({"attention": "multi", "hidden_size": 8, "layer": 1})");
  expect_error([&] { attn::load_config(tmp / "l.json"); }, Exit::config,
               tmp / "l.json: model:", "required with \"layer\"");
  CHECK(attn::load_config(tmp / "l.json", {tiny_llama(), std::nullopt}).model ==
        tiny_llama());  // --model supplies it
  attn::test::write_text(tmp / "r.json", R"({"model": ")" + rel + R"(", "layer": 7})");
  expect_error([&] { attn::load_config(tmp / "r.json"); }, Exit::config,
               tmp / "r.json: layer:", "layers 0..1, found 7");
  attn::test::write_text(tmp / "neg.json", R"({"model": ")" + rel + R"(", "layer": -1})");
  expect_error([&] { attn::load_config(tmp / "neg.json"); }, Exit::config,
               tmp / "neg.json: layer:", ">= 0");
  attn::test::write_text(tmp / "flag.json", R"({"attention": "multi", "hidden_size": 8})");
  expect_error(
      [&] {
        attn::load_config(tmp / "flag.json", {"", 0});
      },
      Exit::usage, "--layer:", "--model DIR");
  expect_error(
      [&] {
        attn::load_config(tmp / "flag.json", {tiny_llama(), std::nullopt});
      },
      Exit::usage, "--layer:");
  const Config f = attn::load_config(tmp / "flag.json", {tiny_llama(), 1});
  CHECK(f.kind == attn::Kind::multi);  // the config's attention over the folder's causal
  CHECK(f.hidden_size == 8);
  CHECK(f.model == tiny_llama());
  attn::test::write_text(tmp / "nomodel.json", R"({"model": "missing", "layer": 0})");
  expect_error([&] { attn::load_config(tmp / "nomodel.json"); }, Exit::no_input, tmp / "missing");
}

TEST_CASE("config scores: every model folder fixture's layers parse through the config") {
  // Each fixture config.json beside tiny-llama's weights file (the weights'
  // names only pick the prefix; nothing is read).
  attn::test::TempDir tmp;
  std::size_t n = 0;
  for (const auto& entry :
       fs::directory_iterator(attn::test::source_path("tests/fixtures/model_configs"))) {
    const std::string name = entry.path().stem().string();
    if (name == "unknown") continue;
    const fs::path dir = fs::path(tmp.path) / name;
    fs::create_directories(dir);
    fs::copy_file(entry.path(), dir / "config.json");
    fs::create_symlink(tiny_llama() + "/model.safetensors", dir / "model.safetensors");
    for (std::int64_t layer : {0, 1, 5}) {
      CAPTURE(name);
      CAPTURE(layer);
      const Config c = attn::load_model_config(dir.string(), layer);
      CHECK(c.hidden_size > 0);
      CHECK(c.from_model != nullptr);
    }
    ++n;
  }
  CHECK(n >= 20);
  auto layer = [&](const char* name, std::int64_t l) {
    return attn::load_model_config((fs::path(tmp.path) / name).string(), l);
  };
  const Config llama = layer("llama3", 5);
  CHECK(llama.spec.rope->scaling->type == "llama3");
  CHECK(*llama.spec.rope->scaling->original_max_position_embeddings == 8192);
  CHECK(llama.kv_heads() == 8);
  const Config g2 = layer("gemma2", 0);
  CHECK(g2.spec.sliding_window.has_value());
  CHECK(*g2.spec.softcap == 50.0);
  CHECK_FALSE(layer("gemma2", 1).spec.sliding_window.has_value());
  CHECK(layer("qwen3", 0).spec.qk_norm.has_value());
  const Config oss = layer("gpt_oss", 0);
  CHECK(oss.spec.sinks);
  CHECK(oss.spec.rope->scaling->type == "yarn");
  const Config phi = layer("phi3", 0);
  CHECK(phi.spec.rope->scaling->type == "longrope");
  CHECK(phi.spec.rope->scaling->short_factor.size() == std::size_t(phi.spec.rope->rotary_dim / 2));
  CHECK(layer("pythia", 0).spec.rope->rotary_dim == layer("pythia", 0).head_size / 4);
  CHECK(layer("bloom", 0).spec.alibi.has_value());
  CHECK(layer("mpt", 0).spec.alibi.has_value());
}

TEST_CASE(
    "config scores: the inline fuzz seeds parse, so the fuzzer starts on the readers' deep paths") {
  std::size_t n = 0;
  for (const auto& entry : fs::directory_iterator(attn::test::source_path("fuzz/corpus/config"))) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("inline_", 0) != 0) continue;
    CAPTURE(name);
    CHECK(parse_config(attn::test::read_text(entry.path().string()), name).num_heads > 0);
    ++n;
  }
  CHECK(n >= 4);
}

TEST_CASE("config v3: gate, a bool, off by default, in run.json") {
  CHECK_FALSE(parse(multi("")).spec.gate);
  const Config c = parse(multi(R"("gate": true)"));
  CHECK(c.spec.gate);
  CHECK(attn::config_to_json(c)["gate"] == true);
  CHECK(attn::config_to_json(parse(multi("")))["gate"] == false);
  expect_config_error(multi(R"("gate": 1)"), "gate", "expected");
  expect_config_error(multi(R"("gat": true)"), "key \"gat\"", "did you mean \"gate\"");
}

TEST_CASE("config v3: qk_norm kind, per_head and bias") {
  using attn::QkNormKind;
  CHECK(parse(multi(R"("qk_norm": {})")).spec.qk_norm->kind == QkNormKind::rms);
  const Config layer =
      parse(multi(R"("qk_norm": {"kind": "layer", "per_head": true, "bias": true, "eps": 1e-5})"));
  CHECK(layer.spec.qk_norm->kind == QkNormKind::layer);
  CHECK(layer.spec.qk_norm->per_head);
  CHECK(layer.spec.qk_norm->bias);
  CHECK(layer.spec.qk_norm->has_weight());
  CHECK(attn::config_to_json(layer)["qk_norm"]["kind"] == "layer");
  const Config l2 = parse(multi(R"("qk_norm": {"kind": "l2"})"));
  CHECK(l2.spec.qk_norm->kind == QkNormKind::l2);
  CHECK_FALSE(l2.spec.qk_norm->has_weight());
  expect_config_error(multi(R"("qk_norm": {"kind": "batch"})"), "qk_norm.kind", "expected \"rms\"");
  expect_config_error(multi(R"("qk_norm": {"kind": "l2", "weight_offset": 1})"),
                      "qk_norm.weight_offset", "has no weight");
  expect_config_error(multi(R"("qk_norm": {"kind": "l2", "per_head": true})"), "qk_norm.per_head",
                      "has no weight");
  expect_config_error(multi(R"("qk_norm": {"bias": true})"), "qk_norm.bias", "kind \"layer\"");
  expect_config_error(multi(R"("qk_norm": {"per_head": true, "scope": "all"})"), "qk_norm.per_head",
                      "scope \"head\"");
  expect_config_error(multi(R"("qk_norm": {"per_head": 1})"), "qk_norm.per_head", "expected");
}

TEST_CASE("config v3: attention_chunk, an integer > 0, never with cross-attention") {
  CHECK_FALSE(parse(multi("")).spec.attention_chunk.has_value());
  const Config c = parse(multi(R"("attention_chunk": 8192, "causal": true)"));
  CHECK(*c.spec.attention_chunk == 8192);
  CHECK(attn::config_to_json(c)["attention_chunk"] == 8192);
  CHECK(attn::config_to_json(parse(multi("")))["attention_chunk"].is_null());
  expect_config_error(multi(R"("attention_chunk": 0)"), "attention_chunk",
                      "expected an integer > 0");
  expect_config_error(multi(R"("attention_chunk": 2.5)"), "attention_chunk");
  expect_config_error(multi(R"("attention_chunk": 4, "kv_input": [[[1,2,3,4,5,6,7,8]]])"),
                      "kv_input", "no attention_chunk");
}

TEST_CASE("config v3: attn_temperature {floor_scale, attn_scale}, Llama 4's defaults") {
  CHECK_FALSE(parse(multi("")).spec.attn_temperature.has_value());
  const Config d = parse(multi(R"("attn_temperature": {})"));
  CHECK(d.spec.attn_temperature->floor_scale == 8192.0);
  CHECK(d.spec.attn_temperature->attn_scale == doctest::Approx(0.1));
  const Config c = parse(multi(R"("attn_temperature": {"floor_scale": 16, "attn_scale": 0.5})"));
  CHECK(c.spec.attn_temperature->floor_scale == 16.0);
  CHECK(c.spec.attn_temperature->attn_scale == 0.5);
  CHECK(attn::config_to_json(c)["attn_temperature"] ==
        json{{"floor_scale", 16.0}, {"attn_scale", 0.5}});
  CHECK(attn::config_to_json(parse(multi("")))["attn_temperature"].is_null());
  // positions are read by the temperature alone too
  CHECK(parse(multi(R"("attn_temperature": {}, "positions": [0, 1, 2])")).positions.given());
  expect_config_error(multi(R"("attn_temperature": {"floor_scale": 0})"),
                      "attn_temperature.floor_scale", "expected a number > 0");
  expect_config_error(multi(R"("attn_temperature": {"attn_scale": "x"})"),
                      "attn_temperature.attn_scale");
  expect_config_error(multi(R"("attn_temperature": true)"), "attn_temperature",
                      "expected an object");
  expect_config_error(multi(R"("attn_temperature": {"floor": 2})"),
                      "key \"attn_temperature.floor\"", "did you mean \"floor_scale\"");
  expect_config_error(multi(R"("attn_temperature": {}, "kv_input": [[[1,2,3,4,5,6,7,8]]])"),
                      "kv_input", "no attn_temperature");
}

TEST_CASE("config v3: v_norm {kind rms, eps}, k_eq_v, rope scaling proportional (Gemma 4)") {
  const Config off = parse(multi(""));
  CHECK_FALSE(off.spec.v_norm.has_value());
  CHECK_FALSE(off.k_eq_v);
  CHECK(attn::config_to_json(off)["v_norm"].is_null());
  CHECK(parse(multi(R"("v_norm": {})")).spec.v_norm->eps == doctest::Approx(1e-6));
  const Config c = parse(multi(R"("v_norm": {"kind": "rms", "eps": 1e-5}, "k_eq_v": true)"));
  CHECK(c.spec.v_norm->eps == doctest::Approx(1e-5));
  CHECK(c.k_eq_v);
  CHECK(attn::config_to_json(c)["v_norm"] == json{{"kind", "rms"}, {"eps", 1e-5}});
  CHECK(attn::config_to_json(c)["k_eq_v"] == true);
  expect_config_error(multi(R"("v_norm": {"kind": "layer"})"), "v_norm.kind", "expected \"rms\"");
  expect_config_error(multi(R"("v_norm": {"eps": 0})"), "v_norm.eps", "expected a number > 0");
  expect_config_error(multi(R"("v_norm": 1)"), "v_norm", "expected an object");
  expect_config_error(multi(R"("v_norm": {"epsilon": 1})"), "key \"v_norm.epsilon\"");
  expect_config_error(multi(R"("k_eq_v": 1)"), "k_eq_v");
  const Config r = parse(multi(
      R"("rope": {"theta": 1e6, "scaling": {"rope_type": "proportional", "partial_rotary_factor": 0.25}})"));
  CHECK(r.spec.rope->scaling->type == "proportional");
  CHECK(*r.spec.rope->scaling->partial_rotary_factor == 0.25);
  CHECK(attn::config_to_json(r)["rope"]["scaling"]["partial_rotary_factor"] == 0.25);
  expect_config_error(
      multi(R"("rope": {"scaling": {"rope_type": "proportional", "partial_rotary_factor": 2}})"),
      "rope.scaling.partial_rotary_factor", "expected a number from 0 to 1");
}

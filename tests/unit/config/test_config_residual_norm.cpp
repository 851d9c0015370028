// The config key "residual_norm": the context as
// LayerNorm(o_proj(attention) + input), BertSelfOutput's norm. Its forms (true,
// an object, false, null), defaults, run.json's form and description, and
// each misuse as an Exit::config error naming the key.
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

// C = 8, H = 2, BERT's prefix; `extra` keys appended.
std::string bert_config(const std::string& extra) {
  return R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "layout": "bert",
             "weights_prefix": "bert.encoder.layer.3.attention.")" +
         (extra.empty() ? std::string() : ", " + extra) + "}";
}

Config parse(const std::string& text) { return attn::parse_config(text, "c.json"); }

void expect_config_error(const std::string& text, const std::string& part) {
  CAPTURE(text);
  expect_error([&] { parse(text); }, Exit::config, "c.json: residual_norm", part);
}

}  // namespace

TEST_CASE("config residual_norm: forms, defaults, run.json") {
  const Config off = parse(bert_config(""));
  CHECK_FALSE(off.spec.residual_norm.has_value());
  CHECK(attn::config_to_json(off)["residual_norm"].is_null());
  CHECK(attn::output_description(off) ==
        "the output projection, without residual add or LayerNorm");
  for (const char* v : {"false", "null"})
    CHECK_FALSE(parse(bert_config(std::string("\"residual_norm\": ") + v)).spec.residual_norm);

  // true: BertConfig's eps, BertSelfOutput's LayerNorm beside the layer's output.dense.
  const Config on = parse(bert_config(R"("residual_norm": true)"));
  REQUIRE(on.spec.residual_norm.has_value());
  CHECK(on.spec.residual_norm->eps == 1e-12);
  CHECK(on.spec.residual_norm->prefix == "bert.encoder.layer.3.attention.output.LayerNorm.");
  const json j = attn::config_to_json(on);
  CHECK(j["residual_norm"]["eps"] == 1e-12);
  CHECK(j["residual_norm"]["prefix"] == "bert.encoder.layer.3.attention.output.LayerNorm.");
  CHECK(attn::output_description(on).find("LayerNorm(output projection + input)") == 0);

  // An object: its own eps and a full key prefix (DistilBERT's sa_layer_norm).
  const Config obj = parse(bert_config(
      R"("residual_norm": {"eps": 1e-5, "prefix": "distilbert.transformer.layer.0.sa_layer_norm."})"));
  CHECK(obj.spec.residual_norm->eps == 1e-5);
  CHECK(obj.spec.residual_norm->prefix == "distilbert.transformer.layer.0.sa_layer_norm.");
  CHECK(parse(bert_config(R"("residual_norm": {})")).spec.residual_norm->prefix ==
        "bert.encoder.layer.3.attention.output.LayerNorm.");

  // Resolving again (after flags) keeps it.
  Config again = on;
  attn::resolve_config(again);
  CHECK(again.spec.residual_norm->prefix == on.spec.residual_norm->prefix);

  // A model family's module named in the description (set from a model folder).
  Config bert = off;
  bert.residual_norm_module = "BertAttention";
  bert.residual_norm_in_attention = true;
  CHECK(attn::output_description(bert).find("BertAttention's output adds the input") !=
        std::string::npos);
  bert.spec.residual_norm = on.spec.residual_norm;
  CHECK(attn::output_description(bert).find("LayerNorm of BertAttention") != std::string::npos);
}

TEST_CASE("config residual_norm: misuse names the key") {
  expect_config_error(bert_config(R"("residual_norm": 1)"), "found number 1");
  expect_config_error(bert_config(R"("residual_norm": {"eps": 0})"), "expected a number > 0");
  expect_config_error(bert_config(R"("residual_norm": {"eps": 1e-50})"), "float32 holds");
  expect_config_error(bert_config(R"("residual_norm": {"prefix": 3})"), "");
  expect_error([] { parse(bert_config(R"("residual_norm": {"layer_norm_eps": 1e-5})")); },
               Exit::config, "c.json: key \"residual_norm.layer_norm_eps\"",
               "attn-run's key is residual_norm.eps");
  expect_error([] { parse(bert_config(R"("residual_norm": {"epz": 1e-5})")); }, Exit::config,
               "c.json: key \"residual_norm.epz\": unknown key", "did you mean \"eps\"");
  // Hugging Face's layer_norm_eps at the top level points to it.
  expect_error([] { parse(bert_config(R"("layer_norm_eps": 1e-12)")); }, Exit::config,
               "c.json: key \"layer_norm_eps\"", "\"residual_norm\": {\"eps\": ...}");
  // Self-attention only: it adds the queries' input.
  expect_config_error(
      bert_config(R"("residual_norm": true, "kv_input": [[1, 2, 3, 4, 5, 6, 7, 8]])"),
      "found kv_input (cross-attention)");
  // The input and the output projection must have the same width.
  expect_config_error(bert_config(R"("residual_norm": true, "out_proj": false, "head_size": 2)"),
                      "needs the output projection");
  expect_config_error(bert_config(R"("residual_norm": true, "out_size": 4)"),
                      "hidden_size 8) to the output projection's 4 features");
  // Its weights come from a file, not the tutorial modules' init.
  expect_config_error(
      R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "layout": "separate",
                          "init": {"seed": 1}, "residual_norm": true})",
      "reads its weight and bias from \"weights\"");
}

// input_norm: the block's pre-attention norm before the projections (the residual stream in).
void expect_input_norm_error(const std::string& text, const std::string& part) {
  CAPTURE(text);
  expect_error([&] { parse(text); }, Exit::config, "c.json: input_norm", part);
}

TEST_CASE("config input_norm: forms, run.json and misuse") {
  const Config c = parse(bert_config(
      R"("input_norm": {"kind": "layer", "eps": 1e-5, "weight": "ln_1.weight", "bias": "ln_1.bias"})"));
  REQUIRE(c.spec.input_norm.has_value());
  CHECK(c.spec.input_norm->kind == attn::InputNormKind::layer);
  CHECK(c.spec.input_norm->eps == 1e-5);
  CHECK(c.spec.input_norm->offset == 0);
  const json j = attn::config_to_json(c);
  CHECK(j["input_norm"]["kind"] == "layer");
  CHECK(j["input_norm"]["weight"] == "ln_1.weight");
  CHECK(j["input_norm"]["bias"] == "ln_1.bias");
  CHECK_FALSE(parse(bert_config(R"("input_norm": false)")).spec.input_norm.has_value());
  CHECK_FALSE(parse(bert_config("")).spec.input_norm.has_value());
  CHECK(parse(bert_config(R"("input_norm": {"kind": "none"})")).spec.input_norm->kind ==
        attn::InputNormKind::none);
  expect_input_norm_error(bert_config(R"("input_norm": true)"), "takes the block's own norm");
  expect_input_norm_error(bert_config(R"("input_norm": {"kind": "rms"})"), "needs its weight");
  expect_input_norm_error(
      bert_config(R"("input_norm": {"kind": "rms", "weight": "w", "bias": "b"})"),
      "an RMSNorm has no bias");
  expect_input_norm_error(
      bert_config(R"("input_norm": {"kind": "rms", "weight": "w", "offset": 2})"), "expected 0");
  expect_input_norm_error(bert_config(R"("input_norm": {"kind": "max", "weight": "w"})"),
                          "\"rms\"");
  expect_input_norm_error(
      bert_config(R"("input_norm": {"kind": "rms", "weight": "w"}, "residual_norm": true)"),
      "one or the other");
}

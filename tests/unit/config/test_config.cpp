// The JSON config (CONTRACT.md "Config" and "File safety rules"): every key's
// default, every consistency rule, and a table of bad configs.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "attn/config.h"
#include "attn/error.h"
#include "test_util.h"

using attn::Config;
using attn::Error;
using attn::Exit;
using attn::Kind;
using attn::parse_config;

namespace {

// The message of the Error parse_config throws (and its code), or "" if none.
struct Failure {
  bool threw = false;
  Exit code = Exit::ok;
  std::string message;
};

Failure failure_of(const std::string& text, const std::string& file = "c.json") {
  Failure f;
  try {
    parse_config(text, file);
  } catch (const Error& e) {
    f.threw = true;
    f.code = e.code();
    f.message = e.what();
  }
  return f;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("config: defaults of a minimal single-head config") {
  const Config c = parse_config(R"({"attention": "single", "hidden_size": 8})", "c.json");
  CHECK(c.kind == Kind::single);
  CHECK(c.hidden_size == 8);
  CHECK(c.num_heads == 1);
  CHECK(c.head_size == 2);  // Warner: hidden_size//4
  CHECK(c.out_size == 8);   // Wo maps back to hidden_size
  CHECK(c.out_proj);
  CHECK_FALSE(c.spec.causal);
  CHECK_FALSE(c.context_size.has_value());
  CHECK(c.qkv_bias);
  CHECK(c.out_bias);
  CHECK(c.spec.scale == doctest::Approx(1.0 / std::sqrt(2.0)).epsilon(1e-15));
  CHECK_FALSE(c.scale_given);
  CHECK(c.dropout == 0.0);
  CHECK(c.attn_drop == 0.0);
  CHECK(c.out_drop == 0.0);
  CHECK_FALSE(c.layout.has_value());
  CHECK(c.weights.empty());
  CHECK(c.weights_prefix.empty());
  CHECK_FALSE(c.init_seed.has_value());
  CHECK(c.input_path.empty());
  CHECK_FALSE(c.input_inline.has_value());
  CHECK(c.padding_mask_path.empty());
  CHECK_FALSE(c.padding_mask_inline.has_value());
  CHECK(c.labels.empty());
  CHECK(c.output_dir.empty());
  CHECK(c.output_attention);
  CHECK(c.file == "c.json");
  CHECK(c.dir.empty());
  CHECK(c.inner_size() == 2);
  CHECK(c.out_features() == 8);
}

TEST_CASE("config: single head size floors hidden_size/4 like hidden_size//4") {
  CHECK(parse_config(R"({"attention": "single", "hidden_size": 7})", "c.json").head_size == 1);
  CHECK(parse_config(R"({"attention": "single", "hidden_size": 768})", "c.json").head_size == 192);
  // hidden_size 3 gives 0: the message asks for head_size.
  const Failure f = failure_of(R"({"attention": "single", "hidden_size": 3})");
  CHECK(f.code == Exit::config);
  CHECK(contains(f.message, "c.json: head_size:"));
  const Config c =
      parse_config(R"({"attention": "single", "hidden_size": 3, "head_size": 2})", "c.json");
  CHECK(c.head_size == 2);
  CHECK(c.out_size == 3);
}

TEST_CASE("config: multi and causal split out_size into num_heads heads") {
  const Config m =
      parse_config(R"({"attention": "multi", "hidden_size": 12, "num_heads": 3})", "c.json");
  CHECK(m.head_size == 4);
  CHECK(m.out_size == 12);
  CHECK_FALSE(m.spec.causal);
  const Config c =
      parse_config(R"({"attention": "causal", "hidden_size": 768, "num_heads": 12})", "c.json");
  CHECK(c.kind == Kind::causal);
  CHECK(c.spec.causal);  // default true for "causal"
  CHECK(c.head_size == 64);
  CHECK(c.spec.scale == doctest::Approx(0.125));
  const Config o = parse_config(
      R"({"attention": "multi", "hidden_size": 4, "out_size": 6, "num_heads": 2})", "c.json");
  CHECK(o.head_size == 3);
  CHECK(o.out_size == 6);
  const Config mc =
      parse_config(R"({"attention": "multi", "hidden_size": 4, "causal": true})", "c.json");
  CHECK(mc.spec.causal);
  CHECK(parse_config(R"({"attention": "causal", "hidden_size": 4, "causal": true})", "c.json")
            .spec.causal);
  // An explicit head size overrides the split.
  const Config h = parse_config(
      R"({"attention": "multi", "hidden_size": 6, "num_heads": 4, "head_size": 5})", "c.json");
  CHECK(h.head_size == 5);
  CHECK(h.inner_size() == 20);
  CHECK(h.out_size == 6);
}

TEST_CASE("config: Raschka's MultiHeadAttention(d_in=3, d_out=2, num_heads=2, qkv_bias=False)") {
  const Config c = parse_config(
      R"({"attention":"multi","hidden_size":3,"out_size":2,"num_heads":2,"qkv_bias":false,"causal":true,"context_size":6})",
      "c.json");
  CHECK(c.head_size == 1);
  CHECK(c.out_size == 2);
  CHECK_FALSE(c.qkv_bias);
  CHECK(c.out_bias);  // nn.Linear(d_out, d_out) keeps its default bias
  CHECK(c.spec.scale == 1.0);
  CHECK(c.spec.causal);
  REQUIRE(c.context_size.has_value());
  CHECK(*c.context_size == 6);
}

TEST_CASE("config: bias sets both layers unless overridden") {
  const Config off =
      parse_config(R"({"attention": "single", "hidden_size": 8, "bias": false})", "c.json");
  CHECK_FALSE(off.qkv_bias);
  CHECK_FALSE(off.out_bias);
  const Config mixed = parse_config(
      R"({"attention": "single", "hidden_size": 8, "bias": false, "out_bias": true})", "c.json");
  CHECK_FALSE(mixed.qkv_bias);
  CHECK(mixed.out_bias);
  const Config q =
      parse_config(R"({"attention": "single", "hidden_size": 8, "qkv_bias": false})", "c.json");
  CHECK_FALSE(q.qkv_bias);
  CHECK(q.out_bias);
}

TEST_CASE("config: out_proj false makes the output num_heads*head_size wide") {
  const Config a = parse_config(
      R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "out_proj": false})", "c.json");
  CHECK(a.head_size == 4);
  CHECK(a.out_size == 8);
  const Config b = parse_config(
      R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "head_size": 3, "out_proj": false})",
      "c.json");
  CHECK(b.out_size == 6);
  CHECK(b.out_features() == 6);
  const Config s =
      parse_config(R"({"attention": "single", "hidden_size": 8, "out_proj": false})", "c.json");
  CHECK(s.out_size == 2);
  const Config g = parse_config(
      R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "out_size": 6, "out_proj": false})",
      "c.json");
  CHECK(g.head_size == 3);
  CHECK(g.out_size == 6);
  const Failure f = failure_of(
      R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "head_size": 3, "out_size": 5, "out_proj": false})");
  CHECK(f.code == Exit::config);
  CHECK(contains(f.message, "c.json: out_size:"));
  CHECK(contains(f.message, "6"));
}

TEST_CASE("config: scale, dropout, layout, init, weights_prefix, labels, output are kept") {
  const Config c = parse_config(R"({
    "attention": "multi", "hidden_size": 8, "num_heads": 2, "scale": 0.25,
    "dropout": 0.1, "attn_drop": 0.5, "out_drop": 0, "layout": "fused",
    "init": {"seed": 18446744073709551615}, "weights_prefix": "transformer.h.0.attn.",
    "labels": ["a", "b"], "output": {"dir": "out", "attention": false}})",
                                "cfg/c.json");
  CHECK(c.spec.scale == 0.25);
  CHECK(c.scale_given);
  CHECK(c.dropout == doctest::Approx(0.1));
  CHECK(c.attn_drop == 0.5);
  REQUIRE(c.layout.has_value());
  CHECK(*c.layout == attn::Layout::fused);
  REQUIRE(c.init_seed.has_value());
  CHECK(*c.init_seed == 18446744073709551615ull);
  CHECK(c.weights_prefix == "transformer.h.0.attn.");
  CHECK(c.labels == std::vector<std::string>{"a", "b"});
  CHECK(c.output_dir == "cfg/out");
  CHECK_FALSE(c.output_attention);
  const nlohmann::json j = attn::config_to_json(c);
  CHECK(j["init"]["seed"].get<std::uint64_t>() == 18446744073709551615ull);
  CHECK(j["scale"] == 0.25);
  CHECK(j["labels"] == nlohmann::json({"a", "b"}));
  CHECK(j["output"]["attention"] == false);
  // Integral numbers written as floats are integers (JSON Schema's rule).
  CHECK(
      parse_config(
          R"({"attention": "single", "hidden_size": 8.0, "init": {"seed": 0}, "layout": "kqv", "out_proj": false})",
          "c.json")
          .hidden_size == 8);
}

TEST_CASE("config: paths resolve against the config's folder") {
  const Config c = parse_config(
      R"({"attention": "single", "hidden_size": 8, "weights": "w/x.npz", "input": "in.npy", "padding_mask": "/abs/m.npy"})",
      "configs/sub/c.json");
  CHECK(c.dir == "configs/sub");
  CHECK(c.weights == "configs/sub/w/x.npz");
  CHECK(c.input_path == "configs/sub/in.npy");
  CHECK(c.padding_mask_path == "/abs/m.npy");
  // A config without a folder resolves against the working directory.
  const Config d =
      parse_config(R"({"attention": "single", "hidden_size": 8, "input": "in.npy"})", "c.json");
  CHECK(d.input_path == "in.npy");
  // "-" is standard input, never a file next to the config.
  const Config s =
      parse_config(R"({"attention": "single", "hidden_size": 8, "input": "-"})", "configs/c.json");
  CHECK(s.input_path == "-");
}

TEST_CASE("config: inline input and padding mask") {
  const Config c = parse_config(R"({"attention": "single", "hidden_size": 3,"head_size": 2,
    "input": [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66]],
    "padding_mask": [false, 1], "labels": ["Your", "journey"]})",
                                "c.json");
  REQUIRE(c.input_inline.has_value());
  CHECK(c.input_inline->shape == std::vector<std::size_t>{2, 3});
  CHECK(c.input_inline->data[1] == 0.15f);
  CHECK(c.input_inline->data[5] == 0.66f);
  REQUIRE(c.padding_mask_inline.has_value());
  CHECK(c.padding_mask_inline->shape == std::vector<std::size_t>{2});
  CHECK(c.padding_mask_inline->data == std::vector<std::uint8_t>{0, 1});
  const Config b = parse_config(R"({"attention": "single", "hidden_size": 4,
    "input": [[[1, 2, 3, 4]], [[5, 6, 7, 8]]], "padding_mask": [[true], [0]]})",
                                "c.json");
  CHECK(b.input_inline->shape == std::vector<std::size_t>{2, 1, 4});
  CHECK(b.input_inline->data[7] == 8.0f);
  CHECK(b.padding_mask_inline->shape == std::vector<std::size_t>{2, 1});
  CHECK(b.padding_mask_inline->data == std::vector<std::uint8_t>{1, 0});
}

TEST_CASE("config: resolve_config is idempotent and follows changed fields") {
  Config c = parse_config(R"({"attention": "multi", "hidden_size": 12, "num_heads": 3})", "c.json");
  const nlohmann::json first = attn::config_to_json(c);
  attn::resolve_config(c);
  attn::resolve_config(c);
  CHECK(attn::config_to_json(c) == first);
  // A later change (as a flag would make) re-derives the sizes that were not given.
  c.out_size = 6;
  c.out_size_given = true;
  attn::resolve_config(c);
  CHECK(c.head_size == 2);
  CHECK(c.spec.scale == doctest::Approx(1.0 / std::sqrt(2.0)));
  // And the rules still hold after changes.
  c.kind = Kind::single;
  CHECK_THROWS_AS(attn::resolve_config(c), Error);
  Config w = parse_config(
      R"({"attention": "single", "hidden_size": 8, "init": {"seed": 1}, "layout": "fused"})",
      "c.json");
  w.weights = "x.npz";
  try {
    attn::resolve_config(w);
    FAIL("weights + init accepted");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::config);
    CHECK(contains(e.what(), "init"));
  }
}

TEST_CASE("config: config_to_json holds the resolved config") {
  const Config c =
      parse_config(R"({"attention": "causal", "hidden_size": 3, "out_size": 2, "num_heads": 2,
    "qkv_bias": false, "context_size": 6, "layout": "separate", "weights": "w",
    "input": [[1, 2, 3]], "output": {"dir": "o"}})",
                   "d/c.json");
  const nlohmann::json j = attn::config_to_json(c);
  CHECK(j["attention"] == "causal");
  CHECK(j["hidden_size"] == 3);
  CHECK(j["num_heads"] == 2);
  CHECK(j["head_size"] == 1);
  CHECK(j["out_size"] == 2);
  CHECK(j["out_proj"] == true);
  CHECK(j["causal"] == true);
  CHECK(j["context_size"] == 6);
  CHECK(j["qkv_bias"] == false);
  CHECK(j["out_bias"] == true);
  CHECK(j["scale"] == 1.0);
  CHECK(j["layout"] == "separate");
  CHECK(j["weights"] == "d/w");
  CHECK(j["weights_prefix"] == "");
  CHECK(j["init"].is_null());
  CHECK(j["input"] == "inline");
  CHECK(j["padding_mask"].is_null());
  CHECK(j["labels"].is_array());
  CHECK(j["output"]["dir"] == "d/o");
  CHECK(j["output"]["attention"] == true);
  const nlohmann::json k =
      attn::config_to_json(parse_config(R"({"attention": "single", "hidden_size": 8})", "c.json"));
  CHECK(k["layout"].is_null());
  CHECK(k["weights"].is_null());
  CHECK(k["input"].is_null());
}

TEST_CASE("config: config_keys lists the table in order") {
  const auto& k = attn::config_keys();
  CHECK(k.size() == 60);  // 24 of version 1, the v2 table and kv_labels, then v3's, v4's
  CHECK(k.front() == "attention");
  CHECK(k[23] == "output");
  CHECK(k[43] == "layer");
  CHECK(k[44] == "weights_rename");
  CHECK(k[45] == "gate");  // "(v3) More of the forward pass"
  CHECK(k[46] == "attention_chunk");
  CHECK(k[47] == "attn_temperature");
  CHECK(k[48] == "relative_bias");
  CHECK(k[49] == "mla");
  CHECK(k[50] == "residual_norm");  // what the context is
  CHECK(k[51] == "v_norm");         // Gemma 4
  CHECK(k[52] == "k_eq_v");
  CHECK(k[53] == "decoder_layer");  // an encoder-decoder's decoder module
  CHECK(k[54] == "cross_attention");
  CHECK(k[55] == "input_norm");    // the residual stream in
  CHECK(k[56] == "embedding");     // layer 0's input from token ids
  CHECK(k[57] == "disentangled");  // score terms: DeBERTa
  CHECK(k[58] == "mask_padded_queries");
  CHECK(k.back() == "clip_qkv");
  for (const char* key :
       {"hidden_size", "num_heads",    "num_kv_heads", "head_size", "out_size", "out_proj",
        "causal",      "context_size", "bias",         "qkv_bias",  "out_bias", "scale",
        "dropout",     "attn_drop",    "out_drop",     "layout",    "weights",  "weights_prefix",
        "init",        "input",        "padding_mask", "labels"})
    CHECK(std::find(k.begin(), k.end(), key) != k.end());
  CHECK(attn::kind_name(Kind::multi) == "multi");
}

TEST_CASE("config: run.json writes back every key of the table, and only those") {
  // The table's rows are the one list of keys: each has its run.json entry
  // ("bias" is written as qkv_bias and out_bias), and run.json's config holds
  // nothing else but what the model folder said.
  const nlohmann::json j = attn::config_to_json(parse_config(
      R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "rope": {},
          "qk_norm": {}, "alibi": true, "relative_bias": {}, "residual_norm": true,
          "attn_temperature": {}, "v_norm": {}})",
      "c.json"));
  std::set<std::string> written;
  for (const auto& [key, value] : j.items()) written.insert(key);
  std::set<std::string> known(attn::config_keys().begin(), attn::config_keys().end());
  known.erase("bias");
  known.insert("from_model");
  CHECK(written == known);
  // Each object's fields, as resolved.
  CHECK(j["rope"].size() == 6);
  CHECK(j["rope"]["precision"] == "float64");
  CHECK(j["qk_norm"].size() == 7);
  CHECK(j["alibi"] == nlohmann::json{{"max_bias", 8.0}, {"slopes", {0.0625, 0.00390625}}});
  CHECK(j["relative_bias"]["bidirectional"] == true);  // not causal
  CHECK(j["residual_norm"]["prefix"] == "output.LayerNorm.");
  CHECK(j["attn_temperature"] == nlohmann::json{{"floor_scale", 8192.0}, {"attn_scale", 0.1}});
  CHECK(j["v_norm"] == nlohmann::json{{"kind", "rms"}, {"eps", 1e-6}});
}

// Each bad config: the exit code is Exit::config and the message starts with
// the file and names the key (or the line and column).
struct BadCase {
  const char* what;
  std::string text;
  std::vector<std::string> expect;  // substrings of the message
};

TEST_CASE("config: bad configs are Exit::config errors naming the key") {
  const std::string pre = R"({"attention": "multi", "hidden_size": 8, )";
  const std::vector<BadCase> cases = {
      {"unknown key with suggestion",
       R"({"attention": "single", "hiden_size": 8})",
       {"c.json: key \"hiden_size\": unknown key; did you mean \"hidden_size\"?"}},
      {"transposed key",
       pre + R"("num_haeds": 2})",
       {"\"num_haeds\"", "did you mean \"num_heads\""}},
      {"unknown key inside output",
       pre + R"("output": {"dri": "o"}})",
       {"\"output.dri\"", "did you mean \"dir\""}},
      {"unknown key inside init",
       pre + R"("layout": "fused", "init": {"sead": 1}})",
       {"\"init.sead\"", "\"seed\""}},
      {"duplicate top-level key",
       R"({"attention": "single", "hidden_size": 8, "hidden_size": 16})",
       {"\"hidden_size\"", "duplicate"}},
      {"duplicate inside output",
       pre + R"("output": {"dir": "a", "dir": "b"}})",
       {"\"output.dir\"", "duplicate"}},
      {"duplicate inside init",
       pre + R"("layout": "fused", "init": {"seed": 1, "seed": 2}})",
       {"\"init.seed\"", "duplicate"}},
      {"non-integral size", pre + R"("num_heads": 8.5})", {"c.json: num_heads:", "8.5"}},
      {"overflowing number",
       R"({"attention": "single", "hidden_size": 1e400})",
       {"c.json: hidden_size:", "1e400"}},
      {"huge integer",
       R"({"attention": "single", "hidden_size": 99999999999999999999999})",
       {"hidden_size:", "range"}},
      {"size as string",
       R"({"attention": "single", "hidden_size": "8"})",
       {"hidden_size:", "string \"8\""}},
      {"negative size", pre + R"("head_size": -1})", {"c.json: head_size:", "-1"}},
      {"zero size", pre + R"("out_size": 0})", {"c.json: out_size:", "found 0"}},
      {"boolean for int", pre + R"("num_heads": true})", {"num_heads:", "boolean true"}},
      {"size too large", pre + R"("num_heads": 100000000})", {"num_heads:", "100000000"}},
      {"zero context", pre + R"("context_size": 0})", {"context_size:"}},
      {"wrong enum",
       R"({"attention": "mult", "hidden_size": 8})",
       {"c.json: attention:", "\"mult\""}},
      {"attention missing", R"({"hidden_size": 8})", {"attention:", "required"}},
      {"hidden_size missing", R"({"attention": "multi"})", {"hidden_size:", "required"}},
      {"causal kind with causal false",
       R"({"attention": "causal", "hidden_size": 8, "causal": false})",
       {"c.json: causal:"}},
      {"two heads for single",
       R"({"attention": "single", "hidden_size": 8, "num_heads": 2})",
       {"c.json: num_heads:", "single"}},
      {"head size not divisible", pre + R"("num_heads": 3})", {"head_size:", "not divisible"}},
      {"out_size vs out_proj",
       pre + R"("num_heads": 2, "head_size": 2, "out_size": 8, "out_proj": false})",
       {"c.json: out_size:", "out_proj"}},
      {"causal as string", pre + R"("causal": "yes"})", {"causal:", "string \"yes\""}},
      {"bias as number", pre + R"("bias": 1})", {"bias:", "number 1"}},
      {"zero scale", pre + R"("scale": 0})", {"c.json: scale:"}},
      {"scale as string", pre + R"("scale": "0.5"})", {"scale:"}},
      {"dropout of one", pre + R"("dropout": 1})", {"c.json: dropout:"}},
      {"negative attn_drop", pre + R"("attn_drop": -0.1})", {"attn_drop:"}},
      {"unknown layout lists names",
       pre + R"("layout": "fuzed"})",
       {"c.json: layout:", "fused, separate, per_head, kqv, torch_mha, gpt2"}},
      {"weights with init",
       pre + R"("layout": "fused", "weights": "w", "init": {"seed": 1}})",
       {"weights", "drop \"init\""}},
      {"init without layout", pre + R"("init": {"seed": 1}})", {"c.json: layout:", "fused"}},
      {"negative seed", pre + R"("layout": "fused", "init": {"seed": -1}})", {"init.seed:"}},
      {"seed past 2^64",
       pre + R"("layout": "fused", "init": {"seed": 18446744073709551616}})",
       {"init.seed:"}},
      {"init without seed", pre + R"("layout": "fused", "init": {}})", {"init:", "seed"}},
      {"init not an object", pre + R"("layout": "fused", "init": 5})", {"init:", "object"}},
      {"output.dir as number",
       pre + R"("output": {"dir": 3}})",
       {"c.json: output.dir: expected a string, found number 3"}},
      {"output.attention as string",
       pre + R"("output": {"attention": "no"}})",
       {"output.attention:"}},
      {"weights as array", pre + R"("weights": ["a"]})", {"weights:", "array"}},
      {"empty weights path", pre + R"("weights": ""})", {"weights:", "empty"}},
      {"labels not strings", pre + R"("labels": ["a", 5]})", {"labels[1]:", "number 5"}},
      {"ragged inline input", pre + R"("input": [[1,2,3,4,5,6,7,8], [1,2,3]]})", {"input[1]", "8"}},
      {"inline input of wrong width",
       pre + R"("input": [[1, 2, 3]]})",
       {"c.json: input:", "(1, 3)"}},
      {"empty input", pre + R"("input": []})", {"input", "empty"}},
      {"empty batch row", pre + R"("input": [[]]})", {"input", "empty"}},
      {"input of depth 1", pre + R"("input": [1, 2, 3, 4, 5, 6, 7, 8]})", {"input:", "(S, C)"}},
      {"input with a string", pre + R"("input": [[1,2,3,4,5,6,7,"x"]]})", {"input[0][7]"}},
      {"input with a boolean", pre + R"("input": [[1,2,3,4,5,6,7,true]]})", {"input[0][7]"}},
      {"input overflowing float32", pre + R"("input": [[1,2,3,4,5,6,7,1e39]]})", {"input[0][7]"}},
      {"input overflowing double", pre + R"("input": [[1,2,3,4,5,6,7,1e400]]})", {"input[0][7]"}},
      {"input as number", pre + R"("input": 5})", {"input:", "path or a nested array"}},
      {"input longer than context",
       pre + R"("context_size": 1, "input": [[1,2,3,4,5,6,7,8],[1,2,3,4,5,6,7,8]]})",
       {"input:", "context_size"}},
      {"mask with a 2", pre + R"("padding_mask": [0, 2]})", {"padding_mask[1]"}},
      {"mask length vs input",
       pre + R"("input": [[1,2,3,4,5,6,7,8]], "padding_mask": [0, 1]})",
       {"padding_mask:"}},
      {"labels count vs input",
       pre + R"("input": [[1,2,3,4,5,6,7,8]], "labels": ["a", "b"]})",
       {"labels:"}},
      {"per_head layout with out_proj",
       pre + R"("layout": "per_head"})",
       {"out_proj:", "per_head"}},
      {"torch_mha sizes",
       pre + R"("layout": "torch_mha", "out_size": 4})",
       {"layout:", "torch_mha"}},
      {"top level array", R"([1, 2])", {"c.json:", "object"}},
      {"syntax: missing comma",
       "{\"attention\": \"single\"\n \"hidden_size\": 8}",
       {"c.json: JSON syntax error at line 2, column 14"}},
      {"syntax: trailing comma",
       "{\"attention\": \"single\",\n\n  }",
       {"c.json: JSON syntax error at line 3, column 3"}},
      {"syntax: empty text", "", {"c.json: JSON syntax error at line 1, column 1"}},
      {"syntax: comment",
       "{\"attention\": \"single\", // no comments\n\"hidden_size\": 8}",
       {"JSON syntax error at line 1, column 25"}},
      {"syntax: NaN",
       R"({"attention": "single", "hidden_size": NaN})",
       {"JSON syntax error at line 1, column 40"}},
      {"syntax: trailing garbage",
       R"({"attention": "single", "hidden_size": 8} x)",
       {"JSON syntax error at line 1"}},
  };
  CHECK(cases.size() >= 25);
  for (const auto& bc : cases) {
    const std::string what = bc.what;
    CAPTURE(what);
    const Failure f = failure_of(bc.text);
    CAPTURE(f.message);
    REQUIRE(f.threw);
    CHECK(f.code == Exit::config);
    CHECK(f.message.rfind("c.json: ", 0) == 0);
    for (const auto& part : bc.expect) CHECK(contains(f.message, part));
  }
}

TEST_CASE("config: hostile nesting and size end quickly with Exit::config") {
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& text :
       {std::string(100000, '['), std::string(100000, '[') + std::string(100000, ']'),
        "{\"input\": " + std::string(100000, '['), "{\"labels\":" + [] {
          std::string s;
          for (int i = 0; i < 50000; ++i) s += "{\"a\":";
          return s;
        }()}) {
    const Failure f = failure_of(text);
    REQUIRE(f.threw);
    CHECK(f.code == Exit::config);
    CHECK(contains(f.message, "nested deeper than 16"));
  }
  // The inline input a config needs (top object + (B, S, C)) is well inside the cap.
  CHECK(parse_config(R"({"attention": "single", "hidden_size": 4, "input": [[[1, 2, 3, 4]]]})",
                     "c.json")
            .input_inline->ndim() == 3);

  const std::string big = R"({"attention": "single", "hidden_size": 8, "labels": [")" +
                          std::string(attn::kMaxConfigBytes, 'x') + "\"]}";
  const Failure f = failure_of(big);
  CHECK(f.code == Exit::config);
  CHECK(contains(f.message, "c.json: "));
  CHECK(contains(f.message, "1 MiB"));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 2.0);
}

TEST_CASE("config: a near-1 MiB inline input parses in well under a second") {
  // 16 tokens of C = 4096 numbers: about 1e5 numbers of ~8 characters.
  std::string text = R"({"attention": "single", "hidden_size": 4096, "input": [)";
  for (int s = 0; s < 24; ++s) {
    text += s ? ",[" : "[";
    for (int c = 0; c < 4096; ++c)
      text += (c ? "," : "") + std::to_string(((s * 31 + c) % 997) / 997.0).substr(0, 7);
    text += "]";
  }
  text += "]}";
  REQUIRE(text.size() < attn::kMaxConfigBytes);
  const auto start = std::chrono::steady_clock::now();
  const Config c = parse_config(text, "c.json");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(c.input_inline->shape == std::vector<std::size_t>{24, 4096});
  CHECK(seconds < 1.0);
}

TEST_CASE("config: many unknown nested keys fail fast") {
  // A 1 MiB object of distinct keys under a key that is not checked while
  // parsing must not cost quadratic time; it is then a type error for labels.
  std::string text = R"({"attention": "single", "hidden_size": 8, "labels": {)";
  for (int i = 0; text.size() < attn::kMaxConfigBytes - 32; ++i)
    text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":1";
  text += "}}";
  const auto start = std::chrono::steady_clock::now();
  const Failure f = failure_of(text);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(f.code == Exit::config);
  CHECK(contains(f.message, "labels:"));
  CHECK(seconds < 2.0);
}

TEST_CASE("config: load_config reads files next to their paths") {
  attn::test::TempDir tmp;
  attn::test::write_text(tmp / "c.json",
                         R"({"attention": "single", "hidden_size": 8, "weights": "w.npz"})");
  const Config c = attn::load_config(tmp / "c.json");
  CHECK(c.file == tmp / "c.json");
  CHECK(c.dir == tmp.path);
  CHECK(c.weights == tmp / "w.npz");

  try {
    attn::load_config(tmp / "missing.json");
    FAIL("missing config accepted");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::no_input);
    CHECK(contains(e.what(), "missing.json"));
  }

  attn::test::write_text(tmp / "big.json", std::string(attn::kMaxConfigBytes + 10, ' '));
  try {
    attn::load_config(tmp / "big.json");
    FAIL("oversized config accepted");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::config);
    CHECK(contains(e.what(), "big.json"));
  }

  attn::test::write_text(tmp / "bad.json",
                         "{\n  \"attention\": \"single\",\n  \"hidden_size\": 8,,\n}");
  try {
    attn::load_config(tmp / "bad.json");
    FAIL("syntax error accepted");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::config);
    CHECK(contains(e.what(), "bad.json: JSON syntax error at line 3, column 20"));
  }
}

TEST_CASE("config: every shipped config in configs/ loads") {
  std::size_t n = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(attn::test::source_path("configs"))) {
    if (entry.path().extension() != ".json") continue;
    CAPTURE(entry.path().string());
    const Config c = attn::load_config(entry.path().string());
    CHECK(c.dir == entry.path().parent_path().string());
    CHECK(c.out_features() > 0);
    ++n;
  }
  CHECK(n > 0);
}

TEST_CASE("config: num_kv_heads defaults to num_heads, must divide it, and reaches run.json") {
  const Config mha =
      parse_config(R"({"attention": "multi", "hidden_size": 8, "num_heads": 4})", "c.json");
  CHECK_FALSE(mha.num_kv_heads.has_value());
  CHECK(mha.kv_heads() == 4);
  CHECK(attn::config_to_json(mha)["num_kv_heads"] == 4);

  const Config gqa = parse_config(
      R"({"attention": "causal", "hidden_size": 16, "num_heads": 4, "num_kv_heads": 2})", "c.json");
  CHECK(gqa.kv_heads() == 2);
  CHECK(attn::config_to_json(gqa)["num_kv_heads"] == 2);
  const Config mqa = parse_config(
      R"({"attention": "causal", "hidden_size": 16, "num_heads": 4, "num_kv_heads": 1})", "c.json");
  CHECK(mqa.kv_heads() == 1);

  Failure f =
      failure_of(R"({"attention": "multi", "hidden_size": 12, "num_heads": 6, "num_kv_heads": 4})");
  CHECK(f.code == Exit::config);
  CHECK(f.message ==
        "c.json: num_kv_heads: expected a divisor of num_heads 6, found num_kv_heads 4");
  f = failure_of(R"({"attention": "multi", "hidden_size": 12, "num_heads": 6, "num_kv_heads": 0})");
  CHECK(f.code == Exit::config);
  CHECK(contains(f.message, "num_kv_heads: expected an integer in 1.."));
  f = failure_of(
      R"({"attention": "multi", "hidden_size": 12, "num_heads": 6, "num_kv_heads": 12})");
  CHECK(contains(f.message,
                 "num_kv_heads: expected a divisor of num_heads 6, found num_kv_heads 12"));

  // Layouts without grouped KV heads refuse it, naming the layout.
  f = failure_of(R"({"attention": "multi", "hidden_size": 8, "num_heads": 4, "num_kv_heads": 2,
                     "layout": "torch_mha"})");
  CHECK(f.code == Exit::config);
  CHECK(f.message ==
        "c.json: layout: layout torch_mha holds one key and value head per query head "
        "(num_kv_heads = num_heads = 4), found num_kv_heads 2");
  for (const char* l : {"gpt2", "per_head", "bert", "neox"}) {
    CAPTURE(l);
    const std::string out = std::string(l) == "per_head" ? R"(, "out_proj": false)" : "";
    f = failure_of(R"({"attention": "multi", "hidden_size": 8, "num_heads": 4, "num_kv_heads": 2,
                       "layout": ")" +
                   std::string(l) + "\"" + out + "}");
    CHECK(f.code == Exit::config);
    CHECK(contains(f.message, "holds one key and value head per query head"));
  }
  for (const char* l : {"fused", "separate", "proj", "falcon"}) {
    CAPTURE(l);
    CHECK_FALSE(
        failure_of(R"({"attention": "multi", "hidden_size": 8, "num_heads": 4, "num_kv_heads": 2,
                               "layout": ")" +
                   std::string(l) + "\"}")
            .threw);
  }
}

TEST_CASE("config: init refuses the model families' layouts and grouped heads") {
  Failure f =
      failure_of(R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "layout": "proj",
                             "init": {"seed": 1}})");
  CHECK(f.code == Exit::config);
  CHECK(
      contains(f.message, "c.json: init: layout proj names a Hugging Face model family's weights"));
  f = failure_of(R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "num_kv_heads": 1,
                     "layout": "fused", "init": {"seed": 1}})");
  CHECK(f.code == Exit::config);
  CHECK(f.message ==
        "c.json: init: the tutorial modules have no grouped-query attention: init needs "
        "num_kv_heads = num_heads (2), found num_kv_heads 1");
  CHECK_FALSE(
      failure_of(R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "num_kv_heads": 2,
                             "layout": "fused", "init": {"seed": 1}})")
          .threw);
}

TEST_CASE(
    "config: Hugging Face's and torch's key names get attn-run's name, not a spelling guess") {
  const std::vector<std::pair<std::string, std::string>> same = {
      {"num_key_value_heads", "num_kv_heads"},
      {"n_head", "num_heads"},
      {"num_attention_heads", "num_heads"},
      {"n_embd", "hidden_size"},
      {"embed_dim", "hidden_size"},
      {"key_padding_mask", "padding_mask"},
      {"head_dim", "head_size"},
      {"rope_theta", "rope.theta"},
      {"rotary_pct", "rope.rotary_dim"}};
  for (const auto& [theirs, ours] : same) {
    CAPTURE(theirs);
    const Failure f =
        failure_of(R"({"attention": "multi", "hidden_size": 8, ")" + theirs + R"(": 2})");
    CHECK(f.code == Exit::config);
    CHECK(contains(f.message, "key \"" + theirs +
                                  "\": this is Hugging Face's or torch's name; "
                                  "attn-run's key is " +
                                  ours));
    CHECK_FALSE(contains(f.message, "did you mean"));
  }
  const Failure f = failure_of(R"({"attention": "multi", "hidden_size": 8, "hidden_act": "gelu"})");
  CHECK(f.code == Exit::config);
  CHECK(contains(f.message,
                 "key \"hidden_act\": this is a Hugging Face or torch setting, not an "
                 "attn-run config key"));
  // Other unknown keys still get the nearest known key.
  CHECK(contains(failure_of(R"({"attention": "multi", "hidden_sise": 8})").message,
                 "did you mean \"hidden_size\"?"));
}

TEST_CASE("config: an explicit bias is asked for; the default is not") {
  const Config d =
      parse_config(R"({"attention": "multi", "hidden_size": 8, "num_heads": 2})", "c.json");
  CHECK(d.qkv_bias);
  CHECK_FALSE(d.qkv_bias_given);
  CHECK_FALSE(d.out_bias_given);
  const Config b = parse_config(
      R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "bias": true})", "c.json");
  CHECK(b.qkv_bias_given);
  CHECK(b.out_bias_given);
  const Config q = parse_config(
      R"({"attention": "multi", "hidden_size": 8, "num_heads": 2, "qkv_bias": true, "out_bias": false})",
      "c.json");
  CHECK(q.qkv_bias_given);
  CHECK_FALSE(q.out_bias_given);
  CHECK_FALSE(q.out_bias);
}

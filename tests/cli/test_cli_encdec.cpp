// cli_encdec: encoder-decoder and hybrid model folders through the built
// binary (their golden folders): the listing's encoder and decoder rows (self
// and cross) with the flags that run each, --decoder-layer N [--cross
// --encoder-output FILE] and its errors, and a hybrid's Mamba, MLP and MoE
// layers listed "not run" and refused by name with the layers that run.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "attn/npy.h"
#include "cli_checks.h"
#include "json_files.h"
#include "test_util.h"

using attn::test::q;
using attn::test::run;
using attn::test::RunResult;
using attn::test::TempDir;
using nlohmann::json;

namespace {

std::string bin() { return attn::test::quoted_binary(); }

std::string golden(const std::string& name) {
  return attn::test::source_path("tests/golden/folders/" + name);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("cli_encdec: an encoder-decoder's listing shows both stacks and how to run each") {
  const RunResult r = run(bin() + " --model " + q(golden("bart/model")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(has(r.out, "(bart, 2 encoder + 2 decoder layers)"));
  CHECK(has(r.out, "encoder 1  bidirectional"));
  CHECK(has(r.out, "--layer 1"));
  CHECK(has(r.out, "decoder 0  causal"));
  CHECK(has(r.out, "--decoder-layer 0 --cross --encoder-output ENC.npy"));
  const RunResult j = run(bin() + " --model " + q(golden("bart/model")) + " --format json");
  REQUIRE_MESSAGE(j.exit_code == 0, j.err);
  const json s = json::parse(j.out);
  CHECK(s["decoder_layers"] == 2);
  REQUIRE(s["layers"].size() == 6);  // 2 encoder layers, then self and cross of 2 decoder layers
  CHECK(s["layers"][0]["stack"] == "encoder");
  CHECK(s["layers"][0]["num_heads"] == 4);  // encoder_attention_heads
  CHECK(s["layers"][2]["module"] == "decoder_self");
  CHECK(s["layers"][2]["causal"] == true);
  CHECK(s["layers"][2]["num_heads"] == 3);  // decoder_attention_heads
  CHECK(s["layers"][3]["module"] == "decoder_cross");
  CHECK(s["layers"][3]["causal"] == false);
  CHECK(s["layers"][3]["weights_prefix"] == "model.decoder.layers.0.encoder_attn.");
}

TEST_CASE("cli_encdec: --decoder-layer N [--cross] runs the decoder's modules") {
  const TempDir t;
  const std::string d = golden("whisper/decoder_cross0");
  const RunResult r =
      run(bin() + " --model " + q(golden("whisper/model")) +
          " --decoder-layer 0 --cross --encoder-output " + q(d + "/encoder_states.npy") +
          " --input " + q(d + "/input.npy") + " -o " + q(t / "out"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const attn::test::Diff diff =
      attn::test::compare(attn::read_npy_f32(t / "out/context.npy", false),
                          attn::read_npy_f32(d + "/expected/context.npy", false));
  CHECK_MESSAGE(diff.relative() < 1e-5, attn::test::describe(diff));
  const json rj = attn::test::read_json(t / "out/run.json");
  CHECK(rj["config"]["decoder_layer"] == 0);
  CHECK(rj["config"]["cross_attention"] == true);

  const std::string model = " --model " + q(golden("bart/model"));
  const std::string in = " --input " + q(golden("bart/layer1/input.npy"));
  // --cross without the encoder's output, --cross alone, both layers, a layer past the end
  RunResult e = run(bin() + model + " --decoder-layer 1 --cross" + in);
  CHECK(e.exit_code == 64);
  CHECK(has(e.err, "--encoder-output"));
  e = run(bin() + model + " --cross" + in);
  CHECK(e.exit_code == 64);
  CHECK(has(e.err, "--decoder-layer"));
  e = run(bin() + model + " --decoder-layer 1 --layer 0" + in);
  CHECK(e.exit_code == 64);
  e = run(bin() + model + " --decoder-layer 2" + in);
  CHECK(e.exit_code == 64);
  CHECK(has(e.err, "decoder layers 0..1"));
  // a decoder-only model has no decoder layers
  e = run(bin() + " --model " + q(golden("granite/model")) + " --decoder-layer 0" + in);
  CHECK(e.exit_code == 64);
  CHECK(has(e.err, "not an encoder-decoder"));
}

TEST_CASE("cli_encdec: a hybrid's non-attention layers are listed not run and refused") {
  const RunResult r = run(bin() + " --model " + q(golden("nemotron_h/model")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(has(r.out, "mamba (not run)"));
  CHECK(has(r.out, "mlp (not run)"));
  CHECK(has(r.out, "moe (not run)"));
  const RunResult g = run(bin() + " --model " + q(golden("granite_4_h/model")));
  CHECK(has(g.out, "mamba (not run)"));
  const RunResult e = run(bin() + " --model " + q(golden("jamba/model")) + " --layer 1 --input " +
                          q(golden("jamba/layer2/input.npy")));
  CHECK(e.exit_code == 64);
  CHECK(has(e.err, "a mamba layer"));
  CHECK(has(e.err, "its attention layers are 2, 6"));
}

TEST_CASE("cli_encdec: --residual on Falcon-H1 runs its norm times attention_in_multiplier") {
  const TempDir t;
  std::filesystem::copy(golden("falcon_h1/model"), t / "model");
  const std::string input = q(golden("falcon_h1/layer0/input.npy"));
  const RunResult one = run(bin() + " --model " + q(t / "model") + " --layer 0 --input " + input +
                            " --residual -o " + q(t / "one"));
  REQUIRE_MESSAGE(one.exit_code == 0, one.err);
  CHECK(attn::test::read_json(t / "one/run.json")["config"]["input_norm"]["multiplier"] == 1.0);
  // FalconH1DecoderLayer: input_layernorm(h) * attention_in_multiplier (the numbers against
  // torch: the golden folder falcon_h1_residual). Here: run.json records it, and it changes
  // the result.
  const std::string cfg = attn::test::read_text(t / "model/config.json");
  json c = json::parse(cfg);
  c["attention_in_multiplier"] = 0.5;
  attn::test::write_text(t / "model/config.json", c.dump());
  const RunResult half = run(bin() + " --model " + q(t / "model") + " --layer 0 --input " + input +
                             " --residual -o " + q(t / "half"));
  REQUIRE_MESSAGE(half.exit_code == 0, half.err);
  CHECK(attn::test::read_json(t / "half/run.json")["config"]["input_norm"]["multiplier"] == 0.5);
  const attn::Tensor a = attn::read_npy_f32(t / "one/context.npy", false);
  const attn::Tensor b = attn::read_npy_f32(t / "half/context.npy", false);
  REQUIRE(a.shape == b.shape);
  double differ = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i)
    differ = std::max(differ, double(std::abs(a.data[i] - b.data[i])));
  CHECK(differ > 1e-3);
  // Without --residual the input is the attention module's own: the multiplier is not asked.
  const RunResult plain = run(bin() + " --model " + q(t / "model") + " --layer 0 --input " + input +
                              " -o " + q(t / "plain"));
  CHECK_MESSAGE(plain.exit_code == 0, plain.err);
}

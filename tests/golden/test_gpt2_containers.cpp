// gpt2_containers: one GPT-2 attention layer picked by weights_prefix out of
// a two-layer state dict in each container users bring (folder of .npy,
// np.savez, np.savez_compressed, .safetensors), run end to end through the
// binary and compared with Hugging Face GPT2Attention's output computed by
// PyTorch (tests/golden/generate.py: gen/sets/init.py).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "golden_manifest.h"
#include "test_util.h"

namespace fs = std::filesystem;

TEST_CASE("gpt2_containers: layer 1 of every container gives HF GPT2Attention's output") {
  const attn::Tensor want = attn::to_float32(
      attn::read_npy(attn::test::source_path("tests/golden/init/gpt2_expected/context_h1.npy")),
      "context_h1", false);
  std::vector<std::string> configs;
  for (const auto& e : fs::directory_iterator(attn::test::source_path("tests/golden/gpt2"))) {
    if (e.path().extension() != ".json") continue;
    configs.push_back(e.path().filename().string());
    CAPTURE(e.path().filename().string());
    auto r = attn::test::run("'" + attn::test::binary() + "' --config '" + e.path().string() +
                             "' --format npy");
    REQUIRE(r.exit_code == 0);
    const auto got = attn::test::npy_values(r.out, "stdout");
    const auto d = attn::test::compare(got, want);
    INFO(attn::test::describe(d));
    CHECK(d.shape_ok);
    CHECK(d.relative() < 1e-5);
  }
  std::sort(configs.begin(), configs.end());
  CHECK(configs == attn::test::golden_case_names("gpt2"));  // one per container
}

TEST_CASE("gpt2_containers: forcing a layout the keys do not fit names the missing key") {
  auto r = attn::test::run(
      "'" + attn::test::binary() + "' --config '" +
      attn::test::source_path("tests/golden/gpt2/config_gpt2_layers_safetensors.json") +
      "' --weights '" + attn::test::source_path("tests/golden/init/gpt2_layers") +
      "' --layout fused");
  CHECK(r.exit_code == 65);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("attn-run: error: ", 0) == 0);
  CHECK(r.err.find("Wqkv.weight") != std::string::npos);
}

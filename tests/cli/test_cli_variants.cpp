// The v2 variants end to end through the built binary: every golden variant
// case (tests/golden/variants) run with --out-dir gives PyTorch's context and
// maps in the layouts CONTRACT.md promises (batch_first false, averaged
// heads, the extra bias_kv / zero_attn columns), likely mistakes get a
// warning, and misuse of the v2 inputs fails with one line and its exit code.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "check_close.h"
#include "cli_checks.h"
#include "golden_manifest.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace attn;
using attn::test::q;

using attn::test::check_close;

namespace {

std::string variant_dir(const std::string& name) {
  return test::source_path("tests/golden/variants/" + name);
}

Tensor npy(const std::string& path) { return to_float32(read_npy(path), path, false); }

// A variant's config with its paths made absolute, edited by `edit`, written
// to tmp/config.json.
std::string edited_config(const std::string& name, const test::TempDir& tmp,
                          const std::function<void(nlohmann::json&)>& edit) {
  const std::string dir = variant_dir(name);
  nlohmann::json cfg = nlohmann::json::parse(test::read_text(dir + "/config.json"));
  for (const char* key : {"weights", "input", "attention_mask", "positions", "padding_mask",
                          "attn_mask", "key_input", "value_input", "kv_input"})
    if (cfg.contains(key) && cfg[key].is_string())
      cfg[key] = dir + "/" + cfg[key].get<std::string>();
  edit(cfg);
  const std::string path = tmp / "config.json";
  test::write_text(path, cfg.dump(1));
  return path;
}

test::RunResult run_binary(const std::string& args) {
  return test::run(test::quoted_binary() + " " + args);
}

}  // namespace

TEST_CASE("cli variants: every golden variant through the binary matches PyTorch") {
  std::vector<std::string> cases;
  for (const auto& e : fs::directory_iterator(test::source_path("tests/golden/variants"))) {
    const std::string name = e.path().filename().string();
    INFO("case " << name);
    test::TempDir out;
    const auto r =
        run_binary("--config " + q(e.path().string() + "/config.json") + " -q -o " + q(out.path));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    check_close(npy(out / "context.npy"), npy(e.path().string() + "/expected/context.npy"),
                "context");
    check_close(npy(out / "attention.npy"), npy(e.path().string() + "/expected/attention.npy"),
                "attention");
    const auto run = nlohmann::json::parse(test::read_text(out / "run.json"));
    CHECK(run["inputs"].contains("input"));
    cases.push_back(name);
  }
  std::sort(cases.begin(), cases.end());
  CHECK(cases == test::golden_case_names("variants"));  // tests/golden/manifest.json
}

TEST_CASE("cli variants: T5's relative bias table: found, named, dumped and reloaded") {
  test::TempDir tmp;
  // The layer's own table is looked for when relative_bias.table is left out:
  // block 2 has none (T5 keeps it in block 0), and the message says so.
  std::string cfg = edited_config("t5_encoder_relative_bias", tmp,
                                  [&](nlohmann::json& c) { c["relative_bias"].erase("table"); });
  test::check_cli_failure(
      run_binary("--config " + q(cfg)), 65,
      {"encoder.block.2.layer.0.SelfAttention.relative_attention_bias.weight", "(32, 3)",
       "relative_bias.table",
       "the file has \"encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight\""});
  // Block 0's layer holds the table but the config does not ask for it.
  cfg = edited_config("t5_encoder_relative_bias", tmp, [&](nlohmann::json& c) {
    c["weights_prefix"] = "encoder.block.0.layer.0.SelfAttention.";
    c.erase("relative_bias");
  });
  test::check_cli_failure(run_binary("--config " + q(cfg)), 65,
                          {"relative_attention_bias.weight", "\"relative_bias\" is not set"});
  // A table of the wrong shape for the buckets.
  cfg = edited_config("t5_encoder_relative_bias", tmp,
                      [&](nlohmann::json& c) { c["relative_bias"]["num_buckets"] = 16; });
  test::check_cli_failure(run_binary("--config " + q(cfg)), 65, {"(16, 3)", "found (32, 3)"});
  // A table holding NaN, in a copy of the weights folder.
  const std::string key = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight";
  fs::copy(variant_dir("t5_encoder_relative_bias") + "/weights", tmp / "w");
  Tensor table = npy(tmp / ("w/" + key + ".npy"));
  table.data[3 * 3 + 1] = NAN;
  test::write_text(tmp / ("w/" + key + ".npy"), encode_npy(table));
  cfg = edited_config("t5_encoder_relative_bias", tmp,
                      [&](nlohmann::json& c) { c["weights"] = tmp / "w"; });
  test::check_cli_failure(run_binary("--config " + q(cfg)), 65, {key, "nan", "(3, 1)"});

  // --dump-weights writes the table under the layer's own name; the dump reloads
  // with the dumped relative_bias (no table key) and gives the same context.
  const std::string orig = variant_dir("t5_encoder_relative_bias") + "/config.json";
  const std::string file = tmp / "t5.safetensors";
  auto d = run_binary("-q --config " + q(orig) + " --dump-weights " + q(file));
  REQUIRE_MESSAGE(d.exit_code == 0, d.err);
  cfg = edited_config("t5_encoder_relative_bias", tmp, [&](nlohmann::json& c) {
    c["weights"] = file;
    c.erase("weights_prefix");
    c.erase("weights_rename");
    c["relative_bias"].erase("table");
  });
  const auto before = run_binary("--config " + q(orig) + " --format npy");
  const auto after = run_binary("--config " + q(cfg) + " --format npy");
  REQUIRE_MESSAGE(after.exit_code == 0, after.err);
  CHECK(after.out == before.out);
}

TEST_CASE("cli variants: DeBERTa's relative embeddings: found, named, dumped and reloaded") {
  test::TempDir tmp;
  // A table key the file does not hold, and one too short for 2 span rows.
  std::string cfg = edited_config("deberta_v3_shared", tmp, [&](nlohmann::json& c) {
    c["disentangled"]["table"] = "encoder.rel_embeddings.weight";
  });
  test::check_cli_failure(run_binary("--config " + q(cfg)), 65,
                          {"\"encoder.rel_embeddings.weight\"", "disentangled.table"});
  cfg = edited_config("deberta_v3_shared", tmp,
                      [&](nlohmann::json& c) { c["disentangled"]["position_buckets"] = 16; });
  test::check_cli_failure(
      run_binary("--config " + q(cfg)), 65,
      {"deberta.encoder.rel_embeddings.weight", "rows >= 32", "found (16, 32)"});
  // pos_key_proj in the layer without disentangled set.
  cfg = edited_config("deberta_v2_own_projections", tmp,
                      [&](nlohmann::json& c) { c.erase("disentangled"); });
  test::check_cli_failure(run_binary("--config " + q(cfg)), 65,
                          {"pos_key_proj.weight", "\"disentangled\" is not set"});
  // --dump-weights writes the table (normed) and the projections under the layer's own
  // names; the dump reloads without table or norm keys and gives the same context.
  for (const char* name : {"deberta_v3_shared", "deberta_v2_own_projections"}) {
    CAPTURE(name);
    const std::string orig = variant_dir(name) + "/config.json";
    const std::string file = tmp / (std::string(name) + ".safetensors");
    auto d = run_binary("-q --config " + q(orig) + " --dump-weights " + q(file));
    REQUIRE_MESSAGE(d.exit_code == 0, d.err);
    cfg = edited_config(name, tmp, [&](nlohmann::json& c) {
      c["weights"] = file;
      c.erase("weights_prefix");
      c.erase("weights_rename");
      for (const char* k : {"table", "norm_weight", "norm_bias", "eps"}) c["disentangled"].erase(k);
    });
    const auto before = run_binary("--config " + q(orig) + " --format npy -q");
    const auto after = run_binary("--config " + q(cfg) + " --format npy -q");
    REQUIRE_MESSAGE(after.exit_code == 0, after.err);
    const auto decode = [](const std::string& bytes) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
      return to_float32(parse_npy(p, bytes.size(), "stdout"), "stdout", false);
    };
    const Tensor a = decode(before.out), b = decode(after.out);
    check_close(b, a, "dumped context");
  }
}

TEST_CASE(
    "cli variants: torch MHA's layouts: (L, B, O) context, (B, H, L, T+2) maps, averaged (B, L, "
    "T+2)") {
  test::TempDir out;
  auto r = run_binary("--config " + q(variant_dir("mha_cross_bool_mask") + "/config.json") +
                      " -q -o " + q(out.path));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(npy(out / "context.npy").shape == std::vector<std::size_t>{5, 2, 16});  // batch_first false
  CHECK(npy(out / "attention.npy").shape == std::vector<std::size_t>{2, 4, 5, 8});  // T = 6 + 2
  const auto run = nlohmann::json::parse(test::read_text(out / "run.json"));
  CHECK(run["shapes"]["input"] == nlohmann::json({5, 2, 16}));
  CHECK(run["shapes"]["key_input"] == nlohmann::json({2, 6, 12}));
  CHECK(run["inputs"]["value_input"].get<std::string>().find("value.npy") != std::string::npos);

  // --average-heads: the mean of the per-head maps, (B, L, T').
  test::TempDir avg;
  r = run_binary("--config " + q(variant_dir("mha_cross_bool_mask") + "/config.json") +
                 " -q --average-heads -o " + q(avg.path));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const Tensor heads = npy(out / "attention.npy"), mean = npy(avg / "attention.npy");
  REQUIRE(mean.shape == std::vector<std::size_t>{2, 5, 8});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 5 * 8; ++i) {
      double s = 0;
      for (std::size_t h = 0; h < 4; ++h) s += heads.data[(b * 4 + h) * 40 + i];
      CHECK(mean.data[b * 40 + i] == doctest::Approx(s / 4).epsilon(1e-6));
    }
}

TEST_CASE("cli variants: likely mistakes get a warning, the run still succeeds") {
  test::TempDir tmp;
  // A Hugging Face attention_mask (1 = attend) given as padding_mask marks most keys padded.
  std::string cfg = edited_config("llama3_gqa_rope_left", tmp, [&](nlohmann::json& c) {
    c["padding_mask"] = c["attention_mask"];
    c.erase("attention_mask");
  });
  auto r = run_binary("--config " + q(cfg));
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.err.find("warning") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("attention_mask") != std::string::npos, r.err);

  // An SDPA-style bool mask (true = attend) blocks every query's own key.
  cfg = edited_config("mistral_window", tmp, [&](nlohmann::json& c) {
    nlohmann::json m = nlohmann::json::array();
    for (int i = 0; i < 9; ++i) {
      nlohmann::json row = nlohmann::json::array();
      for (int j = 0; j < 9; ++j) row.push_back(j <= i);
      m.push_back(row);
    }
    c["attn_mask"] = m;
  });
  r = run_binary("--config " + q(cfg));
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.err.find("scaled_dot_product_attention") != std::string::npos, r.err);
}

TEST_CASE("cli variants: --stats with sinks shows the row sum") {
  const auto r =
      run_binary("--config " + q(variant_dir("gptoss_sinks_window") + "/config.json") + " --stats");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.err.find("row sum") != std::string::npos, r.err);
}

TEST_CASE("cli variants: bad v2 inputs fail with one line naming the file and their exit code") {
  test::TempDir tmp;
  const std::string dir = variant_dir("llama3_gqa_rope_left");
  // Float position ids.
  {
    Tensor p({2, 7}, 1.0f);
    test::write_text(tmp / "pos_float.npy", encode_npy(p));
    const std::string cfg = edited_config("llama3_gqa_rope_left", tmp, [&](nlohmann::json& c) {
      c["positions"] = tmp / "pos_float.npy";
    });
    test::check_cli_failure(run_binary("--config " + q(cfg)), 65, {"pos_float.npy", "integer"});
  }
  // Position ids of the wrong length.
  {
    const std::string cfg = edited_config("llama3_gqa_rope_left", tmp, [&](nlohmann::json& c) {
      c["positions"] = nlohmann::json::array({0, 1, 2});
    });
    test::check_cli_failure(run_binary("--config " + q(cfg)), 65, {"positions", "(7,)"});
  }
  // An attn_mask of a shape torch would not take.
  {
    Tensor m({3, 7, 7});
    test::write_text(tmp / "mask_bad.npy", encode_npy(m));
    const std::string cfg = edited_config("llama3_gqa_rope_left", tmp, [&](nlohmann::json& c) {
      c["attn_mask"] = tmp / "mask_bad.npy";
    });
    test::check_cli_failure(run_binary("--config " + q(cfg)), 65, {"mask_bad.npy", "(2, 4, 7, 7)"});
  }
  // A float attn_mask holding NaN.
  {
    Tensor m({7, 7});
    m.data[10] = NAN;
    test::write_text(tmp / "mask_nan.npy", encode_npy(m));
    const std::string cfg = edited_config("llama3_gqa_rope_left", tmp, [&](nlohmann::json& c) {
      c["attn_mask"] = tmp / "mask_nan.npy";
    });
    test::check_cli_failure(run_binary("--config " + q(cfg)), 65, {"mask_nan.npy", "NaN"});
  }
  // Keys of the wrong width for kdim.
  {
    Tensor k({6, 2, 11});
    test::write_text(tmp / "key_bad.npy", encode_npy(k));
    const std::string cfg = edited_config("mha_cross_bool_mask", tmp, [&](nlohmann::json& c) {
      c["key_input"] = tmp / "key_bad.npy";
    });
    test::check_cli_failure(run_binary("--config " + q(cfg)), 65, {"key_bad.npy", "kdim"});
  }
  // --padding-mask on the command line beside the config's attention_mask.
  {
    test::check_cli_failure(run_binary("--config " + q(dir + "/config.json") + " --padding-mask " +
                                       q(dir + "/attention_mask.npy")),
                            64, {"--padding-mask", "attention_mask"});
  }
}

TEST_CASE("cli variants: --attention-mask FILE is the config's attention_mask, checked the same") {
  // The left-padded Llama case without its attention_mask key: the flag gives
  // it back, and the run matches PyTorch's numbers for that mask.
  test::TempDir tmp;
  const std::string dir = variant_dir("llama3_gqa_rope_left");
  const std::string cfg = edited_config("llama3_gqa_rope_left", tmp,
                                        [&](nlohmann::json& c) { c.erase("attention_mask"); });
  const std::string mask = q(dir + "/attention_mask.npy");
  auto r =
      run_binary("--config " + q(cfg) + " -q --attention-mask " + mask + " -o " + q(tmp / "out"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  check_close(npy(tmp / "out/context.npy"), npy(dir + "/expected/context.npy"), "context");
  check_close(npy(tmp / "out/attention.npy"), npy(dir + "/expected/attention.npy"), "attention");
  const auto run = nlohmann::json::parse(test::read_text(tmp / "out/run.json"));
  CHECK(run["inputs"]["attention_mask"] == dir + "/attention_mask.npy");
  // Over the config's own key, the flag wins (a mask that attends everywhere
  // would give other maps).
  const std::string keyed = edited_config("llama3_gqa_rope_left", tmp, [&](nlohmann::json& c) {
    c["attention_mask"] = nlohmann::json::array({1, 1, 1, 1, 1, 1, 1});
  });
  r = run_binary("--config " + q(keyed) + " -q --attention-mask " + mask + " -o " +
                 q(tmp / "over"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  check_close(npy(tmp / "over/attention.npy"), npy(dir + "/expected/attention.npy"), "attention");

  // The key's checks and messages: a mask of another length names the file.
  test::write_text(tmp / "short.npy", encode_npy(Tensor({3}, 1.0f)));
  test::check_cli_failure(
      run_binary("--config " + q(cfg) + " --attention-mask " + q(tmp / "short.npy")), 65,
      {"short.npy", "(3,)"});
  test::check_cli_failure(
      run_binary("--config " + q(cfg) + " --attention-mask " + q(tmp / "none.npy")), 66,
      {"none.npy"});
  // Not with a padding mask, the flag's or the config's (opposite meanings).
  test::check_cli_failure(
      run_binary("--config " + q(cfg) + " --attention-mask " + mask + " --padding-mask " + mask),
      64, {"--attention-mask", "--padding-mask"});
  const std::string padded = edited_config("llama3_gqa_rope_left", tmp, [&](nlohmann::json& c) {
    c.erase("attention_mask");
    c["padding_mask"] = nlohmann::json::array({0, 0, 0, 0, 0, 0, 0});
  });
  test::check_cli_failure(run_binary("--config " + q(padded) + " --attention-mask " + mask), 64,
                          {"--attention-mask", "padding_mask"});
  CHECK_FALSE(fs::exists(tmp / "none"));
  // --help lists it.
  r = run_binary("--help");
  CHECK_MESSAGE(r.out.find("--attention-mask FILE") != std::string::npos, r.out);
}

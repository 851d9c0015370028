// mrope end to end through the built binary (CONTRACT.md "(v4) Families and
// schedulers": mrope sections with (3, S) positions): a Qwen2.5-VL and a
// Qwen3-VL layer from their model folders, and a plain --config, given the
// three rows of position ids Hugging Face's get_rope_index computes for text
// with an image, match PyTorch (tests/golden, qwen_vl.py), with --check-f64 and
// run.json's rope; rows without rope.mrope_section are refused (exit 64
// naming positions and rope.mrope_section), never read as a batch of 3.
#include <doctest/doctest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "check_close.h"
#include "cli_checks.h"
#include "json_files.h"
#include "test_util.h"

using attn::test::q;
using attn::test::run_json;

namespace {

std::string golden(const std::string& rel) {
  return attn::test::source_path("tests/golden/" + rel);
}

attn::Tensor npy(const std::string& path) { return attn::read_npy_f32(path, true); }

attn::test::RunResult run_binary(const std::string& args) {
  return attn::test::run(attn::test::quoted_binary() + " " + args);
}

// The plain variant's config with absolute paths, edited, as tmp/config.json.
std::string edited(const attn::test::TempDir& tmp,
                   const std::function<void(nlohmann::json&)>& edit) {
  const std::string dir = golden("variants/mrope_sections");
  nlohmann::json cfg = attn::test::read_json(dir + "/config.json");
  for (const char* key : {"weights", "input", "attention_mask", "positions"})
    cfg[key] = dir + "/" + cfg[key].get<std::string>();
  edit(cfg);
  const std::string path = tmp / "config.json";
  attn::test::write_text(path, cfg.dump(1));
  return path;
}

}  // namespace

TEST_CASE("cli mrope: VL layers and a plain config with an image's three rows match PyTorch") {
  attn::test::TempDir t;
  // (case, its config, what the float64 path can check: not Qwen3-VL's q/k norms)
  struct Run {
    const char* dir;
    const char* config;
    std::vector<std::int64_t> section;
    bool interleaved, check_f64;
  };
  for (const Run& r : {Run{"folders/qwen2_5_vl_image/layer1", "case.json", {4, 2, 2}, false, true},
                       Run{"folders/qwen3_vl_image/layer0", "case.json", {2, 1, 1}, true, false},
                       Run{"variants/mrope_interleaved", "config.json", {2, 3, 3}, true, true}}) {
    CAPTURE(r.dir);
    const std::string dir = golden(r.dir), out = t / "o";
    attn::test::RunResult res = run_binary("--config " + q(dir + "/" + r.config) + " -q -o " +
                                           q(out) + (r.check_f64 ? " --check-f64 all" : ""));
    REQUIRE_MESSAGE(res.exit_code == 0, res.err);
    CHECK(attn::read_npy(dir + "/positions.npy").shape.size() == 3);  // (3, B, S): t, h, w
    attn::test::check_close(npy(out + "/context.npy"), npy(dir + "/expected/context.npy"),
                            "context");
    attn::test::check_close(npy(out + "/attention.npy"), npy(dir + "/expected/attention.npy"),
                            "attention");
    const nlohmann::json rj = run_json(out);
    CHECK(rj["config"]["rope"]["mrope_section"] == r.section);
    CHECK(rj["config"]["rope"]["mrope_interleaved"] == r.interleaved);
    if (r.check_f64) {
      const double c = rj["check_f64"]["context_max_rel"].get<double>();
      CHECK(c > 0);
      CHECK(c < 1e-5);
    }
    attn::test::run("rm -rf " + q(out));
  }
}

TEST_CASE("cli mrope: the model listing shows each layer's sections") {
  const attn::test::RunResult r =
      run_binary("--model " + q(golden("folders/qwen3_vl_image/model")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.out.find("mrope 2/1/1 interleaved") != std::string::npos, r.out);
  const attn::test::RunResult c =
      run_binary("--model " + q(golden("folders/qwen2_5_vl_image/model")));
  CHECK_MESSAGE(c.out.find("mrope 4/2/2") != std::string::npos, c.out);
}

TEST_CASE("cli mrope: position rows without rope.mrope_section are refused, exit 64") {
  attn::test::TempDir t;
  // (3, B, S) rows from a file, the config without sections.
  const std::string no_sections =
      edited(t, [](nlohmann::json& c) { c["rope"].erase("mrope_section"); });
  check_cli_failure(run_binary("--config " + q(no_sections) + " -o " + q(t / "o")), 64,
                    {"positions.npy", "rope.mrope_section", "(3, 2, 10)"});
  CHECK_FALSE(attn::test::run("test -e " + q(t / "o")).exit_code == 0);  // nothing written
  // (3, S) inline with a batch of 2: mrope's rows, not per-batch positions.
  const std::string inline_rows = edited(t, [](nlohmann::json& c) {
    c["rope"].erase("mrope_section");
    nlohmann::json row = nlohmann::json::array();
    for (int i = 0; i < 10; ++i) row.push_back(i);
    c["positions"] = {row, row, row};
  });
  check_cli_failure(run_binary("--config " + q(inline_rows) + " -o " + q(t / "o")), 64,
                    {"positions", "rope.mrope_section", "(3, 10)"});
  // With the sections, the same (3, S) rows apply to every batch row.
  const std::string with_sections = edited(t, [](nlohmann::json& c) {
    nlohmann::json row = nlohmann::json::array();
    for (int i = 0; i < 10; ++i) row.push_back(i);
    c["positions"] = {row, row, row};
  });
  const attn::test::RunResult ok =
      run_binary("--config " + q(with_sections) + " -q -o " + q(t / "ok"));
  CHECK_MESSAGE(ok.exit_code == 0, ok.err);
  // Sections that do not sum to rotary_dim / 2: the config's error.
  const std::string bad_sum = edited(t, [](nlohmann::json& c) {
    c["rope"]["mrope_section"] = {4, 2, 1};
  });
  check_cli_failure(run_binary("--config " + q(bad_sum) + " -o " + q(t / "o")), 78,
                    {"rope.mrope_section", "rotary_dim / 2 = 8"});
}

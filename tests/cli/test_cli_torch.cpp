// cli_torch: torch.save checkpoints through the built binary. A golden case
// run with --weights <its weights as torch.save wrote them> gives the bytes
// the .npy run gives (and the case's PyTorch context); the sharded
// pytorch_model.bin index, a Lightning checkpoint with its "model." prefix and
// a {"model": ...} dict run as the plain state_dict does; a checkpoint whose
// pickle would call os.system is refused by name and provably runs nothing.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "attn/npy.h"
#include "cli_checks.h"
#include "test_util.h"
#include "torch_save_builder.h"

namespace fs = std::filesystem;
using attn::test::q;
using attn::test::run;
using attn::test::RunResult;
using attn::test::source_path;
using attn::test::TempDir;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
std::string pt(const std::string& rel) { return source_path("tests/fixtures/pt/" + rel); }
std::string golden(const std::string& c) { return source_path("tests/golden/cases/" + c); }

RunResult run_case(const std::string& c, const std::string& weights) {
  return run(bin() + " --config " + q(golden(c) + "/config.json") +
             (weights.empty() ? "" : " --weights " + q(weights)) + " --format npy");
}

void check_golden(const std::string& c, const std::string& weights) {
  CAPTURE(c);
  CAPTURE(weights);
  const RunResult npy = run_case(c, "");
  const RunResult r = run_case(c, weights);
  REQUIRE_MESSAGE(npy.exit_code == 0, npy.err);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == npy.out);  // the same weights: the same bytes
  const attn::Tensor want = attn::read_npy_f32(golden(c) + "/expected/context.npy", false);
  const auto d = attn::test::compare(attn::test::npy_values(r.out, "stdout"), want);
  INFO(attn::test::describe(d));
  CHECK(d.shape_ok);
  CHECK(d.relative() < 1e-5);
}

}  // namespace

TEST_CASE("cli_torch: golden cases run from torch.save weights as from their .npy folders") {
  int n = 0;
  for (const auto& e : fs::directory_iterator(pt("golden"))) {
    if (e.path().extension() != ".pt") continue;
    check_golden(e.path().stem().string(), e.path().string());
    ++n;
  }
  CHECK(n >= 7);
  check_golden("fused_multi_C16H2_bias_left_S8", pt("golden/sharded/pytorch_model.bin.index.json"));
}

TEST_CASE("cli_torch: a Lightning checkpoint and a {model: ...} dict run as the state_dict") {
  TempDir t;
  const attn::Tensor x = attn::test::random_tensor({2, 5, 8}, 3);
  attn::test::write_text(t / "x.npy", attn::encode_npy(x));
  const auto config = [&](const std::string& name, const std::string& weights,
                          const std::string& prefix) {
    nlohmann::json c = {{"attention", "multi"},
                        {"hidden_size", 8},
                        {"num_heads", 2},
                        {"weights", weights},
                        {"input", t / "x.npy"}};
    if (!prefix.empty()) c["weights_prefix"] = prefix;
    attn::test::write_text(t / name, c.dump());
    return run(bin() + " --config " + q(t / name) + " --format npy");
  };
  const RunResult base = config("a.json", pt("modules/warner_multi"), "");
  REQUIRE_MESSAGE(base.exit_code == 0, base.err);
  for (const auto& [w, prefix] : std::vector<std::pair<std::string, std::string>>{
           {pt("modules/warner_multi.pt"), ""},
           {pt("modules/lightning_warner_multi.pt"), "model."},
           {pt("modules/model_dict_warner_multi.pt"), ""}}) {
    CAPTURE(w);
    const RunResult r = config("b.json", w, prefix);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out == base.out);
  }
  // bf16 weights: the run reads the bf16 values converted exactly.
  const RunResult bf = config("c.json", pt("modules/bf16_warner_causal.pt"), "");
  CHECK_MESSAGE(bf.exit_code == 0, bf.err);
}

TEST_CASE("cli_torch: a checkpoint whose pickle calls os.system is refused and runs nothing") {
  TempDir t;
  // The real torch.save file (Python pickles os.system as posix.system) and a
  // hand-built one naming os.system itself, each with a relative marker path:
  // attn-run runs in the scratch folder, where the marker would appear.
  const std::string hand = attn::test::pt::checkpoint(
      "\x80\x02"
      "cos\nsystem\n" +
          attn::test::pt::pickle_str("touch ATTN_RUN_PWNED_MARKER") + "\x85R.",
      {});
  attn::test::write_text(t / "evil.pt", hand);
  const std::string cfg = q(golden("fused_multi_C16H2_bias_left_S8") + "/config.json");
  for (const auto& [file, global] : std::vector<std::pair<std::string, std::string>>{
           {pt("hostile_os_system.pt"), "'posix.system'"}, {t / "evil.pt", "'os.system'"}}) {
    CAPTURE(file);
    const RunResult r =
        run("cd " + q(t.path) + " && " + bin() + " --config " + cfg + " --weights " + q(file));
    attn::test::check_cli_failure(r, 65, {file, global, "not allowed"});
    CHECK_FALSE(fs::exists(t / "ATTN_RUN_PWNED_MARKER"));
  }
}

TEST_CASE("cli_torch: the legacy format is exit 65 saying how to re-save") {
  const RunResult r = run_case("fused_multi_C16H2_bias_left_S8", pt("legacy.pt"));
  attn::test::check_cli_failure(r, 65, {"legacy.pt", "legacy format", "torch.save("});
}

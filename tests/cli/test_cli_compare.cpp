// cli_compare: --compare FILE.npy and --compare-tol X (CONTRACT.md "(v3) Many
// layers, resumable batches"): maps made elsewhere against attn-run's, each
// head's largest difference on stderr and in run.json; a larger one than the
// tolerance is exit 1 after the outputs are written.
//
// raschka_mha_causal: B = 2, H = 2, S = 6 (causal).
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "attn/npy.h"
#include "cli_checks.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::check_cli_failure;
using attn::test::q;
using attn::test::run;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
std::string cfg() { return attn::test::quoted_config("raschka_mha_causal.json"); }
nlohmann::json run_json(const std::string& dir) {
  return nlohmann::json::parse(attn::test::read_text(dir + "/run.json"));
}

}  // namespace

TEST_CASE("cli_compare: each head's largest difference, in run.json and on stderr") {
  attn::test::TempDir t;
  REQUIRE(run(bin() + " -q --config " + cfg() + " -o " + q(t / "a")).exit_code == 0);
  // The same maps: every head 0.
  auto same = run(bin() + " --config " + cfg() + " -o " + q(t / "b") + " --compare " +
                  q(t / "a/attention.npy"));
  REQUIRE_MESSAGE(same.exit_code == 0, same.err);
  CHECK(same.err.find("head  max |attn-run - other|") != std::string::npos);
  nlohmann::json c = run_json(t / "b")["compare"];
  CHECK(c["max_abs_error"] == nlohmann::json({0.0, 0.0}));
  CHECK(c["heads"] == nlohmann::json({0, 1}));
  CHECK(c["tol"].is_null());
  // Head 1 of batch entry 1 off by 0.01 at one weight: head 1's error, head 0's none.
  attn::Tensor other = attn::read_npy_f32(t / "a/attention.npy", false);
  REQUIRE(other.shape == std::vector<std::size_t>{2, 2, 6, 6});
  other.data[((1 * 2 + 1) * 6 + 4) * 6 + 2] += 0.01f;
  attn::test::write_text(t / "other.npy", attn::encode_npy(other));
  auto off = run(bin() + " -q --config " + cfg() + " -o " + q(t / "c") + " --compare " +
                 q(t / "other.npy"));
  REQUIRE_MESSAGE(off.exit_code == 0, off.err);
  c = run_json(t / "c")["compare"];
  CHECK(c["max_abs_error"][0] == 0.0);
  CHECK(c["max_abs_error"][1].get<double>() == doctest::Approx(0.01).epsilon(1e-3));
  // Above --compare-tol: exit 1, with the outputs written; below it: 0.
  auto strict = run(bin() + " -q --config " + cfg() + " -o " + q(t / "d") + " --compare " +
                    q(t / "other.npy") + " --compare-tol 1e-3");
  CHECK(strict.exit_code == 1);
  CHECK(strict.err.find("--compare-tol: the largest difference") != std::string::npos);
  CHECK(fs::exists(t / "d/context.npy"));
  CHECK(run_json(t / "d")["compare"]["tol"] == 1e-3);
  CHECK(run(bin() + " -q --config " + cfg() + " -o " + q(t / "e") + " --compare " +
            q(t / "other.npy") + " --compare-tol 0.1")
            .exit_code == 0);
}

TEST_CASE("cli_compare: the selection's maps, and what is refused") {
  attn::test::TempDir t;
  // --heads 1: the file holds the selected head only, as attention.npy does.
  REQUIRE(run(bin() + " -q --config " + cfg() + " --heads 1 -o " + q(t / "a")).exit_code == 0);
  auto sel = run(bin() + " -q --config " + cfg() + " --heads 1 -o " + q(t / "b") + " --compare " +
                 q(t / "a/attention.npy"));
  REQUIRE_MESSAGE(sel.exit_code == 0, sel.err);
  CHECK(run_json(t / "b")["compare"]["heads"] == nlohmann::json({1}));
  CHECK(run_json(t / "b")["compare"]["max_abs_error"] == nlohmann::json({0.0}));
  // A shape other than attention.npy's: 65 naming both, nothing written.
  check_cli_failure(run(bin() + " --config " + cfg() + " -o " + q(t / "c") + " --compare " +
                        q(t / "a/attention.npy")),
                    65, {"attention.npy", "(2, 2, 6, 6)", "found (2, 1, 6, 6)"});
  CHECK(!fs::exists(t / "c"));
  check_cli_failure(run(bin() + " --config " + cfg() + " --compare-tol 0.1"), 64,
                    {"--compare-tol", "--compare"});
  check_cli_failure(
      run(bin() + " --config " + cfg() + " --no-attn --compare " + q(t / "a/attention.npy")), 64,
      {"--compare", "--no-attn"});
}

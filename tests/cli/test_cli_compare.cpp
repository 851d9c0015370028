// cli_compare: --compare FILE.npy and --compare-tol X (CONTRACT.md "(v3) Many
// layers, resumable batches"): maps made elsewhere against attn-run's, each
// head's largest difference on stderr and in run.json; a larger one than the
// tolerance is exit 1 after the outputs are written.
//
// raschka_mha_causal: B = 2, H = 2, S = 6 (causal).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "attn/npy.h"
#include "cli_checks.h"
#include "json_files.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::check_cli_failure;
using attn::test::q;
using attn::test::run;
using attn::test::run_json;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
std::string cfg() { return attn::test::quoted_config("raschka_mha_causal.json"); }

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
}

TEST_CASE("cli_compare: where the largest difference is, the NMSE and the row KL") {
  attn::test::TempDir t;
  REQUIRE(run(bin() + " -q --config " + cfg() + " -o " + q(t / "a")).exit_code == 0);
  const attn::Tensor mine = attn::read_npy_f32(t / "a/attention.npy", false);
  REQUIRE(mine.shape == std::vector<std::size_t>{2, 2, 6, 6});
  // Batch 1, head 1, query 4: 0.01 of key 0's weight moved to key 2 (the row still sums to 1).
  attn::Tensor other = mine;
  float* row = other.ptr() + ((1 * 2 + 1) * 6 + 4) * 6;
  REQUIRE(row[0] > 0.01f);
  row[0] -= 0.01f;
  row[2] += 0.01f;
  attn::test::write_text(t / "other.npy", attn::encode_npy(other));
  auto r =
      run(bin() + " --config " + cfg() + " -o " + q(t / "b") + " --compare " + q(t / "other.npy"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const nlohmann::json c = run_json(t / "b")["compare"];
  CHECK(c["max_abs_error"][0] == 0.0);
  CHECK(c["max_abs_error"][1].get<double>() == doctest::Approx(0.01).epsilon(1e-3));
  const auto at = c["max_abs_at"][1].get<std::vector<std::size_t>>();
  CHECK(at[0] == 1);
  CHECK(at[1] == 4);
  CHECK((at[2] == 0 || at[2] == 2));
  // NMSE: 2 * 0.01^2 over the other's sum of squares, computed here in double.
  double sq = 0;
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t k = 0; k < 36; ++k) {
      const double v = other.data[(b * 2 + 1) * 36 + k];
      sq += v * v;
    }
  CHECK(c["nmse"][0] == 0.0);
  CHECK(c["nmse"][1].get<double>() == doctest::Approx(2e-4 / sq).epsilon(1e-3));
  // KL(attn-run || other) of the changed row: sum_j a_j log(a_j / o_j), here in double.
  const float* a = mine.ptr() + ((1 * 2 + 1) * 6 + 4) * 6;
  double kl = 0;
  for (std::size_t j = 0; j < 6; ++j)
    if (a[j] > 0) kl += double(a[j]) * std::log(double(a[j]) / double(row[j]));
  REQUIRE(kl > 0);
  CHECK(c["max_row_kl"][1].get<double>() == doctest::Approx(kl).epsilon(1e-3));
  CHECK(c["max_row_kl_at"][1] == nlohmann::json({1, 4}));
  CHECK(c["max_row_kl"][0] == 0.0);
  CHECK(r.err.find("(1, 4, ") != std::string::npos);  // the table names the cell

  // --no-attn: compared in the same pass, the maps not written.
  auto lean = run(bin() + " -q --config " + cfg() + " --no-attn -o " + q(t / "c") + " --compare " +
                  q(t / "other.npy"));
  REQUIRE_MESSAGE(lean.exit_code == 0, lean.err);
  CHECK(!fs::exists(t / "c/attention.npy"));
  CHECK(run_json(t / "c")["compare"]["max_abs_at"] == c["max_abs_at"]);
  CHECK(run_json(t / "c")["compare"]["max_abs_error"] == c["max_abs_error"]);

  // transformers' (1, H, L, S) for an unbatched (S, C) input: batch row 0 alone.
  const attn::Tensor x =
      attn::read_npy_f32(attn::test::source_path("data/sentence_batch.npy"), false);
  REQUIRE(x.shape.size() == 3);
  attn::Tensor x0({x.shape[1], x.shape[2]});
  std::copy_n(x.ptr(), x0.data.size(), x0.ptr());
  attn::test::write_text(t / "x0.npy", attn::encode_npy(x0));
  attn::Tensor hf({1, 2, 6, 6});
  std::copy_n(mine.ptr(), hf.data.size(), hf.ptr());
  attn::test::write_text(t / "hf.npy", attn::encode_npy(hf));
  auto one = run(bin() + " -q --config " + cfg() + " --input " + q(t / "x0.npy") + " -o " +
                 q(t / "d") + " --no-attn --compare " + q(t / "hf.npy") + " --compare-tol 1e-6");
  REQUIRE_MESSAGE(one.exit_code == 0, one.err);
  const nlohmann::json d = run_json(t / "d");  // held: a range over a temporary's member dangles
  for (const auto& e : d["compare"]["max_abs_error"]) CHECK(e.get<double>() < 1e-6);
}

TEST_CASE("cli_compare: --layer all against a stack or a folder of each layer's maps") {
  attn::test::TempDir t;
  const std::string model = q(attn::test::source_path("data/tiny-llama"));
  // Each layer's hidden states: the shipped (S, C) input for both, as a (2, 1, S, C) stack.
  const attn::Tensor h =
      attn::read_npy_f32(attn::test::source_path("data/tiny-llama-hidden.npy"), false);
  attn::Tensor hs({2, 1, h.shape[0], h.shape[1]});
  std::copy_n(h.ptr(), h.size(), hs.ptr());
  std::copy_n(h.ptr(), h.size(), hs.ptr() + h.size());
  attn::test::write_text(t / "hidden.npy", attn::encode_npy(hs));
  const std::string input = q(t / "hidden.npy");
  REQUIRE(
      run(bin() + " -q --model " + model + " --layer all --input " + input + " -o " + q(t / "a"))
          .exit_code == 0);
  // Layer 1's maps as transformers gives them, (1, H, L, S) (attention.npy of a batch of one
  // already is), one weight moved in head 2.
  std::vector<attn::Tensor> maps;
  for (int l = 0; l < 2; ++l)
    maps.push_back(
        attn::read_npy_f32(t / ("a/layer_" + std::to_string(l) + "/attention.npy"), false));
  REQUIRE(maps[1].shape.size() == 4);
  const std::size_t H = maps[1].shape[1], L = maps[1].shape[2], S = maps[1].shape[3];
  REQUIRE(H > 2);
  float* row = maps[1].ptr() + (2 * L + (L - 1)) * S;  // head 2, the last query
  row[0] -= 0.02f;
  row[1] += 0.02f;
  fs::create_directories(t / "fold");
  for (int l = 0; l < 2; ++l)
    attn::test::write_text(t / ("fold/layer_" + std::to_string(l) + ".npy"),
                           attn::encode_npy(maps[l]));
  attn::Tensor stacked({2, 1, H, L, S});
  std::copy_n(maps[0].ptr(), maps[0].size(), stacked.ptr());
  std::copy_n(maps[1].ptr(), maps[1].size(), stacked.ptr() + maps[0].size());
  attn::test::write_text(t / "stack.npy", attn::encode_npy(stacked));
  for (const char* other : {"fold", "stack.npy"}) {
    INFO(other);
    const std::string out = t / (std::string("out_") + (other[0] == 'f' ? "fold" : "stack"));
    auto r = run(bin() + " --model " + model + " --layer all --input " + input + " --no-attn -o " +
                 q(out) + " --compare " + q(t / other) + " --compare-tol 0.01");
    CHECK(r.exit_code == 1);  // layer 1's head 2 is 0.02 off
    CHECK(r.err.find("--compare-tol") != std::string::npos);
    const nlohmann::json top = run_json(out);
    CHECK(top["runs"][0]["compare"]["max_abs_error"].get<std::vector<double>>() ==
          std::vector<double>(H, 0.0));
    const nlohmann::json c = top["runs"][1]["compare"];
    CHECK(c["max_abs_error"][2].get<double>() == doctest::Approx(0.02).epsilon(1e-3));
    CHECK(c["max_abs_at"][2][1] == L - 1);
    CHECK(run_json(out + "/layer_1")["compare"] == c);
    CHECK(!fs::exists(out + "/layer_1/attention.npy"));
  }
  // A stack of another length, and a folder without a layer's file: before any compute.
  attn::test::write_text(t / "one.npy", attn::encode_npy(maps[0]));  // a 4-D (1, H, L, S)
  check_cli_failure(run(bin() + " --model " + model + " --layer all --input " + input + " -o " +
                        q(t / "x") + " --compare " + q(t / "one.npy")),
                    65, {"--compare", "one.npy", "a stack of 1 maps"});
  fs::remove(t / "fold/layer_1.npy");
  check_cli_failure(run(bin() + " --model " + model + " --layer all --input " + input + " -o " +
                        q(t / "y") + " --compare " + q(t / "fold")),
                    66, {"--compare", "layer_1.npy", "missing"});
  CHECK(!fs::exists(t / "y"));
}

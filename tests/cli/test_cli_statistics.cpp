// cli_statistics: the statistics research asks for, through the built binary
// (CONTRACT.md "(v4) Comparisons, statistics, intermediates"): --key-stats
// against float64 column reductions of a full run's attention.npy, with and
// without maps in the same run, selections, the files and run.json; bad
// values exit 64 naming the flag with nothing written.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "attn/map_select.h"
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
std::string cfg(const std::string& name) { return attn::test::quoted_config(name); }

attn::Tensor npy(const std::string& path) { return attn::read_npy_f32(path, false); }

}  // namespace

TEST_CASE("cli_statistics: --key-stats equals the float64 column reductions of the full maps") {
  attn::test::TempDir t;
  // raschka_mha_causal: B = 2, H = 2, S = 6 (causal); warner_multi: (H, S, S), not causal.
  for (const char* config : {"raschka_mha_causal.json", "warner_multi.json"}) {
    CAPTURE(config);
    const std::string base = bin() + " -q --config " + cfg(config) + " --out-dir ";
    fs::remove_all(t / "full");
    REQUIRE(run(base + q(t / "full")).exit_code == 0);
    attn::Tensor full = npy(t / "full/attention.npy");
    const bool batched = full.ndim() == 4;
    if (!batched) full.shape.insert(full.shape.begin(), 1);
    const std::size_t B = full.shape[0], H = full.shape[1], L = full.shape[2], T = full.shape[3];
    for (const std::string extra :
         {"", " --no-attn", " --window 2 --pool 3 --heads 1 --queries 4,0,5 --no-attn",
          " --window 1 --pool 1 --heads 1,0 --queries 1-3 --threads 1"}) {
      CAPTURE(extra);
      fs::remove_all(t / "k");
      REQUIRE(run(base + q(t / "k") + " --key-stats" + extra).exit_code == 0);
      const bool picked = extra.find("--heads") != std::string::npos;
      const bool first_pick = extra.find("--heads 1 ") != std::string::npos;
      const std::size_t W = !picked ? 32 : first_pick ? 2 : 1, K = !picked ? 7 : first_pick ? 3 : 1;
      const std::vector<std::size_t> hs = !picked      ? attn::selected_or_all({}, H)
                                          : first_pick ? std::vector<std::size_t>{1}
                                                       : std::vector<std::size_t>{1, 0};
      const std::vector<std::size_t> qs = !picked      ? attn::selected_or_all({}, L)
                                          : first_pick ? std::vector<std::size_t>{4, 0, 5}
                                                       : std::vector<std::size_t>{1, 2, 3};
      const attn::Tensor got = npy(t / "k/key_stats.npy");
      std::vector<std::size_t> want_shape = {B, hs.size(), T, 4};
      if (!batched) want_shape.erase(want_shape.begin());
      REQUIRE(got.shape == want_shape);
      std::size_t bad = 0;
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < hs.size(); ++h) {
          std::vector<double> sum(T, 0.0), mx(T, 0.0), votes(T, 0.0);
          for (std::size_t k = 0; k < qs.size(); ++k) {
            const float* p = full.ptr() + ((b * H + hs[h]) * L + qs[k]) * T;
            for (std::size_t j = 0; j < T; ++j) {
              sum[j] += p[j];
              mx[j] = std::max(mx[j], double(p[j]));
              if (k + W >= qs.size()) votes[j] += p[j];
            }
          }
          const float* v = got.ptr() + (b * hs.size() + h) * T * 4;
          for (std::size_t j = 0; j < T; ++j) {
            double pooled = 0.0;  // max_pool1d(votes, K, 1, K // 2)
            for (std::size_t c = j >= K / 2 ? j - K / 2 : 0; c <= j + K / 2 && c < T; ++c)
              pooled = std::max(pooled, votes[c]);
            bad += !(std::abs(v[j * 4 + 0] - sum[j]) <= 1e-6 + 1e-6 * sum[j]);
            bad += !(std::abs(v[j * 4 + 1] - mx[j]) <= 1e-6);
            bad += !(std::abs(v[j * 4 + 2] - votes[j]) <= 1e-6 + 1e-6 * votes[j]);
            bad += !(std::abs(v[j * 4 + 3] - pooled) <= 1e-6 + 1e-6 * pooled);
          }
        }
      CHECK(bad == 0);
      const std::string csv = attn::test::read_text(t / "k/key_stats.csv");
      CHECK(csv.rfind("batch,head,key,sum,max,votes,pooled_votes\n", 0) == 0);
      CHECK(attn::test::count_of(csv, "\n") == 1 + B * hs.size() * T);
      if (picked) CHECK(csv.find("\n0,1,0,") != std::string::npos);  // the model's head numbers
      const auto js = run_json(t / "k");
      CHECK(js["shapes"]["key_stats"] == nlohmann::json(want_shape));
      CHECK(js["key_stats"]["window"] == W);
      CHECK(js["key_stats"]["pool"] == K);
    }
    // A rerun without --key-stats leaves no stale statistics behind.
    REQUIRE(run(base + q(t / "k")).exit_code == 0);
    CHECK(!fs::exists(t / "k/key_stats.npy"));
    CHECK(!fs::exists(t / "k/key_stats.csv"));
  }
}

TEST_CASE("cli_statistics: --pool even or < 1, --window < 1, or either alone is exit 64") {
  attn::test::TempDir t;
  const std::string base = bin() + " --config " + cfg("raschka_mha_causal.json");
  const std::string o = " -o " + q(t / "o");
  check_cli_failure(run(base + " --key-stats"), 64, {"--key-stats", "--out-dir"});
  check_cli_failure(run(base + o + " --key-stats --pool 4"), 64, {"--pool", "odd"});
  check_cli_failure(run(base + o + " --key-stats --pool 0"), 64, {"--pool"});
  check_cli_failure(run(base + o + " --key-stats --pool -3"), 64, {"--pool"});
  check_cli_failure(run(base + o + " --key-stats --window 0"), 64, {"--window"});
  check_cli_failure(run(base + o + " --window 3"), 64, {"--window", "--key-stats"});
  check_cli_failure(run(base + o + " --pool 3"), 64, {"--pool", "--key-stats"});
  CHECK(!fs::exists(t / "o"));
}

TEST_CASE(
    "cli_statistics: --input-list writes each input's key statistics; a rerun with "
    "another --window is exit 73 naming it") {
  attn::test::TempDir t;
  // Two inputs of the raschka layer: (2, 6, 3) and (6, 3).
  attn::test::write_text(t / "list.txt", attn::test::source_path("data/sentence_batch.npy") + "\n" +
                                             attn::test::source_path("data/sentence.npy") + "\n");
  const std::string base = bin() + " -q --config " + cfg("raschka_mha_causal.json") +
                           " --input-list " + q(t / "list.txt") + " -o " + q(t / "k") +
                           " --key-stats";
  const auto r = run(base + " --window 3");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(npy(t / "k/sentence_batch/key_stats.npy").shape == std::vector<std::size_t>{2, 2, 6, 4});
  CHECK(npy(t / "k/sentence/key_stats.npy").shape == std::vector<std::size_t>{2, 6, 4});
  CHECK(run(base + " --window 3").exit_code == 0);  // the same settings resume
  const auto before = attn::test::snapshot(t / "k");
  check_cli_failure(run(base + " --window 4"), 73, {"manifest.json", "--window: was 3, now 4"});
  check_cli_failure(run(base + " --window 3 --pool 5"), 73,
                    {"manifest.json", "--pool: was 7, now 5"});
  CHECK(attn::test::snapshot(t / "k") == before);
}

namespace {

// head_stats.json's rows by head: column -> value.
std::vector<nlohmann::json> heads_of(const std::string& path) {
  const auto j = attn::test::read_json(path);
  return j["heads"].get<std::vector<nlohmann::json>>();
}

}  // namespace

TEST_CASE("cli_statistics: --head-stats equals the float64 row reductions of the full maps") {
  attn::test::TempDir t;
  for (const char* config : {"raschka_mha_causal.json", "warner_multi.json"}) {
    CAPTURE(config);
    const std::string base = bin() + " -q --config " + cfg(config) + " --out-dir ";
    fs::remove_all(t / "full");
    REQUIRE(run(base + q(t / "full")).exit_code == 0);
    attn::Tensor full = npy(t / "full/attention.npy");
    if (full.ndim() == 3) full.shape.insert(full.shape.begin(), 1);
    const std::size_t B = full.shape[0], H = full.shape[1], L = full.shape[2], T = full.shape[3];
    for (const std::string extra :
         {"", " --no-attn --sink 1 --recent 2", " --sink 2 --recent 3 --heads 1 --queries 5,2"}) {
      CAPTURE(extra);
      fs::remove_all(t / "h");
      REQUIRE(run(base + q(t / "h") + " --head-stats" + extra).exit_code == 0);
      const std::size_t N = extra.empty() ? 4 : extra.find("--sink 1") != std::string::npos ? 1 : 2;
      const std::size_t R = extra.empty() ? 64 : N == 1 ? 2 : 3;
      const bool picked = extra.find("--heads") != std::string::npos;
      const std::vector<std::size_t> hs =
          picked ? std::vector<std::size_t>{1} : attn::selected_or_all({}, H);
      const std::vector<std::size_t> qs =
          picked ? std::vector<std::size_t>{5, 2} : attn::selected_or_all({}, L);
      const auto got = heads_of(t / "h/head_stats.json");
      REQUIRE(got.size() == hs.size());
      for (std::size_t k = 0; k < hs.size(); ++k) {
        double sink = 0, recent = 0, entropy = 0, distance = 0;
        for (std::size_t b = 0; b < B; ++b)
          for (std::size_t i : qs) {
            const float* p = full.ptr() + ((b * H + hs[k]) * L + i) * T;
            double total = 0, ent = 0, dist = 0;
            for (std::size_t j = 0; j < T; ++j) {
              total += p[j];
              if (p[j] > 0) ent -= p[j] * std::log(double(p[j]));
              dist += p[j] * double(i > j ? i - j : j - i);
              if (j < N) sink += p[j];
              if (j >= N && j <= i && j + R > i) recent += p[j];
            }
            entropy += ent;
            distance += dist / total;
          }
        const double n = double(B * qs.size());
        CAPTURE(k);
        CHECK(got[k]["head"] == hs[k]);
        CHECK(got[k]["layer"] == 0);
        CHECK(std::abs(got[k]["sink"].get<double>() - sink / n) <= 1e-6);
        CHECK(std::abs(got[k]["recent"].get<double>() - recent / n) <= 1e-6);
        CHECK(std::abs(got[k]["other"].get<double>() - (1 - sink / n - recent / n)) <= 2e-6);
        CHECK(std::abs(got[k]["entropy"].get<double>() - entropy / n) <= 1e-5);
        CHECK(std::abs(got[k]["distance"].get<double>() - distance / n) <= 1e-5);
      }
      const std::string csv = attn::test::read_text(t / "h/head_stats.csv");
      CHECK(csv.rfind("layer,head,sink,recent,other,entropy,distance\n", 0) == 0);
      CHECK(attn::test::count_of(csv, "\n") == 1 + hs.size());
      const auto js = run_json(t / "h");
      CHECK(js["head_stats"]["sink"] == N);
      CHECK(js["head_stats"]["recent"] == R);
    }
  }
}

TEST_CASE("cli_statistics: a batch's merged head table is the table of its inputs put together") {
  attn::test::TempDir t;
  // Two inputs of the raschka layer (C = 3, S = 6): (2, 6, 3) and (6, 3),
  // different numbers; then their concatenation (3, 6, 3) as one input.
  const attn::Tensor a = attn::test::random_tensor({2, 6, 3}, 21);
  attn::Tensor b = attn::test::random_tensor({6, 3}, 22), both({3, 6, 3});
  std::copy(a.data.begin(), a.data.end(), both.data.begin());
  std::copy(b.data.begin(), b.data.end(), both.data.begin() + 36);
  attn::test::write_text(t / "a.npy", attn::encode_npy(a));
  attn::test::write_text(t / "b.npy", attn::encode_npy(b));
  attn::test::write_text(t / "both.npy", attn::encode_npy(both));
  attn::test::write_text(t / "list.txt", "a.npy\nb.npy\n");
  const std::string base = bin() + " -q --config " + cfg("raschka_mha_causal.json") +
                           " --head-stats --sink 1 --recent 2 --no-attn";
  auto r = run(base + " --input-list " + q(t / "list.txt") + " -o " + q(t / "batch"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  r = run(base + " --input " + q(t / "both.npy") + " -o " + q(t / "both"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto merged = heads_of(t / "batch/head_stats.json");
  const auto together = heads_of(t / "both/head_stats.json");
  const auto ta = heads_of(t / "batch/a/head_stats.json"),
             tb = heads_of(t / "batch/b/head_stats.json");
  REQUIRE(merged.size() == together.size());
  for (std::size_t h = 0; h < merged.size(); ++h)
    for (const char* c : {"sink", "recent", "other", "entropy", "distance"}) {
      CAPTURE(h);
      CAPTURE(c);
      CHECK(merged[h]["inputs"] == 2);
      CHECK(std::abs(merged[h][c].get<double>() - together[h][c].get<double>()) <= 1e-6);
      // The spread of the inputs' means (rows 12 and 6), ddof 0.
      const double va = ta[h][c].get<double>(), vb = tb[h][c].get<double>();
      const double mean = (12 * va + 6 * vb) / 18;
      const double sd =
          std::sqrt((12 * (va - mean) * (va - mean) + 6 * (vb - mean) * (vb - mean)) / 18);
      CHECK(std::abs(merged[h][std::string(c) + "_std"].get<double>() - sd) <= 1e-9);
      CHECK(sd > 0);
    }
  CHECK(attn::test::read_text(t / "batch/head_stats.csv")
            .rfind("layer,head,inputs,sink,sink_std,recent,recent_std,", 0) == 0);
}

TEST_CASE("cli_statistics: --layer all writes one head table for every layer") {
  attn::test::TempDir t;
  const std::string base = bin() + " -q --model " + q(attn::test::source_path("data/tiny-llama")) +
                           " --layer all --input " +
                           q(attn::test::source_path("data/tiny-llama-hidden-layers.npy")) +
                           " --head-stats --no-attn -o ";
  REQUIRE(run(base + q(t / "all")).exit_code == 0);
  const auto all = heads_of(t / "all/head_stats.json");
  const auto l0 = heads_of(t / "all/layer_0/head_stats.json"),
             l1 = heads_of(t / "all/layer_1/head_stats.json");
  REQUIRE(all.size() == l0.size() + l1.size());
  for (std::size_t k = 0; k < l0.size(); ++k) CHECK(all[k] == l0[k]);
  for (std::size_t k = 0; k < l1.size(); ++k) CHECK(all[l0.size() + k] == l1[k]);
  CHECK(l1[0]["layer"] == 1);
  CHECK(attn::test::count_of(attn::test::read_text(t / "all/head_stats.csv"), "\n1,") == l1.size());
}

TEST_CASE("cli_statistics: --head-stats without an output folder, --sink alone or < 0 is exit 64") {
  attn::test::TempDir t;
  const std::string base = bin() + " --config " + cfg("raschka_mha_causal.json");
  const std::string o = " -o " + q(t / "o");
  check_cli_failure(run(base + " --head-stats"), 64, {"--head-stats", "--out-dir"});
  check_cli_failure(run(base + o + " --sink 2"), 64, {"--sink", "--head-stats"});
  check_cli_failure(run(base + o + " --head-stats --sink -1"), 64, {"--sink"});
  CHECK(!fs::exists(t / "o"));
}

TEST_CASE(
    "cli_statistics: --check-f64 reports errors against float64 below 1e-5 on golden layers") {
  attn::test::TempDir t;
  // The score terms the float64 path covers: MHA, GQA with rope and left
  // padding, partial rotary, ALiBi, softcap with a window, sinks with a window.
  for (const std::string v : {"tutorial_raschka_mha_causal", "variants/llama3_gqa_rope_left",
                              "variants/neox_partial_rotary", "variants/bloom_alibi_h6",
                              "variants/gemma2_softcap_window", "variants/gptoss_sinks_window"}) {
    CAPTURE(v);
    const std::string dir = attn::test::source_path(
        "tests/golden/" + (v.rfind("variants/", 0) == 0 ? v : "cases/" + v) + "/config.json");
    for (const std::string extra : {" --check-f64", " --check-f64 all --no-attn"}) {
      CAPTURE(extra);
      fs::remove_all(t / "c");
      const auto r = run(bin() + " --config " + q(dir) + extra + " -o " + q(t / "c"));
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      CHECK_MESSAGE(r.err.find("check-f64: ") != std::string::npos, r.err);
      const auto js = run_json(t / "c")["check_f64"];
      const double a = js["attention_max_abs"].get<double>(),
                   c = js["context_max_rel"].get<double>();
      CHECK(a > 0);
      CHECK(a < 1e-5);
      CHECK(c > 0);
      CHECK(c < 1e-5);
      const std::size_t B =
          npy(t / "c/context.npy").ndim() == 3 ? npy(t / "c/context.npy").shape[0] : 1;
      CHECK(js["rows"].get<std::size_t>() > 0);
      CHECK(js["rows"].get<std::size_t>() % B == 0);
    }
  }
  const std::string raschka = " --config " + cfg("raschka_mha_causal.json");
  auto r = run(bin() + raschka + " --check-f64 3 --check-tol 1e-12 -o " + q(t / "tight"));
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("--check-tol") != std::string::npos);
  CHECK(run_json(t / "tight")["check_f64"]["rows"] == 2 * 3);  // B = 2, 3 rows each
  r = run(bin() + raschka + " --check-f64 3 --check-tol 1e-5 -o " + q(t / "loose"));
  CHECK_MESSAGE(r.exit_code == 0, r.err);
}

TEST_CASE("cli_statistics: --check-f64 refuses what its float64 path lacks, and bad values") {
  attn::test::TempDir t;
  const std::string base =
      bin() + " --config " + cfg("raschka_mha_causal.json") + " -o " + q(t / "o");
  check_cli_failure(run(base + " --check-f64 0"), 64, {"--check-f64", "\"0\""});
  check_cli_failure(run(base + " --check-f64 some"), 64, {"--check-f64"});
  check_cli_failure(run(base + " --check-tol 1"), 64, {"--check-tol", "--check-f64"});
  check_cli_failure(
      run(bin() + " --config " +
          q(attn::test::source_path("tests/golden/variants/qwen3_qknorm/config.json")) +
          " --check-f64 -o " + q(t / "o")),
      64, {"--check-f64", "qk_norm"});
  CHECK(!fs::exists(t / "o"));
}

TEST_CASE("cli_statistics: --check-f64 all past the memory allowed is exit 71 before the work") {
  attn::test::TempDir t;
  // GPT-2-small's shape (C = 768, H = 12) at S = 512: the projections and
  // context about 8 MB, the float64 k, v and q about 25 MB, every row's weights
  // 12.6 MB; 40 MB allows all but those rows.
  attn::test::write_text(t / "x.npy",
                         attn::encode_npy(attn::test::random_tensor({1, 512, 768}, 5)));
  const std::string base = "ATTN_TEST_MEMORY_LIMIT=40000000 " + bin() + " -q --config " +
                           cfg("gpt2_small_causal.json") + " --input " + q(t / "x.npy") +
                           " --no-attn -o " + q(t / "o");
  check_cli_failure(run(base + " --check-f64 all"), 71, {"--check-f64", "512 rows per head"});
  CHECK(!fs::exists(t / "o"));
  const auto r = run(base + " --check-f64 2");
  CHECK_MESSAGE(r.exit_code == 0, r.err);
}

TEST_CASE("cli_statistics: --key-stats past the memory allowed is exit 71 before the work") {
  attn::test::TempDir t;
  // 64 heads of one dimension (C = 64) at S = 2048: the projections and context
  // about 2.6 MB; the per-key statistics of 64 heads x 2048 keys about 15 MB
  // (accumulators, result, CSV); 12 MB allows the run without them.
  attn::test::write_text(t / "c.json",
                         R"({"attention": "causal", "hidden_size": 64, "num_heads": 64,)"
                         R"( "layout": "fused", "init": {"seed": 0}})");
  attn::test::write_text(t / "x.npy",
                         attn::encode_npy(attn::test::random_tensor({1, 2048, 64}, 7)));
  const std::string base = "ATTN_TEST_MEMORY_LIMIT=12000000 " + bin() + " -q --config " +
                           q(t / "c.json") + " --input " + q(t / "x.npy") + " --no-attn -o " +
                           q(t / "o");
  check_cli_failure(run(base + " --key-stats"), 71, {"--key-stats", "2048 keys"});
  CHECK(!fs::exists(t / "o"));
  const auto r = run(base);
  CHECK_MESSAGE(r.exit_code == 0, r.err);
}

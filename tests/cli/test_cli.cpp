// cli: the built attn-run binary end to end: every shipped config, every
// output form, the README's commands, error lines and exit codes, and that a
// failure leaves an existing output folder byte-for-byte alone.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "attn/npy.h"
#include "attn/report.h"
#include "cli_checks.h"
#include "json_files.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::run;
using attn::test::source_path;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
std::string cfg(const std::string& name) { return attn::test::quoted_config(name); }

using attn::test::snapshot;

void check_error(const attn::test::RunResult& r, int code, const std::string& culprit) {
  attn::test::check_cli_failure(r, code, {culprit});
}

}  // namespace

TEST_CASE("cli: every shipped config runs and prints a torch-style tensor") {
  int n = 0;
  for (const auto& e : fs::directory_iterator(source_path("configs"))) {
    if (e.path().extension() != ".json") continue;
    ++n;
    CAPTURE(e.path().string());
    auto r = run(bin() + " --config '" + e.path().string() + "'");
    CHECK(r.exit_code == 0);
    CHECK(r.out.rfind("tensor([", 0) == 0);
    CHECK(r.out.find("nan") == std::string::npos);
  }
  CHECK(n >= 9);
}

TEST_CASE("cli: the tutorial tables are reproduced") {
  for (const char* name : {"raschka_mha_causal.json", "raschka_mha_causal_init.json"}) {
    auto r = run(bin() + " --config " + cfg(name));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("tensor([[[0.3190, 0.4858],\n         [0.2943, 0.3897],\n"
                     "         [0.2856, 0.3593],") == 0);
  }
  for (const char* name : {"raschka_wrapper_causal.json", "raschka_wrapper_causal_init.json"}) {
    auto r = run(bin() + " --config " + cfg(name));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("tensor([[[-0.4519,  0.2216,  0.4772,  0.1063],") == 0);
  }
}

TEST_CASE("cli: --out-dir writes context, attention and run.json") {
  attn::test::TempDir t;
  auto r =
      run(bin() + " -q --config " + cfg("warner_causal.json") + " --out-dir '" + t.path + "/o'");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.empty());
  auto ctx = attn::to_float32(attn::read_npy(t / "o/context.npy"), "context", false);
  auto att = attn::to_float32(attn::read_npy(t / "o/attention.npy"), "attention", false);
  CHECK(ctx.shape == std::vector<std::size_t>{6, 8});
  CHECK(att.shape == std::vector<std::size_t>{2, 6, 6});
  for (std::size_t row = 0; row < 12; ++row) {  // causal rows sum to one, future is zero
    double sum = 0;
    for (std::size_t j = 0; j < 6; ++j) sum += att.data[row * 6 + j];
    CHECK(sum == doctest::Approx(1.0).epsilon(1e-6));
    for (std::size_t j = row % 6 + 1; j < 6; ++j) CHECK(att.data[row * 6 + j] == 0.0f);
  }
  auto j = attn::test::read_json(t / "o/run.json");
  CHECK(j["layout"] == "fused");
  CHECK(j["layout_detected"] == true);
  CHECK(j["shapes"]["context"] == nlohmann::json({6, 8}));
  CHECK(j["shapes"]["attention"] == nlohmann::json({2, 6, 6}));
  CHECK(j["timings"]["compute_ms"].get<double>() >= 0.0);
  CHECK(j["flops"].get<double>() > 0.0);
  CHECK(j["config"]["causal"] == true);
  for (const auto& e : fs::directory_iterator(t / "o"))  // no temporaries left
    CHECK(e.path().filename().string().find("tmp") == std::string::npos);

  // The text on stdout and the context.npy hold the same numbers.
  auto text = run(bin() + " --config " + cfg("warner_causal.json"));
  CHECK(text.out == attn::format_tensor_text(ctx));

  // --no-attn: no attention.npy, and a stale one from the run above is removed.
  r = run(bin() + " -q --config " + cfg("warner_causal.json") + " --no-attn --out-dir '" + t.path +
          "/o'");
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(t / "o/context.npy"));
  CHECK_FALSE(fs::exists(t / "o/attention.npy"));
}

TEST_CASE("cli: a single run's context takes its input's buffer where nothing reads x after") {
  // O == C: the input's rows become the context's (same values as a run that keeps them,
  // which --check-f64 does, reading x after the forward pass); O != C: a buffer of its own.
  attn::test::TempDir t;
  const std::string note = "the context is written over the input's rows";
  auto lent =
      run(bin() + " -v --config " + cfg("warner_causal.json") + " -o " + attn::test::q(t / "a"));
  REQUIRE(lent.exit_code == 0);
  CHECK(attn::test::count_of(lent.err, note) == 1);
  auto kept = run(bin() + " -v --check-f64 --config " + cfg("warner_causal.json") + " -o " +
                  attn::test::q(t / "b"));
  REQUIRE(kept.exit_code == 0);
  CHECK(attn::test::count_of(kept.err, note) == 0);
  CHECK(attn::test::read_text(t / "a/context.npy") == attn::test::read_text(t / "b/context.npy"));
  // each input of a batch, folders or packs
  const std::string list = attn::test::q(ATTN_SOURCE_DIR "/docs/list_example/inputs.txt");
  for (const std::string pack : {"", " --pack"}) {
    auto batch = run(bin() + " -v --config " + cfg("warner_causal.json") + " --input-list " + list +
                     pack + " -o " + attn::test::q(t / ("d" + pack)));
    REQUIRE(batch.exit_code == 0);
    CHECK(attn::test::count_of(batch.err, note) == 5);
  }
  auto other = run(bin() + " -v --config " + cfg("raschka_mha_causal.json") + " -o " +
                   attn::test::q(t / "c"));
  REQUIRE(other.exit_code == 0);
  CHECK(attn::test::count_of(other.err, note) == 0);
}

TEST_CASE("cli: --check-f64 without a loadable OpenBLAS exits 71; other runs never load it") {
  // Builds with their own kernels open OpenBLAS only for --check-f64's float64 products
  // (kernels/blas.cpp); the portable build links it, and its loader needs it to start at all.
  if (run(bin() + " --version").out.find("BLAS: not used") == std::string::npos) {
    MESSAGE("this build links OpenBLAS: nothing to check");
    return;
  }
  attn::test::TempDir t;
  fs::create_directories(t / "lib");
  for (const char* name : {"libopenblas.so.0", "libopenblas.so"})  // found first, not a library
    attn::test::write_text(t / (std::string("lib/") + name), "not a library\n");
  const std::string env = "LD_LIBRARY_PATH=" + attn::test::q(t / "lib") + " ";
  check_error(run(env + bin() + " --check-f64 --config " + cfg("warner_causal.json") + " -o " +
                  attn::test::q(t / "f64")),
              71, "--check-f64");
  CHECK_FALSE(fs::exists(t / "f64"));
  auto plain = run(env + bin() + " --config " + cfg("warner_causal.json") + " -o " +
                   attn::test::q(t / "plain"));
  CHECK_MESSAGE(plain.exit_code == 0, plain.err);
  CHECK(fs::exists(t / "plain/context.npy"));
}

TEST_CASE("cli: stdout formats json and npy carry the same values") {
  attn::test::TempDir t;
  auto text = run(bin() + " --config " + cfg("warner_multi.json"));
  auto json = run(bin() + " --config " + cfg("warner_multi.json") + " --format json");
  auto npy = run(bin() + " --config " + cfg("warner_multi.json") + " --format npy");
  REQUIRE(text.exit_code == 0);
  REQUIRE(json.exit_code == 0);
  REQUIRE(npy.exit_code == 0);
  auto a = attn::test::npy_values(npy.out, "stdout");
  CHECK(a.shape == std::vector<std::size_t>{6, 8});
  auto j = nlohmann::json::parse(json.out);
  REQUIRE(j.size() == 6);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t k = 0; k < 8; ++k) CHECK(j[i][k].get<float>() == a.data[i * 8 + k]);
  CHECK(text.out == attn::format_tensor_text(a));
}

TEST_CASE("cli: stdin input as JSON and as a .npy stream") {
  const std::string rows = "[[0.43,0.15,0.89],[0.55,0.87,0.66],[0.57,0.85,0.64]]";
  auto r =
      run(bin() + " --config " + cfg("raschka_mha_causal.json") + " --input - --format json", rows);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.size() == 3);
  CHECK(j[0][0].get<double>() == doctest::Approx(0.3190).epsilon(1e-3));
  auto npy = attn::test::read_text(source_path("data/sentence.npy"));
  auto r2 = run(bin() + " --config " + cfg("raschka_mha_causal.json") + " --input -", npy);
  REQUIRE(r2.exit_code == 0);
  CHECK(r2.out.find("tensor([[0.3190, 0.4858],") == 0);
}

TEST_CASE("cli: --dump-weights table, json, and a converted folder that reloads identically") {
  attn::test::TempDir t;
  auto table = run(bin() + " --config " + cfg("raschka_mha_causal.json") + " --dump-weights");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("layout: separate") != std::string::npos);
  CHECK(table.out.find("out_proj.bias") != std::string::npos);
  auto js =
      run(bin() + " --config " + cfg("raschka_mha_causal.json") + " --dump-weights --format json");
  REQUIRE(js.exit_code == 0);
  CHECK(nlohmann::json::parse(js.out)["params"].size() == 5);

  auto before = run(bin() + " --config " + cfg("warner_causal.json") + " --format npy");
  for (const char* layout : {"separate", "fused", "torch_mha"}) {
    CAPTURE(layout);
    std::string dir = t / layout;
    auto d = run(bin() + " -q --config " + cfg("warner_causal.json") + " --dump-weights '" + dir +
                 "' --layout " + layout);
    REQUIRE(d.exit_code == 0);
    auto m = attn::test::read_json(dir + "/manifest.json");
    CHECK(m["layout"] == layout);
    CHECK(m["files"].size() >= 4);
    auto after = run(bin() + " --config " + cfg("warner_causal.json") + " --weights '" + dir +
                     "' --format npy");
    REQUIRE(after.exit_code == 0);
    CHECK(after.out == before.out);  // bit-identical
  }
  // per_head has no output projection: the model does not fit.
  auto bad = run(bin() + " --config " + cfg("warner_causal.json") + " --dump-weights '" +
                 (t / "ph") + "' --layout per_head");
  check_error(bad, 64, "per_head");
  CHECK_FALSE(fs::exists(t / "ph/manifest.json"));
}

TEST_CASE("cli: usage errors exit 64 with one line naming the flag") {
  check_error(run(bin()), 64, "--config");
  check_error(run(bin() + " --config " + cfg("warner_single.json") + " --bogus"), 64, "--bogus");
  check_error(run(bin() + " --config " + cfg("warner_single.json") + " --format xml"), 64,
              "--format");
  check_error(run(bin() + " --config " + cfg("warner_single.json") + " --threads 0"), 64,
              "--threads");
  auto help = run(bin() + " --help");
  CHECK(help.exit_code == 0);
  CHECK(help.out.find("--config") != std::string::npos);
  auto version = run(bin() + " --version");
  CHECK(version.exit_code == 0);
  CHECK(version.out.rfind("attn-run ", 0) == 0);
  // Builds on attn-run's own kernels name the depth slices chosen for this CPU.
  if (version.out.find("own GEMM kernels") != std::string::npos)
    CHECK(version.out.find(" in slices of ") != std::string::npos);
}

TEST_CASE("cli: data, input and config errors name the culprit and keep old outputs") {
  attn::test::TempDir t;
  std::string out = t / "out";
  REQUIRE(run(bin() + " -q --config " + cfg("warner_causal.json") + " --out-dir '" + out + "'")
              .exit_code == 0);
  const auto before = snapshot(out);
  const std::string to_out = " --out-dir '" + out + "'";

  check_error(run(bin() + " --config '" + (t / "missing.json") + "'" + to_out), 66, "missing.json");
  attn::test::write_text(t / "typo.json", R"({"attention": "causal", "hiden_size": 8})");
  check_error(run(bin() + " --config '" + (t / "typo.json") + "'" + to_out), 78, "hidden_size");
  attn::test::write_text(t / "syntax.json", "{\"attention\": \"causal\",\n \"hidden_size\": 8,,}");
  check_error(run(bin() + " --config '" + (t / "syntax.json") + "'" + to_out), 78, "line 2");
  check_error(run(bin() + " --config " + cfg("warner_causal.json") + " --input '" +
                  (t / "nope.npy") + "'" + to_out),
              66, "nope.npy");
  attn::test::write_text(t / "bad.npy", "\x93NUMPY\x01\x00garbage");
  check_error(run(bin() + " --config " + cfg("warner_causal.json") + " --input '" +
                  (t / "bad.npy") + "'" + to_out),
              65, "bad.npy");
  // Wrong width: C = 3 given to a C = 8 layer.
  check_error(run(bin() + " --config " + cfg("warner_causal.json") + " --input '" +
                  source_path("data/sentence.npy") + "'" + to_out),
              65, "sentence.npy");
  // Longer than context_size.
  check_error(run(bin() + " --config " + cfg("warner_causal.json") + " --input -" + to_out,
                  "[[1,2,3,4,5,6,7,8],[1,2,3,4,5,6,7,8],[1,2,3,4,5,6,7,8],[1,2,3,4,5,6,7,8],"
                  "[1,2,3,4,5,6,7,8],[1,2,3,4,5,6,7,8],[1,2,3,4,5,6,7,8]]"),
              65, "context_size");
  check_error(run(bin() + " --config " + cfg("warner_causal.json") + " --weights '" +
                  source_path("data/raschka_mha") + "'" + to_out),
              65, "expected shape");
  // A file where the output folder should be.
  attn::test::write_text(t / "afile", "x");
  check_error(
      run(bin() + " --config " + cfg("warner_causal.json") + " --out-dir '" + (t / "afile") + "'"),
      73, "afile");
  CHECK(snapshot(out) == before);
}

TEST_CASE("cli: unwritable output folder exits 73 and writes nothing") {
  if (::geteuid() == 0) {
    // root ignores permissions; use a path under a regular file instead.
    attn::test::TempDir t;
    attn::test::write_text(t / "file", "x");
    check_error(run(bin() + " --config " + cfg("warner_causal.json") + " --out-dir '" +
                    (t / "file/sub") + "'"),
                73, "file/sub");
    return;
  }
  attn::test::TempDir t;
  fs::create_directories(t / "ro");
  fs::permissions(t / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  check_error(
      run(bin() + " --config " + cfg("warner_causal.json") + " --out-dir '" + (t / "ro") + "'"), 73,
      "ro");
}

TEST_CASE("cli: closed stdout is an I/O error, a broken pipe ends quietly") {
  auto closed = run(bin() + " --config " + cfg("warner_single.json") + " >&-");
  CHECK(closed.exit_code == 74);
  CHECK(closed.err.find("stdout") != std::string::npos);
  attn::test::TempDir t;
  auto piped = run("(" + bin() + " --config " + cfg("gpt2_small_causal.json") +
                   " --format json; echo $? > '" + (t / "rc") + "') | head -c 10 >/dev/null");
  CHECK(piped.exit_code == 0);
  CHECK(piped.err.empty());
  CHECK(attn::test::read_text(t / "rc") == "0\n");
}

TEST_CASE("cli: the README's attn-run commands run") {
  std::string readme = attn::test::read_text(source_path("README.md"));
  std::regex line_re(R"((^|\n)(build/attn-run [^\n]*))");
  int n = 0;
  attn::test::TempDir t;
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), line_re);
       it != std::sregex_iterator(); ++it) {
    std::string cmd = (*it)[2].str();
    cmd = cmd.substr(cmd.find(' '));  // drop "build/attn-run"
    ++n;
    CAPTURE(cmd);
    auto r = run("cd '" + attn::test::source_dir() + "' && ln -sfn '" + t.path +
                 "' out-readme-test && " + bin() +
                 std::regex_replace(cmd, std::regex(" out/"), " out-readme-test/") +
                 "; rc=$?; rm -f out-readme-test; exit $rc");
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("error") == std::string::npos);
  }
  CHECK(n >= 3);
}

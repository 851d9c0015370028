// Batches you can trust, end to end through the built binary (CONTRACT.md
// "(v3) Many layers, resumable batches", "(v4) Families and schedulers"): a
// rerun into a batch folder with any setting changed is refused naming it,
// never a silent reuse of old results.
#include <doctest/doctest.h>
#include <sys/time.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "cli_checks.h"
#include "hostile_checks.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace attn::test::hostile;
using attn::test::check_cli_failure;
using attn::test::run;
using attn::test::RunResult;
using attn::test::snapshot;
using attn::test::write_text;

namespace {

// `n` inputs x_0.. of shape `shape` (random, seeded) and their list in `dir`.
std::string random_list(const std::string& dir, int n, const std::vector<std::size_t>& shape) {
  std::string list;
  for (int i = 0; i < n; ++i) {
    const std::string name = "x_" + std::to_string(i) + ".npy";
    write_text(dir + "/" + name,
               attn::encode_npy(attn::test::random_tensor(shape, 40 + unsigned(i))));
    list += name + "\n";
  }
  write_text(dir + "/list.txt", list);
  return dir + "/list.txt";
}

// The file's bytes changed in place at `offset` (its size kept, its
// modification time moved on).
void change_byte(const std::string& path, std::size_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(std::streamoff(offset));
  char c = 0;
  f.get(c);
  f.seekp(std::streamoff(offset));
  f.put(char(c ^ 0x01));
  f.close();
  const struct timeval later[2] = {{2000000000, 0}, {2000000000, 0}};
  ::utimes(path.c_str(), later);
}

}  // namespace

TEST_CASE("hostile batches: a rerun with any output setting changed is 73 naming the flag") {
  attn::test::TempDir t;
  const std::string list = random_list(t.path, 3, {5, 4});
  fs::copy(fixtures() + "/weights", t / "w", fs::copy_options::recursive);
  write_text(t / "mask.npy", bool_npy(1, 5, {0, 0, 0, 0, 1}));
  write_text(t / "labels.txt", "a\nb\nc\nd\ne\n");
  const std::string out = t / "out";
  const std::string base = bin() + " -q --config " + base_cfg() + " --weights " + q(t / "w") +
                           " --input-list " + q(list) + " --out-dir " + q(out);
  RunResult first = run(base);
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  const auto before = snapshot(out);

  // Each flag that changes what is written, alone: refused, naming it.
  const std::vector<std::pair<std::string, std::string>> changes = {
      {"--heads 0", "--heads"},
      {"--queries 0-2", "--queries"},
      {"--keys last:2", "--keys"},
      {"--top-k 2", "--top-k"},
      {"--summary", "--summary"},
      {"--stats", "--stats"},
      {"--no-attn", "--no-attn"},
      {"--average-heads", "--average-heads"},
      {"--allow-nonfinite", "--allow-nonfinite"},
      {"--labels a,b,c,d,e", "--labels"},
      {"--labels-file " + q(t / "labels.txt"), "--labels"},
      {"--padding-mask " + q(t / "mask.npy"), "--padding-mask"},
  };
  for (const auto& [flags, culprit] : changes) {
    CAPTURE(flags);
    check_cli_failure(run(base + " " + flags), 73, {out + "/manifest.json", culprit});
    CHECK(snapshot(out) == before);
  }
  // Two runs with --summary: --recent alone differs.
  {
    attn::test::TempDir t2;
    const std::string out2 = t2 / "out";
    const std::string with_summary = bin() + " -q --config " + base_cfg() + " --input-list " +
                                     q(list) + " --out-dir " + q(out2) + " --summary";
    REQUIRE(run(with_summary).exit_code == 0);
    check_cli_failure(run(with_summary + " --recent 2"), 73, {"--recent"});
    check_cli_failure(run(with_summary + " --top-k 1"), 73, {"--top-k: was not given, now 1"});
  }

  // The same settings: every input skipped, nothing rewritten.
  RunResult same = run(base);
  REQUIRE_MESSAGE(same.exit_code == 0, same.err);
  const auto summary = nlohmann::json::parse(attn::test::read_text(out + "/summary.json"));
  for (const auto& in : summary["inputs"]) CHECK(in.value("skipped", false));

  // A weights file changed since (one .npy of the folder): refused naming it.
  change_byte(t / "w/Wqkv.weight.npy", 200);
  check_cli_failure(run(base), 73, {"weights file", "Wqkv.weight.npy"});
  CHECK(temporaries(t.path).empty());
}

TEST_CASE("hostile batches: a sharded model's shard replaced since is 73 naming the shard") {
  attn::test::TempDir t;
  fs::copy(attn::test::source_path("tests/golden/folders/gemma2/model"), t / "m",
           fs::copy_options::recursive);
  const std::string list = random_list(t.path, 2, {6, 32});
  const std::string out = t / "out";
  const std::string base = bin() + " -q --model " + q(t / "m") + " --layer 0 --input-list " +
                           q(list) + " --out-dir " + q(out);
  RunResult first = run(base);
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  const auto before = snapshot(out);
  // Layer 0's o_proj lies in the second shard: new values there, same size.
  const std::string shard = t / "m/model-00002-of-00003.safetensors";
  change_byte(shard, fs::file_size(shard) - 3);
  check_cli_failure(run(base), 73, {"weights file", "model-00002-of-00003.safetensors"});
  CHECK(snapshot(out) == before);
  // Another layer is another setting too.
  check_cli_failure(run(bin() + " -q --model " + q(t / "m") + " --layer 1 --input-list " + q(list) +
                        " --out-dir " + q(out)),
                    73, {"--layer"});
  CHECK(snapshot(out) == before);
}

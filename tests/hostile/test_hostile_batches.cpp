// Batches you can trust, end to end through the built binary (CONTRACT.md
// "(v3) Many layers, resumable batches", "(v4) Families and schedulers"): a
// rerun into a batch folder with any setting changed is refused naming it,
// never a silent reuse of old results.
#include <doctest/doctest.h>
#include <sys/time.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "cli_checks.h"
#include "hostile_checks.h"
#include "json_files.h"
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
      {"--attention-mask " + q(t / "mask.npy"), "--attention-mask"},
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
  const auto summary = attn::test::read_json(out + "/batch.json");
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

namespace {
// The result folders in `out` (hidden ones, a run's staging, are not
// results); each must hold an input's complete results.
std::size_t whole_result_folders(const std::string& out) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name[0] == '.') continue;
    CAPTURE(name);
    CHECK(fs::exists(e.path() / "context.npy"));
    CHECK(fs::exists(e.path() / "attention.npy"));
    CHECK(fs::exists(e.path() / "run.json"));
    ++n;
  }
  return n;
}

// A result folder's arrays (run.json's timings differ from run to run).
std::string arrays_of(const std::string& dir) {
  return attn::test::read_text(dir + "/context.npy") +
         attn::test::read_text(dir + "/attention.npy");
}
}  // namespace

TEST_CASE("hostile batches: SIGKILL inside a commit leaves whole result folders or none") {
  for (const int nth : {1, 2, 5}) {
    CAPTURE(nth);
    attn::test::TempDir t;
    const std::string list = random_list(t.path, 8, {5, 4});
    const std::string out = t / "out";
    const std::string args =
        "-q --config " + base_cfg() + " --input-list " + q(list) + " --out-dir " + q(out);
    // The commit's nth rename done, SIGKILL: no handler runs, nothing cleans up.
    RunResult r = signalled_at("rename:" + std::to_string(nth), args, "KILL");
    CHECK_MESSAGE(r.exit_code == 128 + 9, "stderr: " << r.err);
    // (A commit's renames: its folders, then the manifest.)
    const std::size_t whole = whole_result_folders(out);
    CHECK(whole >= 1);
    CHECK(whole <= std::size_t(nth));
    // The rerun removes the killed run's staging and completes the batch.
    RunResult again = run(bin() + " " + args);
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(whole_result_folders(out) == 8);
    CHECK(temporaries(t.path).empty());
  }
}

TEST_CASE("hostile batches: SIGKILL while results are redone leaves each folder old or new") {
  attn::test::TempDir t;
  std::string list = random_list(t.path, 8, {5, 4});
  const std::string out = t / "out";
  const std::string args =
      "-q --config " + base_cfg() + " --input-list " + q(list) + " --out-dir " + q(out);
  REQUIRE(run(bin() + " " + args).exit_code == 0);
  write_text(out + "/x_1/notes.txt", "mine");  // a file of the user's in a result folder
  std::vector<std::string> old_arrays, new_arrays;
  for (int i = 0; i < 8; ++i) old_arrays.push_back(arrays_of(out + "/x_" + std::to_string(i)));
  // New inputs (other values), their results made elsewhere for reference.
  for (int i = 0; i < 8; ++i)
    write_text(t / ("x_" + std::to_string(i) + ".npy"),
               attn::encode_npy(attn::test::random_tensor({5, 4}, 90 + unsigned(i))));
  const std::string ref = t / "ref";
  REQUIRE(run(bin() + " -q --config " + base_cfg() + " --input-list " + q(list) + " --out-dir " +
              q(ref))
              .exit_code == 0);
  for (int i = 0; i < 8; ++i) new_arrays.push_back(arrays_of(ref + "/x_" + std::to_string(i)));

  RunResult r = signalled_at("rename:3", args, "KILL");
  CHECK_MESSAGE(r.exit_code == 128 + 9, "stderr: " << r.err);
  std::size_t redone = 0;
  for (int i = 0; i < 8; ++i) {
    CAPTURE(i);
    const std::string now = arrays_of(out + "/x_" + std::to_string(i));
    CHECK((now == old_arrays[i] || now == new_arrays[i]));  // never one file of each
    redone += now == new_arrays[i] ? 1 : 0;
  }
  CHECK(redone >= 1);
  CHECK(redone <= 3);
  CHECK(attn::test::read_text(out + "/x_1/notes.txt") == "mine");
  RunResult again = run(bin() + " " + args);
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  for (int i = 0; i < 8; ++i) CHECK(arrays_of(out + "/x_" + std::to_string(i)) == new_arrays[i]);
  CHECK(attn::test::read_text(out + "/x_1/notes.txt") == "mine");
  CHECK(temporaries(t.path).empty());
}

TEST_CASE("hostile batches: a 4 MB line of a list on standard input is not echoed whole") {
  attn::test::TempDir t;
  const std::string line(std::size_t(4) << 20, 'a');
  write_text(t / "list.txt", line + ".npy\n");
  const RunResult r = run("cat " + q(t / "list.txt") + " | " + bin() + " -q --config " +
                          base_cfg() + " --input-list - --out-dir " + q(t / "out"));
  CHECK(r.exit_code != 0);
  CHECK(r.out.empty());
  CHECK_MESSAGE(r.err.size() < 4000, r.err.substr(0, 300));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.rfind("attn-run: error: ", 0) == 0);
}

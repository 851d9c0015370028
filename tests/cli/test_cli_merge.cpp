// cli_merge: --merge-shards DIR through the built binary: N shards of one
// --input-list run joined into DIR/batch.json equal to what one unsharded
// run lists; a missing shard or result folder fails with one line naming the
// inputs and the shards to resubmit, and writes nothing.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "json_files.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::check_cli_failure;
using attn::test::q;
using attn::test::read_json;
using attn::test::run;
using attn::test::source_path;
using nlohmann::json;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
// The shipped example list (5 inputs) run as `n` shards (those in `ks`) into dir.
void run_shards(const std::string& dir, std::size_t n, const std::vector<std::size_t>& ks) {
  for (std::size_t k : ks) {
    auto r =
        run(bin() + " -q --threads 1 --config " + attn::test::quoted_config("warner_causal.json") +
            " --input-list " + q(source_path("docs/list_example/inputs.txt")) + " -o " + q(dir) +
            " --shard " + std::to_string(k) + "/" + std::to_string(n));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
}

}  // namespace

TEST_CASE("cli_merge: the shards' summaries join into the summary of one run") {
  attn::test::TempDir t;
  run_shards(t / "sharded", 3, {0, 1, 2});
  auto r = run(bin() + " -q --merge-shards " + q(t / "sharded"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.empty());
  const json merged = read_json(t / "sharded/batch.json");

  // One unsharded run of the same list, for comparison.
  auto whole = run(bin() + " -q --threads 1 --config " +
                   attn::test::quoted_config("warner_causal.json") + " --input-list " +
                   q(source_path("docs/list_example/inputs.txt")) + " -o " + q(t / "whole"));
  REQUIRE(whole.exit_code == 0);
  const json one = read_json(t / "whole/batch.json");
  REQUIRE(merged["inputs"].size() == one["inputs"].size());
  CHECK(merged["inputs"].size() == 5);
  for (std::size_t i = 0; i < one["inputs"].size(); ++i) {
    CAPTURE(i);
    for (const char* key : {"index", "path", "line", "dir", "shapes"})
      CHECK(merged["inputs"][i][key] == one["inputs"][i][key]);
  }
  for (const char* key : {"config", "input_list", "list_inputs", "weights", "layout"})
    CHECK(merged[key] == one[key]);
  CHECK(merged["shard"].is_null());
  CHECK(merged["merged_from"] ==
        json({"batch-0-of-3.json", "batch-1-of-3.json", "batch-2-of-3.json"}));
  CHECK(merged["shards"].size() == 3);
}

TEST_CASE("cli_merge: shard files an earlier attn-run named summary-K-of-N.json still merge") {
  attn::test::TempDir t;
  run_shards(t / "old", 3, {0, 1, 2});
  // Shards 0 and 1 as an earlier version named them; shard 2 both ways (the new name wins).
  fs::rename(t / "old/batch-0-of-3.json", t / "old/summary-0-of-3.json");
  fs::rename(t / "old/batch-1-of-3.json", t / "old/summary-1-of-3.json");
  fs::copy_file(t / "old/batch-2-of-3.json", t / "old/summary-2-of-3.json");
  auto r = run(bin() + " -q --merge-shards " + q(t / "old"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const json merged = read_json(t / "old/batch.json");
  CHECK(merged["inputs"].size() == 5);
  CHECK(merged["merged_from"] ==
        json({"summary-0-of-3.json", "summary-1-of-3.json", "batch-2-of-3.json"}));
}

TEST_CASE("cli_merge: inputs with no result are named, with the shards to resubmit") {
  attn::test::TempDir t;
  const std::string dir = t / "r";
  run_shards(dir, 4, {0, 2, 3});  // shard 1 of 4 (entry 1: four.npy) never ran
  const auto before = attn::test::snapshot(dir);
  auto r = run(bin() + " --merge-shards " + q(dir));
  check_cli_failure(r, 66,
                    {dir + ": 1 of 5 inputs have no result", "four.npy (line 4)",
                     "resubmit shard(s) 1 of 4", "--array=1"});
  CHECK(attn::test::snapshot(dir) == before);  // no batch.json
  CHECK_FALSE(fs::exists(dir + "/batch.json"));

  // Resubmitting the shard completes the set.
  run_shards(dir, 4, {1});
  REQUIRE(run(bin() + " -q --merge-shards " + q(dir)).exit_code == 0);
  CHECK(read_json(dir + "/batch.json")["inputs"].size() == 5);

  // A result folder gone since its shard ran counts as missing too.
  fs::remove_all(dir + "/pair");
  fs::remove(dir + "/batch.json");
  check_cli_failure(run(bin() + " --merge-shards " + q(dir)), 66,
                    {"1 of 5 inputs have no result", "pair.npy (line 5)", "shard(s) 2 of 4"});
  CHECK_FALSE(fs::exists(dir + "/batch.json"));
}

TEST_CASE("cli_merge: the shards to resubmit are given as ranges, as Slurm's --array takes them") {
  attn::test::TempDir t;
  run_shards(t / "a", 5, {0});  // shards 1, 2, 3 and 4 of 5 never ran
  check_cli_failure(run(bin() + " --merge-shards " + q(t / "a")), 66,
                    {"4 of 5 inputs have no result", "resubmit shard(s) 1-4 of 5", "--array=1-4)"});
  run_shards(t / "b", 5, {0, 2});  // 1, 3 and 4
  check_cli_failure(run(bin() + " --merge-shards " + q(t / "b")), 66,
                    {"resubmit shard(s) 1,3-4 of 5", "--array=1,3-4)"});
}

TEST_CASE("cli_merge: summaries that cannot be merged are refused") {
  attn::test::TempDir t;
  check_cli_failure(run(bin() + " --merge-shards " + q(t / "absent")), 66, {"absent"});
  fs::create_directories(t / "empty");
  check_cli_failure(run(bin() + " --merge-shards " + q(t / "empty")), 66, {"no batch-K-of-N.json"});
  // Two splits of the list in one folder (a summary copied from another
  // batch: a run refuses to add a second split): the stale one is named.
  run_shards(t / "mixed", 2, {0, 1});
  run_shards(t / "other", 3, {0});
  fs::copy_file(t / "other/batch-0-of-3.json", t / "mixed/batch-0-of-3.json");
  {
    const auto r = run(bin() + " --merge-shards " + q(t / "mixed"));
    check_cli_failure(r, 65, {"different splits", "split 2 ways", "stale ones: batch-0-of-3.json"});
    CHECK(r.err.find("batch-0-of-2.json") == std::string::npos);
  }
  // A file with the name but not the content.
  fs::create_directories(t / "bad");
  attn::test::write_text(t / "bad/batch-0-of-1.json", "{\"inputs\": [{\"index\": \"x\"}]}");
  check_cli_failure(run(bin() + " --merge-shards " + q(t / "bad")), 65,
                    {"batch-0-of-1.json", "not a batch file"});
  // It is a mode of its own: no config, no list.
  check_cli_failure(run(bin() + " --merge-shards " + q(t / "mixed") + " --shard 0/2"), 64,
                    {"--merge-shards", "--shard"});
}

TEST_CASE("cli_merge: --shard auto takes K and N from a Slurm array task's variables") {
  attn::test::TempDir t;
  const std::string cmd = bin() + " -q --threads 1 --shard auto --config " +
                          attn::test::quoted_config("warner_causal.json") + " --input-list " +
                          q(source_path("docs/list_example/inputs.txt")) + " -o " + q(t / "r");
  const std::string clean =
      "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_TASK_MIN "
      "-u SLURM_ARRAY_TASK_MAX -u SLURM_ARRAY_TASK_STEP ";
  // --array=0-2: ID and COUNT. --array=1-3 (MIN 1, MAX 3, no COUNT): K = ID - MIN.
  auto r = run(clean + "SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=3 " + cmd);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  r = run(clean + "SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=3 " + cmd);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  r = run(clean + "SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 " + cmd);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(fs::exists(t / "r/batch-0-of-3.json"));
  CHECK(fs::exists(t / "r/batch-1-of-3.json"));
  CHECK(fs::exists(t / "r/batch-2-of-3.json"));
  REQUIRE(run(bin() + " -q --merge-shards " + q(t / "r")).exit_code == 0);
  CHECK(read_json(t / "r/batch.json")["inputs"].size() == 5);

  // Missing or malformed: exit 64 naming the variable, before anything runs.
  const struct {
    std::string env;
    std::vector<std::string> says;
  } bad[] = {
      {"", {"--shard auto", "SLURM_ARRAY_TASK_ID", "looked for"}},
      {"SLURM_ARRAY_TASK_ID=1 ", {"SLURM_ARRAY_TASK_COUNT", "not set"}},
      {"SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=0 ", {"SLURM_ARRAY_TASK_MAX", "not set"}},
      {"SLURM_ARRAY_TASK_ID=x1 SLURM_ARRAY_TASK_COUNT=3 ", {"SLURM_ARRAY_TASK_ID", "'x1'"}},
      {"SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=-3 ", {"SLURM_ARRAY_TASK_COUNT", "'-3'"}},
      {"SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=3 ", {"SLURM_ARRAY_TASK_ID 5", "0..2"}},
      {"SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=0 ", {"SLURM_ARRAY_TASK_COUNT", "found 0"}},
  };
  for (const auto& c : bad) {
    CAPTURE(c.env);
    check_cli_failure(run(clean + c.env + cmd + "x"), 64, c.says);
    CHECK_FALSE(fs::exists(t / "rx"));
  }
}

TEST_CASE("cli_merge: a shard's info line counts its result folders rightly") {
  attn::test::TempDir t;
  // 5 inputs in 5 shards: one result folder each ("1 result folder", not "folders").
  auto r = run(bin() + " --threads 1 --config " + attn::test::quoted_config("warner_causal.json") +
               " --input-list " + q(source_path("docs/list_example/inputs.txt")) + " -o " +
               q(t / "o") + " --shard 0/5");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.err.find("wrote 1 result folder and ") != std::string::npos, r.err);
  r = run(bin() + " --threads 1 --config " + attn::test::quoted_config("warner_causal.json") +
          " --input-list " + q(source_path("docs/list_example/inputs.txt")) + " -o " + q(t / "p") +
          " --shard 0/2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.err.find("wrote 3 result folders and ") != std::string::npos, r.err);
}

TEST_CASE("cli_merge: a summary's result folder outside the out-dir is refused") {
  attn::test::TempDir t;
  const std::string dir = t / "r";
  run_shards(dir, 2, {0, 1});
  // A folder beside the out-dir, holding what looks like a result.
  fs::create_directories(t / "outside");
  attn::test::write_text(t / "outside/context.npy", "x");
  const json good = read_json(dir + "/batch-1-of-2.json");
  for (const std::string bad : {"../outside", "..", ".", "/tmp", "a/b", ""}) {
    CAPTURE(bad);
    json j = good;
    j["inputs"][0]["dir"] = bad;
    attn::test::write_text(dir + "/batch-1-of-2.json", j.dump(2));
    const auto before = attn::test::snapshot(dir);
    check_cli_failure(run(bin() + " --merge-shards " + q(dir)), 65,
                      {"batch-1-of-2.json", "inputs[0].dir", "expected a result folder's name"});
    CHECK(attn::test::snapshot(dir) == before);
    CHECK_FALSE(fs::exists(dir + "/batch.json"));
  }
}

TEST_CASE("cli_merge: one Slurm task resubmitted joins the batch's split") {
  attn::test::TempDir t;
  const std::string out = t / "r";
  const std::string cmd = bin() + " -q --threads 1 --shard auto --config " +
                          attn::test::quoted_config("warner_causal.json") + " --input-list " +
                          q(source_path("docs/list_example/inputs.txt")) + " -o " + q(out);
  const std::string clean =
      "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_TASK_MIN "
      "-u SLURM_ARRAY_TASK_MAX -u SLURM_ARRAY_TASK_STEP ";
  // --array=1-4 (K = ID - 1); task 3 (shard 2) fails.
  for (int id : {1, 2, 4}) {
    auto r = run(clean + "SLURM_ARRAY_TASK_ID=" + std::to_string(id) +
                 " SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=4 SLURM_ARRAY_TASK_COUNT=4 " + cmd);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
  // The merge names it as Slurm numbers it: --array=3.
  check_cli_failure(run(bin() + " --merge-shards " + q(out)), 66,
                    {"resubmit shard(s) 2 of 4", "--array=3)"});
  // sbatch --array=3: one task, Slurm says MIN = MAX = 3 and COUNT 1.
  const std::string one = "SLURM_ARRAY_TASK_MIN=3 SLURM_ARRAY_TASK_MAX=3 SLURM_ARRAY_TASK_COUNT=1 ";
  auto r = run(clean + "SLURM_ARRAY_TASK_ID=3 " + one + cmd);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(fs::exists(out + "/batch-2-of-4.json"));
  CHECK_FALSE(fs::exists(out + "/batch-0-of-1.json"));
  REQUIRE(run(bin() + " -q --merge-shards " + q(out)).exit_code == 0);
  CHECK(read_json(out + "/batch.json")["inputs"].size() == 5);

  // Not a task of the batch, or another split: refused naming the batch's.
  const auto before = attn::test::snapshot(out);
  check_cli_failure(run(clean +
                        "SLURM_ARRAY_TASK_ID=9 SLURM_ARRAY_TASK_MIN=9 SLURM_ARRAY_TASK_MAX=9 "
                        "SLURM_ARRAY_TASK_COUNT=1 " +
                        cmd),
                    73,
                    {"manifest.json", "split 4 ways", "SLURM_ARRAY_TASK_ID=9", "array tasks 1-4"});
  check_cli_failure(run(clean + "SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=3 " + cmd), 73,
                    {"split 4 ways", "--shard K/4"});
  check_cli_failure(run(bin() + " -q --threads 1 --shard 0/3 --config " +
                        attn::test::quoted_config("warner_causal.json") + " --input-list " +
                        q(source_path("docs/list_example/inputs.txt")) + " -o " + q(out)),
                    73, {"split 4 ways", "--shard 0/3"});
  CHECK(attn::test::snapshot(out) == before);
}

TEST_CASE(
    "cli_merge: --merge-shards merges the inputs' head tables as one run does; "
    "--merge-summaries still works, with a note") {
  attn::test::TempDir t;
  const std::string run_args = " -q --threads 1 --config " +
                               attn::test::quoted_config("warner_causal.json") + " --input-list " +
                               q(source_path("docs/list_example/inputs.txt")) +
                               " --head-stats --sink 1 --recent 2 -o ";
  for (std::size_t k : {0, 1}) {
    auto r = run(bin() + run_args + q(t / "sharded") + " --shard " + std::to_string(k) + "/2");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
  CHECK(!fs::exists(t / "sharded/head_stats.json"));  // a shard merges nothing
  auto r = run(bin() + " --merge-shards " + q(t / "sharded"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("--merge-summaries") == std::string::npos);
  REQUIRE(run(bin() + run_args + q(t / "whole")).exit_code == 0);
  const json merged = read_json(t / "sharded/head_stats.json"),
             one = read_json(t / "whole/head_stats.json");
  REQUIRE(merged["heads"].size() == one["heads"].size());
  for (std::size_t h = 0; h < one["heads"].size(); ++h)
    for (const auto& [key, value] : one["heads"][h].items()) {
      CAPTURE(key);
      CHECK(std::abs(merged["heads"][h][key].get<double>() - value.get<double>()) <= 1e-12);
    }
  CHECK(attn::test::read_text(t / "sharded/head_stats.csv") ==
        attn::test::read_text(t / "whole/head_stats.csv"));

  r = run(bin() + " --merge-summaries " + q(t / "sharded"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK_MESSAGE(r.err.find("--merge-summaries is now --merge-shards") != std::string::npos, r.err);
  check_cli_failure(
      run(bin() + " --merge-summaries " + q(t / "sharded") + " --merge-shards " + q(t / "sharded")),
      64, {"--merge-summaries", "--merge-shards"});
}

// cli_batches: an --input-list batch under each job scheduler and past its
// failures (CONTRACT.md "(v4) Families and schedulers"), through the built
// binary: --shard auto reads Slurm, Kubernetes Indexed Jobs, AWS Batch, Grid
// Engine, PBS and LSF array tasks (auto:N where the scheduler gives no
// count), each covering the list once; a malformed variable is exit 64 naming
// it. --keep-going runs past a failed input, lists it in the manifest, exits
// with the first failure's code, and a rerun computes only the failed ones.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "attn/npy.h"
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

// Every scheduler variable attn-run reads, unset, so the test's own are the only ones.
const std::string kClean =
    "env -u SLURM_ARRAY_TASK_ID -u SLURM_ARRAY_TASK_COUNT -u SLURM_ARRAY_TASK_MIN "
    "-u SLURM_ARRAY_TASK_MAX -u SLURM_ARRAY_TASK_STEP -u JOB_COMPLETION_INDEX "
    "-u AWS_BATCH_JOB_ARRAY_INDEX -u AWS_BATCH_JOB_ARRAY_SIZE -u SGE_TASK_ID -u SGE_TASK_FIRST "
    "-u SGE_TASK_LAST -u SGE_TASK_STEPSIZE -u PBS_ARRAY_INDEX -u PBS_ARRAYID -u LSB_JOBINDEX "
    "-u LSB_JOBINDEX_END -u LSB_JOBINDEX_STEP ";

// The shipped example list (5 inputs) run with `shard` into `dir`, under `env`.
std::string list_cmd(const std::string& dir, const std::string& shard) {
  return bin() + " -q --threads 1 --config " + attn::test::quoted_config("warner_causal.json") +
         " --input-list " + q(source_path("docs/list_example/inputs.txt")) + " -o " + q(dir) +
         " --shard " + shard;
}

// The list indices a shard summary says it ran.
std::set<std::size_t> indices(const std::string& summary) {
  std::set<std::size_t> out;
  const json j = read_json(summary);
  for (const json& in : j["inputs"]) out.insert(in["index"].get<std::size_t>());
  return out;
}

}  // namespace

TEST_CASE("cli_batches: --shard auto reads each scheduler's array task; the list is covered once") {
  // Each scheduler's variables for the 3 tasks of one array, and the --shard given.
  const struct {
    const char* name;
    std::vector<std::string> tasks;  // env of each task, K = 0, 1, 2 in order
    std::string shard;
  } schedulers[] = {
      {"slurm",
       {"SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=5 "
        "SLURM_ARRAY_TASK_STEP=2",
        "SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=5 "
        "SLURM_ARRAY_TASK_STEP=2",
        "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=5 "
        "SLURM_ARRAY_TASK_STEP=2"},
       "auto"},
      {"kubernetes",
       {"JOB_COMPLETION_INDEX=0", "JOB_COMPLETION_INDEX=1", "JOB_COMPLETION_INDEX=2"},
       "auto:3"},
      {"aws",
       {"AWS_BATCH_JOB_ARRAY_INDEX=0 AWS_BATCH_JOB_ARRAY_SIZE=3",
        "AWS_BATCH_JOB_ARRAY_INDEX=1 AWS_BATCH_JOB_ARRAY_SIZE=3",
        "AWS_BATCH_JOB_ARRAY_INDEX=2 AWS_BATCH_JOB_ARRAY_SIZE=3"},
       "auto"},
      {"aws_no_size",
       {"AWS_BATCH_JOB_ARRAY_INDEX=0", "AWS_BATCH_JOB_ARRAY_INDEX=1",
        "AWS_BATCH_JOB_ARRAY_INDEX=2"},
       "auto:3"},
      // qsub -t 2-6:2: ids 2, 4, 6.
      {"grid_engine",
       {"SGE_TASK_ID=2 SGE_TASK_FIRST=2 SGE_TASK_LAST=6 SGE_TASK_STEPSIZE=2",
        "SGE_TASK_ID=4 SGE_TASK_FIRST=2 SGE_TASK_LAST=6 SGE_TASK_STEPSIZE=2",
        "SGE_TASK_ID=6 SGE_TASK_FIRST=2 SGE_TASK_LAST=6 SGE_TASK_STEPSIZE=2"},
       "auto"},
      // PBS Pro (-J 0-2) and Torque (-t 0-2) in one array.
      {"pbs", {"PBS_ARRAY_INDEX=0", "PBS_ARRAYID=1", "PBS_ARRAY_INDEX=2"}, "auto:3"},
      // bsub -J "name[1-3]".
      {"lsf",
       {"LSB_JOBINDEX=1 LSB_JOBINDEX_END=3", "LSB_JOBINDEX=2 LSB_JOBINDEX_END=3",
        "LSB_JOBINDEX=3 LSB_JOBINDEX_END=3"},
       "auto"},
      {"lsf_no_end", {"LSB_JOBINDEX=1", "LSB_JOBINDEX=2", "LSB_JOBINDEX=3"}, "auto:3"},
  };
  for (const auto& s : schedulers) {
    CAPTURE(s.name);
    attn::test::TempDir t;
    const std::string dir = t / "r";
    for (std::size_t k = 0; k < s.tasks.size(); ++k) {
      CAPTURE(s.tasks[k]);
      auto r = run(kClean + s.tasks[k] + " " + list_cmd(dir, s.shard));
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      // Shard K of 3 runs the lines i with i % 3 == K.
      std::set<std::size_t> want;
      for (std::size_t i = k; i < 5; i += 3) want.insert(i);
      const std::string summary = dir + "/batch-" + std::to_string(k) + "-of-3.json";
      REQUIRE(fs::exists(summary));
      CHECK(indices(summary) == want);
    }
    auto merged = run(bin() + " -q --merge-shards " + q(dir));
    REQUIRE_MESSAGE(merged.exit_code == 0, merged.err);
    CHECK(read_json(dir + "/batch.json")["inputs"].size() == 5);
  }
}

TEST_CASE("cli_batches: Slurm comes first; a scheduler's count and auto:N must agree") {
  attn::test::TempDir t;
  auto r = run(kClean + "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 JOB_COMPLETION_INDEX=0 " +
               list_cmd(t / "r", "auto"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(indices(t / "r/batch-1-of-3.json") == std::set<std::size_t>{1, 4});
  check_cli_failure(run(kClean + "AWS_BATCH_JOB_ARRAY_INDEX=0 AWS_BATCH_JOB_ARRAY_SIZE=4 " +
                        list_cmd(t / "x", "auto:3")),
                    64, {"--shard auto:3", "AWS_BATCH_JOB_ARRAY_SIZE", "4 tasks"});
  CHECK_FALSE(fs::exists(t / "x"));
}

TEST_CASE("cli_batches: a missing count or a malformed variable is exit 64 naming it") {
  attn::test::TempDir t;
  const std::string cmd = list_cmd(t / "r", "auto");
  const struct {
    std::string env, shard;
    std::vector<std::string> says;
  } bad[] = {
      // None set: what was looked for.
      {"",
       "auto",
       {"--shard auto", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX",
        "SGE_TASK_ID", "PBS_ARRAY_INDEX", "LSB_JOBINDEX"}},
      {"SGE_TASK_ID=undefined ", "auto", {"SGE_TASK_ID", "'undefined'", "not an array job"}},
      {"LSB_JOBINDEX=0 ", "auto", {"LSB_JOBINDEX is 0", "not an array job"}},
      // No count from the scheduler and no auto:N.
      {"JOB_COMPLETION_INDEX=1 ", "auto", {"JOB_COMPLETION_INDEX", "--shard auto:N"}},
      {"PBS_ARRAY_INDEX=1 ", "auto", {"PBS_ARRAY_INDEX", "--shard auto:N"}},
      {"AWS_BATCH_JOB_ARRAY_INDEX=1 ", "auto", {"AWS_BATCH_JOB_ARRAY_INDEX", "--shard auto:N"}},
      {"SGE_TASK_ID=3 ", "auto", {"SGE_TASK_ID", "--shard auto:N"}},
      // Malformed values.
      {"JOB_COMPLETION_INDEX=x ", "auto:3", {"JOB_COMPLETION_INDEX", "'x'"}},
      {"AWS_BATCH_JOB_ARRAY_INDEX=1 AWS_BATCH_JOB_ARRAY_SIZE=-3 ",
       "auto",
       {"AWS_BATCH_JOB_ARRAY_SIZE", "'-3'"}},
      {"SGE_TASK_ID=2 SGE_TASK_FIRST=1 SGE_TASK_LAST=abc ", "auto", {"SGE_TASK_LAST", "'abc'"}},
      {"SGE_TASK_ID=2 SGE_TASK_STEPSIZE=0 SGE_TASK_LAST=9 ", "auto", {"SGE_TASK_STEPSIZE", "0"}},
      {"PBS_ARRAYID=1.5 ", "auto:3", {"PBS_ARRAYID", "'1.5'"}},
      {"LSB_JOBINDEX=2 LSB_JOBINDEX_END=z ", "auto", {"LSB_JOBINDEX_END", "'z'"}},
      {"SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_STEP=x ",
       "auto",
       {"SLURM_ARRAY_TASK_STEP", "'x'"}},
      // Ids that give no shard: past the count, off the step, below the first.
      {"PBS_ARRAY_INDEX=3 ", "auto:3", {"PBS_ARRAY_INDEX 3", "0..2", "-J 0-"}},
      {"JOB_COMPLETION_INDEX=3 ", "auto:3", {"JOB_COMPLETION_INDEX 3", "0..2"}},
      {"SGE_TASK_ID=3 SGE_TASK_FIRST=2 SGE_TASK_LAST=6 SGE_TASK_STEPSIZE=2 ",
       "auto",
       {"SGE_TASK_ID 3", "0..2"}},
      {"LSB_JOBINDEX=4 LSB_JOBINDEX_END=3 ", "auto", {"LSB_JOBINDEX 4", "0..2", "from 1"}},
      // --shard auto:N itself malformed.
      {"JOB_COMPLETION_INDEX=0 ", "auto:0", {"--shard", "'auto:0'"}},
      {"JOB_COMPLETION_INDEX=0 ", "auto:x", {"--shard", "'auto:x'"}},
  };
  for (const auto& c : bad) {
    CAPTURE(c.env);
    CAPTURE(c.shard);
    check_cli_failure(run(kClean + c.env + list_cmd(t / "r", c.shard)), 64, c.says);
    CHECK_FALSE(fs::exists(t / "r"));
  }
}

TEST_CASE("cli_batches: a Grid Engine task resubmitted joins its batch; the merge names its ids") {
  attn::test::TempDir t;
  const std::string dir = t / "r";
  const std::string array = " SGE_TASK_FIRST=2 SGE_TASK_LAST=6 SGE_TASK_STEPSIZE=2 ";
  for (int id : {2, 6}) {  // task 4 (shard 1) is lost
    auto r = run(kClean + "SGE_TASK_ID=" + std::to_string(id) + array + list_cmd(dir, "auto"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }
  check_cli_failure(run(bin() + " --merge-shards " + q(dir)), 66,
                    {"resubmit shard(s) 1 of 3", "Grid Engine", "task ids 4"});
  // qsub -t 4: one task, FIRST = LAST = 4.
  auto r = run(kClean + "SGE_TASK_ID=4 SGE_TASK_FIRST=4 SGE_TASK_LAST=4 SGE_TASK_STEPSIZE=1 " +
               list_cmd(dir, "auto"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(indices(dir + "/batch-1-of-3.json") == std::set<std::size_t>{1, 4});
  REQUIRE(run(bin() + " -q --merge-shards " + q(dir)).exit_code == 0);
  // An id off the batch's step is not one of its tasks.
  check_cli_failure(
      run(kClean + "SGE_TASK_ID=5 SGE_TASK_FIRST=5 SGE_TASK_LAST=5 " + list_cmd(dir, "auto")), 73,
      {"split 3 ways", "array tasks 2-6:2", "SGE_TASK_ID=5"});
}

TEST_CASE("cli_batches: --keep-going runs past failed inputs, lists them, and a rerun fixes them") {
  attn::test::TempDir t;
  // Four inputs of the warner config's shape (S, C = 8); x_1 missing, x_2 not a .npy.
  const attn::Tensor x = attn::read_npy_f32(source_path("data/sentence_c8.npy"), false);
  attn::Tensor y = x;
  for (float& v : y.data) v = -v;
  attn::test::write_text(t / "x_0.npy", attn::encode_npy(x));
  attn::test::write_text(t / "x_2.npy", "\x93NUMPY not really");
  attn::test::write_text(t / "x_3.npy", attn::encode_npy(y));
  attn::test::write_text(t / "list.txt", "x_0.npy\nx_1.npy\nx_2.npy\nx_3.npy\n");
  const std::string cmd = bin() + " --threads 1 --config " +
                          attn::test::quoted_config("warner_causal.json") + " --input-list " +
                          q(t / "list.txt") + " -o " + q(t / "out");

  // Without --keep-going the batch stops at x_1.
  auto stop = run(cmd);
  check_cli_failure(stop, 66, {"x_1.npy"});
  CHECK_FALSE(fs::exists(t / "out/x_3"));

  auto r = run(cmd + " --keep-going");
  CHECK(r.exit_code == 66);  // the first failure's (x_1: missing); x_2's is 65
  CHECK(r.out.empty());
  CHECK_MESSAGE(r.err.find("x_1.npy") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("x_2.npy") != std::string::npos, r.err);
  CHECK_MESSAGE(r.err.find("2 of 4 inputs failed") != std::string::npos, r.err);
  CHECK(fs::exists(t / "out/x_0/context.npy"));
  CHECK(fs::exists(t / "out/x_3/context.npy"));
  CHECK_FALSE(fs::exists(t / "out/x_1"));
  CHECK_FALSE(fs::exists(t / "out/x_2"));
  const json manifest = read_json(t / "out/manifest.json");
  CHECK(manifest["inputs"]["x_0"]["state"] == "done");
  CHECK(manifest["inputs"]["x_1"]["state"] == "failed");
  CHECK(manifest["inputs"]["x_1"]["exit_code"] == 66);
  CHECK(manifest["inputs"]["x_1"]["error"].get<std::string>().find("x_1.npy") != std::string::npos);
  CHECK(manifest["inputs"]["x_2"]["state"] == "failed");
  CHECK(manifest["inputs"]["x_2"]["exit_code"] == 65);
  const json summary = read_json(t / "out/batch.json");
  REQUIRE(summary["failed"].size() == 2);
  CHECK(summary["failed"][0]["dir"] == "x_1");
  CHECK(summary["failed"][1]["line"] == 3);
  CHECK(summary["inputs"].size() == 2);

  // Fixed: the rerun computes x_1 and x_2 only, and exits 0.
  const auto x0_before = attn::test::read_text(t / "out/x_0/run.json");
  attn::test::write_text(t / "x_1.npy", attn::encode_npy(y));
  attn::test::write_text(t / "x_2.npy", attn::encode_npy(x));
  auto again = run(cmd + " -q --keep-going");
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  const json rerun = read_json(t / "out/batch.json");
  CHECK(rerun["failed"].empty());
  std::set<std::string> skipped, computed;
  for (const json& in : rerun["inputs"])
    (in.value("skipped", false) ? skipped : computed).insert(in["dir"].get<std::string>());
  CHECK(skipped == std::set<std::string>{"x_0", "x_3"});
  CHECK(computed == std::set<std::string>{"x_1", "x_2"});
  CHECK(attn::test::read_text(t / "out/x_0/run.json") == x0_before);
  const json fixed = read_json(t / "out/manifest.json");
  for (const char* name : {"x_0", "x_1", "x_2", "x_3"})
    CHECK(fixed["inputs"][name]["state"] == "done");
  // Each result equals its input's run alone (x_1 holds y, x_2 holds x).
  for (const auto& [name, input] :
       {std::pair<std::string, std::string>{"x_1", "x_3.npy"}, {"x_2", "x_0.npy"}}) {
    auto one =
        run(bin() + " -q --threads 1 --config " + attn::test::quoted_config("warner_causal.json") +
            " --input " + q(t / input) + " -o " + q(t / ("one_" + name)));
    REQUIRE(one.exit_code == 0);
    CHECK(attn::test::read_text(t / ("out/" + name + "/context.npy")) ==
          attn::test::read_text(t / ("one_" + name + "/context.npy")));
  }
}

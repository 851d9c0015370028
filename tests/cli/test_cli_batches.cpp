// cli_batches: an --input-list batch under each job scheduler (CONTRACT.md "(v4) Families and
// schedulers"), through the built binary: --shard auto reads Slurm, Kubernetes Indexed Jobs, AWS
// Batch, Grid Engine, PBS and LSF array tasks (auto:N where the scheduler gives no count), each
// covering the list once; a malformed variable is exit 64 naming it.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "attn/npy.h"
#include "cli_checks.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::check_cli_failure;
using attn::test::q;
using attn::test::run;
using attn::test::source_path;
using nlohmann::json;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
json read_json(const std::string& path) { return json::parse(attn::test::read_text(path)); }

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
      const std::string summary = dir + "/summary-" + std::to_string(k) + "-of-3.json";
      REQUIRE(fs::exists(summary));
      CHECK(indices(summary) == want);
    }
    auto merged = run(bin() + " -q --merge-summaries " + q(dir));
    REQUIRE_MESSAGE(merged.exit_code == 0, merged.err);
    CHECK(read_json(dir + "/summary.json")["inputs"].size() == 5);
  }
}

TEST_CASE("cli_batches: Slurm comes first; a scheduler's count and auto:N must agree") {
  attn::test::TempDir t;
  auto r = run(kClean + "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 JOB_COMPLETION_INDEX=0 " +
               list_cmd(t / "r", "auto"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(indices(t / "r/summary-1-of-3.json") == std::set<std::size_t>{1, 4});
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
  check_cli_failure(run(bin() + " --merge-summaries " + q(dir)), 66,
                    {"resubmit shard(s) 1 of 3", "Grid Engine", "task ids 4"});
  // qsub -t 4: one task, FIRST = LAST = 4.
  auto r = run(kClean + "SGE_TASK_ID=4 SGE_TASK_FIRST=4 SGE_TASK_LAST=4 SGE_TASK_STEPSIZE=1 " +
               list_cmd(dir, "auto"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(indices(dir + "/summary-1-of-3.json") == std::set<std::size_t>{1, 4});
  REQUIRE(run(bin() + " -q --merge-summaries " + q(dir)).exit_code == 0);
  // An id off the batch's step is not one of its tasks.
  check_cli_failure(
      run(kClean + "SGE_TASK_ID=5 SGE_TASK_FIRST=5 SGE_TASK_LAST=5 " + list_cmd(dir, "auto")), 73,
      {"split 3 ways", "array tasks 2-6:2", "SGE_TASK_ID=5"});
}

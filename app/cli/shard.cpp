// --shard K/N | auto | auto:N (shard.h).
//
// Each scheduler hands an array task its index in an environment variable;
// some give the array's first index, step and count too:
//   Slurm        SLURM_ARRAY_TASK_ID; _MIN, _MAX, _COUNT, _STEP
//   Kubernetes   JOB_COMPLETION_INDEX (Indexed Job, 0..completions-1); no count
//   AWS Batch    AWS_BATCH_JOB_ARRAY_INDEX (0..size-1); AWS_BATCH_JOB_ARRAY_SIZE if set
//   Grid Engine  SGE_TASK_ID; SGE_TASK_FIRST, _LAST, _STEPSIZE ("undefined": not an array job)
//   PBS          PBS_ARRAY_INDEX (PBS Pro, qsub -J 0-9) or PBS_ARRAYID (Torque, -t 0-9); no count
//   LSF          LSB_JOBINDEX (1-based, "name[1-N]"; 0: not an array job);
//                LSB_JOBINDEX_END, LSB_JOBINDEX_STEP if set
// K = (index - first) / step. Where the scheduler gives no count, --shard
// auto:N gives it; where it does, an auto:N that disagrees is refused.
#include "cli/shard.h"

#include <cstdlib>
#include <optional>

#include "attn/error.h"
#include "attn/escape.h"

namespace app {
namespace {

using attn::Error;
using attn::Exit;

constexpr const char* kLookedFor =
    "SLURM_ARRAY_TASK_ID (Slurm), JOB_COMPLETION_INDEX (Kubernetes Indexed Job), "
    "AWS_BATCH_JOB_ARRAY_INDEX (AWS Batch), SGE_TASK_ID (Grid Engine), PBS_ARRAY_INDEX or "
    "PBS_ARRAYID (PBS), LSB_JOBINDEX (LSF)";

Error auto_error(const std::string& what) { return Error(Exit::usage, "--shard auto: " + what); }

// A whole number from the environment; nullopt when unset (or, for Grid
// Engine, "undefined"). Exit::usage naming the variable when malformed.
std::optional<std::size_t> env_number(const char* name, bool undefined_is_unset = false) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  const std::string t = v;
  if (undefined_is_unset && t == "undefined") return std::nullopt;
  if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos)
    throw auto_error(std::string(name) + ": expected a number, found '" + attn::printable(t) + "'");
  return std::size_t(std::stoul(t));
}

std::size_t env_required(const char* name, const std::string& why) {
  const auto v = env_number(name);
  if (!v) throw auto_error(std::string(name) + " is not set (" + why + ")");
  return *v;
}

// An array task as a scheduler describes it.
struct Task {
  const char* scheduler;
  const char* index_var;  // the variable that gave `index`
  std::size_t index = 0, first = 0, step = 1;
  std::optional<std::size_t> count;  // the scheduler's, when it gives one
  std::string count_var;             // what gave it, for messages
  std::string numbering;             // how it numbers tasks, for the out-of-range message
};

// The shard of `t`, with `flag_n` from --shard auto:N (0 = not given).
Shard shard_of(const Task& t, std::size_t flag_n) {
  const std::string id = std::string(t.index_var) + " " + std::to_string(t.index);
  if (t.count && flag_n && *t.count != flag_n)
    throw Error(Exit::usage, "--shard auto:" + std::to_string(flag_n) + ": " + t.count_var +
                                 " says the array has " + std::to_string(*t.count) +
                                 " tasks; give --shard auto, or the same N");
  if (!t.count && !flag_n)
    throw auto_error(std::string(t.index_var) + " is set (" + t.scheduler +
                     "), which does not say how many tasks the array has: give --shard auto:N");
  const std::size_t n = t.count ? *t.count : flag_n;
  if (n == 0) throw auto_error(t.count_var + ": expected at least 1 task, found 0");
  const std::size_t offset = t.index - t.first;
  if (t.index < t.first || offset % t.step != 0 || offset / t.step >= n)
    throw auto_error(id + " gives no shard K in 0.." + std::to_string(n - 1) + " (K = (ID - " +
                     std::to_string(t.first) + ") / " + std::to_string(t.step) +
                     ", N = " + std::to_string(n) + "; " + t.numbering + ")");
  Shard s;
  s.k = offset / t.step;
  s.n = n;
  s.from_scheduler = true;
  s.task = t.index;
  s.first_task = t.first;
  s.step = t.step;
  s.scheduler = t.scheduler;
  s.given = std::string(t.index_var) + "=" + std::to_string(t.index) + " of " + std::to_string(n) +
            " tasks from " + std::to_string(t.first) +
            (t.step > 1 ? " step " + std::to_string(t.step) : std::string());
  return s;
}

// Slurm: K = (ID - MIN) / STEP, N = COUNT, or (MAX - MIN) / STEP + 1.
Task slurm_task(std::size_t index, std::size_t flag_n) {
  Task t{"Slurm",
         "SLURM_ARRAY_TASK_ID",
         index,
         0,
         1,
         std::nullopt,
         "SLURM_ARRAY_TASK_COUNT",
         "run it as a Slurm array task, sbatch --array=0-N"};
  const auto min = env_number("SLURM_ARRAY_TASK_MIN");
  t.first = min.value_or(0);
  t.step = env_number("SLURM_ARRAY_TASK_STEP").value_or(1);
  if (t.step == 0) throw auto_error("SLURM_ARRAY_TASK_STEP: expected at least 1, found 0");
  t.count = env_number("SLURM_ARRAY_TASK_COUNT");
  if (!t.count && min && (flag_n == 0 || std::getenv("SLURM_ARRAY_TASK_MAX"))) {
    const std::size_t max = env_required("SLURM_ARRAY_TASK_MAX", "or SLURM_ARRAY_TASK_COUNT");
    if (max < *min)
      throw auto_error("SLURM_ARRAY_TASK_MAX (" + std::to_string(max) +
                       ") is below SLURM_ARRAY_TASK_MIN (" + std::to_string(*min) + ")");
    t.count = (max - *min) / t.step + 1;
    t.count_var = "SLURM_ARRAY_TASK_MIN/MAX";
  }
  if (!t.count && !flag_n)
    throw auto_error(
        "SLURM_ARRAY_TASK_COUNT is not set (run it as a Slurm array task, sbatch --array=0-N, "
        "or give --shard auto:N or K/N)");
  return t;
}

// Grid Engine (qsub -t FIRST-LAST:STEP, ids from 1 by default).
Task grid_engine_task(std::size_t index) {
  Task t{"Grid Engine",
         "SGE_TASK_ID",
         index,
         1,
         1,
         std::nullopt,
         "SGE_TASK_LAST",
         "qsub -t FIRST-LAST:STEP"};
  t.first = env_number("SGE_TASK_FIRST", true).value_or(1);
  t.step = env_number("SGE_TASK_STEPSIZE", true).value_or(1);
  if (t.step == 0) throw auto_error("SGE_TASK_STEPSIZE: expected at least 1, found 0");
  if (const auto last = env_number("SGE_TASK_LAST", true)) {
    if (*last < t.first)
      throw auto_error("SGE_TASK_LAST (" + std::to_string(*last) + ") is below SGE_TASK_FIRST (" +
                       std::to_string(t.first) + ")");
    t.count = (*last - t.first) / t.step + 1;
    t.count_var = "SGE_TASK_FIRST/LAST/STEPSIZE";
  }
  return t;
}

// LSF (bsub -J "name[1-N]"): 1-based; LSB_JOBINDEX_END and _STEP when set.
Task lsf_task(std::size_t index) {
  Task t{"LSF",
         "LSB_JOBINDEX",
         index,
         1,
         1,
         std::nullopt,
         "LSB_JOBINDEX_END",
         "LSF arrays number tasks from 1: bsub -J \"name[1-N]\""};
  t.step = env_number("LSB_JOBINDEX_STEP").value_or(1);
  if (t.step == 0) throw auto_error("LSB_JOBINDEX_STEP: expected at least 1, found 0");
  if (const auto end = env_number("LSB_JOBINDEX_END")) {
    if (*end < 1) throw auto_error("LSB_JOBINDEX_END: expected at least 1, found 0");
    t.count = (*end - 1) / t.step + 1;
  }
  return t;
}

Shard scheduler_shard(std::size_t flag_n) {
  if (const auto id = env_number("SLURM_ARRAY_TASK_ID"))
    return shard_of(slurm_task(*id, flag_n), flag_n);
  if (const auto id = env_number("JOB_COMPLETION_INDEX"))
    return shard_of(Task{"Kubernetes", "JOB_COMPLETION_INDEX", *id, 0, 1, std::nullopt, "",
                         "an Indexed Job numbers its pods 0..completions-1: N = completions"},
                    flag_n);
  if (const auto id = env_number("AWS_BATCH_JOB_ARRAY_INDEX"))
    return shard_of(Task{"AWS Batch", "AWS_BATCH_JOB_ARRAY_INDEX", *id, 0, 1,
                         env_number("AWS_BATCH_JOB_ARRAY_SIZE"), "AWS_BATCH_JOB_ARRAY_SIZE",
                         "an array job numbers its children 0..size-1: N = the array size"},
                    flag_n);
  std::string not_arrays;  // variables set to say "not an array job"
  if (const auto id = env_number("SGE_TASK_ID", true))
    return shard_of(grid_engine_task(*id), flag_n);
  if (const char* v = std::getenv("SGE_TASK_ID"))
    not_arrays += "; SGE_TASK_ID is '" + std::string(v) + "' (not an array job)";
  for (const char* pbs : {"PBS_ARRAY_INDEX", "PBS_ARRAYID"})
    if (const auto id = env_number(pbs))
      return shard_of(Task{"PBS", pbs, *id, 0, 1, std::nullopt, "",
                           "number the array from 0, qsub -J 0-(N-1) (Torque: -t 0-(N-1))"},
                      flag_n);
  if (const auto id = env_number("LSB_JOBINDEX")) {
    if (*id != 0) return shard_of(lsf_task(*id), flag_n);
    not_arrays += "; LSB_JOBINDEX is 0 (not an array job)";
  }
  throw auto_error(std::string("no scheduler's array task index is set (looked for ") + kLookedFor +
                   ")" + not_arrays + "; run it as an array task, or give --shard K/N");
}

}  // namespace

Shard parse_shard(const std::string& spec) {
  auto bad = [&]() {
    return Error(Exit::usage,
                 "--shard: expected K/N with 0 <= K < N (e.g. 0/4), auto, or auto:N (N >= 1: "
                 "the array's task count, where the scheduler does not give it), found '" +
                     attn::printable(spec) + "'");
  };
  auto number = [&](const std::string& t) {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos)
      throw bad();
    return std::size_t(std::stoul(t));
  };
  if (spec == "auto") return scheduler_shard(0);
  if (spec.rfind("auto:", 0) == 0) {
    const std::size_t n = number(spec.substr(5));
    if (n == 0) throw bad();
    return scheduler_shard(n);
  }
  const auto slash = spec.find('/');
  if (slash == std::string::npos) throw bad();
  Shard s;
  s.k = number(spec.substr(0, slash));
  s.n = number(spec.substr(slash + 1));
  if (s.n == 0 || s.k >= s.n) throw bad();
  s.task = s.k;
  s.given = "--shard " + spec;
  return s;
}

}  // namespace app

// --shard K/N | auto | auto:N (CONTRACT.md "Outputs", "(v3) Many layers,
// resumable batches" and "(v4) Families and schedulers"): which lines of an
// --input-list this process runs. "auto" reads the array task of the job
// scheduler it runs under, Slurm first, then Kubernetes Indexed Jobs, AWS
// Batch, Grid Engine, PBS and LSF; "auto:N" gives the count where the
// scheduler does not.
#pragma once

#include <cstddef>
#include <string>

namespace app {

// The shard K of N. From a scheduler: its array task id `task`, the array's
// first id `first_task` and its `step` (K = (task - first_task) / step), and
// the scheduler's name for messages.
struct Shard {
  std::size_t k = 0, n = 1;
  bool from_scheduler = false;
  std::size_t task = 0, first_task = 0, step = 1;
  std::string scheduler;  // "Slurm", "Grid Engine", ...; "" for --shard K/N
  std::string given;      // what set it, for messages: "--shard 3/8", "SLURM_ARRAY_TASK_ID=7 ..."
};

// --shard as given. Exit::usage naming --shard when malformed; with auto, the
// environment variable that is malformed or out of range, or, when no
// scheduler's variable is set, every variable looked for.
Shard parse_shard(const std::string& spec);

}  // namespace app

// DIR/manifest.json of an --input-list run (CONTRACT.md v3 "Many layers,
// resumable batches"): a fingerprint of the config, weights and flags, and
// each input's state, so a rerun after preemption skips the inputs already
// committed and redoes the others, and an out-dir written by another run
// (another config, other weights, other flags) is refused, saying which.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/options.h"

namespace app {

// A batch commits its inputs in groups: this many, or what finished in this
// many seconds, so 1,000 short inputs do not pay 1,000 rounds of fsync.
inline constexpr std::size_t kCommitGroupInputs = 64;
inline constexpr double kCommitGroupSeconds = 1.0;

class ListManifest {
 public:
  // Reads DIR/manifest.json when present. Exit 73 naming each setting that
  // differs when its fingerprint is not `fingerprint` (run_fingerprint.h),
  // or when it is not a manifest of this kind.
  ListManifest(std::string dir, nlohmann::json fingerprint);

  // True when `name`'s results were committed by an earlier run with this
  // fingerprint from the input file at `path` as it is now (same path, size
  // and modification time), and its folder still holds its context.
  bool done(const std::string& name, const std::string& path) const;

  // Records these inputs (result folder name, input path) as committed:
  // DIR/manifest.json rewritten atomically (read again first, so parallel
  // shards add to each other's).
  void mark_done(const std::vector<std::pair<std::string, std::string>>& inputs);

  // Records an input that failed (--keep-going): state "failed", its error
  // line and exit code. Written with the next mark_done or write(); a rerun
  // computes it again, as it does every input not done.
  void mark_failed(const std::string& name, const std::string& path, const std::string& error,
                   int exit_code);
  // DIR/manifest.json rewritten as mark_done does, when a failure is not written yet.
  void write();
  // DIR/manifest.json written now with the fingerprint and split, inputs or
  // not (a --pack batch keeps its inputs in its packs; the folder's manifest
  // says the folder is a pack batch's, so a folder batch into it is refused).
  void write_settings() {
    unwritten_ = true;
    write();
  }

  // Records the batch's split (N shards; from a scheduler, its name and the
  // array's first task id and step) with the next mark_done, unless the
  // manifest holds one already.
  void set_split(const Shard& s) {
    split_ = {{"n", s.n}, {"first_task", s.first_task}, {"step", s.step}};
    if (!s.scheduler.empty()) split_["scheduler"] = s.scheduler;
  }

 private:
  std::string dir_;
  nlohmann::json fingerprint_;
  nlohmann::json split_;  // {"n", "first_task", "step"} of a sharded run, else null
  // name -> {state, path, bytes, modified_ns} (+ error, exit_code when failed)
  nlohmann::json inputs_ = nlohmann::json::object();
  bool unwritten_ = false;  // a failure recorded since the last write
};

// The shard this run is of the batch in DIR (CONTRACT.md "(v3) Many layers,
// resumable batches"). A batch keeps its split (N shards) in DIR/manifest.json
// (or, written by an earlier attn-run, in the N of its batch-K-of-N.json
// files). A scheduler's single task resubmitted into the batch (a Slurm
// --array=7: one task, K 0 of N 1) joins that split as shard (ID - the
// batch's first task id) / its step; any other split than the batch's is exit 73 naming
// both, so one folder never holds two splits. `s` as given when DIR holds
// no split yet.
Shard shard_in_batch(const Shard& s, const std::string& dir);

}  // namespace app

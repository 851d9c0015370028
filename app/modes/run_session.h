// One run session, the same for the single run and every --input-list entry:
// the model is loaded once, then each input goes through the same steps:
//   input -> forward pass with its listeners (run_job) -> staged results
//   (context.npy, attention.npy streamed, run.json) -> commit.
// The single run (run_forward.cpp) has one input and adds stdout and
// pictures; --input-list (input_list.cpp) has many and adds the summary.
//
// Letters: B batch, H heads, S sequence, C hidden, O out size.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attn/config.h"
#include "attn/output.h"
#include "attn/run.h"
#include "cli/options.h"
#include "modes/forward_job.h"

namespace app {

// One input of the session: its tensors (the query input, key/value sources,
// masks, positions), checked against the config, and how long loading took.
struct SessionInput : attn::RunInputs {
  double load_ms = 0;
};

class RunSession {
 public:
  // `model` holds the weights; its input fields are not used.
  RunSession(const Options& opt, const attn::Config& cfg, attn::LoadedRun model);

  const attn::Config& config() const { return cfg_; }
  const attn::LoadedRun& model() const { return model_; }
  int threads() const { return threads_; }
  std::size_t heads() const { return std::size_t(model_.weights.H); }

  // The single run's input, taken out of a load_run result.
  static SessionInput input_of(attn::LoadedRun& r, double load_ms);

  // attention.npy's shape: (B, H', L', S') of the selection, or (H', L', S')
  // for an unbatched input; without H when the maps are averaged over heads.
  std::vector<std::size_t> maps_shape(const SessionInput& in) const;
  // --heads / --queries / --keys checked against this input's maps (heads
  // as written: one under --average-heads; L queries; T' keys): Exit::usage
  // naming the flag. Empty lists where a flag is not given.
  attn::MapSelection selection(const SessionInput& in) const;
  // --save's tensors for this input (names empty without --save): the
  // selection of the maps, except that under --average-heads every head is
  // saved. Exit::usage naming --save when a tensor does not exist for this
  // layer (result without an output projection).
  attn::SavePlan save_plan(const SessionInput& in) const;
  // Keys of a map row: T plus torch MHA's extra columns.
  std::size_t map_keys(const SessionInput& in) const;

  // The forward pass with plan's listeners; threads, the overflow check and,
  // with `out`, context.npy written there during the forward pass (when its
  // bytes are the forward pass's: not for batch_first false) and attention.npy
  // streamed there (plan.write_maps) are filled in here. Warns about
  // fully masked rows (naming `where` for a list entry). The context comes
  // back as the input came: (B, L, O), (L, O) for an unbatched input, or
  // (L, B, O) with batch_first false. Prints the input's warnings.
  JobResult forward(const SessionInput& in, JobPlan plan, attn::OutputDir* out,
                    const std::string& where = "") const;

  // context.npy and run.json (with `extra`'s keys) staged in `out`; a stale
  // attention.npy is dropped unless `maps_written`. Returns run.json.
  nlohmann::json stage(attn::OutputDir& out, const SessionInput& in, const JobResult& res,
                       bool maps_written,
                       const nlohmann::json& extra = nlohmann::json::object()) const;

 private:
  const Options& opt_;
  const attn::Config& cfg_;
  attn::LoadedRun model_;
  attn::AttentionSpec spec_;
  int threads_;
};

// session.forward for one --input-list entry (folders or --pack): its data
// errors ("input: ...") name the entry's file, so a failing input among a
// thousand is found; its pass keeps its buffers warm for the next entry's.
JobResult forward_list_entry(const RunSession& session, const SessionInput& in, JobPlan plan,
                             attn::OutputDir* out, const std::string& path);

}  // namespace app

// One forward pass with everything that listens to its attention maps: the
// plan says what to write, the library chains the sinks (attn/sink_chain.h:
// attention.npy, all maps in memory for --attn-stdout, the selection, the
// reductions, --stats, --save), and the front end adds its own: one batch
// entry for pictures (--plot/--show), --compare, the progress bar and the
// float64 check. Shared by the single run and --input-list. Also builds
// run.json.
//
// Letters: B batch, H heads, S sequence, C hidden, O out size.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/config.h"
#include "attn/head_stats.h"
#include "attn/key_stats.h"
#include "attn/map_select.h"
#include "attn/map_summary.h"
#include "attn/output.h"
#include "attn/run.h"
#include "attn/saved_tensors.h"
#include "attn/stats.h"
#include "modes/check_f64.h"
#include "modes/map_compare.h"
#include "pictures/map_capture.h"
#include "pictures/neuron_capture.h"

namespace app {

struct JobPlan {
  attn::OutputDir* out = nullptr;  // the input's output folder, or nullptr
  bool write_maps = false;         // stream attention.npy into out
  // With `out`: context.npy in this shape ((B, L, O) or (L, O), the bytes of
  // the forward pass's batch-major context) is written there chunk by chunk
  // during the forward pass, each chunk's writeback to the disk started at
  // once, so the commit waits only for the last. Empty: stage_results
  // writes it after the forward pass.
  std::vector<std::size_t> context_file_shape;
  std::vector<std::size_t> maps_shape;  // (B, H, L, T') or (H, L, T'); (B, L, T') averaged
  bool average_heads = false;           // maps averaged over heads (--average-heads)
  // --heads / --queries / --keys: what the map listeners below receive (the
  // statistics see every head and row). Indices of the maps as written
  // (one head, the mean, under --average-heads).
  attn::MapSelection selection;
  // --top-k K (0 = off): topk_values.npy and topk_indices.npy streamed into
  // `out`, in this shape (maps_shape with K keys).
  std::size_t top_k = 0;
  std::vector<std::size_t> topk_shape;
  // --summary: per row and per head reductions kept in JobResult::summary.
  bool summary = false;
  std::size_t recent = 64;  // --recent W
  // --head-stats: per head means kept in JobResult::head_stats (with `recent`).
  bool head_stats = false;
  std::size_t sink_keys = 4;  // --sink N
  // --key-stats: per head and key reductions kept in JobResult::key_stats.
  bool key_stats = false;
  std::size_t window = 32;  // --window W
  std::size_t pool = 7;     // --pool K
  // --check-f64: these query rows (of L) of every (b, h) against float64;
  // empty = no check. The result lands in JobResult::check_f64.
  std::vector<std::size_t> check_rows;
  // --save: the intermediates streamed into `out` as NAME.npy (names empty = none).
  attn::SavePlan save;
  bool keep_all_maps = false;  // --attn-stdout
  // --compare: the other maps, laid out as attention.npy (maps_shape); each
  // head's comparison lands in JobResult::compare.
  const attn::Tensor* compare_to = nullptr;
  bool stats = false;    // --stats
  bool capture = false;  // --plot / --show
  std::size_t capture_batch = 0;
  std::vector<std::size_t> capture_heads;  // of the selected heads: 0..H'-1
  std::size_t capture_cells = 256;
  std::optional<std::size_t> capture_query;  // the row kept exactly (default: the last)
  bool capture_qk = false;                   // q and k of capture_batch for the page's neuron view
  bool progress = false;  // a row-count progress bar (stderr is a terminal, not -q)
  int threads = 1;
  bool check_overflow = true;  // false under --allow-nonfinite
  bool keep_warm = false;      // the pass's buffers kept for the next (attn::ForwardOptions)
  // The input x itself (the RunInputs' x), lent by a caller that reads only its shape after
  // the run: where nothing reads x after the output projection (O == C, no residual_norm,
  // no --check-f64) its buffer becomes the context's, chunk by chunk behind the projections
  // (attn::forward), one fresh (B, L, O) buffer fewer; x's data is then empty.
  attn::Tensor* lent_x = nullptr;
};

struct JobResult {
  attn::Tensor context;  // (B, S, O)
  attn::ForwardStats forward;
  attn::Tensor maps;                  // (B, H, L, T') ((B, 1, L, T') averaged) when keep_all_maps
  std::optional<MapCapture> capture;  // when capture
  std::unique_ptr<NeuronCapture> neuron;            // when capture_qk
  std::vector<attn::HeadStats> stats;               // when stats
  std::unique_ptr<attn::SummarySink> summary;       // when plan.summary
  std::unique_ptr<attn::KeyStatsSink> key_stats;    // when plan.key_stats
  std::unique_ptr<attn::HeadStatsSink> head_stats;  // when plan.head_stats
  std::optional<F64Check> check_f64;                // when plan.check_rows
  std::vector<HeadComparison> compare;              // (H') when plan.compare_to
  double compute_ms = 0;         // the forward pass, without the context writes below
  bool context_written = false;  // context.npy already written to plan.out
  double context_write_ms = 0;   // time spent writing it during the forward pass
};

// One input's forward pass (in.x (B, L, C) and the rest of RunInputs).
JobResult run_job(const attn::Weights& w, const attn::AttentionSpec& spec,
                  const attn::RunInputs& in, const JobPlan& plan);

// Error(Exit::data) naming batch and query row when the context (B, S, O)
// holds a non-finite value (an overflow of the output projection) in the rows
// of batch entries [b0, b0 + nb).
void check_context_finite(const attn::Tensor& context, std::size_t b0, std::size_t nb);

// The one warning about fully masked rows (CONTRACT.md "Outputs").
void warn_fully_masked(const attn::ForwardStats& s, const std::string& where);

// run.json: what ran (CONTRACT.md "Outputs").
struct RunFacts {
  const attn::Config* cfg = nullptr;
  attn::Layout layout = attn::Layout::fused;
  bool layout_detected = false;
  std::string weights_source, input_source;
  const attn::Weights* weights = nullptr;  // the layer run (--save's shapes)
  std::vector<std::size_t> input_shape;    // as given: (S, C), (B, S, C) or (S, B, C)
  std::optional<std::vector<std::size_t>> padding_shape;
  // the other inputs: name -> source and name -> shape as run (batch first)
  std::map<std::string, std::string> sources;
  std::map<std::string, std::vector<std::size_t>> shapes;
  std::vector<std::string> warnings;
  std::vector<std::size_t> context_shape;
  std::optional<std::vector<std::size_t>> maps_shape;  // when attention.npy is written
  attn::MapSelection selection;  // --heads / --queries / --keys as given (empty = all)
  std::optional<std::vector<std::size_t>> topk_shape;       // when topk_*.npy are written
  std::optional<std::vector<std::size_t>> summary_shape;    // when summary.* are written
  std::optional<std::vector<std::size_t>> key_stats_shape;  // when key_stats.* are written
  bool head_stats = false;                                  // head_stats.* are written
  std::optional<attn::SavePlan> save;                       // --save's files, when written
  int threads = 1;
  double load_ms = 0, compute_ms = 0, write_ms = 0;
};
nlohmann::json run_json(const RunFacts& f, const JobResult& r);

// One input's results staged in its folder, the same for the single run and
// every --input-list entry: context.npy (unless run_job wrote it), run.json
// (with `extra`'s keys added),
// and a stale attention.npy dropped at commit when f.maps_shape is unset
// (the maps were streamed into `out` by run_job when it is set). f.write_ms
// is measured here. Returns run.json.
nlohmann::json stage_results(attn::OutputDir& out, RunFacts f, const JobResult& res,
                             const nlohmann::json& extra = nlohmann::json::object());

// The facts that come from the config and the weights, the same for every
// input of a run; the caller fills in the input's own.
RunFacts model_facts(const attn::Config& cfg, const attn::LoadedRun& model, int threads);

}  // namespace app

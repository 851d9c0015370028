// One run session (run_session.h).
#include "modes/run_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "attn/attention.h"
#include "attn/check_f64.h"
#include "attn/error.h"
#include "attn/escape.h"
#include "attn/map_summary.h"
#include "attn/output.h"
#include "attn/saved_tensors.h"
#include "attn/tensor.h"
#include "cli/index_list.h"
#include "cli/memory_check.h"

namespace app {
namespace {

// --key-stats per (batch row, head, key): two 128-bit fixed-point sums and a
// float maximum while the rows stream (attn/key_stats.h), the (B, H, T, 4)
// float32 result, and its CSV line (about 64 characters).
constexpr std::size_t kKeyStatsBytesPerKey = 2 * 16 + 4 + 4 * sizeof(float) + 64;

// The forward pass's big buffers (projections and context, plus every map
// under --attn-stdout, and its formatted copy, plus --check-f64's check_rows
// rows per head, plus --save's save_bytes of staging rows and per-head
// output weights: the saved tensors themselves stream to disk, plus
// --key-stats' accumulators) against the machine's memory.
void check_forward_memory(const Options& opt, const attn::LoadedRun& model, const SessionInput& in,
                          std::size_t T, bool all_maps, std::size_t check_rows,
                          std::size_t save_bytes, bool key_stats) {
  const std::size_t B = in.x.shape[0], L = in.x.shape[1];
  const std::size_t H = std::size_t(model.weights.H), HD = H * std::size_t(model.weights.D);
  const std::size_t O = model.weights.has_out_proj ? std::size_t(model.weights.O) : HD;
  const std::size_t rows = mul_sat(B, std::max(L, T));
  const std::size_t work = mul_sat(mul_sat(rows, 3 * HD + 2 * O), sizeof(float));
  check_memory(
      work, in.input_source,
      "the forward pass of input shape " + attn::shape_str(in.x.shape) + " (projections, context)");
  if (save_bytes) {
    const std::size_t sum = work + save_bytes;
    check_memory(sum < work ? std::size_t(-1) : sum, "--save",
                 "the forward pass of " + in.input_source +
                     " and the saved tensors' staging rows (result: each head's output weights)");
  }
  if (key_stats) {
    // every head accumulates; each worker keeps its query block's exponentials
    // (kernels/key_sums.h: 128 rows of T' floats)
    const std::size_t block_rows = 128 * std::size_t(std::max(1, worker_threads(opt)));
    const std::size_t sums = mul_sat(mul_sat(mul_sat(B, H), T), kKeyStatsBytesPerKey);
    const std::size_t tiles = mul_sat(mul_sat(block_rows, T), sizeof(float));
    const std::size_t stats = sums > std::size_t(-1) - tiles ? std::size_t(-1) : sums + tiles;
    const std::size_t sum = work + stats;
    check_memory(sum < work ? std::size_t(-1) : sum, "--key-stats",
                 "the forward pass of " + in.input_source + " and the per-key statistics of " +
                     std::to_string(B * H) + " (batch row, head) pairs over " + std::to_string(T) +
                     " keys");
  }
  if (check_rows) {
    // --check-f64 keeps its rows of every (b, h) (float32) and holds k and v of
    // one batch entry in float64.
    const std::size_t kept = mul_sat(mul_sat(mul_sat(mul_sat(B, check_rows), H), T), sizeof(float));
    const std::size_t f64 =
        mul_sat(mul_sat(mul_sat(L, 3 * HD + std::size_t(model.weights.C)), sizeof(double)), 2);
    const std::size_t sum = kept + f64 + work;
    check_memory(sum < work ? std::size_t(-1) : sum, "--check-f64",
                 "the float64 check's " + std::to_string(check_rows) + " rows per head of " +
                     in.input_source + " (their weights kept, the float64 projections)");
  }
  if (!all_maps) return;
  // float32 maps held whole, then formatted: a second copy for npy, about
  // three more (12 characters a value) as text or JSON.
  const std::size_t maps = mul_sat(mul_sat(mul_sat(mul_sat(B, L), H), T), sizeof(float));
  const std::size_t copies = opt.format == Format::npy ? 2 : 4;
  const std::size_t total =
      mul_sat(maps, copies) + work < work ? std::size_t(-1) : mul_sat(maps, copies) + work;
  check_memory(total, "--attn-stdout",
               "the attention maps (" + std::to_string(B) + ", " + std::to_string(H) + ", " +
                   std::to_string(L) + ", " + std::to_string(T) + ") of " + in.input_source +
                   " held and formatted for stdout");
}

// Once a process: a family whose attention module (BertAttention) returns
// LayerNorm(o_proj + input) while the context is o_proj's output says so.
void note_residual_norm(const attn::Config& cfg) {
  static bool said = false;
  if (said || cfg.spec.residual_norm || !cfg.residual_norm_in_attention) return;
  said = true;
  spdlog::info(
      "the context is the output projection without the residual add and LayerNorm {} applies; "
      "--with-residual-norm adds them",
      cfg.residual_norm_module);
}

// Once a process: --residual on a layer without a norm before its attention
// (a post-norm family) runs the input as is, and says so.
void note_input_norm(const attn::Config& cfg) {
  static bool said = false;
  if (said || !cfg.spec.input_norm || cfg.spec.input_norm->kind != attn::InputNormKind::none)
    return;
  said = true;
  spdlog::info(
      "input_norm: no norm before this layer's attention ({}): the residual stream is its input, "
      "used as is",
      cfg.spec.input_norm->module.empty() ? std::string("kind none") : cfg.spec.input_norm->module);
}

// --check-f64's N: rows per head (0 = every row); a bare flag is 16.
std::size_t check_rows_per_head(const Options& opt) {
  const std::string& v = *opt.check_f64;
  if (v.empty()) return 16;
  if (v == "all") return 0;
  std::size_t n = 0;
  bool digits = v.size() <= 9;
  for (char c : v) digits = digits && c >= '0' && c <= '9';
  if (digits) n = std::stoul(v);
  if (!digits || n == 0)
    throw attn::Error(attn::Exit::usage,
                      "--check-f64: expected a number of rows N >= 1 or all, found \"" +
                          attn::printable(v) + "\"");
  return n;
}

}  // namespace

RunSession::RunSession(const Options& opt, const attn::Config& cfg, attn::LoadedRun model)
    : opt_(opt),
      cfg_(cfg),
      model_(std::move(model)),
      spec_(attn::attention_spec(cfg)),
      threads_(worker_threads(opt)) {
  note_residual_norm(cfg);
  note_input_norm(cfg);
}

SessionInput RunSession::input_of(attn::LoadedRun& r, double load_ms) {
  SessionInput in;
  static_cast<attn::RunInputs&>(in) = std::move(static_cast<attn::RunInputs&>(r));
  in.load_ms = load_ms;
  return in;
}

std::size_t RunSession::map_keys(const SessionInput& in) const {
  return attn::map_keys(model_.weights, spec_, in.keys());
}

attn::MapSelection RunSession::selection(const SessionInput& in) const {
  const std::size_t H = cfg_.output_average_heads ? 1 : heads();
  attn::MapSelection sel;
  // Given flags only: an absent flag keeps every index (an empty list).
  if (!opt_.heads_spec.empty()) sel.heads = parse_index_list(opt_.heads_spec, H, "--heads", "head");
  if (!opt_.queries_spec.empty())
    sel.queries = parse_index_list(opt_.queries_spec, in.x.shape[1], "--queries", "query row");
  if (!opt_.keys_spec.empty())
    sel.keys = parse_index_list(opt_.keys_spec, map_keys(in), "--keys", "key");
  if (opt_.recent && !opt_.summary && !opt_.head_stats)
    throw attn::Error(attn::Exit::usage,
                      "--recent: sets --summary's or --head-stats' window; give one of them too");
  if (opt_.sink && !opt_.head_stats)
    throw attn::Error(attn::Exit::usage,
                      "--sink: sets --head-stats' sink keys; give --head-stats too");
  if (opt_.sink && *opt_.sink < 0)
    throw attn::Error(attn::Exit::usage,
                      "--sink: expected the sink keys N >= 0, found " + std::to_string(*opt_.sink));
  if (opt_.check_tol && !opt_.check_f64)
    throw attn::Error(attn::Exit::usage,
                      "--check-tol: sets --check-f64's limit; give --check-f64 too");
  if (opt_.window && !opt_.key_stats)
    throw attn::Error(attn::Exit::usage,
                      "--window: sets --key-stats' voting rows; give --key-stats too");
  if (opt_.pool && !opt_.key_stats)
    throw attn::Error(attn::Exit::usage, "--pool: sets --key-stats' pooling; give --key-stats too");
  if (opt_.window && *opt_.window < 1)
    throw attn::Error(attn::Exit::usage, "--window: expected the voting query rows W >= 1, found " +
                                             std::to_string(*opt_.window));
  if (opt_.pool && (*opt_.pool < 1 || *opt_.pool % 2 == 0))
    throw attn::Error(attn::Exit::usage,
                      "--pool: expected an odd kernel K >= 1 (max_pool1d with padding K // 2 keeps "
                      "every key), found " +
                          std::to_string(*opt_.pool));
  if (opt_.top_k && (*opt_.top_k == 0 || *opt_.top_k > map_keys(in)))
    throw attn::Error(attn::Exit::usage, "--top-k: expected 1 to " + std::to_string(map_keys(in)) +
                                             " (the keys of a map row), found " +
                                             std::to_string(*opt_.top_k));
  return sel;
}

attn::SavePlan RunSession::save_plan(const SessionInput& in) const {
  attn::SavePlan p;
  if (opt_.save_spec.empty()) return p;
  p.names = attn::parse_save_list(opt_.save_spec);
  for (const std::string& name : p.names)
    if (const std::string why = attn::save_unsupported(model_.weights, name); !why.empty())
      throw attn::Error(attn::Exit::usage, "--save " + name + ": " + why);
  p.B = in.x.shape[0];
  p.L = in.x.shape[1];
  p.T = in.keys();
  p.T_ext = map_keys(in);
  p.batched = in.batched;
  p.selection = selection(in);
  if (cfg_.output_average_heads) p.selection.heads.clear();  // they index the mean
  return p;
}

std::vector<std::size_t> RunSession::maps_shape(const SessionInput& in) const {
  const std::size_t B = in.x.shape[0];
  const attn::MapSelection sel = selection(in);
  const std::size_t H = cfg_.output_average_heads ? 1 : heads();
  std::vector<std::size_t> shape = {attn::selected_or_all(sel.queries, in.x.shape[1]).size(),
                                    attn::selected_or_all(sel.keys, map_keys(in)).size()};
  if (!cfg_.output_average_heads)
    shape.insert(shape.begin(), attn::selected_or_all(sel.heads, H).size());
  if (in.batched) shape.insert(shape.begin(), B);
  return shape;
}

JobResult RunSession::forward(const SessionInput& in, JobPlan plan, attn::OutputDir* out,
                              const std::string& where) const {
  for (const std::string& w : in.warnings)
    spdlog::warn("{}{}", where.empty() ? "" : where + ": ", w);
  plan.out = out;
  if (out && (!in.batched || in.batch_first)) {
    const std::size_t O = model_.weights.geometry().O;
    plan.context_file_shape = {in.x.shape[1], O};  // (L, O): an unbatched input
    if (in.batched) plan.context_file_shape.insert(plan.context_file_shape.begin(), in.x.shape[0]);
  }
  plan.selection = selection(in);
  plan.maps_shape = maps_shape(in);
  if (out && opt_.top_k) {
    plan.top_k = *opt_.top_k;
    plan.topk_shape = plan.maps_shape;
    plan.topk_shape.back() = plan.top_k;
  }
  if (plan.summary || (out && opt_.summary)) {  // the caller may ask for it (the model view)
    plan.summary = true;
    plan.recent = opt_.recent.value_or(64);
  }
  if (out && opt_.head_stats) {
    plan.head_stats = true;
    plan.recent = opt_.recent.value_or(64);
    plan.sink_keys = std::size_t(opt_.sink.value_or(4));
  }
  if (out && opt_.key_stats) {
    plan.key_stats = true;
    plan.window = std::size_t(opt_.window.value_or(32));
    plan.pool = std::size_t(opt_.pool.value_or(7));
  }
  if (opt_.check_f64) {
    const std::string why = attn::f64_unsupported(model_.weights, spec_, in.forward_inputs());
    if (!why.empty())
      throw attn::Error(attn::Exit::usage,
                        "--check-f64: the float64 path does not cover " + why +
                            " (it covers projections, GQA, rope, softcap, ALiBi, masks, "
                            "windows, chunks, padding and sinks)");
    plan.check_rows = attn::evenly_spaced_rows(in.x.shape[1], check_rows_per_head(opt_));
  }
  if (out) plan.save = save_plan(in);
  plan.average_heads = cfg_.output_average_heads;
  plan.threads = threads_;
  plan.check_overflow = !opt_.allow_nonfinite;
  check_forward_memory(opt_, model_, in, map_keys(in), plan.keep_all_maps, plan.check_rows.size(),
                       plan.save.names.empty() ? 0 : plan.save.working_bytes(model_.weights),
                       plan.key_stats);
  attn::test_pause_point("compute");
  JobResult res = run_job(model_.weights, spec_, in, plan);
  warn_fully_masked(res.forward, where);
  res.context = attn::context_as_given(std::move(res.context), in);
  return res;
}

nlohmann::json RunSession::stage(attn::OutputDir& out, const SessionInput& in, const JobResult& res,
                                 bool maps_written, const nlohmann::json& extra) const {
  RunFacts f = model_facts(cfg_, model_, threads_);
  f.input_source = in.input_source;
  f.input_shape = in.batched ? in.x.shape : std::vector<std::size_t>{in.x.shape[1], in.x.shape[2]};
  if (in.batched && !in.batch_first) std::swap(f.input_shape[0], f.input_shape[1]);
  if (in.padding) f.padding_shape = in.padding->shape;
  f.sources = in.sources;
  if (in.key) f.shapes[in.value ? "key_input" : "kv_input"] = in.key->shape;
  if (in.value) f.shapes["value_input"] = in.value->shape;
  if (in.positions) f.shapes["positions"] = in.positions->shape;
  if (in.attn_mask)
    f.shapes["attn_mask"] = {in.x.shape[0], heads(), in.attn_mask->L, in.attn_mask->T};
  f.warnings = in.warnings;
  f.context_shape = res.context.shape;
  if (maps_written) f.maps_shape = maps_shape(in);
  f.selection = selection(in);
  if (opt_.summary) {
    f.summary_shape = maps_shape(in);
    f.summary_shape->back() = attn::kSummaryColumns;
  }
  f.head_stats = opt_.head_stats;
  if (!opt_.save_spec.empty()) f.save = save_plan(in);
  if (opt_.key_stats) {
    // maps_shape without its queries: [B,] [H',] T', 4.
    f.key_stats_shape = maps_shape(in);
    f.key_stats_shape->pop_back();
    f.key_stats_shape->back() = map_keys(in);
    f.key_stats_shape->push_back(4);
  }
  if (opt_.top_k) {
    f.topk_shape = maps_shape(in);
    f.topk_shape->back() = *opt_.top_k;
  }
  f.load_ms = in.load_ms;
  f.compute_ms = res.compute_ms;
  return stage_results(out, f, res, extra);
}

JobResult forward_list_entry(const RunSession& session, const SessionInput& in, JobPlan plan,
                             attn::OutputDir* out, const std::string& path) {
  // The next entry's pass reuses the buffers, faulted in (without it --pack's
  // 1,000 GPT-2 inputs of S = 128 took 6.4 s, 3.2-3.4 s with it).
  plan.keep_warm = true;
  try {
    return session.forward(in, plan, out, path);
  } catch (const attn::Error& err) {
    const std::string what = err.what();
    if (what.find(path) != std::string::npos) throw;
    const std::string prefix = "input: ";
    throw attn::Error(
        err.code(), path + ": " + (what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what));
  }
}

}  // namespace app

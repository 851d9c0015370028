// One run session (run_session.h).
#include "run_session.h"

#include <utility>

#include "attn/attention.h"
#include "attn/output.h"
#include "attn/tensor.h"
#include "memory_check.h"

namespace app {
namespace {

// The forward pass's big buffers (projections and context, plus every map
// under --attn-stdout, and its formatted copy) against the machine's memory.
void check_forward_memory(const Options& opt, const attn::LoadedRun& model, const SessionInput& in,
                          bool all_maps) {
  const std::size_t B = in.x.shape[0], S = in.x.shape[1];
  const std::size_t H = std::size_t(model.weights.H), HD = H * std::size_t(model.weights.D);
  const std::size_t O = model.weights.has_out_proj ? std::size_t(model.weights.O) : HD;
  const std::size_t rows = mul_sat(B, S);
  const std::size_t work = mul_sat(mul_sat(rows, 3 * HD + 2 * O), sizeof(float));
  check_memory(
      work, in.source,
      "the forward pass of input shape " + attn::shape_str(in.x.shape) + " (projections, context)");
  if (!all_maps) return;
  // float32 maps held whole, then formatted: a second copy for npy, about
  // three more (12 characters a value) as text or JSON.
  const std::size_t maps = mul_sat(mul_sat(mul_sat(rows, H), S), sizeof(float));
  const std::size_t copies = opt.format == Format::npy ? 2 : 4;
  const std::size_t total =
      mul_sat(maps, copies) + work < work ? std::size_t(-1) : mul_sat(maps, copies) + work;
  check_memory(total, "--attn-stdout",
               "the attention maps (" + std::to_string(B) + ", " + std::to_string(H) + ", " +
                   std::to_string(S) + ", " + std::to_string(S) + ") of " + in.source +
                   " held and formatted for stdout");
}

}  // namespace

RunSession::RunSession(const Options& opt, const attn::Config& cfg, attn::LoadedRun model)
    : opt_(opt), cfg_(cfg), model_(std::move(model)), threads_(worker_threads(opt)) {}

SessionInput RunSession::input_of(attn::LoadedRun& r, double load_ms) {
  SessionInput in;
  in.source = r.input_source;
  in.x = std::move(r.x);
  in.batched = r.batched;
  in.padding = std::move(r.padding);
  in.load_ms = load_ms;
  return in;
}

std::vector<std::size_t> RunSession::maps_shape(const SessionInput& in) const {
  const std::size_t B = in.x.shape[0], S = in.x.shape[1];
  std::vector<std::size_t> shape = {heads(), S, S};
  if (in.batched) shape.insert(shape.begin(), B);
  return shape;
}

JobResult RunSession::forward(const SessionInput& in, JobPlan plan, attn::OutputDir* out,
                              const std::string& where) const {
  plan.out = out;
  plan.maps_shape = maps_shape(in);
  plan.threads = threads_;
  plan.check_overflow = !opt_.allow_nonfinite;
  check_forward_memory(opt_, model_, in, plan.keep_all_maps);
  attn::test_pause_point("compute");
  JobResult res = run_job(model_.weights, attn::attention_spec(cfg_), in.x,
                          in.padding ? &*in.padding : nullptr, plan);
  warn_fully_masked(res.forward, where);
  if (!in.batched) res.context.shape.erase(res.context.shape.begin());
  return res;
}

nlohmann::json RunSession::stage(attn::OutputDir& out, const SessionInput& in, const JobResult& res,
                                 bool maps_written, const nlohmann::json& extra) const {
  RunFacts f = model_facts(cfg_, model_, threads_);
  f.input_source = in.source;
  f.input_shape = in.batched ? in.x.shape : std::vector<std::size_t>{in.x.shape[1], in.x.shape[2]};
  if (in.padding) f.padding_shape = in.padding->shape;
  f.context_shape = res.context.shape;
  if (maps_written) f.maps_shape = maps_shape(in);
  f.load_ms = in.load_ms;
  f.compute_ms = res.compute_ms;
  return stage_results(out, f, res, extra);
}

}  // namespace app

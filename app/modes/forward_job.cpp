// One forward pass and its listeners (forward_job.h).
//
// Letters: B batch, H heads, S sequence, C hidden, O out size.
#include "modes/forward_job.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <fstream>
#include <memory>

#include "attn/error.h"
#include "attn/gguf_info.h"
#include "attn/layout.h"
#include "attn/npy.h"
#include "attn/sink_chain.h"
#include "cli/progress.h"
#include "cli/timing.h"
#include "modes/map_compare.h"

namespace app {
namespace {

// The names of the tensors the folder's run.json lists as saved (none when
// it has no run.json, or one without "saved").
std::vector<std::string> earlier_saved(const std::string& dir) {
  std::ifstream in(dir + "/run.json");
  if (!in) return {};
  const nlohmann::json run = nlohmann::json::parse(in, nullptr, false);
  std::vector<std::string> names;
  if (!run.is_object() || !run.contains("saved") || !run["saved"].is_object()) return names;
  for (const std::string& name : attn::saved_tensor_names())
    if (run["saved"].contains(name)) names.push_back(name);
  return names;
}

}  // namespace

JobResult run_job(const attn::Weights& w, const attn::AttentionSpec& spec,
                  const attn::RunInputs& in, const JobPlan& plan) {
  const std::size_t B = in.x.shape[0], L = in.x.shape[1], H = std::size_t(w.H);
  const std::size_t T = attn::map_keys(w, spec, in.keys());  // T': keys of a map row
  const std::size_t Hm = plan.average_heads ? 1 : H;         // heads of the maps, all
  // H', L', S': the selection the map listeners receive.
  const attn::MapSelection& sel = plan.selection;
  const std::size_t Hs = sel.heads.empty() ? Hm : sel.heads.size();
  const std::size_t Ls = sel.queries.empty() ? L : sel.queries.size();
  const std::size_t Ts = sel.keys.empty() ? T : sel.keys.size();
  JobResult res;

  attn::SinkRequest want;
  want.B = B;
  want.H = H;
  want.L = L;
  want.T = T;
  want.keys = in.keys();
  want.average_heads = plan.average_heads;
  want.selection = sel;
  want.out = plan.out;
  if (plan.write_maps) want.maps_shape = plan.maps_shape;
  want.keep_all_maps = plan.keep_all_maps;
  want.top_k = plan.top_k;
  want.topk_shape = plan.topk_shape;
  want.summary = plan.summary;
  want.recent = plan.recent;
  want.head_stats = plan.head_stats;
  want.sink_keys = plan.sink_keys;
  want.key_stats = plan.key_stats;
  want.window = plan.window;
  want.pool = plan.pool;
  want.stats = plan.stats;
  want.save = plan.save;
  want.weights = &w;
  want.threads = plan.threads;
  if (plan.capture) {
    res.capture.emplace(plan.capture_batch, plan.capture_heads, Hs, Ls, Ts, plan.capture_cells,
                        plan.capture_query);
    want.listeners.push_back(&*res.capture);
  }
  std::optional<CompareSink> compare;
  if (plan.compare_to) want.listeners.push_back(&compare.emplace(*plan.compare_to, Hs, Ls, Ts));
  // Rows only flow when some sink wants them; the bar never forces the
  // slower map-producing path on a run that would not produce maps.
  std::optional<Progress> progress;
  std::optional<ProgressSink> progress_sink;
  if (plan.progress && want.listens()) {
    progress.emplace("rows", std::uint64_t(B) * Hs * Ls, true);
    want.listeners.push_back(&progress_sink.emplace(*progress));
  }
  attn::SinkChain chain(want);
  attn::AttentionSink* head = chain.head();
  // Outermost: it sees every head's rows, and asks for them.
  std::optional<F64CheckSink> check;
  if (!plan.check_rows.empty()) head = &check.emplace(L, T, plan.check_rows, head);

  attn::IntermediateSink* intermediates = chain.intermediates();
  if (plan.capture_qk) {  // the page's neuron view, in front of the saved files
    const attn::Geometry g = w.geometry();
    res.neuron =
        std::make_unique<NeuronCapture>(plan.capture_batch, g.H, g.Hkv, g.D, intermediates);
    intermediates = res.neuron.get();
  }

  attn::ForwardOptions fo;
  fo.intermediates = intermediates;
  fo.attention = head;
  fo.threads = plan.threads;
  fo.check_overflow = plan.check_overflow;
  fo.keep_warm = plan.keep_warm;
  // Each chunk's context rows are checked as they are done; with a context
  // file they go to the disk (BlockWriter's thread) while the next chunk computes.
  const int context_file = plan.out && !plan.context_file_shape.empty()
                               ? plan.out->add_streamed_npy("context.npy", plan.context_file_shape)
                               : -1;
  std::optional<attn::BlockWriter> context_writer;
  if (context_file >= 0) context_writer.emplace(*plan.out, context_file);
  fo.context_done = [&](std::size_t b0, std::size_t nb) {
    if (plan.check_overflow) check_context_finite(res.context, b0, nb);
    if (!context_writer) return;
    const auto t_write = Clock::now();
    const std::size_t row = res.context.shape[1] * res.context.shape[2];  // L * O
    context_writer->write(b0 * row * sizeof(float), res.context.ptr() + b0 * row,
                          nb * row * sizeof(float));
    res.context_write_ms += ms_since(t_write);
  };
  attn::ForwardInputs fi = in.forward_inputs();
  if (plan.lent_x == &in.x && plan.check_rows.empty() && !spec.residual_norm &&
      w.geometry().O == w.geometry().C) {
    res.context.shape = in.x.shape;
    res.context.data.swap(plan.lent_x->data);
    fi.x = &res.context;
    spdlog::debug("the context is written over the input's rows (no buffer of its own)");
  }
  const auto t0 = Clock::now();
  res.forward = attn::forward(w, spec, fi, res.context, fo);
  chain.finish();  // the maps' and --save's last blocks on the disk
  if (context_writer) {
    const auto t_write = Clock::now();
    context_writer->finish();
    res.context_write_ms += ms_since(t_write);
  }
  res.compute_ms = ms_since(t0) - res.context_write_ms;
  spdlog::debug(
      "forward pass: projections {:.1f} ms, attention {:.1f} ms, output projection {:.1f} ms",
      res.forward.project_ms, res.forward.attention_ms, res.forward.output_ms);
  res.context_written = context_file >= 0;
  if (progress) progress->finish();
  res.maps = chain.take_maps();
  if (compare) res.compare = compare->heads();
  res.stats = chain.stats();
  res.summary = std::move(chain.summary);
  res.head_stats = std::move(chain.head_stats);
  res.key_stats = std::move(chain.key_stats);
  if (check) res.check_f64 = check_against_f64(w, spec, in, *check, res.context, plan.threads);
  return res;
}

void check_context_finite(const attn::Tensor& context, std::size_t b0, std::size_t nb) {
  // The output projection mixes the heads, so an overflow there names the
  // batch and query row; the kernels already named any head-level overflow.
  // One pass over (B, S, O), which is O(S), beside the O(S^2) attention.
  const std::size_t S = context.shape[1], O = context.shape[2];
  const std::size_t begin = b0 * S * O, n = nb * S * O;
  const std::size_t i = begin + attn::first_nonfinite(context.ptr() + begin, n);
  if (i < begin + n)
    throw attn::Error(attn::Exit::data,
                      "input: context overflows float32 at batch " + std::to_string(i / (S * O)) +
                          ", query row " + std::to_string(i / O % S) +
                          " after the output projection (every head; finite inputs too "
                          "large for float32 attention)");
}

void warn_fully_masked(const attn::ForwardStats& s, const std::string& where) {
  if (s.fully_masked_rows > 0)
    spdlog::warn(
        "{}{} attention rows have every key masked; their weights and attention output "
        "are zero (context = output bias)",
        where.empty() ? "" : where + ": ", s.fully_masked_rows);
}

nlohmann::json run_json(const RunFacts& f, const JobResult& r) {
  nlohmann::json run;
  run["attn_run_version"] = ATTN_VERSION;
  run["config"] = attn::config_to_json(*f.cfg);
  run["output"] = attn::output_description(*f.cfg);  // what the context is
  run["layout"] = attn::layout_name(f.layout);
  run["layout_detected"] = f.layout_detected;
  run["weights"] = f.weights_source;
  // A GGUF model: each of the layer's tensors' ggml type as stored ("Q4_K").
  if (f.cfg->model_weights) {
    nlohmann::json types = nlohmann::json::object();
    const std::string& prefix = f.cfg->weights_prefix;
    for (const std::string& key : f.cfg->model_weights->keys()) {
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      const attn::TensorInfo* info = f.cfg->model_weights->find(key);
      if (info && !info->gguf_type.empty()) types[key] = info->gguf_type;
    }
    if (!types.empty()) run["gguf_types"] = types;
    // The model as its file names it (general.name), for pictures and records.
    if (!types.empty())
      if (const std::string name = attn::gguf_model_name(f.cfg->model); !name.empty())
        run["model_name"] = name;
  }
  run["input"] = f.input_source;
  run["shapes"] = {
      {"input", f.input_shape},
      {"context", f.context_shape},
      {"attention", f.maps_shape ? nlohmann::json(*f.maps_shape) : nlohmann::json()},
      {"padding_mask", f.padding_shape ? nlohmann::json(*f.padding_shape) : nlohmann::json()}};
  if (f.summary_shape) {
    run["shapes"]["summary"] = *f.summary_shape;
    run["summary"] = {{"columns", attn::summary_column_names()},
                      {"recent", r.summary ? r.summary->recent() : 0}};
  }
  if (f.head_stats && r.head_stats)
    run["head_stats"] = {{"columns", attn::head_stats_column_names()},
                         {"sink", r.head_stats->sink_keys()},
                         {"recent", r.head_stats->recent()}};
  if (f.key_stats_shape && r.key_stats) {
    run["shapes"]["key_stats"] = *f.key_stats_shape;
    run["key_stats"] = {{"columns", attn::key_stats_column_names()},
                        {"window", r.key_stats->window()},
                        {"pool", r.key_stats->pool()}};
  }
  // --save: each file, its shape and what the selection kept.
  if (f.save && f.weights) {
    run["saved"] = attn::saved_description(*f.weights, *f.save);
    for (const std::string& name : f.save->names)
      run["shapes"][name] = f.save->shape(*f.weights, name);
  }
  if (f.topk_shape) {
    run["shapes"]["topk_values"] = *f.topk_shape;
    run["shapes"]["topk_indices"] = *f.topk_shape;
    run["top_k"] = f.topk_shape->back();
  }
  // key/value inputs, masks and positions: where each came from and its shape as run.
  for (const auto& [name, shape] : f.shapes) run["shapes"][name] = shape;
  // The indices each axis of attention.npy (and the pictures, top-k and
  // summary) keeps; null = every index.
  const auto picked = [](const std::vector<std::size_t>& v) {
    return v.empty() ? nlohmann::json() : nlohmann::json(v);
  };
  run["selection"] = {{"heads", picked(f.selection.heads)},
                      {"queries", picked(f.selection.queries)},
                      {"keys", picked(f.selection.keys)}};
  run["inputs"] = f.sources;
  run["warnings"] = f.warnings;
  run["dtypes"] = {{"compute", "float32"},
                   {"context", "float32"},
                   {"attention", f.maps_shape ? nlohmann::json("float32") : nlohmann::json()}};
  if (f.topk_shape) {
    run["dtypes"]["topk_values"] = "float32";
    run["dtypes"]["topk_indices"] = "int64";
  }
  run["threads"] = f.threads;
  run["fully_masked_rows"] = r.forward.fully_masked_rows;
  run["timings"] = {{"load_ms", f.load_ms}, {"compute_ms", f.compute_ms}, {"write_ms", f.write_ms}};
  run["flops"] = r.forward.flops;
  run["flops_note"] =
      "2 per multiply-add actually computed; causal blocks above the diagonal are "
      "skipped, so causal FLOPs are about half the dense count";
  run["gflops"] = f.compute_ms > 0 ? r.forward.flops / (f.compute_ms * 1e6) : 0.0;
  if (!r.stats.empty()) {
    run["stats"] = attn::stats_to_json(r.stats);
    run["stats_note"] =
        "per head over every (batch, query) row: mean entropy in nats (natural "
        "log), mean of the row's max weight, mean weight on key 0; fully masked "
        "rows are counted and excluded from the means";
  }
  return run;
}

nlohmann::json stage_results(attn::OutputDir& out, RunFacts f, const JobResult& res,
                             const nlohmann::json& extra) {
  const auto t_write = Clock::now();
  // Header, then the floats straight from the tensor (no encoded copy).
  if (!res.context_written)
    out.write_at(out.add_streamed_npy("context.npy", res.context.shape), 0, res.context.ptr(),
                 res.context.size());
  if (!f.maps_shape) out.remove_on_commit("attention.npy");
  if (res.summary && f.summary_shape) {
    const auto heads = attn::selected_or_all(f.selection.heads, res.summary->rows().shape[1]);
    const auto queries = attn::selected_or_all(f.selection.queries, res.summary->rows().shape[2]);
    attn::Tensor rows = res.summary->rows();  // (B, H', L', 5) as summary_shape says
    rows.shape = *f.summary_shape;
    out.write_at(out.add_streamed_npy("summary.npy", rows.shape), 0, rows.ptr(), rows.size());
    out.add("summary.csv", attn::summary_csv(*res.summary, heads, queries));
    out.add("summary.json", attn::summary_json(*res.summary, heads).dump(2) + "\n");
  } else {
    for (const char* name : {"summary.npy", "summary.csv", "summary.json"})
      out.remove_on_commit(name);
  }
  if (res.head_stats && f.head_stats) {
    // The layer as configured (0 for a plain config), the heads numbered as the model does.
    const std::size_t layer = f.cfg && f.cfg->layer ? std::size_t(*f.cfg->layer) : 0;
    const auto table = res.head_stats->result(
        layer, attn::selected_or_all(f.selection.heads, res.head_stats->heads()));
    out.add("head_stats.csv", attn::head_stats_csv(table));
    out.add("head_stats.json",
            attn::head_stats_json(table, res.head_stats->sink_keys(), res.head_stats->recent())
                    .dump(2) +
                "\n");
  } else {
    for (const char* name : {"head_stats.csv", "head_stats.json"}) out.remove_on_commit(name);
  }
  if (res.key_stats && f.key_stats_shape) {
    attn::Tensor stats = res.key_stats->result();  // (B, H', T', 4)
    const auto heads = attn::selected_or_all(f.selection.heads, stats.shape[1]);
    out.add("key_stats.csv", attn::key_stats_csv(stats, heads));
    stats.shape = *f.key_stats_shape;
    out.write_at(out.add_streamed_npy("key_stats.npy", stats.shape), 0, stats.ptr(), stats.size());
  } else {
    for (const char* name : {"key_stats.npy", "key_stats.csv"}) out.remove_on_commit(name);
  }
  // A saved tensor of an earlier run (its run.json's "saved") that this one
  // does not write goes at commit; other files named like one (a user's own
  // q.npy) stay.
  for (const std::string& name : earlier_saved(out.dir()))
    if (!f.save || !f.save->has(name)) out.remove_on_commit(name + ".npy");
  if (!f.topk_shape) {
    out.remove_on_commit("topk_values.npy");
    out.remove_on_commit("topk_indices.npy");
  }
  f.write_ms = res.context_write_ms + ms_since(t_write);
  nlohmann::json run = run_json(f, res);
  for (const auto& [key, value] : extra.items()) run[key] = value;
  out.add("run.json", run.dump(2) + "\n");
  return run;
}

RunFacts model_facts(const attn::Config& cfg, const attn::LoadedRun& model, int threads) {
  RunFacts f;
  f.cfg = &cfg;
  f.layout = model.layout;
  f.layout_detected = model.layout_detected;
  f.weights_source = model.weights_source;
  f.weights = &model.weights;
  f.threads = threads;
  return f;
}

}  // namespace app

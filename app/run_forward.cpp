// The main job: load, run the forward pass, write the outputs, the pictures
// and the statistics. --input-list runs in input_list.cpp.
//
// Letters: B batch, H heads, S sequence, C hidden, O out size.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "attn/attention.h"
#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"
#include "attn/npy.h"
#include "attn/output.h"
#include "attn/report.h"
#include "attn/run.h"
#include "attn/stats.h"
#include "forward_job.h"
#include "memory_check.h"
#include "modes.h"
#include "plot.h"
#include "progress.h"
#include "stdin_input.h"
#include "term.h"
#include "stdout_writer.h"
#include "timing.h"

namespace app {
namespace {

std::string format_stdout(const attn::Tensor& t, Format f) {
  switch (f) {
    case Format::json:
      return attn::format_tensor_json(t);
    case Format::npy:
      return attn::encode_npy(t);
    case Format::text:
      break;
  }
  return attn::format_tensor_text(t);
}

// Token labels for pictures: --labels or --labels-file, else the config's, else positions.
std::vector<std::string> picture_labels(const Options& opt, const attn::Config& cfg,
                                        std::size_t S) {
  std::string flag;
  if (auto labels = flag_labels(opt, &flag)) {
    if (labels->size() != S)
      throw attn::Error(attn::Exit::usage, flag + ": expected " + std::to_string(S) +
                                               " labels (one per token), found " +
                                               std::to_string(labels->size()));
    return *labels;
  }
  if (cfg.labels.size() == S) return cfg.labels;
  if (!cfg.labels.empty())
    spdlog::warn("labels: the config has {} labels but the input has {} tokens; drawing positions",
                 cfg.labels.size(), S);
  std::vector<std::string> pos;
  for (std::size_t t = 0; t < S; ++t) pos.push_back(std::to_string(t));
  return pos;
}

// The same made well-formed UTF-8 here, where they enter the run, so every
// picture (SVG, PNG, terminal) gets clean strings.
std::vector<std::string> token_labels(const Options& opt, const attn::Config& cfg, std::size_t S) {
  std::vector<std::string> labels = picture_labels(opt, cfg, S);
  for (std::string& l : labels) l = attn::valid_utf8(l);
  return labels;
}

// The forward pass's big buffers (projections and context, plus every map
// under --attn-stdout, and its formatted copy) against the machine's memory.
void check_forward_memory(const Options& opt, const attn::LoadedRun& r) {
  const std::size_t B = r.x.shape[0], S = r.x.shape[1];
  const std::size_t H = std::size_t(r.weights.H), HD = H * std::size_t(r.weights.D);
  const std::size_t O = r.weights.has_out_proj ? std::size_t(r.weights.O) : HD;
  const std::size_t rows = mul_sat(B, S);
  const std::size_t work = mul_sat(mul_sat(rows, 3 * HD + 2 * O), sizeof(float));
  check_memory(
      work, r.input_source,
      "the forward pass of input shape " + attn::shape_str(r.x.shape) + " (projections, context)");
  if (!opt.attn_stdout) return;
  // float32 maps held whole, then formatted: a second copy for npy, about
  // three more (12 characters a value) as text or JSON.
  const std::size_t maps = mul_sat(mul_sat(mul_sat(rows, H), S), sizeof(float));
  const std::size_t copies = opt.format == Format::npy ? 2 : 4;
  const std::size_t total =
      mul_sat(maps, copies) + work < work ? std::size_t(-1) : mul_sat(maps, copies) + work;
  check_memory(total, "--attn-stdout",
               "the attention maps (" + std::to_string(B) + ", " + std::to_string(H) + ", " +
                   std::to_string(S) + ", " + std::to_string(S) + ") of " + r.input_source +
                   " held and formatted for stdout");
}

}  // namespace

void print_stats_table(const std::vector<attn::HeadStats>& stats, const std::string& what,
                       bool quiet) {
  if (quiet || stats.empty()) return;
  std::fprintf(stderr, "attention statistics%s%s (per head; entropy in nats):\n%s",
               what.empty() ? "" : " of ", what.c_str(), attn::format_stats_table(stats).c_str());
  std::fflush(stderr);
}

int run_forward(const Options& opt) {
  const auto t_start = Clock::now();
  attn::Config cfg = load_config_with_flags(opt);
  const bool to_dir = !cfg.output_dir.empty();
  if (opt.attn_stdout && to_dir)
    throw attn::Error(
        attn::Exit::usage,
        "--attn-stdout: writes the maps to stdout, so it cannot be used with an output "
        "folder (--out-dir or the config's output.dir: attention.npy goes there)");
  attn::LoadOptions lo;
  lo.allow_nonfinite = opt.allow_nonfinite;
  lo.input_path = opt.input;
  lo.padding_mask_path = opt.padding_mask;
  if (opt.input && *opt.input == "-") lo.stdin_bytes = read_stdin_input();
  check_init_memory(cfg);
  attn::LoadedRun r = attn::load_run(cfg, lo);
  const double load_ms = ms_since(t_start);

  const std::size_t B = r.x.shape[0], S = r.x.shape[1], H = std::size_t(r.weights.H);
  const bool want_maps = to_dir && cfg.output_attention;
  const bool pictures = opt.plot || opt.show;
  const int threads = worker_threads(opt);
  spdlog::debug("weights {} ({}), input {} {}, threads {}", r.weights_source,
                attn::layout_name(r.layout), r.input_source, attn::shape_str(r.x.shape), threads);

  // Flags about the maps are checked before the compute, against the loaded shapes.
  JobPlan plan;
  if (pictures || !opt.heads_spec.empty()) plan.capture_heads = parse_heads(opt.heads_spec, H);
  if (pictures && opt.batch_index >= B)
    throw attn::Error(attn::Exit::usage,
                      "--batch-index: " + std::to_string(opt.batch_index) +
                          " is past the batch; the input has B = " + std::to_string(B) + " (0.." +
                          std::to_string(B - 1) + ")");
  std::vector<std::string> labels;  // a wrong --labels count fails before the compute
  if (pictures) labels = token_labels(opt, cfg, S);

  // The folder is created (and checked writable) before the compute, so an
  // unwritable output fails fast; nothing appears in it before commit().
  std::optional<attn::OutputDir> out;
  std::vector<std::size_t> maps_shape = {H, S, S};
  if (r.batched) maps_shape.insert(maps_shape.begin(), B);
  if (to_dir) out.emplace(cfg.output_dir);
  std::optional<PlotFile> plot_file;
  if (opt.plot) plot_file.emplace(*opt.plot);

  plan.out = want_maps ? &*out : nullptr;
  plan.maps_shape = maps_shape;
  plan.keep_all_maps = opt.attn_stdout;
  plan.stats = opt.stats;
  plan.capture = pictures;
  plan.capture_batch = opt.batch_index;
  plan.capture_cells = capture_cells(opt, plan.capture_heads.size());
  plan.progress = Progress::wanted(opt.quiet);
  plan.threads = threads;
  plan.check_overflow = !opt.allow_nonfinite;
  check_forward_memory(opt, r);
  attn::test_pause_point("compute");
  JobResult res =
      run_job(r.weights, attn::attention_spec(cfg), r.x, r.padding ? &*r.padding : nullptr, plan);
  warn_fully_masked(res.forward, "");
  if (!r.batched) res.context.shape.erase(res.context.shape.begin());  // (S, O) in, (S, O) out

  // Everything is staged first; stdout is written before the commit, because
  // it cannot be taken back: a failed stdout (exit 74) leaves every existing
  // file untouched (CONTRACT.md "Output safety rules").
  std::optional<MapPicture> pic;
  if (pictures) pic = make_picture(opt, cfg, r, *res.capture, std::move(labels));
  if (plot_file) plot_file->stage(*pic);
  if (to_dir) {
    RunFacts f = model_facts(cfg, r, threads);
    f.input_source = r.input_source;
    f.input_shape = r.batched ? r.x.shape : std::vector<std::size_t>{S, r.x.shape[2]};
    if (r.padding) f.padding_shape = r.padding->shape;
    f.context_shape = res.context.shape;
    if (want_maps) f.maps_shape = maps_shape;
    f.load_ms = load_ms;
    f.compute_ms = res.compute_ms;
    stage_results(*out, f, res);
  }
  if (opt.show) {
    write_stdout(render_terminal(*pic, terminal_colors(), terminal_columns()));
  } else if (opt.attn_stdout) {
    if (!r.batched) res.maps.shape.erase(res.maps.shape.begin());  // (H, S, S)
    write_stdout(format_stdout(res.maps, opt.format));
  } else if (!to_dir) {
    write_stdout(format_stdout(res.context, opt.format));
  }
  if (to_dir) {
    out->commit();
    spdlog::info("wrote {}/context.npy{} and run.json", cfg.output_dir,
                 want_maps ? ", attention.npy" : "");
  }
  if (plot_file) {
    plot_file->commit();
    spdlog::info("wrote {}", *opt.plot);
  }
  print_stats_table(res.stats, "", opt.quiet);  // after the files: a failure stays one line

  return 0;
}

}  // namespace app

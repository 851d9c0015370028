// The main job: load, run the forward pass, write the outputs, the pictures
// and the statistics. --input-list runs in input_list.cpp.
//
// Letters: B batch, H heads, S sequence, C hidden, O out size.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "attn/attention.h"
#include "attn/error.h"
#include "attn/files.h"
#include "attn/gguf_info.h"
#include "attn/model_folder.h"
#include "attn/npy.h"
#include "attn/output.h"
#include "attn/report.h"
#include "attn/run.h"
#include "attn/saved_tensors.h"
#include "attn/stats.h"
#include "cli/memory_check.h"
#include "cli/progress.h"
#include "cli/stdin_input.h"
#include "cli/stdout_writer.h"
#include "cli/term.h"
#include "cli/timing.h"
#include "modes/forward_job.h"
#include "modes/layer_inputs.h"
#include "modes/map_compare.h"
#include "modes/modes.h"
#include "modes/run_session.h"
#include "pictures/plot.h"

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

// The --tokens ids of batch entry b as labels: a GGUF file's own token strings
// (tokenizer.ggml.tokens, read up to the largest id), else the ids in decimal.
std::vector<std::string> id_labels(const attn::Config& cfg, const attn::TokenIds& ids,
                                   std::size_t b) {
  const std::size_t S = ids.shape[1];
  std::vector<std::string> labels;
  std::int64_t top = 0;
  for (std::size_t t = 0; t < S; ++t) top = std::max(top, ids.ids[b * S + t]);
  if (ends_with_ext(cfg.model, ".gguf")) {
    const attn::GgufInfo info = attn::read_gguf_info(cfg.model, std::size_t(top) + 1);
    for (const attn::GgufMetadataEntry& e : info.metadata)
      if (e.key == "tokenizer.ggml.tokens" && e.element_type == "string" &&
          e.value.size() > std::size_t(top)) {
        for (std::size_t t = 0; t < S; ++t)
          labels.push_back(e.value[std::size_t(ids.ids[b * S + t])].get<std::string>());
        return labels;
      }
  }
  for (std::size_t t = 0; t < S; ++t) labels.push_back(std::to_string(ids.ids[b * S + t]));
  return labels;
}

// Token labels for pictures: --labels or --labels-file, else the config's, else the
// --tokens of the drawn batch entry (id_labels), else positions.
std::vector<std::string> token_labels(const Options& opt, const attn::Config& cfg, std::size_t S,
                                      const attn::RunInputs& in) {
  std::string flag;
  if (auto labels = flag_labels(opt, &flag)) {
    if (labels->size() != S)
      throw attn::Error(attn::Exit::usage, flag + ": expected " + std::to_string(S) +
                                               " labels (one per token), found " +
                                               std::to_string(labels->size()));
    return *labels;
  }
  if (cfg.labels.size() == S) return cfg.labels;
  if (in.tokens && cfg.labels.empty())
    return id_labels(cfg, *in.tokens, std::min(opt.batch_index, in.tokens->shape[0] - 1));
  if (!cfg.labels.empty())
    spdlog::warn("labels: the config has {} labels but the input has {} tokens; drawing positions",
                 cfg.labels.size(), S);
  std::vector<std::string> pos;
  for (std::size_t t = 0; t < S; ++t) pos.push_back(std::to_string(t));
  return pos;
}

// The labels of the selected rows or keys (all when none are picked).
std::vector<std::string> pick(const std::vector<std::string>& labels,
                              const std::vector<std::size_t>& picked) {
  if (picked.empty()) return labels;
  std::vector<std::string> out;
  for (std::size_t i : picked) out.push_back(labels.at(i));
  return out;
}

// load_run, except that one layer of a model (--layer N) takes entry N when
// its input is a stack of every layer's inputs (CONTRACT.md "(v4) Inputs").
attn::LoadedRun load_layer_run(const Options& opt, const attn::Config& cfg,
                               const attn::LoadOptions& lo) {
  const std::string path = opt.input.value_or(cfg.input_path);
  if (cfg.model.empty() || !cfg.layer || opt.decoder_layer || path.empty() || lo.tokens)
    return attn::load_run(cfg, lo);
  // The model's layer count, read only when the input is a stack.
  const auto layers = [&] {
    const attn::ModelFlags flags = attn::run_model(opt.config, {opt.model, {}, opt.model_type});
    return std::size_t(attn::open_model_folder(flags.model, flags.model_type).num_layers);
  };
  std::optional<LayerInput> one =
      one_layer_input(path, lo.stdin_bytes, layers, std::size_t(*cfg.layer), opt.allow_nonfinite);
  if (!one) return attn::load_run(cfg, lo);
  attn::LoadedRun r;
  r.weights = attn::load_model_weights(cfg, opt.allow_nonfinite, &r.layout, &r.layout_detected,
                                       &r.weights_source);
  static_cast<attn::RunInputs&>(r) = attn::load_inputs(cfg, lo, std::move(one->x), one->source);
  return r;
}

// Without an output folder the context goes to stdout, unless the run is
// for its pictures (--plot) and neither --format nor `-o -` asks for it too
// (CONTRACT.md "(v4) Inputs").
bool context_on_stdout(const Options& opt) {
  const bool asked = opt.format_given || (opt.out_dir && *opt.out_dir == kStdoutDir);
  return opt.plots.empty() || asked;
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
  if (opt.top_k && !to_dir)
    throw attn::Error(attn::Exit::usage,
                      "--top-k: writes topk_values.npy and topk_indices.npy, so it needs an "
                      "output folder (--out-dir or the config's output.dir)");
  if (opt.head_stats && !to_dir)
    throw attn::Error(attn::Exit::usage,
                      "--head-stats: writes head_stats.csv and head_stats.json, so it needs an "
                      "output folder (--out-dir or the config's output.dir)");
  if (opt.key_stats && !to_dir)
    throw attn::Error(attn::Exit::usage,
                      "--key-stats: writes key_stats.npy and key_stats.csv, so it needs an output "
                      "folder (--out-dir or the config's output.dir)");
  if (!opt.save_spec.empty() && !to_dir)
    throw attn::Error(attn::Exit::usage,
                      "--save: writes each saved tensor as NAME.npy, so it needs an output folder "
                      "(--out-dir or the config's output.dir)");
  if (opt.summary && !to_dir)
    throw attn::Error(attn::Exit::usage,
                      "--summary: writes summary.npy, summary.csv and summary.json, so it needs an "
                      "output folder (--out-dir or the config's output.dir)");
  attn::LoadOptions lo;
  lo.allow_nonfinite = opt.allow_nonfinite;
  lo.input_path = opt.input;
  lo.padding_mask_path = opt.padding_mask;
  lo.tokens = opt.tokens;
  lo.threads = worker_threads(opt);
  if (opt.input && *opt.input == "-") lo.stdin_bytes = read_stdin_input();
  check_init_memory(cfg);
  // The forward pass's buffers fault in while the weights and input load.
  attn::prefault_forward(
      attn::geometry_of(cfg), worker_threads(opt),
      attn::npy_input_length(opt.input.value_or(cfg.input_path), lo.stdin_bytes));
  attn::LoadedRun r = load_layer_run(opt, cfg, lo);
  SessionInput in = RunSession::input_of(r, ms_since(t_start));
  const RunSession session(opt, cfg, std::move(r));

  // H: heads of the maps as written (one, the mean, with --average-heads).
  const std::size_t B = in.x.shape[0], S = in.x.shape[1];
  const std::size_t H = cfg.output_average_heads ? 1 : session.heads();
  const bool want_maps = to_dir && cfg.output_attention;
  const bool pictures = !opt.plots.empty() || opt.show;
  spdlog::debug("weights {} ({}), input {} {}, threads {}", session.model().weights_source,
                attn::layout_name(session.model().layout), in.input_source,
                attn::shape_str(in.x.shape), session.threads());

  // Flags about the maps are checked before the compute, against the loaded shapes.
  JobPlan plan;
  // --heads / --queries / --keys: checked here, before the output folder exists.
  const attn::MapSelection sel = session.selection(in);
  const std::vector<std::size_t> kept_heads = attn::selected_or_all(sel.heads, H);
  if (pictures)  // the capture numbers the selected heads 0..H'-1
    for (std::size_t k = 0; k < kept_heads.size(); ++k) plan.capture_heads.push_back(k);
  if (pictures && opt.batch_index >= B)
    throw attn::Error(attn::Exit::usage,
                      "--batch-index: " + std::to_string(opt.batch_index) +
                          " is past the batch; the input has B = " + std::to_string(B) + " (0.." +
                          std::to_string(B - 1) + ")");
  std::vector<std::string> labels;  // a wrong --labels count fails before the compute
  if (pictures) labels = token_labels(opt, cfg, S, in);
  // --compare: the other maps, read and checked against attention.npy's shape first.
  attn::Tensor compare_to;
  if (opt.compare) {
    compare_to = attn::to_float32(attn::read_npy(*opt.compare), *opt.compare, opt.allow_nonfinite);
    const std::vector<std::size_t> want = session.maps_shape(in);
    if (!same_maps_shape(compare_to.shape, want))
      throw attn::Error(attn::Exit::data, *opt.compare + ": expected the shape attention.npy has " +
                                              attn::shape_str(want) + ", found " +
                                              attn::shape_str(compare_to.shape));
    plan.compare_to = &compare_to;
  }

  // The folder is created (and checked writable) before the compute, so an
  // unwritable output fails fast; nothing appears in it before the commit.
  std::unique_ptr<attn::OutputDir> out;  // created at the commit when absent
  if (to_dir) out = attn::open_output_dir(cfg.output_dir);
  std::vector<PlotFile> plot_files;  // each --plot, from one capture of the maps
  plot_files.reserve(opt.plots.size());
  for (const std::string& p : opt.plots) plot_files.emplace_back(p);

  plan.keep_all_maps = opt.attn_stdout;
  plan.stats = opt.stats;
  plan.capture = pictures;
  plan.capture_batch = opt.batch_index;
  plan.capture_cells = capture_cells(opt, plan.capture_heads.size());
  if (opt.show_query) {  // the head view's query, as a row of the drawn maps
    const auto at = std::find(sel.queries.begin(), sel.queries.end(), *opt.show_query);
    if (sel.queries.empty())
      plan.capture_query = *opt.show_query;
    else if (at != sel.queries.end())
      plan.capture_query = std::size_t(at - sel.queries.begin());
  }
  // The page's neuron view: q and k of the drawn batch entry, when saved.
  if (any_plot_ends_with(opt, ".html") && !cfg.output_average_heads && !opt.save_spec.empty()) {
    const auto names = attn::parse_save_list(opt.save_spec);
    plan.capture_qk =
        std::count(names.begin(), names.end(), "q") && std::count(names.begin(), names.end(), "k");
  }
  plan.progress = Progress::wanted(opt.quiet);
  plan.write_maps = want_maps;
  plan.lent_x = &in.x;  // read for its shape only from here on
  JobResult res = session.forward(in, plan, to_dir ? &*out : nullptr);

  // Everything is staged first; stdout is written before the commit, because
  // it cannot be taken back: a failed stdout (exit 74) leaves every existing
  // file untouched (CONTRACT.md "Output safety rules").
  std::optional<MapPicture> pic;
  if (pictures) {
    // Key columns: the T keys (the query tokens for self-attention), then
    // torch MHA's extra columns.
    auto keys = key_labels(cfg, labels, in.keys(), session.map_keys(in));
    // --show-query names a query of the model; under --queries, a drawn one.
    Options pic_opt = opt;
    if (opt.show_query && !sel.queries.empty()) {
      const auto at = std::find(sel.queries.begin(), sel.queries.end(), *opt.show_query);
      if (at == sel.queries.end())
        throw attn::Error(attn::Exit::usage, "--show-query: query " +
                                                 std::to_string(*opt.show_query) +
                                                 " is not among the --queries drawn");
      pic_opt.show_query = std::size_t(at - sel.queries.begin());
    }
    pic = make_picture(pic_opt, cfg, session.model(), in, *res.capture, pick(labels, sel.queries),
                       pick(keys, sel.keys));
    crop_picture(*pic, sel.queries, sel.keys, in.x.shape[1], in.keys());
    for (std::size_t& h : pic->heads) h = kept_heads[h];  // panels named by the model's heads
    if (res.neuron) {
      attach_neuron(*pic, *res.neuron, cfg.spec.scale);
      if (!pic->neuron_note.empty()) spdlog::info("{}", pic->neuron_note);
    }
  }
  for (PlotFile& f : plot_files) f.stage(*pic);
  nlohmann::json extra = nlohmann::json::object();
  double compare_worst = 0;  // NaN when a head's maps disagree on a NaN
  if (opt.compare) {
    compare_worst = worst_difference(res.compare);
    extra["compare"] = compare_json(res.compare, {kept_heads, sel.queries, sel.keys}, *opt.compare,
                                    opt.compare_tol);
  }
  if (res.check_f64)
    extra["check_f64"] = {{"rows", res.check_f64->rows},
                          {"attention_max_abs", res.check_f64->attention_max_abs},
                          {"context_max_rel", res.check_f64->context_max_rel},
                          {"tol", opt.check_tol ? nlohmann::json(*opt.check_tol) : nullptr}};
  if (to_dir) session.stage(*out, in, res, want_maps, extra);
  if (opt.show) {
    write_stdout(render_terminal(*pic, terminal_colors(), terminal_columns()));
  } else if (opt.attn_stdout) {
    res.maps.shape = session.maps_shape(in);  // as attention.npy: (H, L, T'), (B, L, T'), ...
    write_stdout(format_stdout(res.maps, opt.format));
  } else if (!to_dir && context_on_stdout(opt)) {
    write_stdout(format_stdout(res.context, opt.format));
  }
  // One commit for the folder and the picture (CONTRACT.md "Output safety rules").
  std::vector<attn::OutputDir*> outputs;
  if (to_dir) outputs.push_back(&*out);
  for (PlotFile& f : plot_files) outputs.push_back(&f.staged());
  attn::commit_together(outputs);
  if (to_dir) {
    std::string saved;  // --save's files
    if (!opt.save_spec.empty())
      for (const std::string& name : attn::parse_save_list(opt.save_spec))
        saved += ", " + name + ".npy";
    spdlog::info("wrote {}/context.npy{}{} and run.json", cfg.output_dir,
                 want_maps ? ", attention.npy" : "", saved);
  }
  for (const std::string& p : opt.plots) spdlog::info("wrote {}", p);
  print_stats_table(res.stats, "", opt.quiet);  // after the files: a failure stays one line
  if (opt.compare && !opt.quiet) {
    std::fprintf(stderr, "compare with %s:\n%s", opt.compare->c_str(),
                 compare_table(res.compare, {kept_heads, sel.queries, sel.keys}).c_str());
    std::fflush(stderr);
  }
  if (res.check_f64) {
    const F64Check& c = *res.check_f64;
    if (!opt.quiet) {
      std::fprintf(stderr,
                   "check-f64: %zu rows per head against float64: the maps differ by at most "
                   "%.3g, the context by at most %.3g of its largest value\n",
                   c.rows, c.attention_max_abs, c.context_max_rel);
      std::fflush(stderr);
    }
    const double worst = std::max(c.attention_max_abs, c.context_max_rel);
    if (opt.check_tol && !(worst <= *opt.check_tol)) {
      spdlog::error("--check-tol: the float64 check's largest error is {:.3g}, above {:.3g}", worst,
                    *opt.check_tol);
      return 1;
    }
  }
  if (opt.compare_tol && !(compare_worst <= *opt.compare_tol)) {
    spdlog::error("--compare-tol: the largest difference from {} is {:.3g}, above {:.3g}",
                  *opt.compare, compare_worst, *opt.compare_tol);
    return 1;
  }
  return 0;
}

}  // namespace app

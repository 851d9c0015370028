// --layer all|3-7|0,5|last:N: one run over several layers of a model
// (CONTRACT.md "(v3) Many layers"). Each layer's config, weights and input
// are loaded on a helper thread while the layer before computes (so reading
// layer N+1 overlaps layer N's compute; memory holds at most two layers'
// weights); each layer's results go to DIR/layer_N/ (its own run.json, as a
// single run writes), committed as the layer finishes with its entry in
// DIR/manifest.json (layers_manifest.h), so a run killed at layer 30 keeps
// 30 layers and its rerun computes the rest. DIR/run.json lists the layers,
// and the model view (--plot) is drawn, at the end.
//
// Letters: B batch, H heads, S sequence, C hidden.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "attn/error.h"
#include "attn/gguf_info.h"
#include "attn/map_select.h"
#include "attn/model_folder.h"
#include "attn/output.h"
#include "attn/run.h"
#include "cli/index_list.h"
#include "cli/memory_check.h"
#include "cli/progress.h"
#include "cli/stdin_input.h"
#include "cli/timing.h"
#include "modes/head_stats_tables.h"
#include "modes/layer_inputs.h"
#include "modes/layer_maps.h"
#include "modes/layers_manifest.h"
#include "modes/map_compare.h"
#include "modes/modes.h"
#include "modes/run_fingerprint.h"
#include "modes/run_session.h"
#include "pictures/map_capture.h"
#include "pictures/model_view.h"
#include "pictures/plot.h"

namespace app {
namespace {

// One layer ready to compute: its config (--layer N's), weights and input.
struct LoadedLayer {
  std::int64_t layer = 0;
  std::unique_ptr<attn::Config> cfg;  // held by address by the session
  attn::LoadedRun model;              // the weights
  SessionInput in;
  double load_ms = 0;
};

// The flags of a single run of `layer`: --layer N in place of the list.
Options layer_options(const Options& opt, std::int64_t layer) {
  Options one = opt;
  one.layer = layer;
  one.layers.reset();
  return one;
}

LoadedLayer load_layer(const Options& opt, const LayerInputs& inputs, std::size_t position,
                       std::int64_t layer) {
  const auto t0 = Clock::now();
  LoadedLayer l;
  l.layer = layer;
  l.cfg = std::make_unique<attn::Config>(load_config_with_flags(layer_options(opt, layer)));
  check_init_memory(*l.cfg);
  // The first layer's load hides the faults; later calls find the pool set aside.
  attn::prefault_forward(attn::geometry_of(*l.cfg), worker_threads(opt), 0);
  l.model.weights = attn::load_model_weights(*l.cfg, opt.allow_nonfinite, &l.model.layout,
                                             &l.model.layout_detected, &l.model.weights_source);
  attn::LoadOptions lo;
  lo.allow_nonfinite = opt.allow_nonfinite;
  lo.padding_mask_path = opt.padding_mask;
  static_cast<attn::RunInputs&>(l.in) =
      attn::load_inputs(*l.cfg, lo, inputs.at(position), inputs.source(position));
  l.load_ms = l.in.load_ms = ms_since(t0);
  return l;
}

// The layers to run: every layer attn-run runs for "all" (the others listed
// in `skipped`), else the list as given (a layer it does not run is
// Exit::usage naming it, before any work).
std::vector<std::size_t> pick_layers(const Options& opt, const attn::ModelFolder& m,
                                     nlohmann::json& skipped) {
  const std::size_t n = std::size_t(m.num_layers);
  std::vector<std::size_t> picked = parse_index_list(*opt.layers, n, "--layer", "layer");
  std::vector<std::size_t> runs;
  for (std::size_t l : picked) {
    if (attn::layer_runs(m, std::int64_t(l))) {
      runs.push_back(l);
    } else if (opt.layers->empty()) {
      nlohmann::json skip = {{"layer", l}, {"type", attn::layer_type(m, std::int64_t(l))}};
      if (const auto from = attn::kv_shared_from(m, std::int64_t(l)))  // Gemma 4's shared K/V
        skip["kv_shared_from"] = *from;
      skipped.push_back(skip);
    } else {
      attn::layer_config(m, std::int64_t(l));  // its error lists the layers that run
    }
  }
  if (runs.empty())
    throw attn::Error(attn::Exit::usage, "--layer: " + m.dir + " has no attention layer to run");
  return runs;
}

// "1 layer", "2 layers".
std::string counted(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// The model view's columns: "4 heads", "1 head", or with --average-heads
// "the mean of the heads".
std::string heads_text(bool mean, std::size_t drawn) {
  return mean ? std::string("the mean of the heads") : counted(drawn, "head");
}

// "700 queries", or with --queries / --keys "100 of 700 queries".
std::string axis_text(std::size_t picked, std::size_t all, const char* what) {
  return (picked ? std::to_string(picked) + " of " : std::string()) + std::to_string(all) + " " +
         what;
}

// The model view's listeners on one layer: every drawn head of batch entry
// --batch-index captured as thumbnails, and the summary figures.
void plan_model_view(const Options& opt, const RunSession& session, const SessionInput& in,
                     JobPlan& plan, std::vector<std::size_t>& drawn, const std::string& name) {
  const std::size_t B = in.x.shape[0];
  if (opt.batch_index >= B)
    throw attn::Error(attn::Exit::usage, "--batch-index: " + std::to_string(opt.batch_index) +
                                             " is past the batch of " + name +
                                             "'s input (B = " + std::to_string(B) + ")");
  const std::size_t H = session.config().output_average_heads ? 1 : session.heads();
  drawn = attn::selected_or_all(session.selection(in).heads, H);
  plan.capture = true;
  plan.capture_batch = opt.batch_index;
  plan.capture_heads.clear();
  for (std::size_t k = 0; k < drawn.size(); ++k) plan.capture_heads.push_back(k);
  plan.capture_cells = kModelViewCells;
  plan.summary = true;
}

}  // namespace

int run_layers(const Options& opt) {
  const auto t_start = Clock::now();
  const attn::ModelFlags flags = attn::run_model(opt.config, {opt.model, {}, opt.model_type});
  if (flags.model.empty())
    throw attn::Error(attn::Exit::usage,
                      "--layer " + opt.layer_flag +
                          ": needs a model folder or GGUF file: --model DIR, or \"model\" in the "
                          "config");
  const attn::ModelFolder m = attn::open_model_folder(flags.model, flags.model_type);
  nlohmann::json skipped = nlohmann::json::array();
  const std::vector<std::size_t> layers = pick_layers(opt, m, skipped);
  for (const nlohmann::json& s : skipped) {
    if (s.contains("kv_shared_from"))
      spdlog::info("layer {}: reuses the keys and values of layer {}, not run",
                   s["layer"].get<std::size_t>(), s["kv_shared_from"].get<std::int64_t>());
    else
      spdlog::info("layer {}: a {} layer, not run", s["layer"].get<std::size_t>(),
                   s["type"].get<std::string>());
  }

  // The first layer's config says where the results go and what the input is.
  const attn::Config cfg0 = load_config_with_flags(layer_options(opt, std::int64_t(layers[0])));
  if (cfg0.output_dir.empty())
    throw attn::Error(attn::Exit::usage,
                      "--layer " + opt.layer_flag +
                          ": writes DIR/layer_N/ for each layer, so it needs an output folder "
                          "(--out-dir DIR or the config's output.dir)");
  std::string input = opt.input.value_or(cfg0.input_path);
  if (input.empty())
    throw attn::Error(attn::Exit::usage,
                      "--input: needed with --layer " + opt.layer_flag +
                          ": each layer's hidden states, a (layers, B, S, C) .npy or a folder of "
                          "layer_N.npy");
  std::vector<std::uint8_t> stdin_bytes;
  if (input == "-") stdin_bytes = read_stdin_input();
  const LayerInputs inputs(input, std::move(stdin_bytes), std::size_t(m.num_layers), layers,
                           opt.allow_nonfinite);
  // --compare: each layer's other maps, checked to exist now, read as the layer runs.
  std::optional<LayerMaps> compare;
  if (opt.compare) compare.emplace(*opt.compare, std::size_t(m.num_layers), layers);
  double compare_worst = 0;  // over every layer computed now; NaN when a NaN disagrees

  // Checked before any compute; created with the first layer's commit.
  const std::string top_path = cfg0.output_dir;
  attn::open_output_dir(top_path);
  // --plot FILE.html: the model view, each layer's thumbnails and figures.
  std::vector<PlotFile> plot_files;
  plot_files.reserve(opt.plots.size());
  for (const std::string& p : opt.plots) plot_files.emplace_back(p);
  const bool view = !plot_files.empty();

  // The layers an earlier run committed with these settings from these
  // inputs (DIR/manifest.json) are not computed again; one made with other
  // settings is exit 73 naming them.
  const LayersManifest manifest_in(top_path);
  LayersManifest manifest(top_path);
  std::vector<const nlohmann::json*> earlier(layers.size(), nullptr);
  std::vector<nlohmann::json> fingerprints(layers.size()), input_ids(layers.size());
  std::vector<std::size_t> todo;  // positions in `layers` to compute
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const attn::Config cfg =
        i == 0 ? cfg0 : load_config_with_flags(layer_options(opt, std::int64_t(layers[i])));
    const std::string source = !cfg.weights.empty() ? cfg.weights
                               : cfg.init_seed ? "init(seed=" + std::to_string(*cfg.init_seed) + ")"
                                               : std::string();
    fingerprints[i] = run_fingerprint(opt, cfg, source);
    const std::string file = inputs.file(i);
    input_ids[i] = file.empty() ? nlohmann::json{{"path", ""}} : file_identity(file);
    const std::string name = "layer_" + std::to_string(layers[i]);
    const nlohmann::json* e = manifest_in.done(name, fingerprints[i], input_ids[i]);
    // The model view needs each layer's tiles of this batch entry.
    if (e && view &&
        !(e->contains("view") &&
          (*e)["view"].value("batch_index", std::size_t(-1)) == opt.batch_index))
      e = nullptr;
    earlier[i] = e;
    if (!e) todo.push_back(i);
  }

  ModelView mv;
  bool mean_heads = false;                          // --average-heads: one column, the heads' mean
  std::size_t picked_queries = 0, picked_keys = 0;  // --queries / --keys (0 = all)
  std::vector<nlohmann::json> runs_at(layers.size());
  std::vector<ModelViewLayer> tiles(layers.size());
  double compute_ms = 0, load_ms = 0;
  Progress progress("layers", layers.size(), Progress::wanted(opt.quiet));
  const auto view_facts = [&](const nlohmann::json& v) {
    mv.heads = v.at("heads").get<std::vector<std::size_t>>();
    mv.L = v.at("L").get<std::size_t>();
    mv.T = v.at("T").get<std::size_t>();
    picked_queries = v.at("queries").get<std::size_t>();
    picked_keys = v.at("keys").get<std::size_t>();
    mv.recent = v.at("recent").get<std::size_t>();
    mean_heads = v.at("mean_heads").get<bool>();
  };
  for (std::size_t i = 0; i < layers.size(); ++i)
    if (earlier[i]) {
      runs_at[i] = (*earlier[i])["run"];
      if (view) {
        tiles[i] = view_from_json((*earlier[i])["view"]["tiles"]);
        view_facts((*earlier[i])["view"]);
      }
      progress.advance(1);
    }
  // Layer i computes while layer i + 1 loads; each commits as it finishes.
  auto load = [&](std::size_t k) {
    return load_layer(opt, inputs, todo[k], std::int64_t(layers[todo[k]]));
  };
  std::future<LoadedLayer> next;
  if (!todo.empty()) next = std::async(std::launch::async, load, 0);
  for (std::size_t k = 0; k < todo.size(); ++k) {
    const std::size_t i = todo[k];
    LoadedLayer cur = next.get();
    if (k + 1 < todo.size()) next = std::async(std::launch::async, load, k + 1);
    const std::string name = "layer_" + std::to_string(cur.layer);
    load_ms += cur.load_ms;
    const RunSession session(opt, *cur.cfg, std::move(cur.model));
    const std::unique_ptr<attn::OutputDir> top = attn::open_output_dir(top_path);
    attn::OutputDir out(top_path + "/" + name, top->staging());
    JobPlan plan;
    plan.stats = opt.stats;
    plan.write_maps = cur.cfg->output_attention;
    std::vector<std::size_t> drawn;  // the model's numbers of the heads drawn
    if (view) plan_model_view(opt, session, cur.in, plan, drawn, name);
    attn::Tensor other;  // --compare: this layer's other maps
    if (compare) {
      other = compare->at(i, opt.allow_nonfinite);
      const std::vector<std::size_t> want = session.maps_shape(cur.in);
      if (!same_maps_shape(other.shape, want))
        throw attn::Error(attn::Exit::data, "--compare: " + compare->source(i) +
                                                ": expected the shape " + name +
                                                "/attention.npy has " + attn::shape_str(want) +
                                                ", found " + attn::shape_str(other.shape));
      plan.compare_to = &other;
    }
    const JobResult res = session.forward(cur.in, plan, &out, name);
    compute_ms += res.compute_ms;
    nlohmann::json extra = nlohmann::json::object();
    if (compare) {
      const attn::MapSelection sel = session.selection(cur.in);
      const SelectionNumbers numbers{
          attn::selected_or_all(sel.heads, std::size_t(session.model().weights.H)), sel.queries,
          sel.keys};
      extra["compare"] = compare_json(res.compare, numbers, compare->source(i), opt.compare_tol);
      const double worst = worst_difference(res.compare);
      if (!(worst <= compare_worst)) compare_worst = worst;
      if (!opt.quiet)
        spdlog::info("{}: compared with {}:\n{}", name, compare->source(i),
                     compare_table(res.compare, numbers));
    }
    const nlohmann::json run = session.stage(out, cur.in, res, cur.cfg->output_attention, extra);
    runs_at[i] = {
        {"layer", cur.layer},           {"dir", name},
        {"input", cur.in.input_source}, {"shapes", run["shapes"]},
        {"timings", run["timings"]},    {"fully_masked_rows", res.forward.fully_masked_rows}};
    if (compare) runs_at[i]["compare"] = extra["compare"];
    nlohmann::json entry = {
        {"fingerprint", fingerprints[i]}, {"input", input_ids[i]}, {"run", runs_at[i]}};
    if (view) {
      tiles[i] = model_view_layer(cur.layer, attn::layer_type(m, cur.layer), name, *res.capture,
                                  *res.summary, opt.batch_index);
      std::vector<std::string> files = out.names();
      std::sort(files.begin(), files.end());
      tiles[i].files = std::move(files);
      const attn::MapSelection sel = session.selection(cur.in);
      entry["view"] = {{"batch_index", opt.batch_index},
                       {"heads", drawn},
                       {"L", cur.in.x.shape[1]},
                       {"T", session.map_keys(cur.in)},
                       {"queries", sel.queries.size()},
                       {"keys", sel.keys.size()},
                       {"recent", opt.recent.value_or(64)},
                       {"mean_heads", cur.cfg->output_average_heads},
                       {"tiles", view_to_json(tiles[i])}};
      view_facts(entry["view"]);
    }
    print_stats_table(res.stats, name, opt.quiet);
    manifest.record(name, std::move(entry), *top);
    attn::commit_together({top.get(), &out});  // DIR (with the manifest) first
    progress.advance(1);
  }
  progress.finish();
  nlohmann::json runs = nlohmann::json::array();
  for (const nlohmann::json& r : runs_at) runs.push_back(r);
  if (view) mv.layers = tiles;
  mv.color_scale = opt.color_scale;

  nlohmann::json j;
  j["attn_run_version"] = ATTN_VERSION;
  j["model"] = m.dir;
  j["model_type"] = m.model_type;
  if (!m.gguf_architecture.empty())  // the model as its file names it (general.name)
    if (const std::string name = attn::gguf_model_name(m.dir); !name.empty())
      j["model_name"] = name;
  j["num_layers"] = m.num_layers;
  j["layers"] = layers;
  j["skipped"] = skipped;
  j["input"] = input;
  j["input_kind"] = inputs.kind();
  j["runs"] = runs;
  j["timings"] = {{"load_ms", load_ms},
                  {"compute_ms", compute_ms},
                  {"total_ms", ms_since(t_start)},
                  {"load_note", "each layer loads while the one before computes"}};
  const std::unique_ptr<attn::OutputDir> top = attn::open_output_dir(top_path);
  top->add("run.json", j.dump(2) + "\n");
  // --head-stats: one table for all layers, from each layer's folder.
  if (opt.head_stats) {
    std::vector<std::string> folders;
    for (const nlohmann::json& r : runs) folders.push_back(r["dir"].get<std::string>());
    stage_layer_head_stats(*top, top_path, folders);
  } else {
    for (const char* name : {"head_stats.csv", "head_stats.json"}) top->remove_on_commit(name);
  }
  if (view) {
    // A GGUF file by its general.name when it has one, as the other pictures.
    const std::string gguf_name = m.gguf_architecture.empty() ? "" : attn::gguf_model_name(m.dir);
    mv.title = (gguf_name.empty() ? model_name(m.dir) : gguf_name) + ", " +
               counted(layers.size(), "layer");
    // --average-heads draws one column, the mean of the heads (labelled 0).
    const std::string heads = heads_text(mean_heads, mv.heads.size());
    mv.subtitle = heads + " x " + counted(layers.size(), "layer") + ", " +
                  axis_text(picked_queries, mv.L, "queries") + " x " +
                  axis_text(picked_keys, mv.T, "keys") + ", batch entry " +
                  std::to_string(opt.batch_index);
    if (!skipped.empty()) {
      std::string s;
      for (const nlohmann::json& k : skipped)
        s += (s.empty() ? "" : ", ") + std::to_string(k["layer"].get<std::size_t>());
      mv.subtitle += "; not run: " + std::string(skipped.size() == 1 ? "layer " : "layers ") + s +
                     " (" + skipped[0]["type"].get<std::string>() + ")";
    }
    const std::string page = render_model_view(mv);
    for (PlotFile& f : plot_files) f.stage_bytes(page);
  }
  std::vector<attn::OutputDir*> outputs = {top.get()};
  for (PlotFile& f : plot_files) outputs.push_back(&f.staged());
  attn::commit_together(outputs);
  const std::size_t before = layers.size() - todo.size();
  spdlog::info("wrote {}{} and {}/run.json", counted(todo.size(), "layer folder"),
               before ? " (" + std::to_string(before) + " done before)" : std::string(), top_path);
  for (const std::string& p : opt.plots) spdlog::info("wrote {}", p);
  if (opt.compare_tol && !(compare_worst <= *opt.compare_tol)) {
    spdlog::error("--compare-tol: the largest difference from {} is {:.3g}, above {:.3g}",
                  *opt.compare, compare_worst, *opt.compare_tol);
    return 1;
  }
  return 0;
}

}  // namespace app

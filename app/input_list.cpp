// --input-list LIST [--shard K/N]: many inputs through one layer, weights
// loaded once; each input's results in DIR/<input name>/, plus a summary.
// The shard rule (line i runs when i % N == K) lets N copies of one command
// under GNU parallel, xargs -P or a Slurm job array cover the list once.
//
// Letters: B batch, H heads, S sequence, C hidden.
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/npy.h"
#include "attn/output.h"
#include "attn/run.h"
#include "forward_job.h"
#include "memory_check.h"
#include "modes.h"
#include "progress.h"
#include "timing.h"

namespace app {
namespace {

constexpr std::size_t kMaxListBytes = std::size_t(64) << 20;

struct ListEntry {
  std::string path;       // resolved against the list's folder
  std::string written;    // as written in the list
  std::size_t line = 0;   // 1-based, for messages
  std::size_t index = 0;  // among non-blank, non-comment lines, from 0 (the shard rule)
  std::string name;       // file name without .npy: the result folder
};

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// "summary.json" or "summary-K-of-N.json": a summary of any shard count, so
// every shard of one list refuses the same entries.
bool is_summary_name(const std::string& name) {
  if (name == "summary.json") return true;
  const std::string head = "summary-", tail = ".json";
  if (name.size() <= head.size() + tail.size() || name.rfind(head, 0) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  const std::string mid = name.substr(head.size(), name.size() - head.size() - tail.size());
  const auto of = mid.find("-of-");
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
  };
  return of != std::string::npos && digits(mid.substr(0, of)) && digits(mid.substr(of + 4));
}

std::vector<ListEntry> read_list(const std::string& list) {
  const auto bytes = attn::read_file(list, kMaxListBytes);
  const std::string text(bytes.begin(), bytes.end());
  const std::string base = folder_of(list);
  std::vector<ListEntry> entries;
  std::size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.find('\0') != std::string::npos)  // a path cannot hold one: never cut it there
      throw attn::Error(attn::Exit::data, list + ": line " + std::to_string(line_no) +
                                              ": expected a path, found a NUL byte in it");
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;  // blank or comment
    line = line.substr(first, line.find_last_not_of(" \t\r") + 1 - first);
    ListEntry e;
    e.written = line;
    // "list/../data/x.npy" -> "data/x.npy": shorter in messages and summaries.
    e.path = std::filesystem::path(attn::resolve_path(base, line)).lexically_normal().string();
    e.line = line_no;
    e.index = entries.size();
    const auto slash = line.find_last_of('/');
    e.name = slash == std::string::npos ? line : line.substr(slash + 1);
    if (e.name.size() > 4 && e.name.compare(e.name.size() - 4, 4, ".npy") == 0)
      e.name.resize(e.name.size() - 4);
    if (e.name.empty() || e.name == "." || e.name == "..")
      throw attn::Error(attn::Exit::data, list + ": line " + std::to_string(line_no) +
                                              ": expected a path to a .npy file, found '" + line +
                                              "'");
    entries.push_back(std::move(e));
  }
  if (entries.empty())
    throw attn::Error(attn::Exit::data, list +
                                            ": no inputs (one .npy path per line; blank lines "
                                            "and lines starting with # are skipped)");
  // Every input of the whole list, not just this shard, so all shards agree.
  std::map<std::string, const ListEntry*> seen;
  for (const auto& e : entries) {
    if (is_summary_name(e.name))
      throw attn::Error(attn::Exit::data, list + ": input '" + e.written + "' (line " +
                                              std::to_string(e.line) +
                                              ") would write its results to '" + e.name +
                                              "/', the name of the list's summary file; "
                                              "rename it");
    auto [it, fresh] = seen.emplace(e.name, &e);
    if (!fresh)
      throw attn::Error(attn::Exit::data, list + ": inputs '" + it->second->written + "' (line " +
                                              std::to_string(it->second->line) + ") and '" +
                                              e.written + "' (line " + std::to_string(e.line) +
                                              ") would both write their results to '" + e.name +
                                              "/'; rename one");
  }
  return entries;
}

}  // namespace

int run_input_list(const Options& opt) {
  const auto t_start = Clock::now();
  attn::Config cfg = load_config_with_flags(opt);
  if (cfg.output_dir.empty())
    throw attn::Error(attn::Exit::usage,
                      "--input-list: needs --out-dir DIR (each input's results "
                      "go to DIR/<input name>/)");
  const Shard shard = opt.shard_spec ? parse_shard(*opt.shard_spec) : Shard{};
  const std::string& list = *opt.input_list;
  const std::vector<ListEntry> entries = read_list(list);
  std::vector<const ListEntry*> mine;
  for (const auto& e : entries)
    if (e.index % shard.n == shard.k) mine.push_back(&e);

  // Weights and mask once for every input.
  attn::LoadedRun model;
  check_init_memory(cfg);
  model.weights = attn::load_model_weights(cfg, opt.allow_nonfinite, &model.layout,
                                           &model.layout_detected, &model.weights_source);
  std::string mask_name;
  const std::optional<attn::Mask> mask = attn::read_padding_mask(cfg, opt.padding_mask, &mask_name);
  const double load_weights_ms = ms_since(t_start);
  const int threads = worker_threads(opt);
  const std::size_t H = std::size_t(model.weights.H);
  spdlog::debug("{}: {} inputs, this shard {}/{} runs {}", list, entries.size(), shard.k, shard.n,
                mine.size());

  attn::OutputDir summary_dir(cfg.output_dir);  // created (and checked) before any compute
  nlohmann::json done = nlohmann::json::array();
  Progress progress("inputs", mine.size(), Progress::wanted(opt.quiet));
  for (const ListEntry* e : mine) {
    const auto t_load = Clock::now();
    bool batched = true;
    attn::Tensor x = attn::batch_input(attn::read_input_file(e->path, opt.allow_nonfinite), cfg,
                                       e->path, &batched);
    const std::size_t B = x.shape[0], S = x.shape[1];
    std::optional<attn::Mask> padding;
    if (mask) padding = attn::batch_mask(*mask, B, S, mask_name, e->path);
    const double load_ms = ms_since(t_load);

    const std::string dir = cfg.output_dir + "/" + e->name;
    attn::OutputDir out(dir);
    std::vector<std::size_t> maps_shape = {H, S, S};
    if (batched) maps_shape.insert(maps_shape.begin(), B);
    JobPlan plan;
    plan.out = cfg.output_attention ? &out : nullptr;
    plan.maps_shape = maps_shape;
    plan.stats = opt.stats;
    plan.threads = threads;
    plan.check_overflow = !opt.allow_nonfinite;
    JobResult res =
        run_job(model.weights, attn::attention_spec(cfg), x, padding ? &*padding : nullptr, plan);
    warn_fully_masked(res.forward, e->path);
    if (!batched) res.context.shape.erase(res.context.shape.begin());

    const auto t_write = Clock::now();
    RunFacts f = model_facts(cfg, model, threads);
    f.input_source = e->path;
    f.input_shape = batched ? x.shape : std::vector<std::size_t>{S, x.shape[2]};
    if (padding) f.padding_shape = padding->shape;
    f.context_shape = res.context.shape;
    if (cfg.output_attention) f.maps_shape = maps_shape;
    f.load_ms = load_ms;
    f.compute_ms = res.compute_ms;
    const nlohmann::json run = stage_results(
        out, f, res, {{"input_list", {{"list", list}, {"line", e->line}, {"index", e->index}}}});
    out.commit();
    f.write_ms = ms_since(t_write);
    print_stats_table(res.stats, e->path, opt.quiet);
    done.push_back(
        {{"path", e->path},
         {"line", e->line},
         {"index", e->index},
         {"dir", e->name},
         {"shapes", run["shapes"]},
         {"timings",
          {{"load_ms", f.load_ms}, {"compute_ms", f.compute_ms}, {"write_ms", f.write_ms}}},
         {"fully_masked_rows", res.forward.fully_masked_rows}});
    spdlog::debug("wrote {}/", dir);
    progress.advance(1);
  }
  progress.finish();

  // Shards write their own summary, so parallel shards never race on one file.
  const std::string summary_name = opt.shard_spec ? "summary-" + std::to_string(shard.k) + "-of-" +
                                                        std::to_string(shard.n) + ".json"
                                                  : "summary.json";
  nlohmann::json summary;
  summary["attn_run_version"] = ATTN_VERSION;
  summary["config"] = cfg.file;
  summary["input_list"] = list;
  summary["list_inputs"] = entries.size();
  summary["shard"] =
      opt.shard_spec ? nlohmann::json{{"k", shard.k}, {"n", shard.n}} : nlohmann::json();
  summary["weights"] = model.weights_source;
  summary["layout"] = attn::layout_name(model.layout);
  summary["threads"] = threads;
  summary["load_weights_ms"] = load_weights_ms;
  summary["total_ms"] = ms_since(t_start);
  summary["inputs"] = done;
  summary_dir.add(summary_name, summary.dump(2) + "\n");
  summary_dir.commit();
  spdlog::info("wrote {} result folders and {}/{}", mine.size(), cfg.output_dir, summary_name);
  return 0;
}

}  // namespace app

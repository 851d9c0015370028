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
#include "input_list_file.h"
#include "memory_check.h"
#include "modes.h"
#include "progress.h"
#include "run_session.h"
#include "timing.h"

namespace app {

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

  // Weights once for every input.
  attn::LoadedRun model;
  check_init_memory(cfg);
  model.weights = attn::load_model_weights(cfg, opt.allow_nonfinite, &model.layout,
                                           &model.layout_detected, &model.weights_source);
  attn::LoadOptions lo;
  lo.allow_nonfinite = opt.allow_nonfinite;
  lo.padding_mask_path = opt.padding_mask;
  const double load_weights_ms = ms_since(t_start);
  const RunSession session(opt, cfg, std::move(model));
  spdlog::debug("{}: {} inputs, this shard {}/{} runs {}", list, entries.size(), shard.k, shard.n,
                mine.size());

  attn::OutputDir summary_dir(cfg.output_dir);  // created (and checked) before any compute
  for (const ListEntry* e : mine) summary_dir.check_name(e->name);
  nlohmann::json done = nlohmann::json::array();
  Progress progress("inputs", mine.size(), Progress::wanted(opt.quiet));
  for (const ListEntry* e : mine) {
    const auto t_load = Clock::now();
    SessionInput in;
    static_cast<attn::RunInputs&>(in) =
        attn::load_inputs(cfg, lo, attn::read_input_file(e->path, opt.allow_nonfinite), e->path);
    in.load_ms = ms_since(t_load);

    const std::string dir = cfg.output_dir + "/" + e->name;
    attn::OutputDir out(dir);
    JobPlan plan;
    plan.stats = opt.stats;
    const JobResult res = session.forward(in, plan, cfg.output_attention ? &out : nullptr, e->path);

    const auto t_write = Clock::now();
    const nlohmann::json run =
        session.stage(out, in, res, cfg.output_attention,
                      {{"input_list", {{"list", list}, {"line", e->line}, {"index", e->index}}}});
    out.commit();
    const double write_ms = ms_since(t_write);
    print_stats_table(res.stats, e->path, opt.quiet);
    done.push_back(
        {{"path", e->path},
         {"line", e->line},
         {"index", e->index},
         {"dir", e->name},
         {"shapes", run["shapes"]},
         {"timings",
          {{"load_ms", in.load_ms}, {"compute_ms", res.compute_ms}, {"write_ms", write_ms}}},
         {"fully_masked_rows", res.forward.fully_masked_rows}});
    spdlog::debug("wrote {}/", dir);
    progress.advance(1);
  }
  progress.finish();

  // Shards write their own summary, so parallel shards never race on one file.
  const std::string summary_name =
      opt.shard_spec ? shard_summary_name(shard.k, shard.n) : "summary.json";
  nlohmann::json summary;
  summary["attn_run_version"] = ATTN_VERSION;
  summary["config"] = cfg.file;
  summary["input_list"] = list;
  summary["list_inputs"] = entries.size();
  summary["shard"] =
      opt.shard_spec ? nlohmann::json{{"k", shard.k}, {"n", shard.n}} : nlohmann::json();
  summary["weights"] = session.model().weights_source;
  summary["layout"] = attn::layout_name(session.model().layout);
  summary["threads"] = session.threads();
  summary["load_weights_ms"] = load_weights_ms;
  summary["total_ms"] = ms_since(t_start);
  summary["inputs"] = done;
  summary_dir.add(summary_name, summary.dump(2) + "\n");
  summary_dir.commit();
  spdlog::info("wrote {} result folders and {}/{}", mine.size(), cfg.output_dir, summary_name);
  return 0;
}

}  // namespace app

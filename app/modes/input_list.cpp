// --input-list LIST [--shard K/N]: many inputs through one layer, weights
// loaded once; each input's results in DIR/<input name>/, plus DIR/batch.json.
// The shard rule (line i runs when i % N == K) lets N copies of one command
// under GNU parallel, xargs -P or a Slurm job array cover the list once.
//
// Letters: B batch, H heads, S sequence, C hidden.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"
#include "attn/npy.h"
#include "attn/output.h"
#include "attn/run.h"
#include "cli/memory_check.h"
#include "cli/progress.h"
#include "cli/timing.h"
#include "modes/forward_job.h"
#include "modes/head_stats_tables.h"
#include "modes/input_list_file.h"
#include "modes/input_list_manifest.h"
#include "modes/input_prefetch.h"
#include "modes/modes.h"
#include "modes/pack_batch.h"
#include "modes/run_fingerprint.h"
#include "modes/run_session.h"

namespace app {

int run_input_list(const Options& opt) {
  const auto t_start = Clock::now();
  attn::Config cfg = load_config_with_flags(opt);
  if (cfg.output_dir.empty())
    throw attn::Error(attn::Exit::usage,
                      "--input-list: needs --out-dir DIR (each input's results "
                      "go to DIR/<input name>/)");
  const Shard shard =
      opt.shard_spec ? shard_in_batch(parse_shard(*opt.shard_spec), cfg.output_dir) : Shard{};
  const std::string& list = *opt.input_list;
  const std::vector<ListEntry> entries = read_list(list);
  std::vector<const ListEntry*> mine;
  for (const auto& e : entries)
    if (e.index % shard.n == shard.k) mine.push_back(&e);

  // Weights once for every input.
  attn::LoadedRun model;
  check_init_memory(cfg);
  attn::prefault_forward(attn::geometry_of(cfg), worker_threads(opt), 0);  // while the weights load
  model.weights = attn::load_model_weights(cfg, opt.allow_nonfinite, &model.layout,
                                           &model.layout_detected, &model.weights_source);
  attn::LoadOptions lo;
  lo.allow_nonfinite = opt.allow_nonfinite;
  lo.padding_mask_path = opt.padding_mask;
  const double load_weights_ms = ms_since(t_start);
  const RunSession session(opt, cfg, std::move(model));
  spdlog::debug("{}: {} inputs, this shard {}/{} runs {}", list, entries.size(), shard.k, shard.n,
                mine.size());

  attn::OutputDir batch_dir(cfg.output_dir);  // created (and checked) before any compute
  for (const ListEntry* e : mine) batch_dir.check_name(e->name);
  // A result folder is created only when its files commit; an empty one is
  // what a killed run of an older attn-run left: removed (rmdir removes only
  // an empty folder), so no folder without results looks like one. Only this
  // shard's, so a shard never races another's commit.
  for (const ListEntry* e : mine) ::rmdir((cfg.output_dir + "/" + e->name).c_str());
  // A rerun (after preemption) skips what an earlier run with the same
  // fingerprint committed; another run's folder is refused (73).
  nlohmann::json fingerprint = run_fingerprint(opt, cfg, session.model().weights_source);
  if (opt.pack) fingerprint["--pack list"] = list_identity(entries);
  ListManifest manifest(cfg.output_dir, fingerprint);
  if (opt.shard_spec) manifest.set_split(shard);
  if (opt.pack) {  // one pack per shard instead of a folder per input (pack_batch.h)
    manifest.write_settings();
    return run_packed_list({opt, cfg, shard, list, entries, mine, session, lo, fingerprint});
  }
  std::map<std::string, std::string> path_of;  // result folder name -> input path
  for (const ListEntry* e : mine) path_of[e->name] = e->path;
  nlohmann::json done = nlohmann::json::array();
  Progress progress("inputs", mine.size(), Progress::wanted(opt.quiet));
  // Results are committed in groups (kCommitGroupInputs inputs, or what finished in
  // kCommitGroupSeconds), so 1,000 short inputs do not pay 1,000 rounds of fsync.
  // A group's files go to the disk on a helper thread (flush_together) while
  // the next group computes; this thread renames them (commit_together, the
  // cleanup signals held off) before the next group's flush starts. Each
  // input's folder is still atomic, and what finished is committed before an
  // error ends the run.
  std::vector<std::unique_ptr<attn::OutputDir>> pending, flushing;
  std::future<void> flushed;  // declared after `flushing`: joined before those folders go
  auto pending_since = Clock::now();
  auto pointers = [](const std::vector<std::unique_ptr<attn::OutputDir>>& group) {
    std::vector<attn::OutputDir*> dirs;
    for (const auto& d : group) dirs.push_back(d.get());
    return dirs;
  };
  auto finish_flushing = [&] {  // once per group: a failed flush or commit is not retried
    if (!flushed.valid()) return;
    const auto group = std::move(flushing);
    flushing.clear();
    flushed.get();  // the flush's error, if any
    attn::commit_together(pointers(group));
    std::vector<std::pair<std::string, std::string>> inputs;
    for (const auto& d : group) {
      const std::string name = std::filesystem::path(d->dir()).filename().string();
      inputs.emplace_back(name, path_of.at(name));
    }
    manifest.mark_done(inputs);
  };
  auto commit_pending = [&] {
    finish_flushing();
    flushing = std::move(pending);
    pending.clear();
    if (!flushing.empty())
      flushed = std::async(std::launch::async,
                           [dirs = pointers(flushing)] { attn::flush_together(dirs); });
  };
  // What an earlier run of this fingerprint committed is skipped; the rest is
  // read ahead, each input while the one before it computes.
  InputPrefetch inputs(
      mine, [&](const ListEntry& e) { return manifest.done(e.name, e.path); },
      [&](const ListEntry& e) { return load_list_entry(cfg, lo, opt.allow_nonfinite, e); });
  // One input (mine[i]): loaded, computed, staged into its folder (committed with its group).
  auto run_entry = [&](std::size_t i) {
    const ListEntry* e = mine[i];
    SessionInput in = inputs.take(i);

    const std::string dir = cfg.output_dir + "/" + e->name;
    // Its temporaries in the out-dir, its folder created at the commit.
    auto staged = std::make_unique<attn::OutputDir>(dir, cfg.output_dir);  // joins `pending`
    attn::OutputDir& out = *staged;
    JobPlan plan;
    plan.stats = opt.stats;
    plan.write_maps = cfg.output_attention;
    plan.lent_x = &in.x;  // read for its shape only from here on
    const JobResult res = forward_list_entry(session, in, plan, &out, e->path);

    const auto t_write = Clock::now();
    const nlohmann::json run =
        session.stage(out, in, res, cfg.output_attention,
                      {{"input_list", {{"list", list}, {"line", e->line}, {"index", e->index}}}});
    if (pending.empty()) pending_since = Clock::now();
    pending.push_back(std::move(staged));
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
  };
  nlohmann::json failed = nlohmann::json::array();  // --keep-going: the inputs that failed
  int first_failure = 0;                            // their first's exit code
  try {
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const ListEntry* e = mine[i];
      if (inputs.skipped(i)) {  // committed by an earlier run of this fingerprint
        done.push_back({{"path", e->path},
                        {"line", e->line},
                        {"index", e->index},
                        {"dir", e->name},
                        {"skipped", true}});
        progress.advance(1);
        continue;
      }
      try {
        run_entry(i);
      } catch (const attn::Error& err) {
        // --keep-going: the input's error line, and on to the next; a write
        // error (74: the disk) would fail every input after it, so it ends the batch.
        if (!opt.keep_going || err.code() == attn::Exit::io) throw;
        spdlog::error("{}", attn::printable(err.what()));
        manifest.mark_failed(e->name, e->path, err.what(), int(err.code()));
        failed.push_back({{"path", e->path},
                          {"line", e->line},
                          {"index", e->index},
                          {"dir", e->name},
                          {"error", err.what()},
                          {"exit_code", int(err.code())}});
        if (!first_failure) first_failure = int(err.code());
      }
      if (!pending.empty() && (pending.size() >= kCommitGroupInputs ||
                               ms_since(pending_since) >= kCommitGroupSeconds * 1e3))
        commit_pending();
      progress.advance(1);
    }
    commit_pending();
    finish_flushing();
    manifest.write();  // the failures after the last group's results
  } catch (...) {
    commit_pending();  // the inputs that finished; the failing one's temporaries are gone
    finish_flushing();
    manifest.write();
    throw;
  }
  progress.finish();

  // Shards write their own batch file, so parallel shards never race on one file.
  const std::string batch_name =
      opt.shard_spec ? shard_batch_name(shard.k, shard.n) : std::string(kBatchFile);
  nlohmann::json batch;
  batch["attn_run_version"] = ATTN_VERSION;
  batch["config"] = cfg.file;
  batch["input_list"] = list;
  batch["list_inputs"] = entries.size();
  batch["shard"] =
      opt.shard_spec ? nlohmann::json{{"k", shard.k}, {"n", shard.n}} : nlohmann::json();
  batch["weights"] = session.model().weights_source;
  batch["layout"] = attn::layout_name(session.model().layout);
  batch["threads"] = session.threads();
  batch["load_weights_ms"] = load_weights_ms;
  batch["total_ms"] = ms_since(t_start);
  batch["inputs"] = done;
  if (opt.keep_going) batch["failed"] = failed;
  // --head-stats: the inputs' tables merged (a sharded batch's by the merge of its shards).
  if (opt.head_stats && !opt.shard_spec) {
    std::vector<std::string> folders;
    for (const nlohmann::json& d : done) folders.push_back(d["dir"].get<std::string>());
    stage_batch_head_stats(batch_dir, cfg.output_dir, folders);
  } else if (!opt.shard_spec) {
    for (const char* name : {"head_stats.csv", "head_stats.json"}) batch_dir.remove_on_commit(name);
  }
  batch_dir.add(batch_name, batch.dump(2) + "\n");
  batch_dir.commit();
  const std::size_t written = mine.size() - failed.size();
  spdlog::info("wrote {} result folder{} and {}/{}", written, written == 1 ? "" : "s",
               cfg.output_dir, batch_name);
  if (failed.empty()) return 0;
  // --keep-going: the batch's exit status is its first failure's.
  spdlog::error(
      "{} of {} inputs failed (each listed above, and in {}/manifest.json with its "
      "error); a rerun computes only those; exit status {}, the first failure's",
      failed.size(), mine.size(), attn::printable(cfg.output_dir), first_failure);
  return first_failure;
}

}  // namespace app

// --input-list ... --pack: this shard's inputs packed (pack_batch.h).
//
// Letters: B batch, S sequence (queries), T keys, O out size.
#include "modes/pack_batch.h"

#include <spdlog/spdlog.h>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/key_stats.h"
#include "attn/map_summary.h"
#include "attn/npy.h"
#include "attn/output.h"
#include "attn/sha256.h"
#include "cli/progress.h"
#include "cli/timing.h"
#include "modes/input_list_manifest.h"
#include "modes/input_prefetch.h"
#include "modes/pack_files.h"

namespace app {
namespace {

// An input's results up to this size are staged in memory before they are
// appended to the pack (OutputDir::stage_in_memory); larger ones (maps of
// long inputs) in a hidden folder in the pack's.
constexpr std::size_t kStagedInMemoryBytes = std::size_t(64) << 20;

// The files a pack holds for this run's flags, context.npy first.
std::vector<PackedKind> packed_kinds(const Options& opt, const attn::Config& cfg) {
  std::vector<PackedKind> kinds = {{"context.npy", "<f4", 4, false}};
  if (cfg.output_attention) kinds.push_back({"attention.npy", "<f4", 4, true});
  if (opt.top_k) {
    kinds.push_back({"topk_values.npy", "<f4", 4, false});
    kinds.push_back({"topk_indices.npy", "<i8", 8, false});
  }
  if (opt.summary) kinds.push_back({"summary.npy", "<f4", 4, false});
  if (opt.key_stats) kinds.push_back({"key_stats.npy", "<f4", 4, false});
  return kinds;
}

// B batch entries and S queries of an input, from its context's shape as the
// folder layout writes it: (S, O), (B, S, O), or (S, B, O) with batch_first false.
std::pair<std::size_t, std::size_t> batch_and_queries(const nlohmann::json& context_shape,
                                                      bool batch_first) {
  const auto s = context_shape.get<std::vector<std::size_t>>();
  if (s.size() == 2) return {1, s[0]};
  return batch_first ? std::pair{s[0], s[1]} : std::pair{s[1], s[0]};
}

}  // namespace

nlohmann::json list_identity(const std::vector<ListEntry>& entries) {
  std::string paths;
  for (const ListEntry& e : entries) paths += e.path + "\n";
  return {{"inputs", entries.size()}, {"sha256", attn::sha256_hex(paths)}};
}

int run_packed_list(const PackedBatch& b) {
  const Options& opt = b.opt;
  const attn::Config& cfg = b.cfg;
  const std::string dir = cfg.output_dir + "/" + pack_folder_name(b.shard.k, b.shard.n);
  nlohmann::json about = {
      {"input_list", b.list},
      {"list_inputs", b.entries.size()},
      {"shard", {{"k", b.shard.k}, {"n", b.shard.n}}},
      {"config", cfg.file},
      {"weights", b.session.model().weights_source},
      {"layout", attn::layout_name(b.session.model().layout)},
      {"context_layout", cfg.batch_first ? "rows of (B, S, O), B*S per input"
                                         : "rows of (S, B, O), S*B per input (batch_first false)"}};
  if (opt.summary) about["summary_columns"] = attn::summary_column_names();
  if (opt.key_stats) about["key_stats_columns"] = attn::key_stats_column_names();
  PackWriter pack(dir, packed_kinds(opt, cfg), b.fingerprint, about);

  Progress progress("inputs", b.mine.size(), Progress::wanted(opt.quiet));
  auto pending_since = Clock::now();
  std::size_t packed = 0, skipped = 0, failed = 0;
  int first_failure = 0;
  // What an earlier run packed is skipped; the rest is read ahead, each input
  // while the one before it computes.
  InputPrefetch inputs(
      b.mine, [&](const ListEntry& e) { return pack.done(e.index); },
      [&](const ListEntry& e) { return load_list_entry(cfg, b.lo, opt.allow_nonfinite, e); });
  // One input (b.mine[i]): computed and staged as the folder layout writes it (in
  // memory, or past kStagedInMemoryBytes in a hidden folder in the pack; never
  // committed), then appended to the pack.
  auto pack_entry = [&](std::size_t i) {
    const ListEntry& e = *b.mine[i];
    SessionInput in = inputs.take(i);
    attn::OutputDir staged(dir + "/.attn-run-input", dir);
    staged.stage_in_memory(kStagedInMemoryBytes);
    JobPlan plan;
    plan.write_maps = cfg.output_attention;
    plan.lent_x = &in.x;  // read for its shape only from here on
    const JobResult res = forward_list_entry(b.session, in, plan, &staged, e.path);
    const nlohmann::json run = b.session.stage(staged, in, res, cfg.output_attention);
    const auto [B, S] = batch_and_queries(run["shapes"]["context"], cfg.batch_first);
    pack.append(staged, e, B, S, in.keys());
  };
  try {
    for (std::size_t i = 0; i < b.mine.size(); ++i) {
      const ListEntry* e = b.mine[i];
      if (inputs.skipped(i)) {  // committed by an earlier run of these settings
        ++skipped;
        progress.advance(1);
        continue;
      }
      if (pack.pending() == 0) pending_since = Clock::now();
      try {
        pack_entry(i);
        ++packed;
      } catch (const attn::Error& err) {
        // --keep-going: no rows, an index row with the exit code; a write
        // error (74: the disk) would fail every input after it, so it ends the batch.
        if (!opt.keep_going || err.code() == attn::Exit::io) throw;
        spdlog::error("{}", attn::printable(err.what()));
        pack.append_failure(*e, int(err.code()), err.what());
        ++failed;
        if (!first_failure) first_failure = int(err.code());
      }
      if (pack.pending() >= kCommitGroupInputs ||
          ms_since(pending_since) >= kCommitGroupSeconds * 1e3)
        pack.commit();
      progress.advance(1);
    }
    pack.commit();
  } catch (...) {
    pack.commit();  // the inputs that finished before the error
    throw;
  }
  progress.finish();
  spdlog::info("packed {} input{} into {}/ ({} packed before)", packed, packed == 1 ? "" : "s",
               attn::printable(dir), skipped);
  if (!failed) return 0;
  spdlog::error(
      "{} of {} inputs failed (each listed above, and in {}/manifest.json with its error; "
      "index.csv has their rows); a rerun computes only those; exit status {}, the first "
      "failure's",
      failed, b.mine.size(), attn::printable(dir), first_failure);
  return first_failure;
}

}  // namespace app

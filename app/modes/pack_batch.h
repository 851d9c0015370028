// --input-list ... --pack: the batch's results packed per shard
// (docs/packed-shards.md): shard K of N appends every input's results to
// DIR/pack-K-of-N/ (pack_files.h) instead of a folder per input, so millions
// of inputs make a few files per shard. input_list.cpp loads the weights and
// checks DIR's manifest, then hands over here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/config.h"
#include "attn/run.h"
#include "cli/options.h"
#include "cli/shard.h"
#include "modes/input_list_file.h"
#include "modes/run_session.h"

namespace app {

// What run_input_list has set up for this shard's inputs.
struct PackedBatch {
  const Options& opt;
  const attn::Config& cfg;
  const Shard& shard;
  const std::string& list;
  const std::vector<ListEntry>& entries;  // the whole list
  const std::vector<const ListEntry*>& mine;
  const RunSession& session;
  const attn::LoadOptions& lo;
  nlohmann::json fingerprint;  // DIR's, which each pack's manifest keeps too
};

// Runs this shard's inputs not packed yet, committing them in groups.
// Returns 0, or under --keep-going the first failure's exit code.
int run_packed_list(const PackedBatch& b);

// The list as a pack's fingerprint records it (its entries' count and the
// SHA-256 of their paths): a pack's rows are found by list index, so another
// list into the same out-dir is refused (73) rather than mixed.
nlohmann::json list_identity(const std::vector<ListEntry>& entries);

}  // namespace app

// The --input-list file: one .npy path per line, relative to the list's own
// folder; blank lines and lines starting with # are skipped. Shared by the
// run over a list (input_list.cpp) and the merge of its shards' summaries
// (merge_shards.cpp), so both count lines the same way.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace app {

struct ListEntry {
  std::string path;       // resolved against the list's folder
  std::string written;    // as written in the list
  std::size_t line = 0;   // 1-based, for messages
  std::size_t index = 0;  // among non-blank, non-comment lines, from 0 (the shard rule)
  std::string name;       // file name without .npy: the result folder
};

// The entries of `list` ("-": standard input; it and a FIFO such as <(...)
// hold paths relative to the working folder). Exit 65 for an empty list, a NUL byte in a line, an
// entry that names no file, one named like the batch's own file, or two entries
// that would share a result folder; 66 when unreadable.
std::vector<ListEntry> read_list(const std::string& list);

// The batch's bookkeeping file beside the result folders: "batch.json" for
// an unsharded run (or the merge of its shards), "batch-K-of-N.json" for
// shard K of N. Batches written before these names used "summary.json" and
// "summary-K-of-N.json", which are still read (and refused as input names).
inline constexpr const char* kBatchFile = "batch.json";
std::string shard_batch_name(std::size_t k, std::size_t n);

struct ShardFileName {
  std::size_t k = 0, n = 0;
  bool old_name = false;  // "summary-K-of-N.json"
};
// K and N of a shard's batch file name, either spelling (1-9 digits each); nullopt otherwise.
std::optional<ShardFileName> parse_shard_batch_name(const std::string& name);

}  // namespace app

// The --input-list file: one .npy path per line, relative to the list's own
// folder; blank lines and lines starting with # are skipped. Shared by the
// run over a list (input_list.cpp) and the merge of its shards' summaries
// (merge_summaries.cpp), so both count lines the same way.
#pragma once

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
// entry that names no file, one named like a summary file, or two entries
// that would share a result folder; 66 when unreadable.
std::vector<ListEntry> read_list(const std::string& list);

// "summary-K-of-N.json": what shard K of N writes beside the result folders.
std::string shard_summary_name(std::size_t k, std::size_t n);

}  // namespace app

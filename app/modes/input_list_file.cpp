#include "modes/input_list_file.h"

#include <filesystem>
#include <map>

#include "attn/error.h"
#include "attn/files.h"

namespace app {
namespace {

constexpr std::size_t kMaxListBytes = std::size_t(64) << 20;

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// A batch file of any shard count, either spelling, so every shard of one
// list refuses the same entries.
bool is_batch_file_name(const std::string& name) {
  return name == kBatchFile || name == "summary.json" || parse_shard_batch_name(name).has_value();
}

// "123" -> 123: 1 to 9 decimal digits, nothing else.
std::optional<std::size_t> small_number(const std::string& s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoul(s);
}

// A list's line as messages quote it: at most 200 bytes (a line may be
// megabytes long).
std::string cut(const std::string& line) {
  return line.size() <= 200
             ? line
             : line.substr(0, 200) + "... (" + std::to_string(line.size()) + " bytes)";
}

}  // namespace

std::vector<ListEntry> read_list(const std::string& list) {
  // "-": the list on standard input. Its paths, and those of a list from a
  // pipe (<(ls *.npy) is /dev/fd/63), are relative to the working folder.
  std::error_code ec;
  const bool stream = list == "-" || std::filesystem::is_fifo(list, ec);
  const auto bytes =
      list == "-" ? attn::read_stdin(kMaxListBytes) : attn::read_file(list, kMaxListBytes);
  const std::string text(bytes.begin(), bytes.end());
  const std::string base = stream ? "" : folder_of(list);
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
                                              ": expected a path to a .npy file, found '" +
                                              cut(line) + "'");
    entries.push_back(std::move(e));
  }
  if (entries.empty())
    throw attn::Error(attn::Exit::data, list +
                                            ": no inputs (one .npy path per line; blank lines "
                                            "and lines starting with # are skipped)");
  // Every input of the whole list, not just this shard, so all shards agree.
  std::map<std::string, const ListEntry*> seen;
  for (const auto& e : entries) {
    if (is_batch_file_name(e.name))
      throw attn::Error(attn::Exit::data, list + ": input '" + cut(e.written) + "' (line " +
                                              std::to_string(e.line) +
                                              ") would write its results to '" + e.name +
                                              "/', the name of the batch's own file; "
                                              "rename it");
    auto [it, fresh] = seen.emplace(e.name, &e);
    if (!fresh)
      throw attn::Error(attn::Exit::data, list + ": inputs '" + cut(it->second->written) +
                                              "' (line " + std::to_string(it->second->line) +
                                              ") and '" + cut(e.written) + "' (line " +
                                              std::to_string(e.line) +
                                              ") would both write their results to '" +
                                              cut(e.name) + "/'; rename one");
  }
  return entries;
}

std::string shard_batch_name(std::size_t k, std::size_t n) {
  return "batch-" + std::to_string(k) + "-of-" + std::to_string(n) + ".json";
}

std::optional<ShardFileName> parse_shard_batch_name(const std::string& name) {
  const std::string tail = ".json";
  for (const std::string head : {"batch-", "summary-"}) {
    if (name.size() <= head.size() + tail.size() || name.rfind(head, 0) != 0 ||
        name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
      continue;
    const std::string mid = name.substr(head.size(), name.size() - head.size() - tail.size());
    const auto of = mid.find("-of-");
    if (of == std::string::npos) return std::nullopt;
    const auto k = small_number(mid.substr(0, of)), n = small_number(mid.substr(of + 4));
    if (!k || !n) return std::nullopt;
    return ShardFileName{*k, *n, head == "summary-"};
  }
  return std::nullopt;
}

}  // namespace app

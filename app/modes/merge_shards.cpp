// --merge-shards DIR: after N shards of one --input-list run (GNU parallel,
// xargs -P, a Slurm job array), join their DIR/batch-K-of-N.json into
// DIR/batch.json, the file one unsharded run writes (shard files an earlier
// attn-run named summary-K-of-N.json are read too). An input with no result
// (its shard's file is absent, or its folder is gone) fails the merge with
// one line naming those inputs and the shards to resubmit, and nothing is
// written.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"
#include "attn/output.h"
#include "modes/head_stats_tables.h"
#include "modes/input_list_file.h"
#include "modes/modes.h"
#include "modes/pack_files.h"

namespace app {
namespace {

namespace fs = std::filesystem;
using attn::Error;
using attn::Exit;
using nlohmann::json;

constexpr std::size_t kMaxBatchFileBytes = std::size_t(256) << 20;
constexpr std::size_t kListedMissing = 8;  // inputs named in the error line

struct ShardFile {
  std::size_t k = 0, n = 0;
  std::string file;  // "batch-K-of-N.json"
  json body;
};

// The fields the merge reads, with the types --input-list writes.
bool is_shard_batch_file(const json& j) {
  if (!j.is_object() || !j.contains("list_inputs") || !j["list_inputs"].is_number_unsigned() ||
      !j.contains("inputs") || !j["inputs"].is_array())
    return false;
  return std::all_of(j["inputs"].begin(), j["inputs"].end(), [](const json& in) {
    return in.is_object() && in.contains("index") && in["index"].is_number_unsigned() &&
           in.contains("dir") && in["dir"].is_string();
  });
}

// A result folder's name as --input-list writes it: one plain name inside
// DIR (its input's file name without .npy). Anything else ("../outside", an
// absolute path, "a/b") would point the merged batch file outside DIR: "" when
// fine, else why not.
std::string bad_folder_name(const std::string& name) {
  if (name.empty()) return "an empty name";
  if (name == "." || name == "..") return "not a folder inside the out-dir";
  if (name.find('/') != std::string::npos) return "a path, not a folder name inside the out-dir";
  if (name.find('\0') != std::string::npos) return "a NUL character";
  if (name.rfind(".attn-run-tmp-", 0) == 0) return "a staging folder of attn-run";
  return "";
}

double number_or_zero(const json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
}

// The split a batch's manifest records (--input-list keeps it in
// DIR/manifest.json): N shards and the array's first task id.
struct Split {
  std::size_t n = 1, first_task = 0, step = 1;
  std::string scheduler;  // "" when not recorded (or --shard K/N)
};
std::optional<Split> manifest_split(const std::string& dir) {
  const std::string path = dir + "/manifest.json";
  if (!fs::exists(path)) return std::nullopt;
  const auto bytes = attn::read_file(path, kMaxBatchFileBytes);
  const json m = json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (!m.is_object() || !m.contains("split") || !m["split"].is_object()) return std::nullopt;
  const json& s = m["split"];
  if (!s.contains("n") || !s["n"].is_number_unsigned() || s["n"].get<std::size_t>() == 0)
    return std::nullopt;
  const auto number = [&](const char* key, std::size_t fallback) {
    return s.contains(key) && s[key].is_number_unsigned() ? s[key].get<std::size_t>() : fallback;
  };
  return Split{s["n"].get<std::size_t>(), number("first_task", 0),
               std::max<std::size_t>(1, number("step", 1)),
               s.contains("scheduler") && s["scheduler"].is_string()
                   ? s["scheduler"].get<std::string>()
                   : ""};
}

// DIR's batch-K-of-N.json files, read and checked to come from one split
// of one list (the batch's `split` when known): the stale ones are named.
std::vector<ShardFile> read_shard_files(const std::string& dir, const std::optional<Split>& split) {
  if (!attn::is_directory(dir))
    throw Error(Exit::no_input, attn::printable(dir) +
                                    ": not a folder (expected the --out-dir "
                                    "of a sharded --input-list run)");
  std::vector<ShardFile> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const std::optional<ShardFileName> shard = parse_shard_batch_name(name);
    // An earlier attn-run's name for the same shard gives way to this one's.
    if (!shard || (shard->old_name && fs::exists(dir + "/" + shard_batch_name(shard->k, shard->n))))
      continue;
    ShardFile s{shard->k, shard->n, name, {}};
    const std::string path = dir + "/" + name;
    const auto bytes = attn::read_file(path, kMaxBatchFileBytes);
    s.body = json::parse(bytes.begin(), bytes.end(), nullptr, false);
    if (!is_shard_batch_file(s.body))
      throw Error(Exit::data, attn::printable(path) +
                                  ": not a batch file written by attn-run --input-list --shard");
    for (std::size_t i = 0; i < s.body["inputs"].size(); ++i) {
      const std::string folder = s.body["inputs"][i]["dir"].get<std::string>();
      const std::string why = bad_folder_name(folder);
      if (!why.empty())
        throw Error(Exit::data, attn::printable(path) + ": inputs[" + std::to_string(i) +
                                    "].dir \"" + attn::printable(folder) + "\" is " + why +
                                    " (expected a result folder's name)");
    }
    out.push_back(std::move(s));
  }
  if (ec) throw Error(Exit::no_input, attn::printable(dir) + ": cannot list: " + ec.message());
  if (out.empty())
    throw Error(Exit::no_input, attn::printable(dir) +
                                    ": no batch-K-of-N.json (written by --input-list ... "
                                    "--shard K/N); nothing to merge");
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.k < b.k; });
  // The batch's split: its manifest's, else the N most shard files have.
  std::map<std::size_t, std::size_t> files_of;  // N -> shard files of that split
  for (const ShardFile& s : out) ++files_of[s.n];
  std::size_t n = split ? split->n : 0;
  for (const auto& [each, count] : files_of)
    if (!split && (n == 0 || count > files_of[n])) n = each;
  std::string stale;
  for (const ShardFile& s : out)
    if (s.n != n || s.k >= s.n) stale += (stale.empty() ? "" : ", ") + s.file;
  if (!stale.empty())
    throw Error(Exit::data, attn::printable(dir) +
                                ": shard files of different splits; the batch is split " +
                                std::to_string(n) + " ways (" +
                                (split ? std::string("manifest.json") : "most shard files") +
                                "): remove the stale ones: " + stale);
  const ShardFile& first = out.front();
  for (const ShardFile& s : out) {
    for (const char* key : {"input_list", "list_inputs", "config"})
      if (s.body.value(key, json()) != first.body.value(key, json()))
        throw Error(Exit::data, attn::printable(dir) + ": " + first.file + " and " + s.file +
                                    " disagree on \"" + key + "\" (runs of different lists)");
  }
  return out;
}

// What each list entry is, from the list itself (`list`, as the shards
// were given it) when it can still be read; none (inputs named by index)
// otherwise. Exit 65 when it holds another count than the shards ran.
std::vector<ListEntry> list_entries(const std::string& dir, const json& list, std::size_t count) {
  std::vector<ListEntry> entries;
  try {
    // A list given on standard input ("-") or through a pipe (<(...) is
    // /dev/fd/N) cannot be read again.
    const auto once = [](const std::string& l) {
      return l == "-" || l.rfind("/dev/fd/", 0) == 0 || l.rfind("/proc/", 0) == 0;
    };
    if (list.is_string() && !once(list.get<std::string>()))
      entries = read_list(list.get<std::string>());
  } catch (const Error& e) {
    spdlog::warn("{}: the input list cannot be read ({}); naming missing inputs by index",
                 attn::printable(dir), attn::printable(e.what()));
  }
  if (!entries.empty() && entries.size() != count)
    throw Error(Exit::data, attn::printable(list.get<std::string>()) + ": holds " +
                                std::to_string(entries.size()) +
                                " inputs now; the shards counted " + std::to_string(count) +
                                " (the list changed since the run)");

  return entries;
}

// One line naming the list entries with no result (by list index) and the
// shards to resubmit, as the batch's array takes them (exit 66).
Error no_result(const std::string& dir, const std::vector<std::size_t>& missing, std::size_t count,
                std::size_t n, const std::vector<ListEntry>& entries,
                const std::optional<Split>& split) {
  std::set<std::size_t> resubmit;
  for (std::size_t i : missing) resubmit.insert(i % n);
  const std::size_t first_task = split ? split->first_task : 0;
  const std::size_t step = split ? split->step : 1;
  std::string names;
  for (std::size_t j = 0; j < missing.size() && j < kListedMissing; ++j) {
    const std::size_t i = missing[j];
    names += (j ? ", " : "") + (entries.empty() ? "entry " + std::to_string(i)
                                                : attn::printable(entries[i].written) + " (line " +
                                                      std::to_string(entries[i].line) + ")");
  }
  if (missing.size() > kListedMissing)
    names += " and " + std::to_string(missing.size() - kListedMissing) + " more";
  // Runs of consecutive shards as ranges, as Slurm's --array takes them:
  // "1-23" rather than 23 numbers, "0,2-4,7" for gaps.
  // The array's task ids are its first id + K * its step (--array=1-16: K
  // = ID - 1; Grid Engine's -t 1-31:2: K = (ID - 1) / 2).
  const auto ranges = [&](std::size_t offset, std::size_t step) {
    std::string ks;
    for (auto it = resubmit.begin(); it != resubmit.end();) {
      const std::size_t first = *it;
      std::size_t last = first;
      while (++it != resubmit.end() && *it == last + 1) ++last;
      ks += (ks.empty() ? "" : ",") + std::to_string(offset + first * step) +
            (last > first ? "-" + std::to_string(offset + last * step) +
                                (step > 1 ? ":" + std::to_string(step) : std::string())
                          : std::string());
    }
    return ks;
  };
  const std::string ks = ranges(0, 1), tasks = ranges(first_task, step);
  const std::string scheduler = split ? split->scheduler : "";
  const std::string array = scheduler.empty() || scheduler == "Slurm"
                                ? "a Slurm array: --array=" + tasks
                                : "the " + scheduler + " array's task ids " + tasks;
  return Error(Exit::no_input, attn::printable(dir) + ": " + std::to_string(missing.size()) +
                                   " of " + std::to_string(count) +
                                   " inputs have no result: " + names + "; resubmit shard(s) " +
                                   ks + " of " + std::to_string(n) + " (--shard K/" +
                                   std::to_string(n) + "; " + array + ")");
}

// DIR's pack-K-of-N folders (--input-list ... --pack), sorted by K.
std::vector<std::pair<std::size_t, std::size_t>> pack_folders(const std::string& dir) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec))
    if (const auto kn = parse_pack_folder_name(it->path().filename().string());
        kn && attn::is_directory(it->path().string()))
      out.push_back(*kn);
  std::sort(out.begin(), out.end());
  return out;
}

bool holds_packs(const std::string& dir) {
  return attn::is_directory(dir) && !pack_folders(dir).empty();
}

// --merge-shards over packs: every list entry packed exactly once (exit code
// 0) across the packs of one split, or the missing named with the shards to
// resubmit (66); then DIR/index.csv, each input's row with its pack. No data
// is copied: the packs stay where they are.
int merge_packs(const std::string& dir, const std::optional<Split>& split) {
  const auto folders = pack_folders(dir);
  std::map<std::size_t, std::size_t> packs_of;  // N -> pack folders of that split
  for (const auto& [k, n] : folders) ++packs_of[n];
  std::size_t n = split ? split->n : 0;
  for (const auto& [each, count] : packs_of)
    if (!split && (n == 0 || count > packs_of[n])) n = each;
  std::string stale;
  for (const auto& [k, each] : folders)
    if (each != n || k >= n) stale += (stale.empty() ? "" : ", ") + pack_folder_name(k, each);
  if (!stale.empty())
    throw Error(Exit::data, attn::printable(dir) +
                                ": packs of different splits; the batch is split " +
                                std::to_string(n) + " ways: remove the stale ones: " + stale);
  json list, columns;
  std::size_t count = 0;
  struct Packed {
    std::string pack;
    std::vector<std::int64_t> row;
  };
  std::map<std::size_t, Packed> done;  // by list index
  for (const auto& [k, each] : folders) {
    const std::string name = pack_folder_name(k, n);
    const PackIndex p = read_pack_index(dir + "/" + name);
    if (p.manifest.is_null()) continue;  // nothing committed: its inputs are missing
    if (columns.is_null()) {
      list = p.manifest.value("input_list", json());
      count = p.manifest.value("list_inputs", std::size_t(0));
      columns = p.manifest["index"]["columns"];
    } else if (p.manifest.value("input_list", json()) != list ||
               p.manifest.value("list_inputs", std::size_t(0)) != count ||
               p.manifest["index"]["columns"] != columns) {
      throw Error(Exit::data, attn::printable(dir) + ": " + name +
                                  " is a pack of another list or other outputs than the others");
    }
    for (std::size_t r = 0; r < p.rows.size() / p.columns; ++r) {
      const std::int64_t* row = p.rows.data() + r * p.columns;
      const std::size_t i = std::size_t(row[0]);
      if (row[9] != 0 || row[0] < 0 || i >= count) continue;  // a failure, retried later
      if (done.count(i))
        throw Error(Exit::data, attn::printable(dir) + ": list entry " + std::to_string(i) +
                                    " is packed twice, in " + done[i].pack + " and " + name);
      done[i] = {name, std::vector<std::int64_t>(row, row + p.columns)};
    }
  }
  if (columns.is_null())
    throw Error(Exit::no_input, attn::printable(dir) +
                                    ": no pack holds a committed input yet; run its shards "
                                    "(--shard K/" +
                                    std::to_string(n) + ") first");
  const std::vector<ListEntry> entries = list_entries(dir, list, count);
  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < count; ++i)
    if (!done.count(i)) missing.push_back(i);
  if (!missing.empty()) throw no_result(dir, missing, count, n, entries, split);

  std::string csv = "name,path,pack";
  for (const json& c : columns) csv += "," + c.get<std::string>();
  csv += "\n";
  for (const auto& [i, packed] : done) {
    csv += entries.empty()
               ? "entry " + std::to_string(i) + ","
               : pack_csv_field(entries[i].name) + "," + pack_csv_field(entries[i].path);
    csv += "," + packed.pack;
    for (std::int64_t v : packed.row) csv += "," + std::to_string(v);
    csv += "\n";
  }
  attn::OutputDir out(dir);
  out.add("index.csv", csv);
  out.commit();
  spdlog::info("merged the index of {} packs ({} inputs) into {}/index.csv", folders.size(), count,
               attn::printable(dir));
  return 0;
}

}  // namespace

int run_merge_shards(const Options& opt) {
  const std::string& dir = *opt.merge_dir;
  const std::optional<Split> split = manifest_split(dir);
  if (holds_packs(dir)) return merge_packs(dir, split);
  const std::vector<ShardFile> shards = read_shard_files(dir, split);
  const json& first = shards.front().body;
  const std::size_t n = shards.front().n;
  const std::size_t count = first["list_inputs"].get<std::size_t>();

  const std::vector<ListEntry> entries =
      list_entries(dir, first.value("input_list", json()), count);

  std::map<std::size_t, json> done;  // by list index
  for (const ShardFile& s : shards)
    for (const json& in : s.body["inputs"]) {
      const std::size_t i = in["index"].get<std::size_t>();
      const std::string folder = dir + "/" + in["dir"].get<std::string>();
      if (i < count && attn::is_directory(folder) && fs::exists(folder + "/context.npy"))
        done[i] = in;
    }

  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < count; ++i)
    if (!done.count(i)) missing.push_back(i);
  if (!missing.empty()) throw no_result(dir, missing, count, n, entries, split);

  json merged = first;  // version, config, list, weights, layout: the same in every shard
  merged["shard"] = nullptr;
  merged["inputs"] = json::array();
  for (auto& [i, in] : done) merged["inputs"].push_back(in);
  merged["merged_from"] = json::array();
  merged["shards"] = json::array();
  double total_ms = 0;
  for (const ShardFile& s : shards) {
    merged["merged_from"].push_back(s.file);
    merged["shards"].push_back({{"k", s.k},
                                {"n", s.n},
                                {"threads", s.body.value("threads", json())},
                                {"load_weights_ms", s.body.value("load_weights_ms", json())},
                                {"total_ms", s.body.value("total_ms", json())}});
    total_ms += number_or_zero(s.body, "total_ms");
  }
  for (const char* per_shard : {"threads", "load_weights_ms", "total_ms"}) merged.erase(per_shard);
  merged["total_ms_all_shards"] = total_ms;

  attn::OutputDir out(dir);
  // --head-stats: every input's table merged, as an unsharded run writes it.
  std::vector<std::string> folders;
  bool head_stats = true;
  for (auto& [i, in] : done) {
    folders.push_back(in["dir"].get<std::string>());
    head_stats = head_stats && fs::exists(dir + "/" + folders.back() + "/head_stats.json");
  }
  if (head_stats && !folders.empty()) stage_batch_head_stats(out, dir, folders);
  out.add(kBatchFile, merged.dump(2) + "\n");
  out.commit();
  spdlog::info("merged {} shard files ({} inputs) into {}/{}", shards.size(), count,
               attn::printable(dir), kBatchFile);
  return 0;
}

}  // namespace app

#include "modes/input_list_manifest.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"
#include "attn/output.h"
#include "modes/input_list_file.h"
#include "modes/run_fingerprint.h"

namespace app {
namespace {

constexpr std::size_t kMaxManifestBytes = std::size_t(256) << 20;
constexpr const char* kManifestKind = "attn-run input-list manifest";
// 2: the fingerprint is one entry per setting (run_fingerprint.h).
constexpr int kManifestFormat = 2;

// The manifest on disk, or null when there is none. Exit 65 when unreadable as one.
nlohmann::json read_list_manifest(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return nullptr;
  const auto bytes = attn::read_file(path, kMaxManifestBytes);
  nlohmann::json m = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (!m.is_object() || m.value("kind", "") != kManifestKind || !m.contains("fingerprint") ||
      !m.contains("inputs") || !m["inputs"].is_object())
    throw attn::Error(attn::Exit::cant_create,
                      attn::printable(path) +
                          ": not the manifest of an --input-list run (a --dump-weights folder?); "
                          "use another --out-dir");
  return m;
}

// An input file as the manifest records it: path, size, modification time.
nlohmann::json input_identity(const std::string& path) {
  nlohmann::json id = {{"path", path}};
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id["bytes"] = st.st_size;
    id["modified_ns"] = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  return id;
}

}  // namespace

ListManifest::ListManifest(std::string dir, nlohmann::json fingerprint)
    : dir_(std::move(dir)), fingerprint_(std::move(fingerprint)) {
  const std::string path = dir_ + "/manifest.json";
  const nlohmann::json m = read_list_manifest(path);
  if (m.is_null()) return;
  if (m.value("format", 1) != kManifestFormat)
    throw attn::Error(attn::Exit::cant_create,
                      attn::printable(path) +
                          ": made by an earlier attn-run, whose manifest does not record every "
                          "setting that changes the results; use another --out-dir, or remove "
                          "the folder to start over");
  check_same_settings(m["fingerprint"], fingerprint_, path);
  for (const auto& [name, entry] : m["inputs"].items())
    if (entry.is_object() && entry.value("state", "") == "done" &&
        attn::is_directory(dir_ + "/" + name) &&
        std::filesystem::exists(dir_ + "/" + name + "/context.npy"))
      inputs_[name] = entry;
}

bool ListManifest::done(const std::string& name, const std::string& path) const {
  if (!inputs_.contains(name)) return false;
  nlohmann::json now = input_identity(path);
  now["state"] = "done";
  return inputs_[name] == now;  // an input changed since is computed again
}

void ListManifest::mark_done(const std::vector<std::pair<std::string, std::string>>& inputs) {
  if (inputs.empty()) return;
  for (const auto& [name, path] : inputs) {
    inputs_[name] = input_identity(path);
    inputs_[name]["state"] = "done";
  }
  unwritten_ = true;
  write();
}

void ListManifest::mark_failed(const std::string& name, const std::string& path,
                               const std::string& error, int exit_code) {
  inputs_[name] = input_identity(path);
  inputs_[name]["state"] = "failed";
  inputs_[name]["error"] = error;
  inputs_[name]["exit_code"] = exit_code;
  unwritten_ = true;
}

void ListManifest::write() {
  if (!unwritten_) return;
  unwritten_ = false;
  nlohmann::json m = read_list_manifest(dir_ + "/manifest.json");
  if (m.is_null() || m["fingerprint"] != fingerprint_) {
    m = nlohmann::json::object();
    m["kind"] = kManifestKind;
    m["format"] = kManifestFormat;
    m["fingerprint"] = fingerprint_;
    m["inputs"] = nlohmann::json::object();
  }
  for (const auto& [name, entry] : inputs_.items()) m["inputs"][name] = entry;
  if (!split_.is_null() && !m.contains("split")) m["split"] = split_;
  attn::OutputDir out(dir_);
  out.add("manifest.json", m.dump(2) + "\n");
  out.commit();
}

namespace {

struct BatchSplit {
  std::size_t n = 1, first_task = 0, step = 1;
  std::string where;  // the file that says so, for messages
};

// The split DIR's batch was run with, if any: its manifest's, else the N of
// its shards' batch files (batch-K-of-N.json) when they agree.
std::optional<BatchSplit> batch_split(const std::string& dir) {
  const std::string path = dir + "/manifest.json";
  nlohmann::json m;
  try {
    m = read_list_manifest(path);
  } catch (const attn::Error&) {
    return std::nullopt;  // not a batch's: the manifest check names it
  }
  if (m.is_object() && m.contains("split") && m["split"].is_object()) {
    const nlohmann::json& s = m["split"];
    if (s.value("n", std::size_t(0)) >= 1)
      return BatchSplit{s.value("n", std::size_t(1)), s.value("first_task", std::size_t(0)),
                        std::max<std::size_t>(1, s.value("step", std::size_t(1))), path};
  }
  std::optional<BatchSplit> found;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::optional<ShardFileName> shard = parse_shard_batch_name(name);
    if (!shard) continue;
    const std::size_t n = shard->n;
    if (found && found->n != n) return std::nullopt;  // two splits: the merge names them
    found = BatchSplit{n, 0, 1, dir + "/" + name};
  }
  return found;
}

// The array's task ids as Slurm's --array and Grid Engine's -t write them: "1-8", "1-15:2".
std::string range(std::size_t first, std::size_t n, std::size_t step) {
  if (n == 1) return std::to_string(first);
  return std::to_string(first) + "-" + std::to_string(first + (n - 1) * step) +
         (step > 1 ? ":" + std::to_string(step) : std::string());
}

}  // namespace

Shard shard_in_batch(const Shard& s, const std::string& dir) {
  const std::optional<BatchSplit> split = batch_split(dir);
  if (!split || split->n == s.n) return s;
  const std::string batch =
      attn::printable(split->where) + ": this batch is split " + std::to_string(split->n) +
      " ways (--shard K/" + std::to_string(split->n) + ", K in 0.." + std::to_string(split->n - 1) +
      "; array tasks " + range(split->first_task, split->n, split->step) + ")";
  if (s.from_scheduler && s.n == 1) {  // one task resubmitted: it joins the batch
    const std::size_t offset = s.task - split->first_task;
    if (s.task < split->first_task || offset % split->step != 0 || offset / split->step >= split->n)
      throw attn::Error(attn::Exit::cant_create,
                        batch + "; " + s.given + " is not one of its tasks; use another --out-dir");
    Shard joined = s;
    joined.k = offset / split->step;
    joined.n = split->n;
    joined.first_task = split->first_task;
    joined.step = split->step;
    spdlog::info("--shard auto: task {} joins the batch in {} as shard {} of {}", s.task,
                 attn::printable(dir), joined.k, joined.n);
    return joined;
  }
  throw attn::Error(attn::Exit::cant_create, batch + "; " + s.given + " splits it " +
                                                 std::to_string(s.n) + " ways; give --shard K/" +
                                                 std::to_string(split->n) +
                                                 " (or the same array), or use another --out-dir");
}

}  // namespace app

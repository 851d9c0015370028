// Sharded checkpoints: model.safetensors.index.json (or pytorch_model.bin.index.json,
// its torch.save twin) as Hugging Face writes it,
//   {"metadata": {"total_size": N}, "weight_map": {"<key>": "<shard file>", ...}}
// with the shards beside it. The index is read whole (bounded); shards are
// opened by ShardTable when a key of theirs is first used: a *.safetensors
// shard as safetensors, any other as a torch.save checkpoint.
#include "index/shards.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <set>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/state_dict.h"
#include "containers/readers.h"

namespace attn {

namespace {

constexpr std::size_t kMaxIndexBytes = std::size_t(64) << 20;

[[noreturn]] void shard_fail(const std::string& name, const std::string& what) {
  throw Error(Exit::data, name + ": " + what);
}

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

// A shard named by the index must be a plain relative path inside the
// index's folder: no absolute path, no ".." component, no NUL.
void check_shard_name(const std::string& index, const std::string& key, const std::string& file) {
  const std::string what = index + ": weight_map[" + in_quotes(key) + "]";
  if (file.empty()) shard_fail(what, "empty shard file name");
  if (file.find('\0') != std::string::npos)
    shard_fail(what, "NUL character in the shard file name");
  if (file[0] == '/')
    shard_fail(what, "shard " + in_quotes(file) +
                         " is an absolute path (expected a file beside the index)");
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = file.find('/', start);
    const std::string part = file.substr(start, end == std::string::npos ? end : end - start);
    if (part == "..")
      shard_fail(what, "shard " + in_quotes(file) + " lies outside the index's folder (\"..\")");
    if (end == std::string::npos) break;
    start = end + 1;
  }
}

}  // namespace

namespace detail {

std::shared_ptr<const Stored> ShardTable::lookup(const std::string& key) {
  const std::string& file = shard_of_.at(key);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = open_.find(file);
  if (it == open_.end()) {
    const std::string path = resolve_path(folder_, file);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
      throw Error(Exit::no_input, path + ": no such shard (" + index_ + " maps key " +
                                      in_quotes(key) + " to " + in_quotes(file) + ")");
    const bool st_shard =
        file.size() >= 12 && file.compare(file.size() - 12, 12, ".safetensors") == 0;
    StoredEntries shard = st_shard ? safetensors_entries(path) : torch_save_entries(path);
    // The index and the shard's header must agree on which keys it holds.
    std::map<std::string, std::shared_ptr<const Stored>> header;
    for (StoredEntry& e : shard) header.emplace(e.key, std::move(e.stored));
    for (const auto& [k, f] : shard_of_)
      if (f == file && !header.count(k))
        shard_fail(path, "shard lacks key " + in_quotes(k) + " that " + index_ + " maps to it");
    for (const auto& [k, stored] : header) {
      const auto m = shard_of_.find(k);
      if (m == shard_of_.end() || m->second != file)
        shard_fail(path, "shard holds key " + in_quotes(k) + " that " + index_ +
                             (m == shard_of_.end() ? " does not list"
                                                   : " maps to " + in_quotes(m->second)));
    }
    it = open_.emplace(file, std::move(header)).first;
  }
  return it->second.at(key);
}

}  // namespace detail

StateDict read_safetensors_index(const std::string& path) {
  const std::vector<std::uint8_t> text = read_file(path, kMaxIndexBytes);
  nlohmann::ordered_json j;
  try {
    std::set<std::string> seen;  // duplicate keys of weight_map (depth 2)
    bool in_map = false;
    auto no_duplicates = [&](int depth, nlohmann::ordered_json::parse_event_t event,
                             nlohmann::ordered_json& v) {
      using E = nlohmann::ordered_json::parse_event_t;
      if (depth == 1 && event == E::key) in_map = v.get<std::string>() == "weight_map";
      if (depth == 2 && in_map && event == E::key && !seen.insert(v.get<std::string>()).second)
        shard_fail(path, "weight_map lists key " + in_quotes(v.get<std::string>()) + " twice");
      return true;
    };
    j = nlohmann::ordered_json::parse(text.begin(), text.end(), no_duplicates);
  } catch (const nlohmann::json::exception& e) {
    shard_fail(path, std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    shard_fail(path, "expected a JSON object with a \"weight_map\" object of key -> shard file");
  const std::size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash);
  auto table = std::make_shared<detail::ShardTable>(path, folder);
  StateDict sd(path);
  for (const auto& item : j["weight_map"].items()) {
    const std::string& key = item.key();
    if (key.find('\0') != std::string::npos) shard_fail(path, "NUL character in a weight_map key");
    if (!item.value().is_string())
      shard_fail(path, "weight_map[" + in_quotes(key) + "]: expected a shard file name, found " +
                           item.value().dump());
    const std::string file = item.value().get<std::string>();
    check_shard_name(path, key, file);
    table->map(key, file);
    sd.add_sharded(key, table);
  }
  if (sd.empty()) shard_fail(path, "weight_map is empty");
  return sd;
}

}  // namespace attn

#include "modes/input_list_manifest.h"

#include <sys/stat.h>

#include <filesystem>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"
#include "attn/output.h"
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
  nlohmann::json m = read_list_manifest(dir_ + "/manifest.json");
  if (m.is_null() || m["fingerprint"] != fingerprint_) {
    m = nlohmann::json::object();
    m["kind"] = kManifestKind;
    m["format"] = kManifestFormat;
    m["fingerprint"] = fingerprint_;
    m["inputs"] = nlohmann::json::object();
  }
  for (const auto& [name, entry] : inputs_.items()) m["inputs"][name] = entry;
  attn::OutputDir out(dir_);
  out.add("manifest.json", m.dump(2) + "\n");
  out.commit();
}

}  // namespace app

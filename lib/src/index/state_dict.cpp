// The StateDict index (state_dict.h): lookups, prefix selection and reads
// that hand each tensor's bytes to the conversion engine (convert.cpp); and
// choosing the reader by what the path is (CONTRACT.md "weights").
#include "attn/state_dict.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "attn/error.h"
#include "attn/files.h"
#include "containers/readers.h"
#include "containers/stored.h"
#include "containers/torch_pickle.h"
#include "index/shards.h"

namespace attn {

namespace {

bool ends_with_ci(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(
      suffix.begin(), suffix.end(), s.end() - std::ptrdiff_t(suffix.size()),
      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

// The file starts as a zip archive or a legacy torch.save pickle does.
bool starts_torch_save(const std::string& path) {
  std::size_t size = 0;
  const int fd = open_regular_file(path, size);
  std::uint8_t head[16] = {};
  const ssize_t n = ::read(fd, head, sizeof head);
  ::close(fd);
  if (n < 4) return false;
  return std::memcmp(head, "PK\x03\x04", 4) == 0 ||
         detail::is_legacy_torch_save(head, std::size_t(n));
}

}  // namespace

void StateDict::put(std::string key, Entry e) {
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    it->second = std::move(e);
    return;
  }
  keys_.push_back(key);
  entries_.emplace(std::move(key), std::move(e));
}

void StateDict::add_stored(std::string key, std::shared_ptr<const detail::Stored> s) {
  Entry e;
  e.full_key = key;
  e.stored = std::move(s);
  put(std::move(key), std::move(e));
}

void StateDict::add_sharded(std::string key, std::shared_ptr<detail::ShardTable> shards) {
  Entry e;
  e.full_key = key;
  e.shards = std::move(shards);
  put(std::move(key), std::move(e));
}

void StateDict::add(std::string key, RawArray a) {
  add_stored(std::move(key),
             detail::stored_in_memory(a.dtype, std::move(a.shape), std::move(a.bytes)));
}

void StateDict::add(std::string key, Tensor t) {
  std::vector<std::uint8_t> bytes(t.size() * sizeof(float));
  if (!bytes.empty()) std::memcpy(bytes.data(), t.ptr(), bytes.size());
  t.data = {};
  add_stored(std::move(key),
             detail::stored_in_memory(DType::f4, std::move(t.shape), std::move(bytes)));
}

void StateDict::erase(const std::string& key) {
  if (entries_.erase(key) == 0) return;
  keys_.erase(std::find(keys_.begin(), keys_.end(), key));
}

const std::string& StateDict::file_key(const std::string& key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? key : it->second.full_key;
}

const StateDict::Entry& StateDict::entry(const std::string& key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) throw Error(Exit::data, source_ + ": no key \"" + key + "\"");
  return it->second;
}

const detail::Stored& StateDict::stored(const Entry& e) const {
  // A shard's entries live as long as its table, which the entry shares.
  const detail::Stored& s = e.stored ? *e.stored : *e.shards->lookup(e.full_key);
  if (!s.problem.empty()) throw Error(Exit::data, s.problem);
  return s;
}

const TensorInfo* StateDict::find(const std::string& key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return nullptr;
  return &stored(it->second).info;
}

void StateDict::read_rows(const std::string& key, std::size_t row0, std::size_t rows,
                          bool transposed, float* dst, bool allow_nonfinite) const {
  const Entry& e = entry(key);
  detail::read_stored_rows(stored(e), row0, rows, transposed, dst, allow_nonfinite, name_of(e));
}

void StateDict::read_row_list(const std::string& key, const std::size_t* ids, std::size_t n,
                              float* dst, bool allow_nonfinite, int threads) const {
  const Entry& e = entry(key);
  detail::read_stored_row_list(stored(e), ids, n, dst, allow_nonfinite, name_of(e), threads);
}

Tensor StateDict::read_f32(const std::string& key, bool allow_nonfinite) const {
  const Entry& e = entry(key);
  return detail::read_stored_f32(stored(e), allow_nonfinite, name_of(e));
}

RawArray StateDict::read_raw(const std::string& key) const {
  const Entry& e = entry(key);
  return detail::read_stored_raw(stored(e), name_of(e));
}

StateDict StateDict::select(const std::string& prefix) const {
  StateDict out(source_);
  for (const std::string& key : keys_) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    out.keys_.push_back(key.substr(prefix.size()));
    out.entries_.emplace(out.keys_.back(), entries_.at(key));
  }
  return out;
}

namespace {

StateDict from_entries(const std::string& source, detail::StoredEntries entries) {
  StateDict sd(source);
  for (detail::StoredEntry& e : entries) sd.add_stored(std::move(e.key), std::move(e.stored));
  return sd;
}

}  // namespace

StateDict read_npy_folder(const std::string& dir) {
  return from_entries(dir, detail::npy_folder_entries(dir));
}
StateDict read_npz(const std::string& path) {
  return from_entries(path, detail::npz_entries(path));
}
StateDict read_safetensors(const std::string& path) {
  return from_entries(path, detail::safetensors_entries(path));
}
StateDict read_torch_save(const std::string& path) {
  return from_entries(path, detail::torch_save_entries(path));
}
StateDict read_gguf_tensors(const std::string& path) {
  return from_entries(path, detail::gguf_entries(path));
}

StateDict StateDict::renamed(
    const std::vector<std::pair<std::string, std::string>>& renames) const {
  if (renames.empty()) return *this;
  StateDict out(source_);
  for (const std::string& key : keys_) {
    std::string name = key;
    for (const auto& [from, to] : renames)
      if (key.compare(0, from.size(), from) == 0) {
        name = to + key.substr(from.size());
        break;
      }
    const Entry& e = entries_.at(key);
    if (out.entries_.count(name))
      throw Error(Exit::data, source_ + ": keys \"" + out.entries_.at(name).full_key + "\" and \"" +
                                  e.full_key + "\" are both renamed to \"" + name +
                                  "\" (weights_rename)");
    out.keys_.push_back(name);
    out.entries_.emplace(name, e);
  }
  return out;
}

StateDict open_state_dict(const std::string& path) {
  struct stat st;
  if (path.empty() || ::stat(path.c_str(), &st) != 0) {
    const int err = path.empty() ? ENOENT : errno;
    if (err == ENOENT || err == ENOTDIR)
      throw Error(Exit::no_input, path + ": no such file or folder");
    throw Error(Exit::no_input, path + ": cannot open (" + std::strerror(err) + ")");
  }
  if (S_ISDIR(st.st_mode)) return read_npy_folder(path);
  if (ends_with_ci(path, ".npz")) return read_npz(path);
  if (ends_with_ci(path, ".safetensors")) return read_safetensors(path);
  if (ends_with_ci(path, ".gguf")) return read_gguf_tensors(path);
  if (ends_with_ci(path, ".safetensors.index.json") || ends_with_ci(path, ".bin.index.json"))
    return read_safetensors_index(path);
  // torch.save files go by many names (.pt, .pth, .bin, .ckpt, .tar):
  // recognized by their first bytes, a zip archive or the legacy magic.
  for (const char* ext : {".pt", ".pth", ".bin", ".ckpt"})
    if (ends_with_ci(path, ext)) return read_torch_save(path);
  if (starts_torch_save(path)) return read_torch_save(path);
  throw Error(Exit::data, path +
                              ": not a weights source (expected a folder of <key>.npy files, "
                              "an .npz archive, a .safetensors file, a *.safetensors.index.json "
                              "or *.bin.index.json, a torch.save checkpoint or a .gguf file)");
}

}  // namespace attn

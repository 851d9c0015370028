// The files a weights source reads from, with the length of each one's
// leading header (state_dict.h weight_source_files): what a batch's manifest
// fingerprints, so results made with other weights are never reused.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/state_dict.h"
#include "containers/gguf.h"

namespace attn {
namespace {

constexpr std::size_t kMaxListedIndexBytes = std::size_t(64) << 20;

bool has_suffix_ci(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(
      suffix.begin(), suffix.end(), s.end() - std::ptrdiff_t(suffix.size()),
      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

// Up to `n` bytes from the start of `path` (fewer when it is shorter).
std::vector<std::uint8_t> leading_bytes(const std::string& path, std::size_t n) {
  std::size_t size = 0;
  const int fd = open_regular_file(path, size);
  std::vector<std::uint8_t> out(std::min(n, size));
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t r = ::pread(fd, out.data() + got, out.size() - got, off_t(got));
    if (r <= 0) break;
    got += std::size_t(r);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

std::uint64_t load_le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | p[i];
  return v;
}

// The header a file starts with, by its kind; 0 when it has none (or it is
// malformed: the reader names that when the file is used).
std::size_t header_length(const std::string& path) {
  if (has_suffix_ci(path, ".safetensors")) {  // u64 length, then the JSON header
    const auto b = leading_bytes(path, 8);
    return b.size() == 8
               ? std::size_t(std::min<std::uint64_t>(load_le64(b.data()), SIZE_MAX - 8)) + 8
               : 0;
  }
  if (has_suffix_ci(path, ".npy")) {  // magic, version, header length, header
    const auto b = leading_bytes(path, 12);
    if (b.size() < 10 || std::memcmp(b.data(), "\x93NUMPY", 6) != 0) return 0;
    if (b[6] == 1) return 10 + (std::size_t(b[8]) | std::size_t(b[9]) << 8);
    if (b.size() < 12) return 0;
    return 12 + (std::size_t(b[8]) | std::size_t(b[9]) << 8 | std::size_t(b[10]) << 16 |
                 std::size_t(b[11]) << 24);
  }
  if (has_suffix_ci(path, ".gguf")) {  // metadata and tensor table: up to the data section
    try {
      return std::size_t(detail::read_gguf(path).data_offset());
    } catch (const Error&) {
      return 0;
    }
  }
  return 0;
}

}  // namespace

std::vector<SourceFile> weight_source_files(const std::string& path) {
  std::vector<std::string> paths;
  if (is_directory(path)) {  // a folder of <key>.npy files
    namespace fs = std::filesystem;
    std::error_code ec;
    for (auto it = fs::directory_iterator(path, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
        paths.push_back(resolve_path(path, name));
    }
    std::sort(paths.begin(), paths.end());
  } else {
    paths.push_back(path);
    if (has_suffix_ci(path, ".safetensors.index.json") || has_suffix_ci(path, ".bin.index.json")) {
      // The index and every shard it names (the reader checks the names).
      const auto bytes = read_file(path, kMaxListedIndexBytes);
      const auto index = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
      std::set<std::string> shards;
      if (index.is_object() && index.contains("weight_map") && index["weight_map"].is_object())
        for (const auto& [key, file] : index["weight_map"].items())
          if (file.is_string()) shards.insert(file.get<std::string>());
      const std::string folder = std::filesystem::path(path).parent_path().string();
      for (const std::string& s : shards) paths.push_back(resolve_path(folder, s));
    }
  }
  std::vector<SourceFile> out;
  for (const std::string& p : paths) out.push_back({p, header_length(p)});
  return out;
}

}  // namespace attn

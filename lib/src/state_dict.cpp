// Choosing the weights reader by what the path is (CONTRACT.md "weights"):
// a folder of <key>.npy files, an .npz archive (npz.cpp) or a .safetensors
// file (safetensors.cpp).
#include "attn/state_dict.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "attn/error.h"

namespace attn {

namespace {

bool ends_with_ci(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(
      suffix.begin(), suffix.end(), s.end() - std::ptrdiff_t(suffix.size()),
      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

}  // namespace

StateDict read_npy_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error(Exit::no_input, dir + ": cannot list the folder (" + ec.message() + ")");
  std::vector<std::string> names;
  for (const fs::directory_entry& e : it) {
    const std::string name = e.path().filename().string();
    // "<key>.npy" only; other files (README, config, .npz) are ignored.
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) names.push_back(name);
  }
  if (names.empty())
    throw Error(Exit::data, dir +
                                ": no .npy files in this folder (expected <key>.npy files, "
                                "e.g. Wqkv.weight.npy)");
  std::sort(names.begin(), names.end());
  StateDict sd;
  for (const std::string& name : names) {
    const std::string path = (dir.empty() || dir.back() == '/') ? dir + name : dir + "/" + name;
    sd.emplace(name.substr(0, name.size() - 4), read_npy(path));
  }
  return sd;
}

StateDict read_state_dict(const std::string& path) {
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
  throw Error(Exit::data, path +
                              ": not a weights source (expected a folder of <key>.npy files, "
                              "an .npz archive or a .safetensors file)");
}

}  // namespace attn

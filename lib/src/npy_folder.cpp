// A folder of <key>.npy files as a StateDict: "<dir>/<key>.npy" -> key.
#include <algorithm>
#include <filesystem>

#include "attn/error.h"
#include "attn/state_dict.h"

namespace attn {

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
  StateDict sd(dir);
  for (const std::string& name : names) {
    const std::string path = (dir.empty() || dir.back() == '/') ? dir + name : dir + "/" + name;
    sd.add(name.substr(0, name.size() - 4), read_npy(path));
  }
  return sd;
}

}  // namespace attn

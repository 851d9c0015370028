// .npy files opened lazily: the header is parsed from the mapped file and the
// data converted only when read. A folder of <key>.npy files gives one entry
// per file: "<dir>/<key>.npy" -> key.
#include <algorithm>
#include <filesystem>

#include "attn/error.h"
#include "containers/mapped_file.h"
#include "containers/npy_internal.h"
#include "containers/readers.h"
#include "containers/stored.h"

namespace attn {

namespace detail {

std::shared_ptr<const Stored> open_npy(const std::string& path) {
  // The header checked from the first bytes, before the file is mapped.
  return open_npy(MappedFile::open(
      path, [&](const FileEnds& e) { parse_npy_header_prefix(e.head, e.head_n, e.size, path); }));
}

std::shared_ptr<const Stored> open_npy(const std::shared_ptr<const MappedFile>& f) {
  const NpyHeader h =
      reading(*f, f->path(), [&] { return parse_npy_header(f->data(), f->size(), f->path()); });
  auto s = std::make_shared<Stored>();
  s->info.dtype = h.dtype;
  s->info.shape = h.shape;
  s->big_endian = h.big_endian;
  s->fortran_order = h.fortran_order;
  s->region = std::make_shared<MappedRegion>(f, h.data_offset, h.count * dtype_size(h.dtype));
  return s;
}

}  // namespace detail

RawArray read_npy(const std::string& path) {
  return detail::read_stored_raw(*detail::open_npy(path), path);
}

Tensor read_npy_f32(const std::string& path, bool allow_nonfinite) {
  return detail::read_stored_f32(*detail::open_npy(path), allow_nonfinite, path);
}

namespace detail {

StoredEntries npy_folder_entries(const std::string& dir) {
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
  StoredEntries entries;
  for (const std::string& name : names) {
    const std::string path = (dir.empty() || dir.back() == '/') ? dir + name : dir + "/" + name;
    std::shared_ptr<const detail::Stored> s;
    try {
      s = detail::open_npy(path);
    } catch (const Error& e) {
      // A malformed file is one bad tensor: only a run that uses it fails.
      // An unreadable one (Exit::no_input) fails at once.
      if (e.code() != Exit::data) throw;
      auto bad = std::make_shared<detail::Stored>();
      bad->problem = e.what();
      s = std::move(bad);
    }
    entries.push_back({name.substr(0, name.size() - 4), std::move(s)});
  }
  return entries;
}

}  // namespace detail

}  // namespace attn

// .npz archives as np.savez / np.savez_compressed write them: a ZIP file
// (PKWARE APPNOTE.TXT; Python's zipfile is the writer) whose members are
// "<key>.npy" images, stored (method 0) or deflated (method 8). NumPy opens
// every member with force_zip64=True, so local headers carry ZIP64 extra
// fields; archives past 4 GiB or 65,535 members also get the ZIP64 end
// records. The archive itself (directory, bounds, inflation, CRC) is read by
// zip_archive.cpp; here each member's .npy header is parsed.
#include <algorithm>

#include "attn/error.h"
#include "containers/fail.h"
#include "containers/mapped_file.h"
#include "containers/npy_internal.h"
#include "containers/readers.h"
#include "containers/zip_archive.h"

namespace attn {

using detail::fail;

namespace {

constexpr std::uint64_t kHeaderPrefix = 10000 + 12;  // magic, version, length, the largest header

}  // namespace

namespace detail {

StoredEntries npz_entries(const std::string& path) {
  const auto file = detail::MappedFile::open(
      path, [&](const detail::FileEnds& e) { detail::check_zip_end(e, path, ".npz"); });
  // Headers and members read from the mapping: a truncation meanwhile is the error.
  return detail::reading(*file, path, [&] {
    detail::ZipLimits limits;
    limits.max_total = std::uint64_t(16) << 30;  // all members, as NumPy would inflate them
    const std::vector<detail::ZipMember> members = detail::read_zip_members(*file, ".npz", limits);
    if (members.empty()) fail(path, "the .npz archive holds no arrays");
    for (const detail::ZipMember& m : members)
      if (m.name.size() <= 4 || m.name.compare(m.name.size() - 4, 4, ".npy") != 0)
        fail(path + ":" + m.name, "member is not a <key>.npy array as np.savez writes");

    StoredEntries entries;
    for (const detail::ZipMember& m : members) {
      const std::string what = path + ":" + m.name;
      const std::uint8_t* src = file->data() + m.data;
      auto st = std::make_shared<detail::Stored>();
      NpyHeader h;
      try {
        if (m.method == 0) {
          h = parse_npy_header(src, std::size_t(m.size), what);
        } else {
          // Only the start of the stream: enough for any header NumPy allows.
          const std::vector<std::uint8_t> head =
              detail::inflate_member(src, m, what, kHeaderPrefix);
          h = parse_npy_header_prefix(head.data(), head.size(), std::size_t(m.size), what);
        }
      } catch (const Error& e) {
        // The member's own .npy is bad: only a run that uses it fails.
        if (e.code() != Exit::data) throw;
        st->problem = e.what();
      }
      st->info.dtype = h.dtype;
      st->info.shape = h.shape;
      st->big_endian = h.big_endian;
      st->fortran_order = h.fortran_order;
      const std::size_t data = std::min<std::size_t>(h.data_offset, std::size_t(m.size));
      st->region =
          std::make_shared<detail::MemberRegion>(file, m, data, std::size_t(m.size) - data);
      entries.push_back({m.name.substr(0, m.name.size() - 4), std::move(st)});
    }
    return entries;
  });
}

}  // namespace detail

}  // namespace attn

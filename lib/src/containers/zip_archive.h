// ZIP archives as .npz (np.savez, Python's zipfile) and torch.save (PyTorch's
// PyTorchStreamWriter, miniz) write them (private to lib/src): the central
// directory parsed by hand (PKWARE APPNOTE.TXT, ZIP64 included), each member's
// local header checked, stored members read in place from the mapping and
// deflated ones inflated with zlib, bounded by what the directory declared.
//
// Hostile archives: every offset and size is checked against the file before
// use, members may not overlap or repeat, member count and declared sizes are
// bounded (a deflate stream cannot expand more than ~1032:1), and inflation
// stops one byte past the declared size, so nothing is ever allocated beyond
// what the central directory declared and the limits allow.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "containers/mapped_file.h"
#include "containers/stored.h"

namespace attn::detail {

struct ZipMember {
  std::string name;
  std::uint16_t flags = 0, method = 0;  // method 0 stored, 8 deflated
  std::uint32_t crc = 0;
  std::uint64_t comp = 0, size = 0, local = 0;
  std::uint64_t data = 0;  // start of the member's data in the file, from its local header
};

struct ZipLimits {
  std::uint64_t max_members = 10000;
  std::uint64_t max_total = UINT64_MAX;                        // declared sizes, all members
  std::uint64_t max_inflated_total = std::uint64_t(16) << 30;  // declared sizes, deflated members
};

// The members of the archive `file`, in directory order, each one located and
// checked: stored or deflated, not encrypted, no name twice, no overlap, the
// limits held. `kind` (".npz", "torch.save archive") names the format in
// messages; every error is Exit::data starting with the path (and member).
std::vector<ZipMember> read_zip_members(const MappedFile& file, const char* kind,
                                        const ZipLimits& limits);

// Exit::data unless the file's last bytes hold a zip end record (the same
// message read_zip_members gives): checked before the archive is mapped.
void check_zip_end(const FileEnds& ends, const std::string& path, const char* kind);

// The member's first `limit` bytes inflated (all of it, checked against its
// declared size, when limit >= m.size). `what` starts every error.
std::vector<std::uint8_t> inflate_member(const std::uint8_t* src, const ZipMember& m,
                                         const std::string& what, std::uint64_t limit);

// The whole member's bytes: in place for a stored member, inflated for a
// deflated one; the CRC-32 checked. `what` starts every error.
ByteView member_bytes(const std::shared_ptr<const MappedFile>& file, const ZipMember& m,
                      const std::string& what);

// Bytes [offset, offset + length) of one member, as a tensor's data: stored
// members are read in place from the mapping, deflated ones inflated when
// read. The CRC-32 of the whole member is checked on the first read (stored)
// or on every inflation. The caller checked that the span lies in the member.
class MemberRegion final : public Region {
 public:
  MemberRegion(std::shared_ptr<const MappedFile> f, ZipMember m, std::size_t offset,
               std::size_t length)
      : file_(std::move(f)), m_(std::move(m)), offset_(offset), length_(length) {}

  ByteView bytes(const std::string& name) const override;
  void done(std::size_t offset, std::size_t length) const override;
  void check_read(const std::string& name) const override { file_->check_intact(name); }

 private:
  std::shared_ptr<const MappedFile> file_;
  ZipMember m_;
  std::size_t offset_, length_;
  mutable std::atomic<bool> crc_checked_{false};
};

}  // namespace attn::detail

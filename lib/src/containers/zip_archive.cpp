// ZIP archives (zip_archive.h): the central directory, ZIP64 records, local
// headers, inflation and CRC-32, shared by the .npz and torch.save readers.
#include "containers/zip_archive.h"

#include <zlib.h>

#include <algorithm>
#include <set>

#include "attn/error.h"
#include "containers/fail.h"

namespace attn::detail {

namespace {

constexpr std::uint64_t kMaxRatio = 1100;    // deflate's limit is 1032:1
constexpr std::uint64_t kRatioSlack = 4096;  // tiny members compress badly
constexpr std::uint32_t kSigLocal = 0x04034b50, kSigCentral = 0x02014b50, kSigEnd = 0x06054b50,
                        kSigEnd64 = 0x06064b50, kSigLocator64 = 0x07064b50;

// Bounds-checked little-endian reads from the archive image.
struct Bytes {
  const std::uint8_t* p;
  std::size_t n;
  const std::string& name;
  const char* kind;

  void need(std::uint64_t off, std::uint64_t len, const char* what) const {
    if (off > n || len > n - off)
      fail(name,
           std::string("truncated or corrupt ") + kind + ": " + what + " lies outside the file");
  }
  std::uint64_t le(std::uint64_t off, int bytes) const {
    need(off, std::uint64_t(bytes), "a header field");
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t(p[off + i]) << (8 * i);
    return v;
  }
  std::uint16_t u16(std::uint64_t off) const { return std::uint16_t(le(off, 2)); }
  std::uint32_t u32(std::uint64_t off) const { return std::uint32_t(le(off, 4)); }
  std::uint64_t u64(std::uint64_t off) const { return le(off, 8); }
};

struct Directory {
  std::uint64_t count = 0, offset = 0, size = 0;
  std::uint64_t end = 0;  // where the central directory must end (first end record)
};

// The end-of-central-directory record is the last 22 bytes plus a comment of
// at most 65,535 bytes; its comment must reach the end of the file. `b` ends
// where the file ends (the whole file, or its last bytes); `file_size` is the
// whole file's. Its offset in `b`.
std::uint64_t find_end_record(const Bytes& b, std::uint64_t file_size) {
  if (file_size < 22)
    fail(b.name, std::string("not a zip archive (too short for a ") + b.kind + ")");
  const std::uint64_t lowest = b.n >= 22 + 65535 ? b.n - 22 - 65535 : 0;
  for (std::uint64_t off = b.n - 22 + 1; off-- > lowest;)
    if (b.u32(off) == kSigEnd && off + 22 + b.u16(off + 20) == b.n) return off;
  fail(b.name, "not a zip archive (no end of central directory record; truncated?)");
}

Directory find_directory(const Bytes& b, const ZipLimits& limits) {
  const std::uint64_t eocd = find_end_record(b, b.n);
  if (b.u16(eocd + 4) != 0 || b.u16(eocd + 6) != 0)
    fail(b.name, "multi-disk zip archives are not supported");
  Directory d;
  d.count = b.u16(eocd + 10);
  d.size = b.u32(eocd + 12);
  d.offset = b.u32(eocd + 16);
  d.end = eocd;
  // ZIP64: a locator just before the end record points at the ZIP64 end
  // record, whose 64-bit fields replace the saturated 16/32-bit ones.
  if (eocd >= 20 && b.u32(eocd - 20) == kSigLocator64) {
    const std::uint64_t rec = b.u64(eocd - 20 + 8);
    if (rec > eocd - 20 || eocd - 20 - rec < 56 || b.u32(rec) != kSigEnd64)
      fail(b.name, "corrupt zip archive: bad ZIP64 end of central directory record");
    if (b.u32(rec + 16) != 0 || b.u32(rec + 20) != 0)
      fail(b.name, "multi-disk zip archives are not supported");
    d.count = b.u64(rec + 32);
    d.size = b.u64(rec + 40);
    d.offset = b.u64(rec + 48);
    d.end = rec;
  }
  if (d.count > limits.max_members)
    fail(b.name, "archive declares " + std::to_string(d.count) +
                     " members, more than the limit of " + std::to_string(limits.max_members));
  if (d.offset > d.end || d.size > d.end - d.offset)
    fail(b.name, "corrupt zip archive: the central directory lies outside the file");
  return d;
}

// The ZIP64 extra field (id 1) holds, in this order, only the fields whose
// 32-bit (16-bit) slot is saturated: size, compressed size, local header
// offset, disk number.
void apply_zip64_extra(const Bytes& b, std::uint64_t extra, std::uint64_t extra_len, ZipMember& m,
                       bool size_sat, bool comp_sat, bool local_sat) {
  std::uint64_t off = extra;
  const std::uint64_t end = extra + extra_len;
  while (end - off >= 4) {
    const std::uint16_t id = b.u16(off), len = b.u16(off + 2);
    if (len > end - off - 4) fail(b.name, "corrupt zip archive: an extra field overruns its entry");
    if (id == 1) {
      std::uint64_t f = off + 4;
      const std::uint64_t fend = f + len;
      auto take = [&](std::uint64_t& v) {
        if (fend - f < 8) fail(b.name, "corrupt zip archive: ZIP64 extra field too short");
        v = b.u64(f);
        f += 8;
      };
      if (size_sat) take(m.size);
      if (comp_sat) take(m.comp);
      if (local_sat) take(m.local);
    }
    off += 4 + len;
  }
}

std::vector<ZipMember> read_directory(const Bytes& b, const Directory& d) {
  std::vector<ZipMember> members;
  std::uint64_t off = d.offset;
  const std::uint64_t end = d.offset + d.size;
  for (std::uint64_t i = 0; i < d.count; ++i) {
    if (end - off < 46 || b.u32(off) != kSigCentral)
      fail(b.name, "corrupt zip archive: central directory entry " + std::to_string(i) +
                       " is missing or cut off");
    ZipMember m;
    m.flags = b.u16(off + 8);
    m.method = b.u16(off + 10);
    m.crc = b.u32(off + 16);
    m.comp = b.u32(off + 20);
    m.size = b.u32(off + 24);
    const std::uint64_t name_len = b.u16(off + 28), extra_len = b.u16(off + 30),
                        comment_len = b.u16(off + 32);
    m.local = b.u32(off + 42);
    if (end - off - 46 < name_len + extra_len + comment_len)
      fail(b.name, "corrupt zip archive: central directory entry " + std::to_string(i) +
                       " overruns the directory");
    m.name.assign(reinterpret_cast<const char*>(b.p + off + 46), std::size_t(name_len));
    apply_zip64_extra(b, off + 46 + name_len, extra_len, m, m.size == 0xffffffffu,
                      m.comp == 0xffffffffu, m.local == 0xffffffffu);
    members.push_back(std::move(m));
    off += 46 + name_len + extra_len + comment_len;
  }
  return members;
}

// Checks the member's local header against the directory and finds its data.
void locate_data(const Bytes& b, const Directory& d, ZipMember& m, const std::string& what) {
  if (m.local > d.offset || d.offset - m.local < 30 || b.u32(m.local) != kSigLocal)
    fail(what, "corrupt zip archive: local header missing");
  const std::uint64_t name_len = b.u16(m.local + 26), extra_len = b.u16(m.local + 28);
  if (name_len != m.name.size() || std::string(reinterpret_cast<const char*>(b.p + m.local + 30),
                                               std::size_t(std::min<std::uint64_t>(
                                                   name_len, d.offset - m.local - 30))) != m.name)
    fail(what, "corrupt zip archive: local header name differs from the central directory");
  m.data = m.local + 30 + name_len + extra_len;
  if (m.data > d.offset || m.comp > d.offset - m.data)
    fail(what,
         std::string("truncated or corrupt ") + b.kind + ": member data lies outside the archive");
}

void check_crc(const std::uint8_t* p, std::size_t n, const ZipMember& m, const std::string& name) {
  if (std::uint32_t(crc32_z(0, p, n)) != m.crc) fail(name, "CRC-32 mismatch (archive corrupt)");
}

}  // namespace

std::vector<ZipMember> read_members(const MappedFile& file, const char* kind,
                                    const ZipLimits& limits);

void check_zip_end(const FileEnds& ends, const std::string& path, const char* kind) {
  find_end_record(Bytes{ends.tail, ends.tail_n, path, kind}, ends.size);
}

std::vector<ZipMember> read_zip_members(const MappedFile& file, const char* kind,
                                        const ZipLimits& limits) {
  return reading(file, file.path(), [&] { return read_members(file, kind, limits); });
}

std::vector<ZipMember> read_members(const MappedFile& file, const char* kind,
                                    const ZipLimits& limits) {
  const std::string& path = file.path();
  const Bytes b{file.data(), file.size(), path, kind};
  const Directory dir = find_directory(b, limits);
  std::vector<ZipMember> members = read_directory(b, dir);

  // Every member is validated before any is read, so a bad last member costs
  // nothing and the totals are bounded up front.
  std::uint64_t total = 0, inflated = 0;
  std::set<std::string> names;
  for (ZipMember& m : members) {
    const std::string what = path + ":" + m.name;
    if (!names.insert(m.name).second) fail(what, "member appears twice in the archive");
    if (m.flags & 1u) fail(what, "encrypted zip members are not supported");
    if (m.method != 0 && m.method != 8)
      fail(what, "compression method " + std::to_string(m.method) +
                     " is not supported (expected stored or deflated)");
    if (m.method == 0 && m.comp != m.size)
      fail(what, "stored member has compressed size " + std::to_string(m.comp) + " but size " +
                     std::to_string(m.size));
    if (m.method == 8 && (m.comp > (UINT64_MAX - kRatioSlack) / kMaxRatio ||
                          m.size > m.comp * kMaxRatio + kRatioSlack))
      fail(what, "declared size " + std::to_string(m.size) + " from " + std::to_string(m.comp) +
                     " compressed bytes exceeds the 1100:1 limit (zip bomb?)");
    if (m.size > limits.max_total - total)
      fail(path,
           "members declare more than " + std::to_string(limits.max_total) + " bytes in total");
    total += m.size;
    if (m.method == 8) {
      if (m.size > limits.max_inflated_total - inflated)
        fail(path, "compressed members declare more than " +
                       std::to_string(limits.max_inflated_total) + " bytes in total");
      inflated += m.size;
    }
    locate_data(b, dir, m, what);
  }
  // Members must not share bytes (overlapping entries are a zip-bomb trick).
  std::vector<const ZipMember*> by_offset;
  for (const ZipMember& m : members) by_offset.push_back(&m);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const ZipMember* x, const ZipMember* y) { return x->local < y->local; });
  for (std::size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->local < by_offset[i - 1]->data + by_offset[i - 1]->comp)
      fail(path + ":" + by_offset[i]->name, "member overlaps another member of the archive");
  return members;
}

std::vector<std::uint8_t> inflate_member(const std::uint8_t* src, const ZipMember& m,
                                         const std::string& what, std::uint64_t limit) {
  const bool whole = limit >= m.size;
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)  // raw deflate, as in zip members
    throw Error(Exit::software, what + ": zlib inflateInit2 failed");
  struct End {
    z_stream* zs;
    ~End() { inflateEnd(zs); }
  } end{&zs};
  constexpr std::uint64_t kChunk = std::uint64_t(1) << 30;  // avail_in/out are 32-bit
  // The buffer grows with the output actually produced (never past the
  // declared size), so a directory that merely claims a big size costs
  // nothing until the stream delivers it.
  std::vector<std::uint8_t> out(
      static_cast<std::size_t>(std::min<std::uint64_t>(std::min(m.size, limit), 1 << 24)));
  std::uint64_t in_left = m.comp;
  std::uint8_t spare = 0;  // one byte past the declared size: detects a larger member
  for (;;) {
    if (zs.avail_in == 0 && in_left > 0) {
      const std::uint64_t c = std::min(in_left, kChunk);
      zs.next_in = const_cast<Bytef*>(src + (m.comp - in_left));
      zs.avail_in = uInt(c);
      in_left -= c;
    }
    if (zs.avail_out == 0) {
      const std::uint64_t produced = zs.total_out;
      if (produced < m.size) {
        if (produced == out.size())
          out.resize(static_cast<std::size_t>(std::min<std::uint64_t>(m.size, 2 * out.size())));
        zs.next_out = out.data() + produced;
        zs.avail_out = uInt(std::min<std::uint64_t>(out.size() - produced, kChunk));
      } else {
        zs.next_out = &spare;
        zs.avail_out = 1;
      }
    }
    const int ret = inflate(&zs, Z_NO_FLUSH);
    if (!whole && zs.total_out >= limit) {
      out.resize(static_cast<std::size_t>(limit));
      return out;
    }
    if (zs.total_out > m.size)
      fail(what, "member inflates to more than its declared " + std::to_string(m.size) +
                     " bytes (zip bomb?)");
    if (ret == Z_STREAM_END) break;
    if (ret == Z_BUF_ERROR && zs.avail_out == 0) continue;  // more room next turn
    if (ret == Z_BUF_ERROR && zs.avail_in == 0 && in_left == 0)
      fail(what, "truncated compressed data");
    if (ret != Z_OK)
      fail(what, std::string("corrupt compressed data (") + (zs.msg ? zs.msg : "zlib error") + ")");
  }
  if (!whole) {  // a stream shorter than `limit`: the whole-member read reports it
    out.resize(static_cast<std::size_t>(zs.total_out));
    return out;
  }
  if (zs.total_out != m.size)
    fail(what, "member inflates to " + std::to_string(zs.total_out) + " bytes, declared " +
                   std::to_string(m.size));
  return out;
}

ByteView member_bytes(const std::shared_ptr<const MappedFile>& file, const ZipMember& m,
                      const std::string& what) {
  file->check_intact(what);
  const std::uint8_t* src = file->data() + m.data;
  return reading(*file, what, [&]() -> ByteView {
    if (m.method == 0) {
      check_crc(src, std::size_t(m.size), m, what);
      return {src, std::size_t(m.size), file};
    }
    auto image = std::make_shared<std::vector<std::uint8_t>>(inflate_member(src, m, what, m.size));
    check_crc(image->data(), image->size(), m, what);
    return {image->data(), image->size(), image};
  });
}

ByteView MemberRegion::bytes(const std::string& name) const {
  file_->check_intact(name);
  test_pause_before_read();
  const std::uint8_t* src = file_->data() + m_.data;
  return reading(*file_, name, [&]() -> ByteView {
    if (m_.method == 0) {
      if (!crc_checked_.load()) {
        check_crc(src, std::size_t(m_.size), m_, name);
        // Of a storage that several tensors share, only this tensor's pages
        // need to stay mapped (the file's page cache keeps the rest cheap).
        if (offset_ != 0 || length_ != m_.size)
          file_->release(std::size_t(m_.data), std::size_t(m_.size));
      }
      crc_checked_ = true;  // two threads may both check it: harmless
      return {src + offset_, length_, file_};
    }
    auto image =
        std::make_shared<std::vector<std::uint8_t>>(inflate_member(src, m_, name, m_.size));
    check_crc(image->data(), image->size(), m_, name);
    return {image->data() + offset_, length_, image};
  });
}

void MemberRegion::done(std::size_t offset, std::size_t length) const {
  if (m_.method == 0) file_->release(std::size_t(m_.data) + offset_ + offset, length);
}

}  // namespace attn::detail

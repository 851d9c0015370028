// .npz archives as np.savez / np.savez_compressed write them: a ZIP file
// (PKWARE APPNOTE.TXT; Python's zipfile is the writer) whose members are
// "<key>.npy" images, stored (method 0) or deflated (method 8). NumPy opens
// every member with force_zip64=True, so local headers carry ZIP64 extra
// fields; archives past 4 GiB or 65,535 members also get the ZIP64 end
// records. We parse the central directory ourselves and inflate with zlib.
//
// Hostile archives: every offset and size is checked against the file before
// use, members may not overlap, member count and declared sizes are bounded
// (a deflate stream cannot expand more than ~1032:1), and inflation stops
// one byte past the declared size, so nothing is ever allocated beyond what
// the central directory declared and the limits allow.
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <set>

#include "attn/error.h"
#include "attn/state_dict.h"
#include "mapped_file.h"
#include "npy_internal.h"

namespace attn {

namespace {

constexpr std::size_t kMaxMembers = 10000;
constexpr std::uint64_t kHeaderPrefix = 10000 + 12;  // magic, version, length, the largest header
constexpr std::uint64_t kMaxTotalBytes = std::uint64_t(16) << 30;  // all members inflated
constexpr std::uint64_t kMaxRatio = 1100;                          // deflate's limit is 1032:1
constexpr std::uint64_t kRatioSlack = 4096;                        // tiny members compress badly
constexpr std::uint32_t kSigLocal = 0x04034b50, kSigCentral = 0x02014b50, kSigEnd = 0x06054b50,
                        kSigEnd64 = 0x06064b50, kSigLocator64 = 0x07064b50;

[[noreturn]] void fail(const std::string& name, const std::string& what) {
  throw Error(Exit::data, name + ": " + what);
}

// Bounds-checked little-endian reads from the archive image.
struct Bytes {
  const std::uint8_t* p;
  std::size_t n;
  const std::string& name;

  void need(std::uint64_t off, std::uint64_t len, const char* what) const {
    if (off > n || len > n - off)
      fail(name, std::string("truncated or corrupt .npz: ") + what + " lies outside the file");
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

struct Member {
  std::string name;
  std::uint16_t flags = 0, method = 0;
  std::uint32_t crc = 0;
  std::uint64_t comp = 0, size = 0, local = 0;
  std::uint64_t data = 0;  // start of the member's data, from its local header
};

struct Directory {
  std::uint64_t count = 0, offset = 0, size = 0;
  std::uint64_t end = 0;  // where the central directory must end (first end record)
};

Directory find_directory(const Bytes& b) {
  // The end-of-central-directory record is the last 22 bytes plus a comment
  // of at most 65,535 bytes; its comment must reach the end of the file.
  if (b.n < 22) fail(b.name, "not a zip archive (too short for an .npz)");
  std::uint64_t eocd = 0;
  bool found = false;
  const std::uint64_t lowest = b.n >= 22 + 65535 ? b.n - 22 - 65535 : 0;
  for (std::uint64_t off = b.n - 22 + 1; off-- > lowest;) {
    if (b.u32(off) == kSigEnd && off + 22 + b.u16(off + 20) == b.n) {
      eocd = off;
      found = true;
      break;
    }
  }
  if (!found) fail(b.name, "not a zip archive (no end of central directory record; truncated?)");
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
  if (d.count > kMaxMembers)
    fail(b.name, "archive declares " + std::to_string(d.count) +
                     " members, more than the limit of " + std::to_string(kMaxMembers));
  if (d.offset > d.end || d.size > d.end - d.offset)
    fail(b.name, "corrupt zip archive: the central directory lies outside the file");
  return d;
}

// The ZIP64 extra field (id 1) holds, in this order, only the fields whose
// 32-bit (16-bit) slot is saturated: size, compressed size, local header
// offset, disk number.
void apply_zip64_extra(const Bytes& b, std::uint64_t extra, std::uint64_t extra_len, Member& m,
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

std::vector<Member> read_directory(const Bytes& b, const Directory& d) {
  std::vector<Member> members;
  std::uint64_t off = d.offset;
  const std::uint64_t end = d.offset + d.size;
  for (std::uint64_t i = 0; i < d.count; ++i) {
    if (end - off < 46 || b.u32(off) != kSigCentral)
      fail(b.name, "corrupt zip archive: central directory entry " + std::to_string(i) +
                       " is missing or cut off");
    Member m;
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
void locate_data(const Bytes& b, const Directory& d, Member& m, const std::string& what) {
  if (m.local > d.offset || d.offset - m.local < 30 || b.u32(m.local) != kSigLocal)
    fail(what, "corrupt zip archive: local header missing");
  const std::uint64_t name_len = b.u16(m.local + 26), extra_len = b.u16(m.local + 28);
  if (name_len != m.name.size() || std::string(reinterpret_cast<const char*>(b.p + m.local + 30),
                                               std::size_t(std::min<std::uint64_t>(
                                                   name_len, d.offset - m.local - 30))) != m.name)
    fail(what, "corrupt zip archive: local header name differs from the central directory");
  m.data = m.local + 30 + name_len + extra_len;
  if (m.data > d.offset || m.comp > d.offset - m.data)
    fail(what, "truncated or corrupt .npz: member data lies outside the archive");
}

// The member's first `limit` bytes (all of it when limit >= m.size), with
// the checks below applied only to a whole inflation.
std::vector<std::uint8_t> inflate_member(const std::uint8_t* src, const Member& m,
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

// One member's tensor data: stored members are read in place from the
// mapping, deflated ones inflated when read. The CRC-32 of the whole member
// is checked on the first read (stored) or on every inflation.
class MemberRegion final : public detail::Region {
 public:
  MemberRegion(std::shared_ptr<const detail::MappedFile> f, Member m, std::size_t data_offset)
      : file_(std::move(f)), m_(std::move(m)), offset_(data_offset) {}

  detail::ByteView bytes(const std::string& name) const override {
    file_->check_intact(name);
    const std::uint8_t* src = file_->data() + m_.data;
    if (m_.method == 0) {
      if (!crc_checked_.load()) check_crc(src, std::size_t(m_.size), name);
      crc_checked_ = true;  // two threads may both check it: harmless
      return {src + offset_, std::size_t(m_.size) - offset_, file_};
    }
    auto image = std::make_shared<std::vector<std::uint8_t>>(
        inflate_member(src, m_, name, m_.size));
    check_crc(image->data(), image->size(), name);
    return {image->data() + offset_, image->size() - offset_, image};
  }
  void done(std::size_t offset, std::size_t length) const override {
    if (m_.method == 0) file_->release(std::size_t(m_.data) + offset_ + offset, length);
  }

 private:
  void check_crc(const std::uint8_t* p, std::size_t n, const std::string& name) const {
    if (std::uint32_t(crc32_z(0, p, n)) != m_.crc)
      fail(name, "CRC-32 mismatch (archive corrupt)");
  }
  std::shared_ptr<const detail::MappedFile> file_;
  Member m_;
  std::size_t offset_;
  mutable std::atomic<bool> crc_checked_{false};
};

}  // namespace

StateDict read_npz(const std::string& path) {
  const auto file = detail::MappedFile::open(path);
  const Bytes b{file->data(), file->size(), path};
  const Directory dir = find_directory(b);
  std::vector<Member> members = read_directory(b, dir);
  if (members.empty()) fail(path, "the .npz archive holds no arrays");

  // Validate every member before inflating any, so a bad last member costs
  // nothing and the total is bounded up front.
  std::uint64_t total = 0;
  std::set<std::string> keys;
  for (Member& m : members) {
    const std::string what = path + ":" + m.name;
    if (m.name.size() <= 4 || m.name.compare(m.name.size() - 4, 4, ".npy") != 0)
      fail(what, "member is not a <key>.npy array as np.savez writes");
    if (!keys.insert(m.name).second) fail(what, "member appears twice in the archive");
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
    if (m.size > kMaxTotalBytes - total)
      fail(path, "members declare more than " + std::to_string(kMaxTotalBytes) + " bytes in total");
    total += m.size;
    locate_data(b, dir, m, what);
  }
  // Members must not share bytes (overlapping entries are a zip-bomb trick).
  std::vector<const Member*> by_offset;
  for (const Member& m : members) by_offset.push_back(&m);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Member* x, const Member* y) { return x->local < y->local; });
  for (std::size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->local < by_offset[i - 1]->data + by_offset[i - 1]->comp)
      fail(path + ":" + by_offset[i]->name, "member overlaps another member of the archive");

  StateDict sd(path);
  for (const Member& m : members) {
    const std::string what = path + ":" + m.name;
    const std::uint8_t* src = file->data() + m.data;
    auto st = std::make_shared<detail::Stored>();
    NpyHeader h;
    try {
      if (m.method == 0) {
        h = parse_npy_header(src, std::size_t(m.size), what);
      } else {
        // Only the start of the stream: enough for any header NumPy allows.
        const std::vector<std::uint8_t> head = inflate_member(src, m, what, kHeaderPrefix);
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
    st->region = std::make_shared<MemberRegion>(file, m, h.data_offset);
    sd.add_stored(m.name.substr(0, m.name.size() - 4), std::move(st));
  }
  return sd;
}

}  // namespace attn

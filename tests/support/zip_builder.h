// Hand-built ZIP archives for the container tests (APPNOTE 4.3.7 / 4.3.12):
// members stored or deflated, and overrides that make the directory lie
// about a member (its size, CRC, flags, where its local header is).
#pragma once

#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace attn::test::zip {

inline void put16(std::string& s, unsigned v) { s += char(v & 0xff), s += char((v >> 8) & 0xff); }
inline void put32(std::string& s, std::uint32_t v) { put16(s, v & 0xffff), put16(s, v >> 16); }
inline void set32(std::string& s, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = char((v >> (8 * i)) & 0xff);
}

inline std::string deflate_raw(const std::string& data) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&zs, data.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = uInt(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(&out[0]);
  zs.avail_out = uInt(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// A member of a hand-built ZIP (APPNOTE 4.3.7 / 4.3.12); the overrides make
// the directory lie about it.
struct ZipMember {
  std::string name, data;
  int method = 0;
  std::int64_t declared_size = -1;  // -1: the real size
  std::int64_t crc = -1;            // -1: the real CRC-32
  int flags = 0;
  std::int64_t local_offset = -1;  // -1: where it was written
  std::uint32_t comp_extra = 0;    // added to the compressed size it declares
};

inline std::string make_zip(const std::vector<ZipMember>& members) {
  std::string out, central;
  for (const ZipMember& m : members) {
    const std::string body = m.method == 8 ? deflate_raw(m.data) : m.data;
    const std::uint32_t crc =
        m.crc >= 0 ? std::uint32_t(m.crc)
                   : std::uint32_t(crc32(0, reinterpret_cast<const Bytef*>(m.data.data()),
                                         uInt(m.data.size())));
    const std::uint32_t size =
        m.declared_size >= 0 ? std::uint32_t(m.declared_size) : std::uint32_t(m.data.size());
    const std::uint32_t offset =
        m.local_offset >= 0 ? std::uint32_t(m.local_offset) : std::uint32_t(out.size());
    std::string common;
    put16(common, 20), put16(common, m.flags), put16(common, m.method), put16(common, 0);
    put16(common, 0x21), put32(common, crc),
        put32(common, std::uint32_t(body.size()) + m.comp_extra);
    put32(common, size), put16(common, unsigned(m.name.size())), put16(common, 0);
    if (m.local_offset < 0) {
      put32(out, 0x04034b50);
      out += common + m.name + body;
    }
    put32(central, 0x02014b50);
    put16(central, 20);
    central += common;
    put16(central, 0), put16(central, 0), put16(central, 0), put32(central, 0);
    put32(central, offset);
    central += m.name;
  }
  const std::uint32_t cd_offset = std::uint32_t(out.size());
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0), put16(out, 0), put16(out, unsigned(members.size())),
      put16(out, unsigned(members.size()));
  put32(out, std::uint32_t(central.size())), put32(out, cd_offset), put16(out, 0);
  return out;
}

}  // namespace attn::test::zip

// The .safetensors and .npz writers (writers.h). The safetensors layout
// follows huggingface/safetensors (safetensors/src/tensor.rs: prepare() sorts
// by dtype then name, the header is padded with spaces to 8 bytes); the zip
// follows PKWARE APPNOTE.TXT as Python's zipfile writes np.savez archives.
#include "attn/writers.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "attn/error.h"
#include "attn/npy.h"

namespace attn {

namespace {

void check_unique(const std::vector<NamedTensor>& tensors) {
  std::set<std::string> seen;
  for (const NamedTensor& t : tensors)
    if (!seen.insert(t.key).second)
      throw Error(Exit::data, "key \"" + t.key + "\" is listed twice");
}

void put(std::string& s, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) s += char((v >> (8 * i)) & 0xff);
}

}  // namespace

std::string encode_safetensors(const std::vector<NamedTensor>& tensors,
                               const std::vector<std::pair<std::string, std::string>>& metadata) {
  check_unique(tensors);
  std::vector<const NamedTensor*> order;
  for (const NamedTensor& t : tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](const NamedTensor* a, const NamedTensor* b) { return a->key < b->key; });
  // nlohmann's ordered_json keeps insertion order, as the reference's
  // serialization does ("__metadata__" first, then the tensors in data order).
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) {
    nlohmann::ordered_json m = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) m[k] = v;
    header["__metadata__"] = m;
  }
  std::uint64_t at = 0;
  for (const NamedTensor* t : order) {
    const std::uint64_t n = std::uint64_t(t->tensor->size()) * 4;
    header[t->key] = {
        {"dtype", "F32"}, {"shape", t->tensor->shape}, {"data_offsets", {at, at + n}}};
    at += n;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + text.size() + at);
  put(out, text.size(), 8);
  out += text;
  for (const NamedTensor* t : order)
    out.append(reinterpret_cast<const char*>(t->tensor->ptr()), t->tensor->size() * 4);
  return out;
}

std::string encode_npz(const std::vector<NamedTensor>& tensors) {
  check_unique(tensors);
  constexpr std::uint64_t kMax32 = 0xffffffffu;
  std::string out, central;
  for (const NamedTensor& t : tensors) {
    const std::string name = t.key + ".npy";
    const std::string data = encode_npy(*t.tensor);
    const std::uint32_t crc =
        std::uint32_t(crc32_z(0, reinterpret_cast<const Bytef*>(data.data()), data.size()));
    const std::uint64_t offset = out.size(), size = data.size();
    const bool big = size >= kMax32, far = offset >= kMax32;
    // Local header: ZIP64 sizes in its extra field when they do not fit.
    std::string local_extra;
    if (big)
      put(local_extra, 1, 2), put(local_extra, 16, 2), put(local_extra, size, 8),
          put(local_extra, size, 8);
    const int version = big || far ? 45 : 20;
    put(out, 0x04034b50, 4);
    put(out, version, 2), put(out, 0, 2), put(out, 0, 2);  // version, flags, stored
    put(out, 0, 2), put(out, 0x21, 2);                     // 1980-01-01 00:00
    put(out, crc, 4), put(out, big ? kMax32 : size, 4), put(out, big ? kMax32 : size, 4);
    put(out, name.size(), 2), put(out, local_extra.size(), 2);
    out += name + local_extra + data;
    // Central directory entry: ZIP64 fields for whatever is saturated.
    std::string extra;
    if (big || far) {
      std::string f;
      if (big) put(f, size, 8), put(f, size, 8);
      if (far) put(f, offset, 8);
      put(extra, 1, 2), put(extra, f.size(), 2);
      extra += f;
    }
    put(central, 0x02014b50, 4);
    put(central, version, 2), put(central, version, 2), put(central, 0, 2), put(central, 0, 2);
    put(central, 0, 2), put(central, 0x21, 2);
    put(central, crc, 4), put(central, big ? kMax32 : size, 4),
        put(central, big ? kMax32 : size, 4);
    put(central, name.size(), 2), put(central, extra.size(), 2), put(central, 0, 2);
    put(central, 0, 2), put(central, 0, 2), put(central, 0, 4);  // disk, attributes
    put(central, far ? kMax32 : offset, 4);
    central += name + extra;
  }
  const std::uint64_t cd_offset = out.size(), cd_size = central.size(), n = tensors.size();
  out += central;
  const bool zip64 = cd_offset >= kMax32 || cd_size >= kMax32 || n >= 0xffff;
  if (zip64) {
    const std::uint64_t rec = out.size();
    put(out, 0x06064b50, 4), put(out, 44, 8);  // ZIP64 end record, its size
    put(out, 45, 2), put(out, 45, 2), put(out, 0, 4), put(out, 0, 4);
    put(out, n, 8), put(out, n, 8), put(out, cd_size, 8), put(out, cd_offset, 8);
    put(out, 0x07064b50, 4), put(out, 0, 4), put(out, rec, 8), put(out, 1, 4);  // locator
  }
  put(out, 0x06054b50, 4), put(out, 0, 2), put(out, 0, 2);
  put(out, zip64 ? 0xffff : n, 2), put(out, zip64 ? 0xffff : n, 2);
  put(out, zip64 ? kMax32 : cd_size, 4), put(out, zip64 ? kMax32 : cd_offset, 4), put(out, 0, 2);
  return out;
}

}  // namespace attn

// Hand-built torch.save checkpoints for the container tests: a data.pkl as
// torch.save pickles a state dict (protocol 2: an OrderedDict of
// torch._utils._rebuild_tensor_v2(persistent storage id, offset, size,
// stride, False, OrderedDict())) and the zip around it, "archive/data.pkl"
// plus one "archive/data/<key>" member per storage. Every field can lie, so
// the hostile tests can say what a file claims and what it holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zip_builder.h"

namespace attn::test::pt {

struct PtTensor {
  std::string name;
  std::string storage_key = "0";
  std::string storage_type = "FloatStorage";  // torch.<type>
  std::int64_t storage_numel = 0;
  std::int64_t offset = 0;
  std::vector<std::int64_t> shape, stride;
};

// C-order strides of a shape.
inline std::vector<std::int64_t> c_strides(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// Integers as LONG1 with 8 bytes (what pickle writes for values past 2^31).
inline std::string pickle_int(std::int64_t v) {
  std::string s = "\x8a\x08";
  for (int i = 0; i < 8; ++i) s += char((std::uint64_t(v) >> (8 * i)) & 0xff);
  return s;
}

inline std::string pickle_str(const std::string& v) {
  std::string s = "X";
  for (int i = 0; i < 4; ++i) s += char((v.size() >> (8 * i)) & 0xff);
  return s + v;
}

inline std::string pickle_tuple(const std::vector<std::int64_t>& v) {
  std::string s = "(";
  for (std::int64_t x : v) s += pickle_int(x);
  return s + "t";
}

// data.pkl of an OrderedDict of these tensors; `wrap` non-empty puts it under
// that key of a plain dict ({"state_dict": {...}, "epoch": 3}).
inline std::string state_dict_pickle(const std::vector<PtTensor>& tensors,
                                     const std::string& wrap = "") {
  std::string p = "\x80\x02";
  if (!wrap.empty()) p += "}" + pickle_str("epoch") + pickle_int(3) + "s" + pickle_str(wrap);
  p += "ccollections\nOrderedDict\n)R(";
  for (const PtTensor& t : tensors) {
    p += pickle_str(t.name);
    p += "ctorch._utils\n_rebuild_tensor_v2\n(";
    p += "(" + pickle_str("storage") + "ctorch\n" + t.storage_type + "\n" +
         pickle_str(t.storage_key) + pickle_str("cpu") + pickle_int(t.storage_numel) + "tQ";
    p += pickle_int(t.offset) + pickle_tuple(t.shape) + pickle_tuple(t.stride);
    p += "\x89"
         "ccollections\nOrderedDict\n)RtR";
  }
  p += "u";
  if (!wrap.empty()) p += "s";
  return p + ".";
}

struct PtStorage {
  std::string key;
  std::string bytes;
};

// The zip torch.save writes around data.pkl (stored members under "archive/").
inline std::string checkpoint(const std::string& pickle, const std::vector<PtStorage>& storages,
                              const std::vector<zip::ZipMember>& extra = {}) {
  std::vector<zip::ZipMember> m;
  m.push_back({"archive/data.pkl", pickle});
  for (const PtStorage& s : storages) m.push_back({"archive/data/" + s.key, s.bytes});
  m.push_back({"archive/version", "3\n"});
  m.insert(m.end(), extra.begin(), extra.end());
  return zip::make_zip(m);
}

}  // namespace attn::test::pt

#include "attn/nested_array.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace attn {
namespace {

constexpr std::size_t kMaxDepth = 4;

std::string type_of(const nlohmann::json& v) {
  return v.is_null() ? "null" : std::string(v.type_name());
}

// Shape from the first element along each level; every other element is
// then checked against it while the leaves are collected.
std::vector<std::size_t> shape_of(const nlohmann::json& j, const std::string& name, Exit code) {
  std::vector<std::size_t> shape;
  const nlohmann::json* p = &j;
  while (p->is_array()) {
    if (p->empty()) throw Error(code, name + ": empty array (every dimension must be >= 1)");
    if (shape.size() == kMaxDepth)
      throw Error(code, name + ": nested deeper than " + std::to_string(kMaxDepth) + " levels");
    shape.push_back(p->size());
    p = &(*p)[0];
  }
  if (shape.empty()) throw Error(code, name + ": expected a nested array, found " + type_of(j));
  return shape;
}

template <typename Leaf>
void walk(const nlohmann::json& j, const std::vector<std::size_t>& shape, std::size_t dim,
          const std::string& path, Exit code, Leaf&& leaf) {
  if (dim == shape.size()) {
    leaf(j, path);
    return;
  }
  if (!j.is_array() || j.size() != shape[dim])
    throw Error(code, path + ": ragged array: expected " +
                          (j.is_array() ? std::to_string(shape[dim]) + " elements, found " +
                                              std::to_string(j.size())
                                        : "an array, found " + type_of(j)));
  for (std::size_t i = 0; i < j.size(); ++i)
    walk(j[i], shape, dim + 1, path + "[" + std::to_string(i) + "]", code, leaf);
}

}  // namespace

Tensor tensor_from_json(const nlohmann::json& j, const std::string& name, Exit code) {
  Tensor t;
  t.shape = shape_of(j, name, code);
  t.data.reserve(Tensor::count(t.shape));
  walk(j, t.shape, 0, name, code, [&](const nlohmann::json& v, const std::string& path) {
    if (!v.is_number()) throw Error(code, path + ": expected a number, found " + type_of(v));
    double d = v.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > 3.4028234663852886e38)
      throw Error(code, path + ": number out of float32 range");
    t.data.push_back(static_cast<float>(d));
  });
  return t;
}

Mask mask_from_json(const nlohmann::json& j, const std::string& name, Exit code) {
  Mask m;
  m.shape = shape_of(j, name, code);
  m.data.reserve(Tensor::count(m.shape));
  walk(j, m.shape, 0, name, code, [&](const nlohmann::json& v, const std::string& path) {
    if (v.is_boolean()) {
      m.data.push_back(v.get<bool>() ? 1 : 0);
    } else if (v.is_number() && (v.get<double>() == 0.0 || v.get<double>() == 1.0)) {
      m.data.push_back(v.get<double>() != 0.0 ? 1 : 0);
    } else {
      throw Error(code, path + ": expected true/false or 0/1, found " + v.dump());
    }
  });
  return m;
}

}  // namespace attn

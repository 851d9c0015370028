// attn/gguf_info.h: a GGUF file's metadata and tensor list as plain data,
// from the GGUF reader's header (gguf.h), as gguf-py's gguf-dump shows them.
#include "attn/gguf_info.h"

#include <cstdio>
#include <cstdlib>

#include "attn/error.h"
#include "attn/escape.h"
#include "containers/gguf.h"

namespace attn {
namespace {

using detail::GgufType;
using detail::GgufValue;
using ojson = nlohmann::ordered_json;

// An f32 as the shortest decimal that reads back as the same float32 (1e-06,
// not 9.99999997e-07: the number the converter wrote), as NumPy prints it.
double shortest_f32(float f) {
  char buf[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, double(f));
    if (std::strtof(buf, nullptr) == f) break;
  }
  return std::strtod(buf, nullptr);
}

// A value as JSON: numbers keep their type's range (u64 stays unsigned),
// strings become valid UTF-8 (a JSON document must be), arrays are cut
// after max_items elements (nested ones too).
ojson value_json(const GgufValue& v, std::size_t max_items) {
  switch (v.type()) {
    case GgufType::boolean:
      return v.to_bool();
    case GgufType::f32:
      return shortest_f32(float(v.to_double()));
    case GgufType::f64:
      return v.to_double();
    case GgufType::u64:
      return v.to_uint();
    case GgufType::string:
      return valid_utf8(v.to_string());
    case GgufType::array: {
      ojson a = ojson::array();
      for (const GgufValue& e : v.first_elements(max_items)) a.push_back(value_json(e, max_items));
      return a;
    }
    default:
      return v.to_int();
  }
}

}  // namespace

GgufInfo read_gguf_info(const std::string& path, std::size_t max_array_items) {
  const detail::GgufFile f = detail::read_gguf(path);
  GgufInfo info;
  info.path = path;
  info.version = f.version();
  info.alignment = f.alignment();
  info.data_offset = f.data_offset();
  info.file_bytes = f.size();
  for (const detail::GgufKeyValue& kv : f.metadata()) {
    GgufMetadataEntry e;
    e.key = kv.key;
    e.type = detail::gguf_type_name(kv.value.type());
    if (kv.value.is_array()) {
      e.element_type = detail::gguf_type_name(kv.value.element_type());
      e.count = kv.value.size();
      e.summarized = e.count > max_array_items;
    }
    e.value = value_json(kv.value, max_array_items);
    if (kv.key == "general.name" && e.type == "string") info.name = e.value.get<std::string>();
    if (kv.key == "general.architecture" && e.type == "string")
      info.architecture = e.value.get<std::string>();
    info.metadata.push_back(std::move(e));
  }
  for (const detail::GgufTensorInfo& t : f.tensors()) {
    GgufTensorEntry e;
    e.name = valid_utf8(t.name);
    e.type = ggml_type_name(t.type);
    for (std::size_t d : t.shape()) e.shape.push_back(d);
    e.elements = t.elements;
    e.bytes = t.nbytes;
    e.offset = t.offset;
    info.tensors.push_back(std::move(e));
  }
  return info;
}

std::string gguf_model_name(const std::string& path) {
  try {
    const detail::GgufFile f = detail::read_gguf(path);
    const GgufValue* v = f.find("general.name");
    return v != nullptr && v->type() == GgufType::string ? v->to_string() : "";
  } catch (const Error&) {
    return "";
  }
}

}  // namespace attn

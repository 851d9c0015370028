// --model FILE.gguf --info: the file's metadata (every key, its GGUF type and
// value, long arrays summarized) and its tensor list (name, ggml type, shape
// in NumPy order, bytes), as gguf-py's gguf-dump shows them (CONTRACT.md
// "(v4) Comparisons, statistics, intermediates"). The reading is the
// library's (attn/gguf_info.h); this file prints it as text or JSON.
#include "attn/gguf_info.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/escape.h"
#include "cli/number_text.h"
#include "cli/stdout_writer.h"
#include "modes/modes.h"

namespace app {
namespace gguf_listing {

using ojson = nlohmann::ordered_json;

constexpr std::size_t kShownArrayItems = 4;  // text: "[string; 32000 items] a, b, c, d, ..."
constexpr std::size_t kShownStringCols = 60;

// A value on one line: strings quoted and cut, numbers as JSON writes them.
std::string shown(const ojson& v) {
  if (v.is_string())
    return "'" + attn::printable_prefix(v.get<std::string>(), kShownStringCols) + "'";
  if (v.is_array()) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size() && i < kShownArrayItems; ++i)
      s += (i ? ", " : "") + shown(v[i]);
    return s + (v.size() > kShownArrayItems ? ", ...]" : "]");
  }
  return v.dump();
}

std::string value_text(const attn::GgufMetadataEntry& e) {
  if (e.type != "array") return shown(e.value);
  std::string s;
  if (e.count > kShownArrayItems) {
    s = "[" + e.element_type + "; " + with_commas(e.count) + " items]";
    for (std::size_t i = 0; i < e.value.size() && i < kShownArrayItems; ++i)
      s += (i ? ", " : " ") + shown(e.value[i]);
    return s + ", ...";
  }
  return shown(e.value);
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  if (shape.empty()) return "()";
  std::string s;
  for (std::uint64_t d : shape) s += (s.empty() ? "" : " x ") + std::to_string(d);
  return s;
}

std::string pad(std::string s, std::size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

std::string info_text(const attn::GgufInfo& g) {
  std::string out = "GGUF file: " + attn::printable(g.path) + " (version " +
                    std::to_string(g.version) + ", " + human_bytes(g.file_bytes) + ", alignment " +
                    std::to_string(g.alignment) + ")\n";
  if (!g.name.empty() || !g.architecture.empty())
    out +=
        "model: " + (g.name.empty() ? std::string("(no general.name)") : attn::printable(g.name)) +
        (g.architecture.empty() ? "" : " (" + attn::printable(g.architecture) + ")") + "\n";
  out += "\n" + std::to_string(g.metadata.size()) + " metadata keys:\n";
  std::size_t kw = 0, tw = 0;
  for (const auto& e : g.metadata) {
    kw = std::max(kw, attn::printable(e.key).size());
    tw = std::max(tw, (e.type == "array" ? "[" + e.element_type + "]" : e.type).size());
  }
  for (const auto& e : g.metadata)
    out += "  " + pad(attn::printable(e.key), kw) + "  " +
           pad(e.type == "array" ? "[" + e.element_type + "]" : e.type, tw) + "  " + value_text(e) +
           "\n";
  out += "\n" + std::to_string(g.tensors.size()) + " tensors:\n";
  std::vector<std::vector<std::string>> rows = {{"name", "type", "shape", "bytes"}};
  std::uint64_t total = 0;
  for (const auto& t : g.tensors) {
    rows.push_back({attn::printable(t.name), t.type, shape_text(t.shape), with_commas(t.bytes)});
    total += t.bytes;
  }
  std::vector<std::size_t> w(4, 0);
  for (const auto& r : rows)
    for (std::size_t i = 0; i < 4; ++i) w[i] = std::max(w[i], r[i].size());
  for (const auto& r : rows)
    out += "  " + pad(r[0], w[0]) + "  " + pad(r[1], w[1]) + "  " + pad(r[2], w[2]) + "  " +
           std::string(w[3] - r[3].size(), ' ') + r[3] + "\n";
  out += "  tensor data: " + with_commas(total) + " bytes (" + human_bytes(total) + ")\n";
  return out;
}

ojson info_json(const attn::GgufInfo& g) {
  ojson j = {{"file", g.path},
             {"version", g.version},
             {"alignment", g.alignment},
             {"data_offset", g.data_offset},
             {"file_bytes", g.file_bytes},
             {"name", g.name.empty() ? ojson() : ojson(g.name)},
             {"architecture", g.architecture.empty() ? ojson() : ojson(g.architecture)},
             {"metadata", ojson::array()},
             {"tensors", ojson::array()}};
  for (const auto& e : g.metadata) {
    ojson m = {{"key", attn::valid_utf8(e.key)}, {"type", e.type}};
    if (e.type == "array") {
      m["element_type"] = e.element_type;
      m["count"] = e.count;
      m["summarized"] = e.summarized;
    }
    m["value"] = e.value;
    j["metadata"].push_back(m);
  }
  for (const auto& t : g.tensors)
    j["tensors"].push_back({{"name", t.name},
                            {"type", t.type},
                            {"shape", t.shape},
                            {"elements", t.elements},
                            {"bytes", t.bytes},
                            {"offset", t.offset}});
  return j;
}

}  // namespace gguf_listing

int run_gguf_info(const Options& opt) {
  if (opt.format == Format::npy)
    throw attn::Error(attn::Exit::usage, "--format npy: --info prints text or json");
  const attn::GgufInfo g = attn::read_gguf_info(opt.model);
  write_stdout(opt.format == Format::json ? gguf_listing::info_json(g).dump(2) + "\n"
                                          : gguf_listing::info_text(g));
  return 0;
}

}  // namespace app

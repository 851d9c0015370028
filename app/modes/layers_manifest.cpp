// The manifest of a run over several layers (layers_manifest.h).
#include "modes/layers_manifest.h"

#include <cstring>
#include <filesystem>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"
#include "modes/run_fingerprint.h"

namespace app {
namespace {

constexpr std::size_t kMaxLayersManifestBytes = std::size_t(256) << 20;
constexpr const char* kLayersKind = "attn-run layers manifest";
constexpr int kLayersFormat = 1;

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const void* data, std::size_t n) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (std::size_t i = 0; i < n; i += 3) {
    const std::uint32_t v =
        std::uint32_t(p[i]) << 16 | (i + 1 < n ? p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    out += kBase64[v >> 18 & 63];
    out += kBase64[v >> 12 & 63];
    out += i + 1 < n ? kBase64[v >> 6 & 63] : '=';
    out += i + 2 < n ? kBase64[v & 63] : '=';
  }
  return out;
}

std::string unbase64(const std::string& s) {
  std::string out;
  std::uint32_t v = 0;
  int bits = 0;
  for (char c : s) {
    const char* at = std::strchr(kBase64, c);
    if (c == '=' || c == '\0' || at == nullptr) continue;
    v = v << 6 | std::uint32_t(at - kBase64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char(v >> bits & 0xff);
    }
  }
  return out;
}

nlohmann::json read_layers_manifest(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return nullptr;
  const auto bytes = attn::read_file(path, kMaxLayersManifestBytes);
  nlohmann::json m = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (!m.is_object() || m.value("kind", "") != kLayersKind ||
      m.value("format", 0) != kLayersFormat || !m.contains("layers") || !m["layers"].is_object())
    throw attn::Error(attn::Exit::cant_create,
                      attn::printable(path) +
                          ": not the manifest of a run over layers (an --input-list batch's, or "
                          "an earlier attn-run's); use another --out-dir");
  return m;
}

}  // namespace

LayersManifest::LayersManifest(std::string dir) : dir_(std::move(dir)) {
  const nlohmann::json m = read_layers_manifest(dir_ + "/manifest.json");
  if (!m.is_null()) layers_ = m["layers"];
}

const nlohmann::json* LayersManifest::done(const std::string& name,
                                           const nlohmann::json& fingerprint,
                                           const nlohmann::json& input) const {
  if (!layers_.contains(name) || !layers_[name].is_object()) return nullptr;
  const nlohmann::json& e = layers_[name];
  check_same_settings(e.value("fingerprint", nlohmann::json::object()), fingerprint,
                      dir_ + "/manifest.json (" + name + ")");
  if (input.value("path", "").empty() || e.value("input", nlohmann::json()) != input)
    return nullptr;  // from standard input, or changed since: computed again
  if (!std::filesystem::exists(dir_ + "/" + name + "/context.npy")) return nullptr;
  return &e;
}

void LayersManifest::record(const std::string& name, nlohmann::json entry, attn::OutputDir& top) {
  layers_[name] = std::move(entry);
  const nlohmann::json m = {{"kind", kLayersKind}, {"format", kLayersFormat}, {"layers", layers_}};
  top.add("manifest.json", m.dump(2) + "\n");
}

nlohmann::json view_to_json(const ModelViewLayer& v) {
  std::vector<double> figures;
  for (const auto& f : v.figures) figures.insert(figures.end(), f.begin(), f.end());
  return {{"layer", v.layer},
          {"type", v.type},
          {"dir", v.dir},
          {"files", v.files},
          {"cells_shape", v.cells.shape},
          {"cells", base64(v.cells.ptr(), v.cells.size() * sizeof(float))},
          {"figures", base64(figures.data(), figures.size() * sizeof(double))}};
}

ModelViewLayer view_from_json(const nlohmann::json& j) {
  ModelViewLayer v;
  v.layer = j.at("layer").get<std::int64_t>();
  v.type = j.at("type").get<std::string>();
  v.dir = j.at("dir").get<std::string>();
  v.files = j.at("files").get<std::vector<std::string>>();
  v.cells.shape = j.at("cells_shape").get<std::vector<std::size_t>>();
  const std::string cells = unbase64(j.at("cells").get<std::string>());
  v.cells.data.resize(attn::Tensor::count(v.cells.shape));
  if (cells.size() != v.cells.size() * sizeof(float))
    throw attn::Error(attn::Exit::data, "manifest.json: " + v.dir + "'s model view tiles are cut");
  if (!cells.empty()) std::memcpy(v.cells.ptr(), cells.data(), cells.size());
  const std::string figures = unbase64(j.at("figures").get<std::string>());
  for (std::size_t i = 0; i + 4 * sizeof(double) <= figures.size(); i += 4 * sizeof(double)) {
    std::array<double, 4> f{};
    std::memcpy(f.data(), figures.data() + i, sizeof f);
    v.figures.push_back(f);
  }
  return v;
}

}  // namespace app

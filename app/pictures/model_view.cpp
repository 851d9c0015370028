// The model view's page (model_view.h).
#include "pictures/model_view.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "cli/colormap.h"
#include "model_view_page.h"
#include "pictures/map_capture.h"
#include "pictures/plot_text.h"

namespace app {
namespace {

// A number for JSON: null for NaN (a head whose rows were all masked).
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

}  // namespace

ModelViewLayer model_view_layer(std::int64_t layer, std::string type, std::string dir,
                                const MapCapture& capture, const attn::SummarySink& summary,
                                std::size_t b) {
  ModelViewLayer out;
  out.layer = layer;
  out.type = std::move(type);
  out.dir = std::move(dir);
  out.cells = capture.cells();
  const attn::Tensor& rows = summary.rows();  // (B, H', L', 5)
  const std::size_t H = rows.shape[1], L = rows.shape[2], C = rows.shape[3];
  for (std::size_t h = 0; h < H; ++h) {
    std::array<double, 4> sum{};
    std::size_t n = 0;
    for (std::size_t i = 0; i < L; ++i) {
      const float* r = rows.ptr() + ((b * H + h) * L + i) * C;
      if (!std::isfinite(r[0]) || !std::isfinite(r[3])) continue;  // --allow-nonfinite
      for (int k = 0; k < 4; ++k) sum[k] += r[k];
      ++n;
    }
    for (double& s : sum) s = n ? s / double(n) : NAN;
    out.figures.push_back(sum);
  }
  return out;
}

std::string render_model_view(const ModelView& v) {
  if (v.layers.empty() || v.heads.empty())
    throw attn::Error(attn::Exit::software, "model view: no layer or no head");
  const std::size_t H = v.heads.size();
  const std::size_t nq = v.layers[0].cells.shape.at(1), nk = v.layers[0].cells.shape.at(2);
  // Tiles as large as fit about 900 px across (the head's view beside them), 12 to 64 px.
  const std::size_t tile = std::clamp<std::size_t>(900 / H, 14, 66) - 2;
  nlohmann::json meta;
  meta["title"] = picture_text(v.title);
  meta["subtitle"] = picture_text(v.subtitle);
  meta["heads"] = v.heads;
  meta["nq"] = nq;
  meta["nk"] = nk;
  meta["tile"] = tile;
  meta["L"] = v.L;
  meta["T"] = v.T;
  meta["recent"] = v.recent;
  meta["mode"] = v.T <= kModelViewMapKeys ? "map" : "entropy";
  const ScaleKind kind = scale_kind(v.color_scale, v.T);
  {
    attn::Tensor probe({1, 1, 1}, 1.0f);  // the log scale's bottom for T keys
    const ColourScale sc = colour_scale(probe, kind, v.T);
    meta["scale"] = scale_kind_name(kind);
    meta["scale_lo"] = kind == ScaleKind::log ? sc.lo : 0.0;
  }
  meta["viridis"] = nlohmann::json::array();
  for (int k = 0; k < 256; ++k) {
    const Rgb c = viridis(k / 255.0);
    meta["viridis"].push_back({c.r, c.g, c.b});
  }
  // Each head's thumbnail scaled to its own largest weight, one byte a cell
  // (layer, head, Nq, Nk): 0 a masked cell (weight exactly 0, drawn as
  // masked), 1..255 a weight from just above 0 to the largest; the figures
  // scaled to [0, 1] (the page colours them per layer, min to max).
  std::string bytes;
  bytes.reserve(v.layers.size() * H * nq * nk);
  const double ln_t = std::log(double(std::max<std::size_t>(v.T, 2)));
  meta["layers"] = nlohmann::json::array();
  for (const ModelViewLayer& l : v.layers) {
    if (l.cells.shape != std::vector<std::size_t>{H, nq, nk} || l.figures.size() != H)
      throw attn::Error(attn::Exit::software, "model view: layer " + std::to_string(l.layer) +
                                                  " has cells " + attn::shape_str(l.cells.shape));
    nlohmann::json j = {{"layer", l.layer}, {"type", l.type}, {"dir", l.dir}, {"files", l.files}};
    j["max"] = nlohmann::json::array();
    j["figures"] = nlohmann::json::array();
    j["raw"] = nlohmann::json::array();
    for (std::size_t h = 0; h < H; ++h) {
      const float* c = l.cells.ptr() + h * nq * nk;
      const float top = *std::max_element(c, c + nq * nk);
      // The head's own scale (one head's cells), as ColourScale positions.
      attn::Tensor one({1, nq, nk});
      std::copy(c, c + nq * nk, one.data.begin());
      const ColourScale sc = colour_scale(one, kind, v.T);
      for (std::size_t i = 0; i < nq * nk; ++i)
        bytes += char(c[i] > 0 && top > 0 ? 1 + std::lround(254.0 * sc.position(c[i])) : 0);
      const auto& f = l.figures[h];
      j["max"].push_back(top);
      j["raw"].push_back({number(f[0]), number(f[1]), number(f[2]), number(f[3])});
      j["figures"].push_back({number(f[0] / ln_t), number(f[1]), number(f[2]),
                              number(f[3] / double(std::max<std::size_t>(v.T, 1)))});
    }
    meta["layers"].push_back(j);
  }
  std::string page = kModelViewHtml;
  std::size_t at = 0;
  fill_marker(page, "model_view_page.html", "@TITLE@",
              xml_escape(v.title) + " \xE2\x80\x94 model view", &at);
  fill_marker(page, "model_view_page.html", "@META@", script_json(meta), &at);
  fill_marker(page, "model_view_page.html", "@CELLS@", base64(bytes), &at);
  fill_marker(page, "model_view_page.html", "@SCRIPT@", kModelViewScript, &at);
  return page;
}

}  // namespace app

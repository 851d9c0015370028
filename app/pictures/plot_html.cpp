// --plot FILE.html: one self-contained page to explore the maps (CONTRACT.md
// "Outputs"). The page's HTML, CSS and script live in plot_html_page.html and
// plot_html_page.js (compiled in by CMake); this file fills in the run's
// facts and labels as JSON and the maps as base64 float16.
//
// Letters: K heads drawn, L queries, T keys, Nq x Nk cells (every token up to 1024).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "attn/error.h"
#include "cli/colormap.h"
#include "pictures/map_capture.h"
#include "pictures/plot.h"
#include "pictures/plot_text.h"
#include "plot_html_page.h"

namespace app {
namespace {

// IEEE 754 binary16, round to nearest even (as numpy's astype(float16)). A
// positive weight too small for float16 keeps the smallest subnormal, so
// only a weight of exactly 0 (a masked key) reads as 0 on the page.
std::uint16_t to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000;
  x &= 0x7fffffff;
  std::uint32_t h;
  if (x >= 0x47800000) {
    h = x > 0x7f800000 ? 0x7e00 : 0x7c00;  // NaN, or overflow to infinity
  } else if (x < 0x38800000) {             // below 2^-14: subnormal
    float a;
    std::memcpy(&a, &x, 4);
    h = std::uint32_t(std::lrint(double(a) * 16777216.0));  // units of 2^-24
    if (h == 0 && x != 0) h = 1;
  } else {
    h = ((x >> 23) - 112) << 10 | ((x >> 13) & 0x3ff);
    const std::uint32_t rest = x & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  }
  return std::uint16_t(sign | h);
}

// The label of each of the n cells along an axis of labels.size() tokens:
// the token's own, or for a block of tokens the first one's with the range.
std::vector<std::string> cell_labels(const std::vector<std::string>& labels, std::size_t n) {
  const std::size_t S = labels.size();
  std::vector<std::string> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t t0 = (i * S + n - 1) / n, t1 = ((i + 1) * S + n - 1) / n - 1;
    out[i] = shorten(picture_text(labels[t0]), 40);
    if (n < S) out[i] += " [" + std::to_string(t0) + "\xE2\x80\x93" + std::to_string(t1) + "]";
  }
  return out;
}

}  // namespace

std::string render_html(const MapPicture& full) {
  if (full.cells.ndim() != 3 || full.cells.shape[0] != full.heads.size() ||
      full.labels.size() != full.L || full.key_labels.size() != full.T || full.L == 0 ||
      full.T == 0 || full.heads.empty())
    throw attn::Error(attn::Exit::software,
                      "plot: inconsistent picture " + attn::shape_str(full.cells.shape));
  std::optional<MapPicture> fewer;  // a copy only when cells must be merged
  if (std::max(full.cells.shape[1], full.cells.shape[2]) > kMaxPageCells)
    fewer = reduced(full, kMaxPageCells);
  const MapPicture& pic = fewer ? *fewer : full;
  const std::size_t K = pic.heads.size(), nq = pic.cells.shape[1], nk = pic.cells.shape[2];
  // The scale of the SVG and PNG (their kMaxPlotCells cells), so every
  // picture of a run saturates at the same figure.
  const ColourScale scale = colour_scale(reduced(pic, kMaxPlotCells).cells, pic.scale, pic.T);

  nlohmann::json meta;
  meta["title"] = picture_text(pic.title);
  meta["subtitle"] = picture_text(pic.subtitle + block_note(pic.L, pic.T, nq, nk));
  meta["facts"] = nlohmann::json::array();
  for (const auto& [key, value] : pic.facts)
    meta["facts"].push_back({picture_text(key), picture_text(value)});
  meta["labels"] = cell_labels(pic.labels, nq);          // query rows
  meta["key_labels"] = cell_labels(pic.key_labels, nk);  // key columns
  meta["n"] = nq;
  meta["nk"] = nk;
  meta["L"] = pic.L;
  meta["T"] = pic.T;
  meta["heads"] = pic.heads;
  meta["head_names"] = nlohmann::json::array();
  for (std::size_t k = 0; k < K; ++k) meta["head_names"].push_back(panel_title(pic, k));
  meta["averaged"] = pic.mean_of > 0;
  meta["sinks"] = pic.sinks;
  meta["vmax"] = scale.vmax;
  meta["max_value"] = scale.max_value;
  meta["clipped"] = scale.clipped;
  // --color-scale: the page maps a weight to viridis as ColourScale::position does.
  meta["scale"] = scale_kind_name(scale.kind);
  meta["scale_lo"] = scale.lo;
  meta["head_top"] = scale.head_top;
  meta["scale_legend"] = scale.legend();
  meta["viridis"] = nlohmann::json::array();
  for (int k = 0; k < 256; ++k) {
    const Rgb c = viridis(k / 255.0);
    meta["viridis"].push_back({c.r, c.g, c.b});
  }

  std::string maps(K * nq * nk * 2, '\0');  // (K, Nq, Nk) float16, little-endian
  for (std::size_t i = 0; i < K * nq * nk; ++i) {
    const std::uint16_t h = to_half(pic.cells.data[i]);
    maps[2 * i] = char(h & 0xff);
    maps[2 * i + 1] = char(h >> 8);
  }

  // Past 1,024 keys, the pinned query cell's top keys named exactly:
  // top_keys (K, Nq, 10) as the model numbers them (-1 = none), their
  // weights, and the labels of the keys listed.
  const std::size_t per_cell = MapCapture::kTopKeys;
  if (nk < pic.T && pic.top_keys.size() == K * nq * per_cell) {
    nlohmann::json keys = nlohmann::json::array(), weights = nlohmann::json::array();
    nlohmann::json labels = nlohmann::json::object();
    for (std::size_t i = 0; i < pic.top_keys.size(); ++i) {
      const std::int32_t j = pic.top_keys[i];
      const std::size_t number = j < 0                     ? 0
                                 : pic.key_numbers.empty() ? std::size_t(j)
                                                           : pic.key_numbers.at(j);
      keys.push_back(j < 0 ? -1 : std::int64_t(number));
      weights.push_back(j < 0 ? 0.0f : pic.top_weights[i]);
      if (j >= 0) labels[std::to_string(number)] = shorten(picture_text(pic.key_labels[j]), 40);
    }
    meta["top_keys"] = {
        {"per_cell", per_cell}, {"keys", keys}, {"weights", weights}, {"labels", labels}};
  }

  // The neuron view (--save q,k): q (K, L, D) then k (K, T, D), float32.
  std::string neuron;
  if (!pic.neuron_q.data.empty() && nq == pic.L && nk == pic.T) {
    meta["neuron"] = {{"D", pic.neuron_q.shape[2]}, {"scale", pic.neuron_scale}};
    neuron.resize((pic.neuron_q.size() + pic.neuron_k.size()) * sizeof(float));
    std::memcpy(neuron.data(), pic.neuron_q.ptr(), pic.neuron_q.size() * sizeof(float));
    std::memcpy(neuron.data() + pic.neuron_q.size() * sizeof(float), pic.neuron_k.ptr(),
                pic.neuron_k.size() * sizeof(float));
  }

  std::string page = kPageHtml;
  std::size_t at = 0;
  fill_marker(page, "plot_html_page.html", "@TITLE@",
              xml_escape(pic.title) + " \xE2\x80\x94 attention maps", &at);
  fill_marker(page, "plot_html_page.html", "@META@", script_json(meta), &at);
  fill_marker(page, "plot_html_page.html", "@MAPS@", base64(maps), &at);
  fill_marker(page, "plot_html_page.html", "@NEURON@", base64(neuron), &at);
  fill_marker(page, "plot_html_page.html", "@SCRIPT@", kPageScript, &at);
  return page;
}

}  // namespace app

// The model view (--layer all --plot FILE.html): every
// layer x head of a run as a tile of one page — a thumbnail of the head's map
// (block maxima, as the other pictures reduce), or, for maps too long for a
// thumbnail to hold, one of the head's summary figures (--summary's
// columns, averaged over the drawn batch entry's rows). A click shows the
// head enlarged with its figures.
//
// Letters: H' heads drawn, Nq x Nk cells of a thumbnail, L queries, T keys.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/map_summary.h"
#include "attn/tensor.h"
#include "pictures/colour_scale.h"

namespace app {

class MapCapture;

// Cells a side of a thumbnail (a head's map, block maxima).
constexpr std::size_t kModelViewCells = 48;
// Longest key axis whose thumbnails the page shows first; past it, a figure.
constexpr std::size_t kModelViewMapKeys = 512;

struct ModelViewLayer {
  std::int64_t layer = 0;
  std::string type;                // "full_attention", "sliding_attention", ...
  std::string dir;                 // its results' folder, as the run names it
  std::vector<std::string> files;  // the files written there ("context.npy", ...)
  attn::Tensor cells;              // (H', Nq, Nk) block maxima of the drawn batch entry
  // Per head: mean over the entry's rows of entropy (nats), weight on the
  // first key, weight on the recent keys, distance (tokens). Rows holding a
  // non-finite figure (only under --allow-nonfinite) are left out.
  std::vector<std::array<double, 4>> figures;
};

struct ModelView {
  std::string title, subtitle;
  std::vector<std::size_t> heads;  // the model's head numbers, one column each
  std::size_t L = 0, T = 0;        // queries and keys of every layer's maps
  std::size_t recent = 64;         // --recent W of the "recent" figure
  // --color-scale for the thumbnails (auto: log past kAutoLogKeys keys); each
  // head up to its own largest weight (percentile: its own 99th percentile).
  std::string color_scale = "linear";
  std::vector<ModelViewLayer> layers;
};

// One layer's tiles from its run's capture (all drawn heads, batch entry b)
// and its summary rows ((B, H', L', 5)).
ModelViewLayer model_view_layer(std::int64_t layer, std::string type, std::string dir,
                                const MapCapture& capture, const attn::SummarySink& summary,
                                std::size_t b);

// The page: self-contained, offline (model_view_page.html and .js).
std::string render_model_view(const ModelView& v);

}  // namespace app

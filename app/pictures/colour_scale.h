// The colour scale every picture shares (--color-scale): how a weight maps
// to a position 0..1 on viridis, the same in the PNG, the SVG, the HTML
// explorer and --show, and the words its legend says.
//
//   linear      0 to the largest weight; when a few cells dwarf the rest (a
//               causal map's first query puts 1.0 on token 0) it stops at the
//               99th percentile of the non-zero cells and brighter cells saturate
//   log         log10 from `lo` (a power of ten at or below 1/T, the weight of
//               a uniform row) to the largest weight: at S = 4,096 a key
//               taking 20x the uniform share stands out from the background
//   percentile  each head from 0 to its own 99th percentile (brighter cells
//               saturate): heads of very different sharpness side by side
//   auto        log when the maps have more than kAutoLogKeys keys, else linear
//
// Letters: K heads drawn, Nq x Nk cells of a drawn map.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "attn/tensor.h"

namespace app {

enum class ScaleKind { linear, log, percentile };

constexpr std::size_t kAutoLogKeys = 256;

// "auto", "linear", "log", "percentile" (the flag's values; any other is
// Exit::usage naming --color-scale) to the scale for maps of `keys` keys.
ScaleKind scale_kind(const std::string& name, std::size_t keys);
const char* scale_kind_name(ScaleKind kind);

struct ColourScale {
  ScaleKind kind = ScaleKind::linear;
  double vmax = 1;               // linear: the top of the bar (the 99th percentile when clipped)
  double max_value = 0;          // the largest weight drawn
  bool clipped = false;          // linear: vmax < max_value, brighter cells saturate
  double lo = 0;                 // log: the bottom of the bar
  std::vector<double> head_top;  // percentile: each head's 99th percentile (K entries)

  // The colour position of weight v of drawn head k: 0 for a masked cell (v
  // exactly 0, drawn hatched), else in (0, 1]: never 0, so a weight below
  // the scale's bottom is the darkest colour, not "masked".
  double position(double v, std::size_t k = 0) const;
  // The top of head k's scale (linear and log: vmax; percentile: head_top[k]).
  double top(std::size_t k) const;
  // What the legend says: "log scale, 1e-04 .. 0.93", "99th-percentile per
  // head", "linear, 0 .. 0.5".
  std::string legend() const;
};

// The scale of a picture's cells (K, Nq, Nk) of maps with `keys` keys (the
// log scale's bottom follows 1/keys).
ColourScale colour_scale(const attn::Tensor& cells, ScaleKind kind = ScaleKind::linear,
                         std::size_t keys = 0);

}  // namespace app

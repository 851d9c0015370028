// The colour scale of --plot and --show: viridis (matplotlib's default map),
// perceptually uniform and ordered dark (low weight) to bright (high weight),
// readable in grey and by most colour-blind readers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace app {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
};

// t in [0, 1] (clamped) to viridis, interpolated linearly between nine stops
// sampled from matplotlib's table (_cm_listed.py, at 0, 1/8, ..., 1).
inline Rgb viridis(double t) {
  static constexpr std::uint8_t kStops[9][3] = {
      {0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3e, 0x4a, 0x89},
      {0x31, 0x68, 0x8e}, {0x26, 0x82, 0x8e}, {0x1f, 0x9e, 0x89},
      {0x35, 0xb7, 0x79}, {0x6d, 0xcd, 0x59}, {0xfd, 0xe7, 0x25}};
  if (!(t > 0.0)) t = 0.0;  // also NaN
  if (t > 1.0) t = 1.0;
  const double x = t * 8.0;
  const int i = std::min(7, int(x));
  const double f = x - i;
  auto mix = [&](int c) {
    return std::uint8_t(std::lround(kStops[i][c] + f * (kStops[i + 1][c] - kStops[i][c])));
  };
  return {mix(0), mix(1), mix(2)};
}

// Masked cells (weight exactly 0): hatched light grey, outside the scale.
constexpr Rgb kMaskedFill{0xe4, 0xe4, 0xe4}, kMaskedInk{0xa8, 0xa8, 0xa8};

// Dark text on the bright end of the map, light text on the dark end.
inline bool needs_dark_text(double t) { return t > 0.62; }

}  // namespace app

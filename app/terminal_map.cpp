// --show: attention maps as terminal text, one block per head, rows labelled
// with the query tokens. Each cell is two columns wide so cells look square.
//
// Letters: S sequence, N cells per side of a drawn map.
#include <algorithm>
#include <cstdio>

#include "attn/escape.h"
#include "colormap.h"
#include "map_capture.h"
#include "plot.h"

namespace app {
namespace {

constexpr std::size_t kMaxLabelChars = 12;
// Darkest to brightest, for terminals without colour (and pipes).
constexpr const char kRamp[] = " .:-=+*#%@";

std::size_t utf8_length(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// `s` escaped (a label never reaches the terminal as a command) and cut to
// `width` columns without splitting an escape, right-aligned.
std::string fit(const std::string& s, std::size_t width) {
  const std::string out = attn::printable_prefix(s, width);
  return std::string(width - std::min(width, utf8_length(out)), ' ') + out;
}

// The xterm 256-colour palette's 6x6x6 cube entry nearest to c.
int xterm_index(Rgb c) {
  auto q = [](int v) { return v < 48 ? 0 : v < 115 ? 1 : (v - 35) / 40; };
  return 16 + 36 * q(c.r) + 6 * q(c.g) + q(c.b);
}

std::string background(Rgb c, TermColors colors) {
  char buf[32];
  if (colors == TermColors::truecolor)
    std::snprintf(buf, sizeof buf, "\033[48;2;%d;%d;%dm", c.r, c.g, c.b);
  else
    std::snprintf(buf, sizeof buf, "\033[48;5;%dm", xterm_index(c));
  return buf;
}

}  // namespace

std::string render_terminal(const MapPicture& pic, TermColors colors, int columns) {
  std::size_t label_w = 1;
  for (const auto& l : pic.labels) label_w = std::max(label_w, utf8_length(attn::printable(l)));
  label_w = std::min(label_w, kMaxLabelChars);
  const std::size_t avail = std::size_t(std::max(columns, 20)) > label_w + 2
                                ? (std::size_t(std::max(columns, 20)) - label_w - 2) / 2
                                : 8;
  const std::size_t n_in = pic.cells.shape.at(1);
  const std::size_t n = std::min(n_in, std::max<std::size_t>(avail, 4));
  float vmax = 0;
  for (float v : pic.cells.data) vmax = std::max(vmax, v);
  if (!(vmax > 0)) vmax = 1;

  std::string out = attn::printable(pic.title) + ": " + pic.subtitle + "\n";
  char buf[160];
  std::snprintf(buf, sizeof buf, "rows: queries, columns: keys; %s from 0 to %.3g%s\n",
                colors == TermColors::plain ? "\" .:-=+*#%@\"" : "dark to bright", double(vmax),
                n < pic.S ? "; each cell is the max of a block" : "");
  out += buf;
  for (std::size_t k = 0; k < pic.heads.size(); ++k) {
    const attn::Tensor cells = n == n_in
                                   ? attn::Tensor({n, n})
                                   : reduce_block_max(pic.cells.ptr() + k * n_in * n_in, n_in, n);
    const float* m = n == n_in ? pic.cells.ptr() + k * n_in * n_in : cells.ptr();
    out += "\nhead " + std::to_string(pic.heads[k]) + "\n";
    for (std::size_t i = 0; i < n; ++i) {
      // The label of the first token in this row of cells.
      const std::size_t token = (i * pic.S + n - 1) / n;
      out += fit(pic.labels[std::min(token, pic.S - 1)], label_w) + "  ";
      for (std::size_t j = 0; j < n; ++j) {
        const double t = m[i * n + j] / vmax;
        if (colors == TermColors::plain) {
          const char ch = kRamp[std::min<std::size_t>(9, std::size_t(t * 9.999))];
          out += ch;
          out += ch;
        } else {
          out += background(viridis(t), colors) + "  ";
        }
      }
      if (colors != TermColors::plain) out += "\033[0m";
      out += "\n";
    }
  }
  return out;
}

}  // namespace app

// The terminal's facts and ANSI sequences (term.h).
#include "term.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace app {
namespace {

// The xterm palette: 16 + 36 r + 6 g + b with levels 0, 95, 135, 175, 215,
// 255; 232..255 greys 8, 18, ..., 238.
constexpr int kCube[6] = {0, 95, 135, 175, 215, 255};

int dist2(Rgb a, int r, int g, int b) {
  return (a.r - r) * (a.r - r) + (a.g - g) * (a.g - g) + (a.b - b) * (a.b - b);
}

std::string sgr(int layer, Rgb c, TermColors colors) {
  char buf[32];
  if (colors == TermColors::truecolor)
    std::snprintf(buf, sizeof buf, "\033[%d;2;%d;%d;%dm", layer, c.r, c.g, c.b);
  else
    std::snprintf(buf, sizeof buf, "\033[%d;5;%dm", layer, xterm_index(c));
  return buf;
}

}  // namespace

TermColors terminal_colors() {
  if (!isatty(STDOUT_FILENO) || std::getenv("NO_COLOR")) return TermColors::plain;
  const char* term = std::getenv("TERM");
  if (term && std::string(term) == "dumb") return TermColors::plain;
  const char* ct = std::getenv("COLORTERM");
  const std::string c = ct ? ct : "";
  return c == "truecolor" || c == "24bit" ? TermColors::truecolor : TermColors::xterm256;
}

int terminal_columns(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    const int n = std::atoi(c);
    if (n > 0) return n;
  }
  return 80;
}

int xterm_index(Rgb c) {
  // Nearest cube entry by distance (not by rounding each channel: viridis
  // runs through the cube's gaps), or the nearest grey when closer.
  int best = 16, best_d = 1 << 30;
  for (int r = 0; r < 6; ++r)
    for (int g = 0; g < 6; ++g)
      for (int b = 0; b < 6; ++b) {
        const int d = dist2(c, kCube[r], kCube[g], kCube[b]);
        if (d < best_d) best_d = d, best = 16 + 36 * r + 6 * g + b;
      }
  for (int k = 0; k < 24; ++k) {
    const int v = 8 + 10 * k;
    const int d = dist2(c, v, v, v);
    if (d < best_d) best_d = d, best = 232 + k;
  }
  return best;
}

std::string background(Rgb c, TermColors colors) { return sgr(48, c, colors); }
std::string foreground(Rgb c, TermColors colors) { return sgr(38, c, colors); }

}  // namespace app

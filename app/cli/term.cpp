// The terminal's facts and ANSI sequences (term.h).
#include "cli/term.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace app {
namespace {

// The xterm palette's colour cube: 16 + 36 r + 6 g + b with these levels.
constexpr int kCube[6] = {0, 95, 135, 175, 215, 255};

std::string sgr(int layer, Rgb c, TermColors colors) {
  char buf[32];
  if (colors == TermColors::truecolor)
    std::snprintf(buf, sizeof buf, "\033[%d;2;%d;%d;%dm", layer, c.r, c.g, c.b);
  else
    std::snprintf(buf, sizeof buf, "\033[%d;5;%dm", layer, xterm_index(c));
  return buf;
}

}  // namespace

bool stdout_is_terminal() { return isatty(STDOUT_FILENO) == 1; }
bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

TermColors terminal_colors() {
  if (!stdout_is_terminal() || std::getenv("NO_COLOR")) return TermColors::plain;
  const char* term = std::getenv("TERM");
  if (term && std::string(term) == "dumb") return TermColors::plain;
  const char* ct = std::getenv("COLORTERM");
  const std::string c = ct ? ct : "";
  return c == "truecolor" || c == "24bit" ? TermColors::truecolor : TermColors::xterm256;
}

int terminal_columns(int fd) {
  // Standard output's terminal, else standard error's: `--show | less -R`
  // still fits the screen it ends up on.
  winsize ws{};
  for (int f : {fd, STDERR_FILENO})
    if (ioctl(f, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* c = std::getenv("COLUMNS")) {
    const int n = std::atoi(c);
    if (n > 0) return n;
  }
  return 80;
}

int xterm_index(Rgb c) {
  // The nearest cube entry by the "redmean" weighted distance (closer to
  // what the eye sees than plain RGB distance). Not by rounding each channel
  // (viridis runs through the cube's gaps: 8 colours), and not the grey ramp
  // (nearer in RGB to viridis's desaturated middle, but it breaks the hue
  // order). Viridis gets 14 distinct colours, in order.
  int best = 16;
  double best_d = 1e30;
  for (int r = 0; r < 6; ++r)
    for (int g = 0; g < 6; ++g)
      for (int b = 0; b < 6; ++b) {
        const double rm = (c.r + kCube[r]) / 2.0;
        const double dr = c.r - kCube[r], dg = c.g - kCube[g], db = c.b - kCube[b];
        const double d = (2 + rm / 256) * dr * dr + 4 * dg * dg + (2 + (255 - rm) / 256) * db * db;
        if (d < best_d) best_d = d, best = 16 + 36 * r + 6 * g + b;
      }
  return best;
}

std::string background(Rgb c, TermColors colors) { return sgr(48, c, colors); }
std::string foreground(Rgb c, TermColors colors) { return sgr(38, c, colors); }

}  // namespace app

// The terminal: its width and colours, and the ANSI sequences that --show
// and the progress bar write. The one place that knows about ttys.
#pragma once

#include <string>

#include "cli/colormap.h"

namespace app {

// --show's colours: 24-bit (COLORTERM=truecolor or 24bit), the xterm
// 256-colour palette, or none (not a terminal, NO_COLOR, TERM=dumb).
enum class TermColors { plain, xterm256, truecolor };

// Whether standard output / standard error is a terminal.
bool stdout_is_terminal();
bool stderr_is_terminal();

// For standard output.
TermColors terminal_colors();

// Columns of the terminal on `fd` or else on stderr (TIOCGWINSZ), else
// $COLUMNS, else 80.
int terminal_columns(int fd = 1);

// The xterm-256 palette entry nearest to c (in its 6x6x6 colour cube).
int xterm_index(Rgb c);

// SGR sequences: background or foreground colour, and reset.
std::string background(Rgb c, TermColors colors);
std::string foreground(Rgb c, TermColors colors);
constexpr const char* kReset = "\033[0m";
// Erase to the end of the line (after a carriage return redraw).
constexpr const char* kEraseLine = "\033[K";

}  // namespace app

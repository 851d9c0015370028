// Two drawing back ends behind one interface, so --plot lays a picture out
// once: SVG written as XML text (labels stay real <text>, greppable and
// selectable) and cairo for PNG (cairo draws the fonts and encodes the PNG).
// attn-run links none of this: plot_canvas.cpp and plot_fonts.cpp form the
// picture module attn-run-cairo.so, and plot_module.cpp forwards these
// functions to it (plot_module.h); tests may compile them in directly.
//
// Letters: Nq x Nk cells of a heatmap (query rows, key columns).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "cli/colormap.h"

namespace app {

enum class Anchor { start, middle, end };

class Canvas {
 public:
  virtual ~Canvas() = default;
  virtual void fill_rect(double x, double y, double w, double h, Rgb fill) = 0;
  // A masked area: light grey with diagonal hatching (not a colour of the scale).
  virtual void hatch_rect(double x, double y, double w, double h) = 0;
  virtual void stroke_rect(double x, double y, double w, double h, Rgb stroke, double width) = 0;
  virtual void line(double x0, double y0, double x1, double y1, Rgb stroke, double width) = 0;
  // Baseline at y; `vertical` turns the text 90 degrees counter-clockwise
  // about (x, y) (reading bottom to top).
  virtual void text(double x, double y, const std::string& s, double size, Anchor anchor, Rgb color,
                    bool bold = false, bool vertical = false) = 0;
  // cells: (Nq, Nk) values mapped by viridis(v / vmax), drawn in a w x h
  // rectangle; cells of exactly 0 (masked keys) hatched.
  virtual void heatmap(double x, double y, double w, double h, const float* cells, std::size_t nq,
                       std::size_t nk, double vmax) = 0;
  virtual void begin_group(const std::string& cls, const std::string& id) = 0;
  virtual void end_group() = 0;
};

// Width of `s` in px at `size` (cairo's toy font API, font_family_for(s)).
double text_width(const std::string& s, double size, bool bold = false);

std::unique_ptr<Canvas> make_svg_canvas(double width, double height, std::string* out);
// Draws at `scale` x the layout's px; the PNG bytes land in *out on destruction.
std::unique_ptr<Canvas> make_png_canvas(double width, double height, double scale,
                                        std::string* out);

// Free cairo's and fontconfig's process-wide font caches (after drawing).
void release_font_caches();

constexpr const char* kFontFamily = "DejaVu Sans";
// Asked for first when a label needs more than DejaVu Sans (fonts-noto-cjk).
constexpr const char* kCjkFontFamily = "Noto Sans CJK SC";

// The family cairo draws `s` with (plot_fonts.cpp): kFontFamily, or the
// family fontconfig finds for characters that DejaVu Sans lacks.
std::string font_family_for(const std::string& s);

}  // namespace app

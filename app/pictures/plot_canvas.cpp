// SVG-as-text and cairo back ends of the plot canvas (plot_canvas.h).
#include "pictures/plot_canvas.h"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "attn/error.h"
#include "pictures/plot_text.h"

namespace app {
namespace {

std::string hex(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

// Quantized colour index of a weight: equal indices share one colour; -1
// for a weight of exactly 0 (a masked key: drawn hatched, not dark).
int level(float v, double vmax) {
  if (!(v > 0)) return -1;
  const double t = vmax > 0 ? double(v) / vmax : 0.0;
  return int(std::lround(std::min(1.0, std::max(0.0, t)) * 255.0));
}

Rgb colour(int level) { return level < 0 ? kMaskedFill : viridis(level / 255.0); }

// Runs of masked cells along each row of cells (Nq, Nk): (row, first
// column, end column).
struct Run {
  std::size_t i, j0, j1;
};
std::vector<Run> masked_runs(const float* cells, std::size_t nq, std::size_t nk) {
  std::vector<Run> runs;
  for (std::size_t i = 0; i < nq; ++i)
    for (std::size_t j = 0; j < nk;) {
      if (cells[i * nk + j] > 0) {
        ++j;
        continue;
      }
      std::size_t k = j + 1;
      while (k < nk && !(cells[i * nk + k] > 0)) ++k;
      runs.push_back({i, j, k});
      j = k;
    }
  return runs;
}

cairo_status_t append_to_string(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

// One pixel per cell: cells (Nq, Nk) as a cairo image surface Nk wide.
cairo_surface_t* cells_image(const float* cells, std::size_t nq, std::size_t nk, double vmax) {
  cairo_surface_t* img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, int(nk), int(nq));
  cairo_surface_flush(img);
  unsigned char* px = cairo_image_surface_get_data(img);
  const int stride = cairo_image_surface_get_stride(img);
  for (std::size_t i = 0; i < nq; ++i) {
    auto* row = reinterpret_cast<std::uint32_t*>(px + i * std::size_t(stride));
    for (std::size_t j = 0; j < nk; ++j) {
      const Rgb c = colour(level(cells[i * nk + j], vmax));
      row[j] = (std::uint32_t(c.r) << 16) | (std::uint32_t(c.g) << 8) | c.b;
    }
  }
  cairo_surface_mark_dirty(img);
  return img;
}

// Past this many cells on a side, an SVG panel is one embedded PNG image
// rather than rects: a 256 x 256 map would otherwise be tens of thousands of rects.
constexpr std::size_t kMaxSvgRectCells = 64;

class SvgCanvas : public Canvas {
 public:
  SvgCanvas(double w, double h, std::string* out) : out_(out) {
    *out_ =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" "
        "xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"" +
        num(w) + "\" height=\"" + num(h) + "\" viewBox=\"0 0 " + num(w) + " " + num(h) +
        "\" font-family=\"" + kFontFamily + ", " + kCjkFontFamily +
        ", sans-serif\">\n"
        "<defs><pattern id=\"masked\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\" "
        "patternTransform=\"rotate(45)\"><rect width=\"4\" height=\"4\" fill=\"" +
        hex(kMaskedFill) + "\"/><rect width=\"1.2\" height=\"4\" fill=\"" + hex(kMaskedInk) +
        "\"/></pattern></defs>\n";
  }
  ~SvgCanvas() override { *out_ += "</svg>\n"; }

  void fill_rect(double x, double y, double w, double h, Rgb fill) override {
    *out_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" +
             num(h) + "\" fill=\"" + hex(fill) + "\"/>\n";
  }
  void hatch_rect(double x, double y, double w, double h) override {
    *out_ += "<rect class=\"masked\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) +
             "\" height=\"" + num(h) + "\" fill=\"url(#masked)\"/>\n";
  }
  void stroke_rect(double x, double y, double w, double h, Rgb stroke, double width) override {
    *out_ += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" +
             num(h) + "\" fill=\"none\" stroke=\"" + hex(stroke) + "\" stroke-width=\"" +
             num(width) + "\"/>\n";
  }
  void line(double x0, double y0, double x1, double y1, Rgb stroke, double width) override {
    *out_ += "<line x1=\"" + num(x0) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(x1) + "\" y2=\"" +
             num(y1) + "\" stroke=\"" + hex(stroke) + "\" stroke-width=\"" + num(width) + "\"/>\n";
  }
  void text(double x, double y, const std::string& s, double size, Anchor anchor, Rgb color,
            bool bold, bool vertical) override {
    *out_ += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(size) + "\"";
    if (anchor != Anchor::start)
      *out_ +=
          std::string(" text-anchor=\"") + (anchor == Anchor::middle ? "middle" : "end") + "\"";
    if (bold) *out_ += " font-weight=\"bold\"";
    if (vertical) *out_ += " transform=\"rotate(-90 " + num(x) + " " + num(y) + ")\"";
    if (color.r || color.g || color.b) *out_ += " fill=\"" + hex(color) + "\"";
    *out_ += ">" + xml_escape(s) + "</text>\n";
  }
  void heatmap(double x, double y, double w, double h, const float* cells, std::size_t nq,
               std::size_t nk, double vmax) override {
    // One rect per run of equal colour along a row: causal maps' zero upper
    // triangles become one rect a row.
    const double cw = w / double(nk), ch = h / double(nq);
    if (std::max(nq, nk) > kMaxSvgRectCells) {
      cairo_surface_t* img = cells_image(cells, nq, nk, vmax);
      std::string png;
      cairo_surface_write_to_png_stream(img, append_to_string, &png);
      cairo_surface_destroy(img);
      *out_ += "<image class=\"heatmap\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" +
               num(w) + "\" height=\"" + num(h) +
               "\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" "
               "xlink:href=\"data:image/png;base64," +
               base64(png) + "\"/>\n";
      for (const Run& r : masked_runs(cells, nq, nk))
        hatch_rect(x + r.j0 * cw, y + r.i * ch, (r.j1 - r.j0) * cw, ch);
      return;
    }
    *out_ += "<g class=\"heatmap\" shape-rendering=\"crispEdges\">\n";
    for (std::size_t i = 0; i < nq; ++i) {
      std::size_t j = 0;
      while (j < nk) {
        const int lv = level(cells[i * nk + j], vmax);
        std::size_t k = j + 1;
        while (k < nk && level(cells[i * nk + k], vmax) == lv) ++k;
        if (lv < 0)
          hatch_rect(x + j * cw, y + i * ch, (k - j) * cw, ch);
        else
          fill_rect(x + j * cw, y + i * ch, (k - j) * cw, ch, colour(lv));
        j = k;
      }
    }
    *out_ += "</g>\n";
  }
  void begin_group(const std::string& cls, const std::string& id) override {
    *out_ += "<g class=\"" + xml_escape(cls) + "\" id=\"" + xml_escape(id) + "\">\n";
  }
  void end_group() override { *out_ += "</g>\n"; }

 private:
  std::string* out_;
};

class CairoCanvas : public Canvas {
 public:
  CairoCanvas(double w, double h, double scale, std::string* out) : out_(out) {
    surface_ = cairo_image_surface_create(CAIRO_FORMAT_RGB24, int(std::ceil(w * scale)),
                                          int(std::ceil(h * scale)));
    cr_ = cairo_create(surface_);
    if (cairo_status(cr_) != CAIRO_STATUS_SUCCESS)
      throw attn::Error(attn::Exit::software, std::string("cairo: cannot create the image: ") +
                                                  cairo_status_to_string(cairo_status(cr_)));
    cairo_scale(cr_, scale, scale);
    cairo_set_source_rgb(cr_, 1, 1, 1);
    cairo_paint(cr_);
  }
  ~CairoCanvas() override {
    cairo_destroy(cr_);
    cairo_surface_flush(surface_);
    cairo_surface_write_to_png_stream(surface_, append_to_string, out_);
    cairo_surface_destroy(surface_);
  }

  void fill_rect(double x, double y, double w, double h, Rgb fill) override {
    set(fill);
    cairo_rectangle(cr_, x, y, w, h);
    cairo_fill(cr_);
  }
  void stroke_rect(double x, double y, double w, double h, Rgb stroke, double width) override {
    set(stroke);
    cairo_set_line_width(cr_, width);
    cairo_rectangle(cr_, x, y, w, h);
    cairo_stroke(cr_);
  }
  void line(double x0, double y0, double x1, double y1, Rgb stroke, double width) override {
    set(stroke);
    cairo_set_line_width(cr_, width);
    cairo_move_to(cr_, x0, y0);
    cairo_line_to(cr_, x1, y1);
    cairo_stroke(cr_);
  }
  void text(double x, double y, const std::string& s, double size, Anchor anchor, Rgb color,
            bool bold, bool vertical) override {
    const std::string t = picture_text(s);  // cairo refuses invalid UTF-8
    cairo_save(cr_);
    select_font(cr_, t, size, bold);
    cairo_text_extents_t e;
    cairo_text_extents(cr_, t.c_str(), &e);
    const double dx = anchor == Anchor::start    ? 0.0
                      : anchor == Anchor::middle ? -e.x_advance / 2
                                                 : -e.x_advance;
    cairo_translate(cr_, x, y);
    if (vertical) cairo_rotate(cr_, -M_PI / 2);
    set(color);
    cairo_move_to(cr_, dx, 0);
    cairo_show_text(cr_, t.c_str());
    cairo_restore(cr_);
  }
  void heatmap(double x, double y, double w, double h, const float* cells, std::size_t nq,
               std::size_t nk, double vmax) override {
    // One pixel per cell, scaled up with nearest-neighbour filtering: crisp
    // cells, no seams between neighbours.
    cairo_surface_t* img = cells_image(cells, nq, nk, vmax);
    const double cw = w / double(nk), ch = h / double(nq);
    cairo_save(cr_);
    cairo_translate(cr_, x, y);
    cairo_scale(cr_, cw, ch);
    cairo_set_source_surface(cr_, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr_), CAIRO_FILTER_NEAREST);
    cairo_rectangle(cr_, 0, 0, double(nk), double(nq));
    cairo_fill(cr_);
    cairo_restore(cr_);
    cairo_surface_destroy(img);
    const auto runs = masked_runs(cells, nq, nk);
    if (runs.empty()) return;
    cairo_save(cr_);
    for (const Run& r : runs)
      cairo_rectangle(cr_, x + r.j0 * cw, y + r.i * ch, (r.j1 - r.j0) * cw, ch);
    cairo_clip(cr_);
    hatch(x, y, w, h);
    cairo_restore(cr_);
  }
  void hatch_rect(double x, double y, double w, double h) override {
    cairo_save(cr_);
    set(kMaskedFill);
    cairo_rectangle(cr_, x, y, w, h);
    cairo_fill_preserve(cr_);
    cairo_clip(cr_);
    hatch(x, y, w, h);
    cairo_restore(cr_);
  }
  void begin_group(const std::string&, const std::string&) override {}
  void end_group() override {}

  static void select_font(cairo_t* cr, const std::string& text, double size, bool bold) {
    cairo_select_font_face(cr, font_family_for(text).c_str(), CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
  }

 private:
  void set(Rgb c) { cairo_set_source_rgb(cr_, c.r / 255.0, c.g / 255.0, c.b / 255.0); }
  // Diagonal lines 4 px apart over (x, y, w, h), within the current clip.
  void hatch(double x, double y, double w, double h) {
    set(kMaskedInk);
    cairo_set_line_width(cr_, 0.85);
    for (double d = -h; d < w; d += 4) {
      cairo_move_to(cr_, x + d, y + h);
      cairo_line_to(cr_, x + d + h, y);
    }
    cairo_stroke(cr_);
  }
  std::string* out_;
  cairo_surface_t* surface_ = nullptr;
  cairo_t* cr_ = nullptr;
};

}  // namespace

double text_width(const std::string& s, double size, bool bold) {
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_A8, 1, 1);
  cairo_t* cr = cairo_create(surface);
  const std::string t = picture_text(s);
  CairoCanvas::select_font(cr, t, size, bold);
  cairo_text_extents_t e;
  cairo_text_extents(cr, t.c_str(), &e);
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  return e.x_advance;
}

std::unique_ptr<Canvas> make_svg_canvas(double width, double height, std::string* out) {
  return std::make_unique<SvgCanvas>(width, height, out);
}

std::unique_ptr<Canvas> make_png_canvas(double width, double height, double scale,
                                        std::string* out) {
  return std::make_unique<CairoCanvas>(width, height, scale, out);
}

}  // namespace app

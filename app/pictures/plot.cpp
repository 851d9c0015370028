// --plot: lays out a grid of heatmaps, one panel per head, with token labels,
// a colour legend and a title, then draws it on an SVG or cairo canvas.
//
// Letters: L queries (rows), T keys (columns), Nq x Nk cells of a drawn map.
#include "pictures/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attn/error.h"
#include "attn/output.h"
#include "pictures/plot_canvas.h"
#include "pictures/plot_text.h"

namespace app {
namespace {

constexpr double kMargin = 20;
constexpr double kTitleSize = 16, kSubtitleSize = 12, kPanelTitleSize = 13;
constexpr double kLabelSize = 11, kTickSize = 11, kValueSize = 10;
constexpr double kMaxCellPx = 48;     // a 6-token map is 288 px wide
constexpr double kMaxPanelPx = 320;   // longer maps shrink their cells to fit this
constexpr double kMinLegendPx = 160;  // the colour bar beside a map of a few query rows
constexpr double kPanelGapX = 28, kPanelGapY = 18;
constexpr double kLegendBarW = 14;
constexpr std::size_t kMaxPanelColumns = 4;
constexpr double kMaxGridPx = 1800;             // panels wrap before the picture gets wider
constexpr std::size_t kMaxLabelledTokens = 64;  // every label drawn up to this S
constexpr std::size_t kMaxLabelChars = 14;
constexpr double kPngScale = 2;  // crisp on high-density screens and in READMEs
const Rgb kInk{0x22, 0x22, 0x22}, kGrey{0x88, 0x88, 0x88}, kWhite{0xff, 0xff, 0xff};

// Round steps (1, 2 or 5 times a power of ten) from 0 up to vmax, at most ~6.
std::vector<double> ticks(double vmax) {
  const double raw = vmax / 5.0;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = p;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  std::vector<double> t;
  for (int k = 0; k * step <= vmax * (1 + 1e-9); ++k) t.push_back(k * step);
  return t;
}

std::string tick_str(double v, double step) {
  int decimals = std::max(0, int(std::ceil(-std::log10(step) - 1e-9)));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// One axis of a panel: queries down the side, keys along the bottom.
struct Axis {
  std::size_t n = 0;               // cells
  double pitch = 0;                // px per token
  std::size_t label_step = 1;      // label every k-th token
  std::vector<std::string> shown;  // a label per token, "" where thinned out
  double widest = 0;               // px of the widest label shown
};

struct Layout {
  double panel_w = 0, panel_h = 0;  // the heatmap in px: T keys wide, L queries high
  Axis rows, cols;                  // queries, keys
  double legend_h = 0;              // the colour bar's height
  double row_label_w = 0, col_label_h = 0;
  bool vertical_cols = false;
  double block_w = 0, block_h = 0, header_h = 0, legend_w = 0;
  std::size_t grid_cols = 1, grid_rows = 1;
  double width = 0, height = 0;
  ColourScale scale;     // --color-scale over the cells drawn
  double vmax = 1;       // linear: top of the colour scale
  double max_value = 0;  // largest weight shown
  bool clipped = false;  // linear: vmax < max_value, brighter cells saturate
  bool values = false;   // print the weight in each cell (small maps)
};

std::string subtitle(const MapPicture& pic, const Layout& L);
std::vector<std::pair<double, std::string>> legend_ticks(const Layout& L);

// "≥ 0.0394": the top of a capped colour bar ("≥ p99" for per-head percentiles).
std::string cap_label(const Layout& L) {
  if (L.scale.kind == ScaleKind::percentile) return "\xE2\x89\xA5 p99";
  char buf[32];
  std::snprintf(buf, sizeof buf, "\xE2\x89\xA5 %.3g", L.vmax);
  return buf;
}

// The colour bar's ticks as (position 0..1, text): round steps of a linear
// scale (below the cap label when capped), powers of ten of a log scale,
// 0 and 0.5 of a per-head percentile scale (fractions of each head's p99).
std::vector<std::pair<double, std::string>> legend_ticks(const Layout& L) {
  std::vector<std::pair<double, std::string>> out;
  if (L.scale.kind == ScaleKind::log) {
    const double lo = std::log10(L.scale.lo), hi = std::log10(L.scale.vmax);
    for (int e = int(std::ceil(lo - 1e-9)); e <= int(std::floor(hi + 1e-9)); ++e) {
      char buf[16];
      if (e >= -2)
        std::snprintf(buf, sizeof buf, "%g", std::pow(10.0, e));  // 0.01, 0.1, 1
      else
        std::snprintf(buf, sizeof buf, "1e%d", e);  // 1e-4
      out.emplace_back((e - lo) / (hi - lo), buf);
    }
    return out;
  }
  if (L.scale.kind == ScaleKind::percentile) return {{0.0, "0"}, {0.5, "0.5 p99"}};
  auto t = ticks(L.vmax);
  const double step = t.size() > 1 ? t[1] : 1.0;
  if (L.clipped)
    while (!t.empty() && t.back() > L.vmax * 0.88) t.pop_back();  // room for the cap label
  for (double v : t) out.emplace_back(v / L.vmax, tick_str(v, step));
  return out;
}

// Labels of `tokens` tokens drawn `length` px along an axis of n cells.
Axis lay_out_axis(const std::vector<std::string>& labels, std::size_t n, double length) {
  Axis a;
  a.n = n;
  const std::size_t tokens = labels.size();
  a.pitch = length / double(tokens);
  // Every k-th label, k a round number (1, 2, 5, 10, 20, 50, ...) so
  // position labels read 0, 50, 100 rather than 0, 42, 84.
  const double label_row = kLabelSize + 2;
  const std::size_t min_step = std::size_t(std::ceil(label_row / a.pitch - 1e-9));
  a.label_step = 1;
  for (std::size_t p = 1; a.label_step < min_step; p *= 10)
    for (std::size_t m : {1, 2, 5})
      if (a.label_step < min_step) a.label_step = m * p;
  a.shown.resize(tokens);
  for (std::size_t t = 0; t < tokens; t += a.label_step) {
    a.shown[t] = shorten(labels[t], kMaxLabelChars);
    a.widest = std::max(a.widest, text_width(a.shown[t], kLabelSize));
  }
  return a;
}

Layout lay_out(const MapPicture& pic) {
  Layout L;
  const std::size_t nq = pic.cells.shape.at(1), nk = pic.cells.shape.at(2);
  // Square cells: the longer side is at most kMaxPanelPx. Up to
  // kMaxLabelledTokens tokens every label gets a row (or column) of its own:
  // the panel grows past kMaxPanelPx rather than thinning them out.
  const double label_row = kLabelSize + 2;
  const double longest = std::min(kMaxCellPx * double(std::max(nq, nk)), kMaxPanelPx);
  L.panel_w = nk >= nq ? longest : longest * double(nk) / double(nq);
  L.panel_h = nq >= nk ? longest : longest * double(nq) / double(nk);
  if (pic.T <= kMaxLabelledTokens && nk == pic.T)
    L.panel_w = std::max(L.panel_w, label_row * double(pic.T));
  if (pic.L <= kMaxLabelledTokens && nq == pic.L)
    L.panel_h = std::max(L.panel_h, label_row * double(pic.L));
  L.rows = lay_out_axis(pic.labels, nq, L.panel_h);
  L.cols = lay_out_axis(pic.key_labels, nk, L.panel_w);
  L.row_label_w = L.rows.widest + 6;
  // Column labels lie flat when each fits its slot, else stand up.
  L.vertical_cols = L.cols.widest > L.cols.pitch * double(L.cols.label_step) - 4;
  L.col_label_h = (L.vertical_cols ? L.cols.widest : kLabelSize) + 6;
  // A map of a few query rows still gets a readable colour bar.
  L.legend_h = std::max(L.panel_h, std::min(L.panel_w, kMinLegendPx));

  const double axis_w = kLabelSize + 6;  // the rotated "query" caption
  L.block_w = axis_w + L.row_label_w + L.panel_w + kPanelGapX;
  L.block_h = kPanelTitleSize + 8 + L.panel_h + L.col_label_h + kLabelSize + 6 + kPanelGapY;
  // Heads wrap into a grid about as wide as it is tall (4 heads: 2 x 2, 12
  // heads: 4 x 3), never wider than kMaxPanelColumns or ~kMaxGridPx.
  const std::size_t K = pic.heads.size();
  const auto squarish = std::size_t(std::ceil(std::sqrt(double(K)) - 1e-9));
  const auto fit = std::max<std::size_t>(1, std::size_t(kMaxGridPx / L.block_w));
  L.grid_cols = std::max<std::size_t>(1, std::min({squarish, kMaxPanelColumns, fit}));
  L.grid_rows = (pic.heads.size() + L.grid_cols - 1) / L.grid_cols;
  L.header_h = kMargin + kTitleSize + 8 + kSubtitleSize + 18;

  L.scale = colour_scale(pic.cells, pic.scale, pic.T);
  L.vmax = L.scale.vmax;
  L.max_value = L.scale.max_value;
  L.clipped = L.scale.clipped;
  double tick_w = 0;
  for (const auto& [v, text] : legend_ticks(L))
    tick_w = std::max(tick_w, text_width(text, kTickSize));
  if (L.clipped || L.scale.kind == ScaleKind::percentile)
    tick_w = std::max(tick_w, text_width(cap_label(L), kTickSize, true));
  tick_w = std::max(tick_w, text_width("masked", kTickSize));
  L.legend_w = std::max(kLegendBarW + 6 + tick_w, text_width("weight", kTickSize)) + 8;
  L.values =
      nq == pic.L && nk == pic.T && std::min(L.panel_w / double(nk), L.panel_h / double(nq)) >= 36;

  L.width = kMargin + double(L.grid_cols) * L.block_w + L.legend_w + kMargin;
  L.width = std::max(L.width, 2 * kMargin + std::max(text_width(pic.title, kTitleSize, true),
                                                     text_width(subtitle(pic, L), kSubtitleSize)));
  L.height = L.header_h + double(L.grid_rows) * L.block_h + kMargin - kPanelGapY;
  // The legend (title, bar, masked swatch) may reach below a short panel.
  L.height = std::max(L.height,
                      L.header_h + kPanelTitleSize + 8 + L.legend_h + 10 + kLegendBarW + kMargin);
  L.width = std::ceil(L.width);
  L.height = std::ceil(L.height);
  return L;
}

void draw_panel(Canvas& c, const MapPicture& pic, const Layout& L, std::size_t k, double x0,
                double y0) {
  c.begin_group("panel", pic.mean_of ? "mean" : "head-" + std::to_string(pic.heads[k]));
  const double axis_w = kLabelSize + 6;
  const double px = x0 + axis_w + L.row_label_w;  // panel's left edge
  const double py = y0 + kPanelTitleSize + 8;     // panel's top edge
  const std::size_t nq = L.rows.n, nk = L.cols.n;
  std::string title = panel_title(pic, k);
  if (L.scale.kind == ScaleKind::percentile) {  // each head's own top
    char buf[48];
    std::snprintf(buf, sizeof buf, " (p99 %.3g)", L.scale.top(k));
    title += buf;
  }
  c.text(px + L.panel_w / 2, y0 + kPanelTitleSize, title, kPanelTitleSize, Anchor::middle, kInk,
         true);
  const float* cells = pic.cells.ptr() + k * nq * nk;
  // The cells as colour positions (--color-scale), masked cells still 0.
  std::vector<float> pos(nq * nk);
  for (std::size_t i = 0; i < nq * nk; ++i) pos[i] = float(L.scale.position(cells[i], k));
  c.heatmap(px, py, L.panel_w, L.panel_h, pos.data(), nq, nk, 1.0);
  if (L.values) {
    const double cw = L.panel_w / double(nk), ch = L.panel_h / double(nq);
    for (std::size_t i = 0; i < nq; ++i)
      for (std::size_t j = 0; j < nk; ++j) {
        const double v = cells[i * nk + j];
        if (v == 0.0) continue;  // masked keys (or a row with every key masked): left blank
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.2f", v);
        c.text(px + (j + 0.5) * cw, py + (i + 0.5) * ch + kValueSize * 0.35, buf, kValueSize,
               Anchor::middle, needs_dark_text(pos[i * nk + j]) ? kInk : kWhite);
      }
  }
  c.stroke_rect(px, py, L.panel_w, L.panel_h, kGrey, 0.5);

  // Labels at token centres: rows are queries, columns are keys.
  for (std::size_t t = 0; t < pic.L; t += L.rows.label_step) {
    const double centre = (double(t) + 0.5) * L.rows.pitch;
    c.text(px - 4, py + centre + kLabelSize * 0.35, L.rows.shown[t], kLabelSize, Anchor::end, kInk);
  }
  for (std::size_t t = 0; t < pic.T; t += L.cols.label_step) {
    const double centre = (double(t) + 0.5) * L.cols.pitch;
    if (L.vertical_cols)
      c.text(px + centre + kLabelSize * 0.35, py + L.panel_h + 4, L.cols.shown[t], kLabelSize,
             Anchor::end, kInk, false, true);
    else
      c.text(px + centre, py + L.panel_h + 4 + kLabelSize, L.cols.shown[t], kLabelSize,
             Anchor::middle, kInk);
  }
  c.text(px + L.panel_w / 2, py + L.panel_h + L.col_label_h + kLabelSize + 2, "key", kLabelSize,
         Anchor::middle, kGrey);
  c.text(x0 + kLabelSize, py + L.panel_h / 2, "query", kLabelSize, Anchor::middle, kGrey, false,
         true);
  c.end_group();
}

void draw_legend(Canvas& c, const Layout& L, double x0, double y0) {
  c.begin_group("legend", "legend");
  const double top = y0 + kPanelTitleSize + 8, h = L.legend_h;
  c.text(x0, y0 + kPanelTitleSize,
         L.scale.kind == ScaleKind::log          ? "weight (log)"
         : L.scale.kind == ScaleKind::percentile ? "weight / p99"
                                                 : "weight",
         kTickSize, Anchor::start, kInk);
  // The bar as a column of thin bands, brightest (vmax) at the top.
  constexpr int kBands = 64;
  for (int k = 0; k < kBands; ++k)
    c.fill_rect(x0, top + h * k / kBands, kLegendBarW, h / kBands + 0.5,
                viridis(1.0 - (k + 0.5) / kBands));
  c.stroke_rect(x0, top, kLegendBarW, h, kGrey, 0.5);
  if (L.clipped || L.scale.kind == ScaleKind::percentile)
    // A capped bar: its top says "this and more" (cells above the top saturate).
    c.text(x0 + kLegendBarW + 6, top + kTickSize * 0.35, cap_label(L), kTickSize, Anchor::start,
           kInk, true);
  // Masked cells (weight exactly 0) under the bar: not part of the scale.
  c.hatch_rect(x0, top + h + 10, kLegendBarW, kLegendBarW);
  c.stroke_rect(x0, top + h + 10, kLegendBarW, kLegendBarW, kGrey, 0.5);
  c.text(x0 + kLegendBarW + 6, top + h + 10 + kLegendBarW * 0.5 + kTickSize * 0.35, "masked",
         kTickSize, Anchor::start, kInk);
  for (const auto& [p, text] : legend_ticks(L)) {
    const double y = top + h * (1.0 - p);
    c.line(x0 + kLegendBarW, y, x0 + kLegendBarW + 4, y, kInk, 1);
    c.text(x0 + kLegendBarW + 6, y + kTickSize * 0.35, text, kTickSize, Anchor::start, kInk);
  }
  c.end_group();
}

std::string subtitle(const MapPicture& pic, const Layout& L) {
  const std::string note = pic.subtitle + block_note(pic.L, pic.T, L.rows.n, L.cols.n);
  if (L.scale.kind != ScaleKind::linear) return note + "; colour: " + L.scale.legend();
  if (!L.clipped) return note;
  char buf[160];
  std::snprintf(buf, sizeof buf, "; colours saturate at %.3g (99th percentile; max %.3g)", L.vmax,
                L.max_value);
  return note + buf;
}

void draw(Canvas& c, const MapPicture& pic, const Layout& L) {
  c.fill_rect(0, 0, L.width, L.height, kWhite);
  c.text(kMargin, kMargin + kTitleSize - 4, pic.title, kTitleSize, Anchor::start, kInk, true);
  c.text(kMargin, kMargin + kTitleSize + 8 + kSubtitleSize - 4, subtitle(pic, L), kSubtitleSize,
         Anchor::start, kGrey);
  for (std::size_t k = 0; k < pic.heads.size(); ++k) {
    const double x0 = kMargin + double(k % L.grid_cols) * L.block_w;
    const double y0 = L.header_h + double(k / L.grid_cols) * L.block_h;
    draw_panel(c, pic, L, k, x0, y0);
  }
  draw_legend(c, L, kMargin + double(L.grid_cols) * L.block_w, L.header_h);
}

void check(const MapPicture& pic) {
  if (pic.cells.ndim() != 3 || pic.cells.shape[0] != pic.heads.size() || pic.cells.shape[1] == 0 ||
      pic.cells.shape[1] > pic.L || pic.cells.shape[2] == 0 || pic.cells.shape[2] > pic.T ||
      pic.labels.size() != pic.L || pic.key_labels.size() != pic.T || pic.heads.empty() ||
      (pic.mean_of && pic.heads.size() != 1))
    throw attn::Error(attn::Exit::software,
                      "plot: inconsistent picture " + attn::shape_str(pic.cells.shape) +
                          " for L = " + std::to_string(pic.L) + ", T = " + std::to_string(pic.T));
}

}  // namespace

std::string render_svg(const MapPicture& full, double* width, double* height) {
  check(full);
  const MapPicture pic = reduced(full, kMaxPlotCells);
  const Layout L = lay_out(pic);
  std::string out;
  {
    auto c = make_svg_canvas(L.width, L.height, &out);
    draw(*c, pic, L);
  }  // the canvas closes the document
  if (width) *width = L.width;
  if (height) *height = L.height;
  return out;
}

std::string render_png(const MapPicture& full) {
  check(full);
  const MapPicture pic = reduced(full, kMaxPlotCells);
  const Layout L = lay_out(pic);
  std::string out;
  {
    auto c = make_png_canvas(L.width, L.height, kPngScale, &out);
    draw(*c, pic, L);
  }  // the canvas encodes the PNG when it goes
  if (out.empty()) throw attn::Error(attn::Exit::io, "--plot: cairo could not encode the PNG");
  return out;
}

PlotFile::PlotFile(const std::string& path) {
  std::string lower = path;
  for (auto& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  auto ends = [&](const char* ext) {
    const std::string e = ext;
    return lower.size() >= e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0;
  };
  kind_ = ends(".png") ? Kind::png : ends(".html") ? Kind::html : Kind::svg;
  // All or nothing, like every output: a temporary beside the target, renamed.
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  name_ = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name_.empty())
    throw attn::Error(attn::Exit::usage, "--plot: expected a file name, found '" + path + "'");
  dir_ = std::make_unique<attn::OutputDir>(dir);
  dir_->check_name(name_);
}

void PlotFile::stage(const MapPicture& pic) {
  const std::string bytes = kind_ == Kind::png    ? render_png(pic)
                            : kind_ == Kind::html ? render_html(pic)
                                                  : render_svg(pic);
  release_font_caches();
  dir_->add(name_, bytes);
}

void PlotFile::stage_bytes(const std::string& bytes) { dir_->add(name_, bytes); }

void write_plot(const std::string& path, const MapPicture& pic) {
  PlotFile f(path);
  f.stage(pic);
  f.commit();
}

}  // namespace app

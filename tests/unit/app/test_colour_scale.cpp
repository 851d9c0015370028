// colour scales (--color-scale, pictures/colour_scale.h): a planted bright
// key at S = 4,096 stands out from the background under auto (log past 256
// keys), in the PNG's pixels and in --show's cells, where the linear scale
// (capped at the 99th percentile by a sharp local band) leaves it dim; the
// legend of each picture says which scale it is; the per-head percentile
// scale gives each head its own top.
//
// Letters: L = T = 4,096 tokens, Nq x Nk = 1,024 x 1,024 captured cells.
#include <cairo.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "attn/error.h"
#include "cli/colormap.h"
#include "pictures/plot.h"
#include "pictures/plot_canvas.h"
#include "test_util.h"

namespace {

struct ReleaseFontCaches {
  ~ReleaseFontCaches() { app::release_font_caches(); }
} release_font_caches_at_exit;

constexpr std::size_t kTokens = 4096, kCells = 1024, kBlock = kTokens / kCells;
constexpr std::size_t kPlanted = 3491;  // the bright key
constexpr float kPlantedWeight = 0.003f;

// A sharp causal head as captured (block max of 4 x 4 weights): a sink on
// key 0 (0.3), a local band of 0.5 / 32 over the last 32 keys, the rest
// 0.2 / (i + 1) each, and key 3491 taking 0.003 in every row that sees it,
// about 12 times a background weight (the first query puts 1.0 on key 0).
app::MapPicture planted_picture() {
  app::MapPicture pic;
  pic.title = "planted";
  pic.subtitle = "causal, 1 head";
  pic.L = pic.T = kTokens;
  for (std::size_t t = 0; t < kTokens; ++t) pic.labels.push_back(std::to_string(t));
  pic.key_labels = pic.labels;
  pic.heads = {0};
  pic.cells = attn::Tensor({1, kCells, kCells});
  for (std::size_t i = 0; i < kCells; ++i) {
    const std::size_t last = (i + 1) * kBlock - 1;  // the block's last query token
    for (std::size_t j = 0; j <= i; ++j) {
      float v = 0.2f / float(last + 1);
      if (j + 8 >= i) v = 0.5f / 32;  // the band: the last 32 keys, 8 cells
      if (j == 0) v = i == 0 ? 1.0f : 0.3f;
      if (j == kPlanted / kBlock && i >= j) v = kPlantedWeight;
      pic.cells.data[i * kCells + j] = v;
    }
  }
  pic.query = kTokens - 1;
  return pic;
}

// viridis position (0..1) of a colour: the nearest of 1,024 samples
// (remembered per colour: a picture holds few).
double viridis_position(int r, int g, int b) {
  static std::unordered_map<int, double> known;
  const int key = (r << 16) | (g << 8) | b;
  if (const auto it = known.find(key); it != known.end()) return it->second;
  double best = 1e18, at = 0;
  for (int k = 0; k <= 1023; ++k) {
    const app::Rgb c = app::viridis(k / 1023.0);
    const double d = (c.r - r) * (c.r - r) + (c.g - g) * (c.g - g) + (c.b - b) * (c.b - b);
    if (d < best) best = d, at = k / 1023.0;
  }
  return known[key] = best <= 48 ? at : -1;  // -1: not a colour of the scale (page, text, hatching)
}

struct Contrast {
  double planted = -1, background = -1;
};

// In the PNG: the panel's bottom pixel rows (the longest run of scale
// colours across the picture, the colour bar being a short one), the
// planted key's column against the median of that row.
Contrast png_contrast(const std::string& png_bytes) {
  attn::test::TempDir t;
  attn::test::write_text(t / "p.png", png_bytes);
  cairo_surface_t* s = cairo_image_surface_create_from_png((t / "p.png").c_str());
  REQUIRE(cairo_surface_status(s) == CAIRO_STATUS_SUCCESS);
  cairo_surface_flush(s);
  const int W = cairo_image_surface_get_width(s), H = cairo_image_surface_get_height(s);
  const int stride = cairo_image_surface_get_stride(s);
  const unsigned char* data = cairo_image_surface_get_data(s);
  auto pos = [&](int x, int y) {
    const std::uint32_t p =
        reinterpret_cast<const std::uint32_t*>(data + std::size_t(y) * stride)[x];
    return viridis_position(int(p >> 16 & 255), int(p >> 8 & 255), int(p & 255));
  };
  // The lowest pixel row whose longest run of scale colours is the widest.
  int best_y = -1, best_x0 = 0, best_len = 0;
  for (int y = H / 4; y < H; y += 1) {
    int run = 0, x0 = 0;
    for (int x = 0; x < W; ++x) {
      if (pos(x, y) >= 0) {
        if (run++ == 0) x0 = x;
        if (run >= best_len) best_len = run, best_x0 = x0, best_y = y;
      } else {
        run = 0;
      }
    }
  }
  REQUIRE(best_y > 0);
  const int y = best_y - 2;  // inside the panel's last cell row
  Contrast c;
  std::vector<double> row;
  for (int x = best_x0; x < best_x0 + best_len; ++x) row.push_back(pos(x, y));
  std::nth_element(row.begin(), row.begin() + std::ptrdiff_t(row.size() / 2), row.end());
  c.background = row[row.size() / 2];
  const int xp = best_x0 + int((kPlanted + 0.5) / kTokens * best_len);
  for (int dx = -1; dx <= 1; ++dx) c.planted = std::max(c.planted, pos(xp + dx, y));
  cairo_surface_destroy(s);
  return c;
}

// In --show's truecolor cells: the last map row's cells, the planted key's
// cell (found by its key label's column range) against the row's median.
Contrast terminal_contrast(const std::string& text, std::size_t* cells_in_row) {
  std::vector<std::string> lines;
  for (std::size_t at = 0, nl; at < text.size(); at = nl + 1) {
    nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    lines.push_back(text.substr(at, nl - at));
  }
  // The map's last row: the last line holding cells, before the head view.
  const std::regex cell("\x1b\\[48;2;(\\d+);(\\d+);(\\d+)m");
  std::string last;
  for (const std::string& l : lines)
    if (std::regex_search(l, cell)) last = l;
  std::vector<double> row;
  for (auto it = std::sregex_iterator(last.begin(), last.end(), cell); it != std::sregex_iterator();
       ++it)
    row.push_back(viridis_position(std::stoi((*it)[1]), std::stoi((*it)[2]), std::stoi((*it)[3])));
  *cells_in_row = row.size();
  Contrast c;
  if (row.empty()) return c;
  std::vector<double> sorted = row;
  std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(sorted.size() / 2),
                   sorted.end());
  c.background = sorted[sorted.size() / 2];
  // Cells of a causal bottom row run over every key: cell j holds keys
  // j * T / n .. ; the planted key's cell, and its neighbours.
  const std::size_t n = row.size(), j = kPlanted * n / kTokens;
  for (std::size_t k = j == 0 ? 0 : j - 1; k <= std::min(n - 1, j + 1); ++k)
    c.planted = std::max(c.planted, row[k]);
  return c;
}

}  // namespace

TEST_CASE("colour scale: auto is log past 256 keys, linear up to 256; a bad name is usage") {
  CHECK(app::scale_kind("auto", 4096) == app::ScaleKind::log);
  CHECK(app::scale_kind("auto", 257) == app::ScaleKind::log);
  CHECK(app::scale_kind("auto", 256) == app::ScaleKind::linear);
  CHECK(app::scale_kind("percentile", 6) == app::ScaleKind::percentile);
  CHECK_THROWS_AS(app::scale_kind("logarithmic", 6), attn::Error);
}

TEST_CASE("colour scale: the log scale runs from a power of ten under 1/T to the largest weight") {
  const app::MapPicture pic = planted_picture();
  const app::ColourScale sc = app::colour_scale(pic.cells, app::ScaleKind::log, kTokens);
  CHECK(sc.lo == doctest::Approx(1e-4));  // 1 / 4096 = 2.4e-4
  CHECK(sc.vmax == doctest::Approx(1.0));
  CHECK(sc.position(1e-4) == doctest::Approx(0.0).epsilon(1e-5));
  CHECK(sc.position(1e-2) == doctest::Approx(0.5));
  CHECK(sc.position(1e-7) > 0);  // below the bottom: the darkest colour, not "masked"
  CHECK(sc.position(0) == 0);    // masked
  CHECK(sc.legend() == "log scale, 1e-04 .. 1 (max)");
}

TEST_CASE("colour scale: a planted bright key at S = 4,096 is visible in the PNG under auto") {
  app::MapPicture pic = planted_picture();
  pic.scale = app::scale_kind("auto", kTokens);
  const Contrast log = png_contrast(app::render_png(pic));
  pic.scale = app::ScaleKind::linear;
  const Contrast linear = png_contrast(app::render_png(pic));
  INFO("log: planted " << log.planted << " background " << log.background << "; linear: planted "
                       << linear.planted << " background " << linear.background);
  CHECK(log.planted - log.background >= 0.3);        // clearly brighter
  CHECK(linear.planted - linear.background < 0.25);  // a 0.0156 band caps the linear scale
}

TEST_CASE("colour scale: the same in --show's cells, and each picture's legend names it") {
  app::MapPicture pic = planted_picture();
  pic.scale = app::ScaleKind::log;
  std::size_t n = 0;
  const std::string text = app::render_terminal(pic, app::TermColors::truecolor, 120);
  const Contrast log = terminal_contrast(text, &n);
  CHECK(n > 50);
  CHECK(log.planted - log.background >= 0.3);
  CHECK(text.find("colour: log scale, 1e-04 .. 1 (max)") != std::string::npos);
  pic.scale = app::ScaleKind::linear;
  const Contrast linear =
      terminal_contrast(app::render_terminal(pic, app::TermColors::truecolor, 120), &n);
  CHECK(linear.planted - linear.background < 0.25);

  pic.scale = app::ScaleKind::log;
  const std::string svg = app::render_svg(pic);
  CHECK(svg.find("colour: log scale, 1e-04 .. 1 (max)") != std::string::npos);
  CHECK(svg.find(">weight (log)<") != std::string::npos);
  CHECK(svg.find(">1e-4<") != std::string::npos);  // the bar's ticks: powers of ten
  const std::string html = app::render_html(pic);
  CHECK(html.find("\"scale\":\"log\"") != std::string::npos);
  CHECK(html.find("\"scale_lo\":0.0001") != std::string::npos);
}

TEST_CASE("colour scale: percentile gives each head its own top, named on its panel") {
  app::MapPicture pic = planted_picture();
  // A second head: the first one's weights at a tenth.
  attn::Tensor two({2, kCells, kCells});
  std::copy(pic.cells.data.begin(), pic.cells.data.end(), two.data.begin());
  for (std::size_t i = 0; i < kCells * kCells; ++i)
    two.data[kCells * kCells + i] = pic.cells.data[i] / 10;
  pic.cells = two;
  pic.heads = {0, 1};
  pic.scale = app::ScaleKind::percentile;
  const app::ColourScale sc = app::colour_scale(pic.cells, pic.scale, kTokens);
  REQUIRE(sc.head_top.size() == 2);
  CHECK(sc.head_top[1] == doctest::Approx(sc.head_top[0] / 10).epsilon(1e-3));
  // The same weight share of its head's top: the same colour in both heads.
  CHECK(sc.position(0.001, 0) == doctest::Approx(sc.position(0.0001, 1)));
  const std::string svg = app::render_svg(pic);
  CHECK(svg.find("colour: 99th-percentile per head") != std::string::npos);
  CHECK(std::regex_search(svg, std::regex(">head 1 \\(p99 [0-9.e-]+\\)<")));
}

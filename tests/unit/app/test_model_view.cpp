// The model view (app/pictures/model_view.h): every
// layer x head as a tile, built here without a run — the figures averaged
// from a SummarySink, the page's data, and the page in headless chromium at
// 32 layers x 32 heads of S = 8192 (thumbnails of 48 x 48 cells; the tiles
// then show a summary figure first).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "attn/map_summary.h"
#include "browser.h"
#include "pictures/map_capture.h"
#include "pictures/model_view.h"
#include "png_pixels.h"
#include "test_util.h"

namespace {

std::string script_body(const std::string& page, const std::string& open) {
  const auto a = page.find(open);
  REQUIRE(a != std::string::npos);
  const auto b = page.find("</script>", a);
  return page.substr(a + open.size(), b - a - open.size());
}

// A ModelView of n_layers x n_heads with distinct thumbnails: head h of
// layer l puts its weight on key (i + h + l) % Nk of row i.
app::ModelView synthetic(std::size_t n_layers, std::size_t n_heads, std::size_t S) {
  const std::size_t N = app::kModelViewCells;
  app::ModelView v;
  v.title = "synthetic </script><b>model</b>";
  v.subtitle = "for the test";
  v.L = v.T = S;
  for (std::size_t h = 0; h < n_heads; ++h) v.heads.push_back(h);
  for (std::size_t l = 0; l < n_layers; ++l) {
    app::ModelViewLayer layer;
    layer.layer = std::int64_t(l);
    layer.type = l % 2 ? "sliding_attention" : "full_attention";
    layer.dir = "layer_" + std::to_string(l);
    layer.cells = attn::Tensor({n_heads, N, N}, 0.01f);
    for (std::size_t h = 0; h < n_heads; ++h) {
      for (std::size_t i = 0; i < N; ++i)
        layer.cells.data[(h * N + i) * N + (i + h + l) % N] = 0.5f;
      layer.figures.push_back({std::log(double(S)) * double(h) / double(n_heads),
                               0.1 * double(l % 10), 0.5, double(S) / 4});
    }
    v.layers.push_back(std::move(layer));
  }
  return v;
}

}  // namespace

TEST_CASE("model_view: a layer's figures are the means of its summary rows") {
  // B = 2, H = 2, L = T = 3 causal maps; batch entry 1 is drawn.
  attn::SummarySink s(2, 2, 3, 3, 64, {0, 1, 2});
  const float rows[3 * 3] = {1, 0, 0, 0.5f, 0.5f, 0, 0.25f, 0.25f, 0.5f};
  const float other[3 * 3] = {1, 0, 0, 0.9f, 0.1f, 0, 0, 0, 1};
  for (std::size_t b = 0; b < 2; ++b) {
    s.write_rows(b, 0, 0, 3, rows);
    s.write_rows(b, 1, 0, 3, b == 1 ? other : rows);
  }
  app::MapCapture cap(1, {0, 1}, 2, 3, 3, app::kModelViewCells);
  cap.write_rows(1, 0, 0, 3, rows);
  cap.write_rows(1, 1, 0, 3, other);
  const app::ModelViewLayer l = app::model_view_layer(4, "full_attention", "layer_4", cap, s, 1);
  REQUIRE(l.figures.size() == 2);
  CHECK(l.cells.shape == std::vector<std::size_t>{2, 3, 3});
  const attn::Tensor& r = s.rows();  // (B, H, L, 5)
  for (int k = 0; k < 4; ++k) {
    double mean0 = 0;
    for (std::size_t i = 0; i < 3; ++i) mean0 += r.data[((1 * 2 + 0) * 3 + i) * 5 + k];
    CHECK(l.figures[0][k] == doctest::Approx(mean0 / 3));
  }
  // Head 1 of entry 1 has other rows than head 0: its own means.
  const float* r1 = r.ptr() + (1 * 2 + 1) * 3 * 5;
  for (int k = 0; k < 4; ++k)
    CHECK(l.figures[1][k] == doctest::Approx((r1[k] + r1[5 + k] + r1[10 + k]) / 3));
  CHECK(l.figures[1][1] != doctest::Approx(l.figures[0][1]));
  CHECK(l.figures[0][1] == doctest::Approx((1 + 0.5 + 0.25) / 3));  // weight on the first key
}

TEST_CASE("model_view: the page's data, and 32 layers x 32 heads at S = 8192 in chromium") {
  const app::ModelView v = synthetic(32, 32, 8192);
  const std::string page = app::render_model_view(v);
  CHECK(page.find("<b>model</b>") == std::string::npos);  // the title is text, never markup
  const auto meta = nlohmann::json::parse(script_body(page, "id=\"meta\">"));
  CHECK(meta["layers"].size() == 32);
  CHECK(meta["heads"].size() == 32);
  CHECK(meta["nq"] == app::kModelViewCells);
  CHECK(meta["mode"] == "entropy");  // 8192 keys: a figure first, not the thumbnails
  CHECK(meta["layers"][3]["type"] == "sliding_attention");
  // Figures scaled to [0, 1]: entropy over ln(T), distance over T.
  CHECK(meta["layers"][0]["figures"][16][0].get<double>() == doctest::Approx(0.5));
  CHECK(meta["layers"][0]["figures"][0][3].get<double>() == doctest::Approx(0.25));
  CHECK(meta["layers"][5]["raw"][0][3].get<double>() == doctest::Approx(2048));
  // One byte a cell, each thumbnail scaled to its own largest weight.
  const std::string cells = script_body(page, "id=\"cells\">");
  const std::size_t N = app::kModelViewCells;
  CHECK(cells.size() == (32 * 32 * N * N + 2) / 3 * 4);
  CHECK(meta["layers"][0]["max"][0].get<double>() == doctest::Approx(0.5));
  CHECK(page.size() < 4u << 20);
  // A short run starts on the thumbnails.
  CHECK(nlohmann::json::parse(script_body(app::render_model_view(synthetic(2, 4, 6)),
                                          "id=\"meta\">"))["mode"] == "map");

  attn::test::Browser b;
  if (!b.present) {
    MESSAGE("skipping: no chromium (Debian's `chromium` package) to load the page");
    return;
  }
  attn::test::TempDir t;
  attn::test::write_text(t / "model.html", page);
  if (const char* dir = std::getenv("ATTN_KEEP_PICTURES"))
    attn::test::write_text(std::string(dir) + "/model.html", page);
  // #layer=N&head=K opens that head's view at start.
  auto dom = b.load(t / "model.html#layer=31&head=5", "--dump-dom");
  REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
  CHECK_MESSAGE(!attn::test::console_errors(dom.err), dom.err);
  CHECK(dom.out.find("data-ready=\"1\"") != std::string::npos);
  CHECK(dom.out.find("data-layers=\"32\"") != std::string::npos);
  CHECK(dom.out.find("data-heads=\"32\"") != std::string::npos);
  CHECK(dom.out.find("data-mode=\"entropy\"") != std::string::npos);
  CHECK(dom.out.find("data-picked=\"31,5\"") != std::string::npos);
  CHECK(dom.out.find("layer 31, head 5 (sliding_attention)") != std::string::npos);
  CHECK(dom.out.find("this layer's files: layer_31/") != std::string::npos);
  auto maps = b.load(t / "model.html#mode=map", "--dump-dom");
  CHECK(maps.out.find("data-mode=\"map\"") != std::string::npos);
  for (const char* mode : {"entropy", "map"}) {
    const std::string png = t / (std::string("model-") + mode + ".png");
    auto shot = b.screenshot(t / ("model.html#mode=" + std::string(mode) + "&layer=3&head=2"), png,
                             1400, 900);
    REQUIRE_MESSAGE(shot.exit_code == 0, shot.err);
    const auto ink = attn::test::png_ink(png, 0.0, 1.0);
    CHECK(ink.width == 1400);
    CHECK(ink.share > 0.2);  // the tiles fill the grid
    if (const char* dir = std::getenv("ATTN_KEEP_PICTURES"))
      attn::test::write_text(std::string(dir) + "/model-" + mode + ".png",
                             attn::test::read_text(png));
  }
}

TEST_CASE(
    "model_view: masked cells apart from small weights, axes on the enlarged tile, "
    "figures coloured per layer") {
  app::ModelView v = synthetic(2, 4, 64);
  const std::size_t N = app::kModelViewCells;
  // Layer 0, head 0: a causal map's masked upper triangle, and one tiny weight.
  float* c = v.layers[0].cells.ptr();
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = i + 1; j < N; ++j) c[i * N + j] = 0;
  c[5 * N + 1] = 1e-6f;
  // Layer 1's entropies all within 0.60 .. 0.62 of ln(T): alike on a fixed 0..1 scale.
  for (std::size_t h = 0; h < 4; ++h)
    v.layers[1].figures[h][0] = (0.60 + 0.005 * h) * std::log(64.0);
  const std::string page = app::render_model_view(v);
  const std::string b64 = script_body(page, "id=\"cells\">");
  // Decode the first tile's bytes (layer 0, head 0): base64, 3 bytes a group.
  auto value = [](char ch) -> int {
    const std::string a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    return int(a.find(ch));
  };
  std::string bytes;
  for (std::size_t k = 0; k + 4 <= b64.size() && bytes.size() < N * N; k += 4) {
    const int n = value(b64[k]) << 18 | value(b64[k + 1]) << 12 |
                  (b64[k + 2] == '=' ? 0 : value(b64[k + 2]) << 6) |
                  (b64[k + 3] == '=' ? 0 : value(b64[k + 3]));
    bytes += char(n >> 16), bytes += char(n >> 8 & 255), bytes += char(n & 255);
  }
  CHECK(std::uint8_t(bytes[0 * N + 1]) == 0);    // masked (above the diagonal)
  CHECK(std::uint8_t(bytes[5 * N + 1]) == 1);    // a tiny weight: the darkest colour, not masked
  CHECK(std::uint8_t(bytes[1 * N + 1]) == 255);  // the head's largest weight (0.5 on key i + 0)
  CHECK(page.find("masked (weight 0)") != std::string::npos);

  // --color-scale auto at 8,192 keys: the log scale, from 1e-4 to the head's largest (0.5),
  // so the 0.01 background is a mid colour, not the near-black of the linear scale.
  for (const char* scale : {"auto", "linear"}) {
    app::ModelView w = synthetic(1, 1, 8192);
    w.color_scale = scale;
    const std::string p = app::render_model_view(w);
    const std::string b = script_body(p, "id=\"cells\">");
    const int first = value(b[0]) << 2 | value(b[1]) >> 4;          // cell (0, 0): 0.5, the largest
    const int second = (value(b[1]) & 15) << 4 | value(b[2]) >> 2;  // cell (0, 1): 0.01
    CHECK(first == 255);
    CHECK(second == (std::string(scale) == "auto" ? 138 : 6));
    const auto m = nlohmann::json::parse(script_body(p, "id=\"meta\">"));
    CHECK(m["scale"] == (std::string(scale) == "auto" ? "log" : "linear"));
  }

  attn::test::Browser b;
  if (!b.present) {
    MESSAGE("skipping: no chromium (Debian's `chromium` package) to load the page");
    return;
  }
  attn::test::TempDir t;
  attn::test::write_text(t / "model.html", page);
  auto dom = b.load(t / "model.html#mode=entropy&layer=1&head=2", "--dump-dom");
  REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
  CHECK_MESSAGE(!attn::test::console_errors(dom.err), dom.err);
  // The enlarged tile's axes: query and key positions 0 .. 63.
  CHECK(dom.out.find("<span class=\"qtick\"") != std::string::npos);
  CHECK(dom.out.find(">63</span>") != std::string::npos);
  CHECK(dom.out.find("class=\"ktick\"") != std::string::npos);
  // Layer 1's entropy tiles from its own min (0.600) to its max (0.615), stated.
  CHECK(dom.out.find("layer 1's heads from 0.600 to 0.615") != std::string::npos);
  CHECK(dom.out.find(">layer min<") != std::string::npos);
}

// pictures: the picture code on maps that are not square, built directly
// (no run): MapCapture and the block max on (L, T) maps, the key labels of
// cross-attention and torch MHA's extra columns, and a 5 x 8 map with
// distinct query and key labels drawn as SVG, PNG, HTML (loaded in
// chromium) and terminal text; an averaged map (--average-heads) and rows
// that sum to less than 1 (sinks).
//
// Letters: K heads drawn, L queries, T keys, Nq x Nk cells.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attn/config.h"
#include "attn/error.h"
#include "attn/run.h"
#include "browser.h"
#include "cli/options.h"
#include "modes/run_session.h"
#include "pictures/map_capture.h"
#include "pictures/plot.h"
#include "pictures/plot_canvas.h"
#include "png_pixels.h"
#include "test_util.h"

using attn::test::count_of;

namespace {

// cairo's and fontconfig's process-wide caches, freed at exit as attn-run
// frees them after a picture (plot_fonts.cpp), so the leak checker of
// scripts/sanitize.sh sees a clean exit.
struct ReleaseFontCaches {
  ~ReleaseFontCaches() { app::release_font_caches(); }
} release_font_caches_at_exit;

// A map (L, T) of head h with distinct weights: each row a softmax of
// made-up scores, scaled by `row_sum` (1, or less with a sink).
std::vector<float> make_map(std::size_t L, std::size_t T, std::size_t h, double row_sum = 1.0) {
  std::vector<float> m(L * T);
  for (std::size_t i = 0; i < L; ++i) {
    double total = 0;
    for (std::size_t j = 0; j < T; ++j) {
      const double e = std::exp(std::sin(double(i * 7 + j * 3 + h * 11)) * 2.0);
      m[i * T + j] = float(e);
      total += e;
    }
    for (std::size_t j = 0; j < T; ++j) m[i * T + j] = float(m[i * T + j] / total * row_sum);
  }
  return m;
}

std::vector<std::string> names(const std::string& prefix, std::size_t n) {
  std::vector<std::string> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(prefix + std::to_string(i));
  return v;
}

// A 5 x 8 cross-attention picture of two heads: queries q0..q4, keys
// k0..k5 then torch MHA's bias_kv and zero_attn columns.
app::MapPicture cross_picture(double row_sum = 1.0) {
  const std::size_t L = 5, T = 8;
  app::MapCapture cap(0, {0, 2}, 3, L, T, 1024);
  for (std::size_t h = 0; h < 3; ++h) {
    const auto m = make_map(L, T, h, row_sum);
    cap.write_rows(0, h, 0, 2, m.data());  // two blocks of rows, as the kernels hand them out
    cap.write_rows(0, h, 2, 3, m.data() + 2 * T);
  }
  app::MapPicture pic;
  pic.title = "cross.json";
  pic.subtitle = "multi, 3 heads; L = 5 queries x T = 8 keys";
  pic.labels = names("q", L);
  pic.key_labels = names("k", 6);
  pic.key_labels.push_back("bias_kv");
  pic.key_labels.push_back("zero_attn");
  pic.L = L;
  pic.T = T;
  pic.heads = cap.heads();
  pic.cells = cap.cells();
  pic.facts = {{"config", "cross.json"},
               {"keys and values", "cross-attention from kv_input kv.npy"}};
  pic.query = 4;
  return pic;
}

// With ATTN_KEEP_PICTURES=DIR, what the tests drew is kept there to look at.
void keep(const std::string& name, const std::string& bytes) {
  if (const char* dir = std::getenv("ATTN_KEEP_PICTURES"))
    attn::test::write_text(std::string(dir) + "/" + name, bytes);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// Display columns of UTF-8 text (every code point one column here).
std::size_t columns(const std::string& s) {
  return std::size_t(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

struct SvgText {
  double x, y;
  std::string attrs, text;
};
std::vector<SvgText> svg_texts(const std::string& svg) {
  std::vector<SvgText> out;
  const std::regex text("<text x=\"([0-9.]+)\" y=\"([0-9.]+)\"([^>]*)>([^<]*)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator();
       ++it)
    out.push_back({std::stod((*it)[1]), std::stod((*it)[2]), (*it)[3], (*it)[4]});
  return out;
}

std::uint32_t be32(const std::string& s, std::size_t at) {
  return std::uint32_t(std::uint8_t(s[at])) << 24 | std::uint32_t(std::uint8_t(s[at + 1])) << 16 |
         std::uint32_t(std::uint8_t(s[at + 2])) << 8 | std::uint32_t(std::uint8_t(s[at + 3]));
}

std::string script_body(const std::string& page, const std::string& open) {
  const auto a = page.find(open);
  REQUIRE(a != std::string::npos);
  const auto b = page.find("</script>", a);
  return page.substr(a + open.size(), b - a - open.size());
}

}  // namespace

TEST_CASE("pictures: MapCapture keeps an (L, T) map, whole or as block maxima") {
  const std::size_t L = 5, T = 8;
  const auto m = make_map(L, T, 1);
  app::MapCapture whole(0, {1}, 2, L, T, 1024);
  whole.write_rows(0, 1, 0, L, m.data());
  whole.write_rows(1, 1, 0, L, m.data());  // another batch entry: ignored
  REQUIRE(whole.cells().shape == std::vector<std::size_t>{1, L, T});
  CHECK(whole.cells().data == m);
  CHECK(whole.queries() == L);
  CHECK(whole.keys() == T);

  // 3 x 4 cells: query blocks {0,1} {2,3} {4} (t * 3 / 5), key blocks of two.
  app::MapCapture small(0, {0}, 1, L, T, 4);
  CHECK(small.query_cells() == 4);
  CHECK(small.key_cells() == 4);
  app::MapCapture tiny(0, {0}, 1, L, T, 3);
  for (std::size_t i = 0; i < L; ++i) tiny.write_rows(0, 0, i, 1, m.data() + i * T);
  REQUIRE(tiny.cells().shape == std::vector<std::size_t>{1, 3, 3});
  for (std::size_t ci = 0; ci < 3; ++ci)
    for (std::size_t cj = 0; cj < 3; ++cj) {
      float want = 0;
      for (std::size_t i = 0; i < L; ++i)
        for (std::size_t j = 0; j < T; ++j)
          if (i * 3 / L == ci && j * 3 / T == cj) want = std::max(want, m[i * T + j]);
      CHECK(tiny.cells().data[ci * 3 + cj] == want);
    }
  // The same reduction on a whole map, and again on its result (max of maxes).
  const attn::Tensor r = app::reduce_block_max(m.data(), L, T, 3, 3);
  CHECK(r.data == tiny.cells().data);
  const attn::Tensor rr = app::reduce_block_max(whole.cells().ptr(), L, T, 2, 6);
  REQUIRE(rr.shape == std::vector<std::size_t>{2, 6});
  CHECK(*std::max_element(rr.data.begin(), rr.data.end()) == *std::max_element(m.begin(), m.end()));
  // A long key axis and a short query axis are reduced independently.
  app::MapCapture wide(0, {0}, 1, 2, 3000, 1024);
  CHECK(wide.query_cells() == 2);
  CHECK(wide.key_cells() == 1024);
}

TEST_CASE("pictures: key labels for self-attention, cross-attention and torch MHA's columns") {
  attn::Config cfg;
  const std::vector<std::string> q = {"a", "b", "c"};
  CHECK(app::key_labels(cfg, q, 3, 3) == q);  // self-attention: the query tokens
  cfg.add_bias_kv = true;
  CHECK(app::key_labels(cfg, q, 3, 4) == std::vector<std::string>{"a", "b", "c", "bias_kv"});
  cfg.spec.add_zero_attn = true;
  CHECK(app::key_labels(cfg, q, 3, 5) ==
        std::vector<std::string>{"a", "b", "c", "bias_kv", "zero_attn"});
  cfg.add_bias_kv = false;
  CHECK(app::key_labels(cfg, q, 3, 4) == std::vector<std::string>{"a", "b", "c", "zero_attn"});
  cfg.spec.add_zero_attn = false;

  cfg.kv_input.path = "kv.npy";  // cross-attention: keys from another source
  CHECK(app::key_labels(cfg, q, 4, 4) == std::vector<std::string>{"0", "1", "2", "3"});
  cfg.kv_labels = {"w", "x", "y", "z"};
  cfg.spec.add_zero_attn = true;
  CHECK(app::key_labels(cfg, q, 4, 5) == std::vector<std::string>{"w", "x", "y", "z", "zero_attn"});
  cfg.kv_labels = {"w", "x"};  // a wrong count: positions (and a warning)
  CHECK(app::key_labels(cfg, q, 4, 5) == std::vector<std::string>{"0", "1", "2", "3", "zero_attn"});
  // Maps whose width disagrees with the settings are a bug, not a picture.
  CHECK_THROWS_AS(app::key_labels(cfg, q, 4, 6), attn::Error);
}

TEST_CASE("pictures: a 5 x 8 map in SVG: queries label the rows, keys the columns") {
  const app::MapPicture pic = cross_picture();
  double width = 0, height = 0;
  const std::string svg = app::render_svg(pic, &width, &height);
  keep("cross.svg", svg);
  CHECK(count_of(svg, "<g class=\"panel\"") == 2);
  CHECK(count_of(svg, ">head 0</text>") == 1);
  CHECK(count_of(svg, ">head 2</text>") == 1);
  // Each panel's frame is 8 cells wide and 5 high: square cells.
  const std::regex frame(
      "<rect x=\"[0-9.]+\" y=\"[0-9.]+\" width=\"([0-9.]+)\" height=\"([0-9.]+)\" "
      "fill=\"none\" stroke=\"#888888\" stroke-width=\"0.5\"/>");
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, frame));
  CHECK(std::stod(m[1]) / std::stod(m[2]) == doctest::Approx(8.0 / 5.0).epsilon(0.01));

  // Every query label twice (a row of each panel), right-aligned at the
  // left edge, top to bottom; every key label twice, along the bottom, left
  // to right, below every row.
  const auto texts = svg_texts(svg);
  auto find_all = [&](const std::string& s) {
    std::vector<SvgText> v;
    for (const auto& t : texts)
      if (t.text == s) v.push_back(t);
    return v;
  };
  double lowest_row = 0;
  for (std::size_t i = 0; i < 5; ++i) {
    const auto rows = find_all("q" + std::to_string(i));
    REQUIRE_MESSAGE(rows.size() == 2, i);
    CHECK(rows[0].attrs.find("text-anchor=\"end\"") != std::string::npos);
    CHECK(rows[0].attrs.find("rotate") == std::string::npos);
    if (i > 0) CHECK(rows[0].y > find_all("q" + std::to_string(i - 1))[0].y);
    lowest_row = std::max(lowest_row, rows[0].y);
  }
  std::vector<std::string> keys = names("k", 6);
  keys.push_back("bias_kv");
  keys.push_back("zero_attn");
  for (std::size_t j = 0; j < keys.size(); ++j) {
    const auto cols = find_all(keys[j]);
    REQUIRE_MESSAGE(cols.size() == 2, keys[j]);
    CHECK(cols[0].y > lowest_row);
    if (j > 0) CHECK(cols[0].x > find_all(keys[j - 1])[0].x);
  }
  CHECK(svg.find(">query</text>") != std::string::npos);
  CHECK(svg.find(">key</text>") != std::string::npos);
  // 5 x 8 cells at full resolution: each weight printed, no block note.
  CHECK(svg.find("max over a block") == std::string::npos);

  // The PNG is drawn at twice the SVG's size, with ink in it.
  const std::string png = app::render_png(pic);
  keep("cross.png", png);
  REQUIRE(png.rfind("\x89PNG", 0) == 0);
  CHECK(be32(png, 16) == std::uint32_t(std::ceil(width * 2)));
  CHECK(be32(png, 20) == std::uint32_t(std::ceil(height * 2)));
  attn::test::TempDir t;
  attn::test::write_text(t / "cross.png", png);
  CHECK(attn::test::png_ink(t / "cross.png", 0.1, 0.5).share > 0.1);
}

TEST_CASE("pictures: a long key axis is reduced on its own; labels thin only where crowded") {
  // L = 3 queries, T = 600 keys: 3 rows of 256 key cells.
  const std::size_t L = 3, T = 600;
  app::MapCapture cap(0, {0}, 1, L, T, 1024);
  const auto m = make_map(L, T, 0);
  cap.write_rows(0, 0, 0, L, m.data());
  app::MapPicture pic;
  pic.title = "wide";
  pic.labels = names("q", L);
  pic.key_labels = names("k", T);
  pic.L = L;
  pic.T = T;
  pic.heads = {0};
  pic.cells = cap.cells();
  const std::string svg = app::render_svg(pic);
  keep("wide.svg", svg);
  keep("wide.png", app::render_png(pic));
  CHECK(svg.find("max over a block of about 1 x 3 weights") != std::string::npos);
  CHECK(count_of(svg, "<image class=\"heatmap\"") == 1);
  for (const char* q : {">q0</text>", ">q1</text>", ">q2</text>"}) CHECK(count_of(svg, q) == 1);
  CHECK(count_of(svg, ">k0</text>") == 1);
  CHECK(count_of(svg, ">k1</text>") == 0);  // thinned
  // The image is 256 x 3 pixels drawn in a panel about 85 times wider than high.
  const std::regex image(
      "<image class=\"heatmap\" x=\"[0-9.]+\" y=\"[0-9.]+\" width=\"([0-9.]+)\" "
      "height=\"([0-9.]+)\"");
  std::smatch mm;
  REQUIRE(std::regex_search(svg, mm, image));
  CHECK(std::stod(mm[1]) == doctest::Approx(320));
  CHECK(std::stod(mm[2]) >= 3 * 13);  // each query row tall enough for its label
  // The colour bar stays readable beside so flat a panel.
  const std::regex legend(
      "<g class=\"legend\"[\\s\\S]*?<rect x=\"[0-9.]+\" y=\"[0-9.]+\" width=\"14\" "
      "height=\"([0-9.]+)\" fill=\"none\"");
  REQUIRE(std::regex_search(svg, mm, legend));
  CHECK(std::stod(mm[1]) >= 160);
}

TEST_CASE("pictures: terminal text of a 5 x 8 map: key labels on the columns, within the width") {
  const app::MapPicture pic = cross_picture();
  for (int cols : {40, 80, 120}) {
    CAPTURE(cols);
    const std::string text = app::render_terminal(pic, app::TermColors::plain, cols);
    keep("cross-" + std::to_string(cols) + ".txt", text);
    const auto lines = lines_of(text);
    for (const auto& l : lines) CHECK_MESSAGE(columns(l) <= std::size_t(cols), l);
    const auto head0 = std::find(lines.begin(), lines.end(), "head 0");
    REQUIRE(head0 != lines.end());
    // The key line: key labels above their columns (cut to the cell's
    // width), every one where the cells are wide enough, else every other.
    const std::string keys = *(head0 + 1);
    for (const char* k : {"k0", "k2", "k4", "bias_kv"}) CHECK(keys.find(k) != std::string::npos);
    if (cols >= 80)
      for (const char* k : {"k1", "k5", "zero_at"}) CHECK(keys.find(k) != std::string::npos);
    CHECK(keys.find("q0") == std::string::npos);
    // Then five rows, one per query, labelled with the query labels.
    for (std::size_t i = 0; i < 5; ++i) {
      const std::string& row = *(head0 + 2 + i);
      CHECK_MESSAGE(row.find("q" + std::to_string(i) + " ") != std::string::npos, row);
    }
    CHECK((head0 + 7)->empty());
    // The head view of query 4 names its strongest keys by their key labels.
    const std::string flat = std::regex_replace(text, std::regex("\\s+"), " ");
    CHECK(flat.find("query 4 \"q4\": its 5 strongest keys per head") != std::string::npos);
    const auto view = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
      return l.rfind("query 4 ", 0) == 0;
    });
    REQUIRE(view != lines.end());
    const auto h2 = std::find(view, lines.end(), "head 2");  // no row-sum note: rows sum to 1
    REQUIRE(h2 != lines.end());
    const std::regex entry("^  (\\d+) (k\\d|bias_kv|zero_attn) +([0-9.]+) ");
    std::smatch m;
    REQUIRE(std::regex_search(*(h2 + 1), m, entry));
    CHECK(m[2] == pic.key_labels[std::stoul(m[1])]);
    CHECK(std::stod(m[3]) ==
          doctest::Approx(pic.cells.data[(1 * 5 + 4) * 8 + std::stoul(m[1])]).epsilon(1e-3));
  }
  // In colour, the same grid: 8 cells of a row, none masked.
  const std::string tc = app::render_terminal(pic, app::TermColors::truecolor, 80);
  keep("cross-truecolor.txt", tc);
  CHECK(count_of(tc, "\x1b[48;2;") == 2 * 5 * 8);
}

TEST_CASE("pictures: an averaged map is one panel titled as the mean of the heads") {
  const std::size_t L = 5, T = 8;
  app::MapCapture cap(0, {0}, 1, L, T, 1024);  // HeadMeanSink hands the mean on as head 0
  const auto m = make_map(L, T, 0);
  cap.write_rows(0, 0, 0, L, m.data());
  app::MapPicture pic = cross_picture();
  pic.heads = cap.heads();
  pic.cells = cap.cells();
  pic.mean_of = 12;
  const std::string svg = app::render_svg(pic);
  keep("mean.png", app::render_png(pic));
  CHECK(count_of(svg, "<g class=\"panel\"") == 1);
  CHECK(count_of(svg, ">mean of 12 heads</text>") == 1);
  CHECK(svg.find(">head 0</text>") == std::string::npos);
  const std::string text = app::render_terminal(pic, app::TermColors::plain, 80);
  CHECK(count_of(text, "\nmean of 12 heads\n") == 2);  // the grid and the head view
  CHECK(text.find("strongest keys per map") != std::string::npos);
  const std::string page = app::render_html(pic);
  const auto meta = nlohmann::json::parse(script_body(page, "type=\"application/json\">"));
  CHECK(meta["head_names"] == nlohmann::json({"mean of 12 heads"}));
  CHECK(meta["averaged"] == true);
  attn::test::Browser b;
  if (b.present) {  // the head chooser holds the one map, the panel is titled so
    attn::test::TempDir t;
    attn::test::write_text(t / "mean.html", page);
    auto dom = b.load(t / "mean.html", "--dump-dom");
    REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
    CHECK_MESSAGE(!attn::test::console_errors(dom.err), dom.err);
    CHECK(count_of(dom.out, "<option") == 1);
    CHECK(count_of(dom.out, "<option value=\"0\">mean of 12 heads</option>") == 1);
    CHECK(count_of(dom.out, "<figcaption>mean of 12 heads</figcaption>") == 1);
  }
  // Panels drawn for several heads cannot be one mean.
  pic.heads = {0, 1};
  pic.cells = attn::Tensor({2, L, T});
  CHECK_THROWS_AS(app::render_svg(pic), attn::Error);
}

TEST_CASE("pictures: rows that sum to less than 1 (sinks) keep an honest scale and say so") {
  app::MapPicture pic = cross_picture(0.63);
  pic.sinks = true;
  const app::ColourScale sc = app::colour_scale(pic.cells);
  CHECK(sc.vmax ==
        doctest::Approx(*std::max_element(pic.cells.data.begin(), pic.cells.data.end())));
  CHECK(sc.vmax < 0.63);
  const std::string text = app::render_terminal(pic, app::TermColors::plain, 100);
  keep("sinks.txt", text);
  CHECK(count_of(text, "head 0 (row sums to 0.63: the sink takes the rest)") == 1);
  CHECK(count_of(text, "head 2 (row sums to 0.63: the sink takes the rest)") == 1);
  // A row with every key masked says that instead.
  for (std::size_t j = 0; j < 8; ++j) pic.cells.data[4 * 8 + j] = 0;
  CHECK(app::render_terminal(pic, app::TermColors::plain, 100)
            .find("head 0 (row sums to 0.00: every key masked)") != std::string::npos);
}

TEST_CASE("pictures: the HTML page of a 5 x 8 map holds both label sets, in chromium too") {
  app::MapPicture pic = cross_picture();
  pic.key_labels[1] = "<k&1>";  // escaped, never markup
  // A long fact wraps rather than widening the page.
  pic.facts.emplace_back("positions",
                         "/a/very/long/path/" + std::string(300, 'x') + "/positions.npy");
  pic.facts.emplace_back("attn_mask", "</script><b>bold</b>\x1b[31m");  // text, never markup
  const std::string page = app::render_html(pic);
  const auto meta = nlohmann::json::parse(script_body(page, "type=\"application/json\">"));
  CHECK(meta["labels"] == nlohmann::json({"q0", "q1", "q2", "q3", "q4"}));
  CHECK(meta["key_labels"] ==
        nlohmann::json({"k0", "<k&1>", "k2", "k3", "k4", "k5", "bias_kv", "zero_attn"}));
  CHECK(meta["n"] == 5);
  CHECK(meta["nk"] == 8);
  CHECK(meta["head_names"] == nlohmann::json({"head 0", "head 2"}));
  CHECK(page.find("<k&1>") == std::string::npos);

  attn::test::Browser b;
  if (!b.present) {
    MESSAGE("skipping: no chromium (Debian's `chromium` package) to load the page");
    return;
  }
  attn::test::TempDir t;
  attn::test::write_text(t / "cross.html", page);
  keep("cross.html", page);
  for (const char* hash : {"", "#maps"}) {
    const std::string view = *hash ? hash : "(no hash)";
    CAPTURE(view);
    auto dom = b.load(t / ("cross.html" + std::string(hash)), "--dump-dom");
    REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
    CHECK_MESSAGE(!attn::test::console_errors(dom.err), dom.err);
    CHECK(dom.out.find("data-ready=\"1\"") != std::string::npos);
    CHECK(count_of(dom.out, "data-head=") == 2);
    CHECK(count_of(dom.out, "<dd>&lt;/script&gt;&lt;b&gt;bold&lt;/b&gt;\xEF\xBF\xBD[31m</dd>") ==
          1);
    CHECK(dom.out.find("<b>") == std::string::npos);
    // The query column holds the query labels, the key column the key labels.
    const auto qcol = dom.out.find("id=\"qcol\""), kcol = dom.out.find("id=\"kcol\"");
    REQUIRE(qcol != std::string::npos);
    REQUIRE(kcol != std::string::npos);
    const auto grid = dom.out.find("id=\"grid\"");  // the heatmaps follow the head view
    REQUIRE(grid != std::string::npos);
    // The key column ends where the pinned query's top-keys list begins.
    const auto aside = dom.out.find("id=\"topkeys\"");
    REQUIRE(aside != std::string::npos);
    const std::string qtext = dom.out.substr(qcol, kcol - qcol),
                      ktext = dom.out.substr(kcol, aside - kcol);
    for (int i = 0; i < 5; ++i) CHECK(count_of(qtext, ">q" + std::to_string(i) + "<") == 1);
    for (const char* k : {"k0", "&lt;k&amp;1&gt;", "k5", "bias_kv", "zero_attn"}) {
      CHECK_MESSAGE(count_of(ktext, std::string(">") + k + "<") == 1, k);
      CHECK_MESSAGE(count_of(qtext, std::string(">") + k + "<") == 0, k);
    }
    // The last query starts pinned: its row's 8 key bars are drawn.
    CHECK(dom.out.find("Pinned query 4 \xC2\xABq4\xC2\xBB") != std::string::npos);
    const std::regex bar("<span class=\"bar\" style=\"width: [0-9.e-]+%;\"></span>");
    CHECK(std::distance(std::sregex_iterator(dom.out.begin(), dom.out.end(), bar),
                        std::sregex_iterator()) == 8);
    // Each heatmap has its "query" and "key" axes and every token's label
    // along them (two panels: heads 0 and 2), none thinned out at this size.
    const std::string maps = dom.out.substr(grid);
    CHECK(count_of(maps, "<div class=\"axis q\">query</div>") == 2);
    CHECK(count_of(maps, "<div class=\"axis k\">key</div>") == 2);
    for (int i = 0; i < 5; ++i) CHECK(count_of(maps, ">q" + std::to_string(i) + "</span>") == 2);
    for (const char* k : {"k0", "&lt;k&amp;1&gt;", "k5", "bias_kv", "zero_attn"})
      CHECK_MESSAGE(count_of(maps, std::string(">") + k + "</span>") == 2, k);
    CHECK(count_of(maps, "<span data-i=") == 2 * (5 + 8));
    const std::regex thinned("<span data-i=[^>]* hidden=");
    CHECK(std::distance(std::sregex_iterator(maps.begin(), maps.end(), thinned),
                        std::sregex_iterator()) == 0);
  }
  // Screenshots to look at (kept with ATTN_KEEP_PICTURES).
  for (const char* hash : {"", "#maps"}) {
    const std::string png = t / (std::string("page-") + (*hash ? "maps" : "heads") + ".png");
    auto shot = b.screenshot(t / ("cross.html" + std::string(hash)), png, 1000, 700);
    REQUIRE_MESSAGE(shot.exit_code == 0, shot.err);
    const auto ink = attn::test::png_ink(png, 0.0, 1.0);
    CHECK(ink.width == 1000);
    CHECK(ink.share > 0.02);
    keep(png.substr(png.rfind('/') + 1), attn::test::read_text(png));
  }
}

TEST_CASE("pictures: make_picture says what a cross-attention or averaged run drew") {
  attn::Config cfg;
  cfg.file = "cross.json";
  cfg.kind = attn::Kind::multi;
  cfg.num_heads = 3;
  cfg.head_size = 4;
  cfg.kv_input.path = "kv.npy";
  cfg.add_bias_kv = true;
  cfg.spec.add_zero_attn = true;
  cfg.spec.sinks = true;
  cfg.spec.sliding_window = 4;
  attn::LoadedRun model;
  model.weights_source = "init(seed=1)";
  app::SessionInput in;
  in.input_source = "x.npy";
  in.x = attn::Tensor({1, 5, 12});
  app::Options opt;
  const app::MapPicture base = cross_picture();
  app::MapCapture cap(0, {0, 2}, 3, 5, 8, 1024);
  app::MapPicture pic = app::make_picture(opt, cfg, model, in, cap, base.labels,
                                          app::key_labels(cfg, base.labels, 6, 8));
  CHECK(pic.L == 5);
  CHECK(pic.T == 8);
  CHECK(pic.key_labels ==
        std::vector<std::string>{"0", "1", "2", "3", "4", "5", "bias_kv", "zero_attn"});
  CHECK(pic.subtitle.find("L = 5 queries x T = 8 keys") != std::string::npos);
  CHECK(pic.query == 4);
  CHECK(pic.sinks);
  std::map<std::string, std::string> facts(pic.facts.begin(), pic.facts.end());
  CHECK(facts["keys and values"] == "cross-attention from kv_input kv.npy");
  CHECK(facts["extra key columns"] == "bias_kv, zero_attn (torch MHA)");
  CHECK(facts["sliding window"] == "4");
  CHECK(facts["sinks"].find("less than 1") != std::string::npos);
  CHECK(facts["maps drawn"] == "batch entry 0, heads 2 of 3, 5 x 8 cells of 5 x 8");
  CHECK(facts["input"] == "x.npy, 1 x 5 x 12 (B x L x C)");

  cfg.output_average_heads = true;
  app::MapCapture mean(0, {0}, 1, 5, 8, 1024);
  pic = app::make_picture(opt, cfg, model, in, mean, base.labels, base.key_labels);
  CHECK(pic.mean_of == 3);
  CHECK(pic.subtitle.find("the mean of the 3 heads (--average-heads)") != std::string::npos);
  CHECK(app::panel_title(pic, 0) == "mean of 3 heads");
  opt.show_query = 5;
  CHECK_THROWS_AS(app::make_picture(opt, cfg, model, in, mean, base.labels, base.key_labels),
                  attn::Error);
}

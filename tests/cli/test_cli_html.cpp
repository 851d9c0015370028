// cli_html: --plot FILE.html end to end. The page is self-contained and its
// embedded maps are the run's attention weights (decoded here from base64
// float16 and compared with attention.npy); then a real browser (Debian's
// chromium, headless) loads it: one panel per head (data-head), every token
// label as text, hostile labels as text, and no console errors.
//
// Letters: K heads drawn, S sequence, N cells per side.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "browser.h"
#include "test_util.h"

using attn::test::Browser;
using attn::test::console_errors;
using attn::test::count_of;
using attn::test::q;
using attn::test::run;

namespace {

std::string bin() { return attn::test::quoted_binary(); }

// A row of the top-keys table: <tr data-key="j"><td class="num">j</td>
// <td class="tok">label</td><td class="num">w</td>: (1) data-key, (2) key, (3) token, (4) weight.
const char* const kTopKeyRow =
    "<tr data-key=\"(\\d+)\"><td class=\"num\">(\\d+)</td><td class=\"tok\">([^<]*)"
    "</td><td class=\"num\">([0-9.e-]+)</td></tr>";

// A causal layer (C = 16, init seed 4) with `heads` heads over 1500 tokens
// (in 1024 cells on the page): dir/c.json reading dir/x.npy.
void write_long_run(const attn::test::TempDir& dir, int heads) {
  attn::test::write_text(dir / "x.npy", attn::encode_npy(attn::test::random_tensor({1500, 16}, 5)));
  attn::test::write_text(
      dir / "c.json",
      "{\"attention\": \"multi\", \"hidden_size\": 16, \"num_heads\": " + std::to_string(heads) +
          ", \"causal\": true, \"layout\": \"fused\", \"init\": {\"seed\": 4}, "
          "\"input\": \"x.npy\"}");
}
std::string cfg(const std::string& name) { return attn::test::quoted_config(name); }
// The text between `open` and the next "</script>" after it.
std::string script_body(const std::string& page, const std::string& open) {
  const auto a = page.find(open);
  REQUIRE(a != std::string::npos);
  const auto b = page.find("</script>", a);
  return page.substr(a + open.size(), b - a - open.size());
}

std::string unbase64(const std::string& in) {
  std::string out;
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= 'a' && c <= 'z' ? c - 'a' + 26
            : c >= '0' && c <= '9' ? c - '0' + 52
            : c == '+'             ? 62
            : c == '/'             ? 63
                                   : -1;
    if (v < 0) continue;  // padding
    acc = (acc << 6) | std::uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += char((acc >> bits) & 0xff);
    }
  }
  return out;
}

double from_half(std::uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double v = e == 0 ? m * std::ldexp(1.0, -24) : (1 + m / 1024.0) * std::ldexp(1.0, e - 15);
  return (h & 0x8000) ? -v : v;
}

}  // namespace

TEST_CASE("cli_html: the page is self-contained and embeds the run's exact maps") {
  attn::test::TempDir t;
  auto r = run(bin() + " -q --config " + cfg("warner_causal.json") + " --plot " + q(t / "w.html") +
               " --out-dir " + q(t / "out"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string page = attn::test::read_text(t / "w.html");
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  // Nothing loaded from elsewhere: no src/href attributes, no CSS url() or @import.
  for (const char* ref : {" src=", " href=", "url(", "@import", "http://", "https://"})
    CHECK_MESSAGE(page.find(ref) == std::string::npos, ref);

  const auto meta = nlohmann::json::parse(script_body(page, "type=\"application/json\">"));
  CHECK(meta["title"].get<std::string>().find("warner_causal.json") != std::string::npos);
  CHECK(meta["labels"] == nlohmann::json({"Your", "journey", "starts", "with", "one", "step"}));
  CHECK(meta["heads"] == nlohmann::json({0, 1}));
  CHECK(meta["n"] == 6);
  std::map<std::string, std::string> facts;
  for (const auto& f : meta["facts"]) facts[f[0]] = f[1];
  CHECK(facts["masks"] == "causal");
  CHECK(facts["attention"] == "causal, H = 2, D = 4, C = 8");
  CHECK(facts["input"].find("1 x 6 x 8") != std::string::npos);
  CHECK(facts.count("layer") == 1);

  // The maps: (K, N, N) float16, equal to attention.npy within float16's
  // rounding, and exactly 0 exactly where the causal mask put 0.
  const std::string bytes = unbase64(script_body(page, "type=\"application/octet-stream\">"));
  const attn::Tensor want =
      attn::to_float32(attn::read_npy(t / "out/attention.npy"), "attention.npy", false);
  REQUIRE(bytes.size() == want.data.size() * 2);
  double worst = 0;
  for (std::size_t i = 0; i < want.data.size(); ++i) {
    std::uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);  // little-endian, as the page reads it
    const double got = from_half(h), w = want.data[i];
    CHECK((got == 0) == (w == 0));
    worst = std::max(worst, std::abs(got - w) / std::max(w, 1e-30));
  }
  CHECK(worst <= std::ldexp(1.0, -11));  // float16 rounding: half an ulp of 10 bits
}

TEST_CASE("cli_html: chromium shows one panel per head, every label, and no console errors") {
  Browser b;
  if (!b.present) {
    MESSAGE("skipping: no chromium (Debian's `chromium` package) to load the page");
    return;
  }
  attn::test::TempDir t;
  // Hostile labels: markup, an ampersand, CJK, invalid UTF-8 and an escape.
  const std::string labels = "'a<b>c,x&y,\xE6\x97\xA5\xE6\x9C\xAC,bad\xFFz,\x1b[31mred,step'";
  auto r = run(bin() + " -q --config " + cfg("warner_causal.json") + " --labels " + labels +
               " --plot " + q(t / "w.html"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto dom = b.load(t / "w.html", "--dump-dom");
  REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
  CHECK_MESSAGE(!console_errors(dom.err), dom.err);
  CHECK(count_of(dom.out, "data-head=\"0\"") == 1);
  CHECK(count_of(dom.out, "data-head=\"1\"") == 1);
  CHECK(count_of(dom.out, "data-head=") == 2);
  // Labels are text in both columns of the head view, along both axes of
  // each head's heatmap and in each head's top keys of the pinned last query
  // (2 + 2 x 2 + 2), never markup.
  CHECK(count_of(dom.out, ">a&lt;b&gt;c<") == 8);
  CHECK(count_of(dom.out, ">x&amp;y<") == 8);
  CHECK(count_of(dom.out, ">\xE6\x97\xA5\xE6\x9C\xAC<") == 8);
  CHECK(count_of(dom.out, ">bad\xEF\xBF\xBDz<") == 8);     // invalid byte -> U+FFFD
  CHECK(count_of(dom.out, ">\xEF\xBF\xBD[31mred<") == 8);  // ESC -> U+FFFD
  CHECK(dom.out.find("<b>") == std::string::npos);
  CHECK(dom.out.find("data-ready=\"1\"") != std::string::npos);  // the script ran to its end
  CHECK(dom.out.find("causal") != std::string::npos);            // the facts are shown
}

TEST_CASE("cli_html: a pinned query's key bars follow its attention row") {
  Browser b;
  if (!b.present) {
    MESSAGE("skipping: no chromium (Debian's `chromium` package) to load the page");
    return;
  }
  attn::test::TempDir t;
  auto r = run(bin() + " -q --config " + cfg("warner_causal.json") + " --heads 1 --plot " +
               q(t / "w.html") + " --out-dir " + q(t / "out"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // page.html#pin=3 pins query 3 ("with"): the key column's bars give each
  // key's weight relative to the row's strongest, the masked keys none.
  auto dom = b.load(t / "w.html#pin=3", "--dump-dom");
  REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
  CHECK_MESSAGE(!console_errors(dom.err), dom.err);
  CHECK(dom.out.find("Pinned query 3 \xC2\xABwith\xC2\xBB") != std::string::npos);
  const attn::Tensor a =
      attn::to_float32(attn::read_npy(t / "out/attention.npy"), "attention.npy", false);
  // --heads 1 keeps only head 1 in attention.npy too (CONTRACT.md v3): (1, 6, 6).
  REQUIRE(a.shape == std::vector<std::size_t>{1, 6, 6});
  const float* row = a.ptr() + 3 * 6;  // head 1, query 3
  const double top = *std::max_element(row, row + 6);
  std::vector<double> widths;
  const std::regex bar("<span class=\"bar\" style=\"width: ([0-9.e-]+)%;\"></span>");
  for (auto it = std::sregex_iterator(dom.out.begin(), dom.out.end(), bar);
       it != std::sregex_iterator(); ++it)
    widths.push_back(std::stod((*it)[1]));
  REQUIRE(widths.size() == 6);
  for (std::size_t j = 0; j < 6; ++j)  // float16 on the page: 3 significant digits
    CHECK(widths[j] == doctest::Approx(100.0 * row[j] / top).epsilon(2e-3));
  CHECK(widths[4] == 0);
  CHECK(widths[5] == 0);
}

TEST_CASE("cli_html: the pinned query's top keys are listed beside the head view") {
  Browser b;
  if (!b.present) {
    MESSAGE("skipping: no chromium (Debian's `chromium` package) to load the page");
    return;
  }
  attn::test::TempDir t;
  auto r = run(bin() + " -q --config " + cfg("warner_causal.json") + " --heads 1 --plot " +
               q(t / "w.html") + " --out-dir " + q(t / "out"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto dom = b.load(t / "w.html#pin=3", "--dump-dom");
  REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
  CHECK_MESSAGE(!console_errors(dom.err), dom.err);
  CHECK(dom.out.find("Top keys of query 3 \xC2\xABwith\xC2\xBB") != std::string::npos);
  const attn::Tensor a =
      attn::to_float32(attn::read_npy(t / "out/attention.npy"), "attention.npy", false);
  const float* row = a.ptr() + 3 * 6;  // head 1, query 3: keys 0..3 visible, 4 and 5 masked
  std::vector<std::size_t> order = {0, 1, 2, 3};
  std::sort(order.begin(), order.end(),
            [&](std::size_t p, std::size_t q) { return row[p] > row[q]; });
  const std::regex tr(kTopKeyRow);
  std::vector<std::size_t> keys;
  std::vector<double> weights;
  for (auto it = std::sregex_iterator(dom.out.begin(), dom.out.end(), tr);
       it != std::sregex_iterator(); ++it) {
    keys.push_back(std::stoul((*it)[2]));
    weights.push_back(std::stod((*it)[4]));
  }
  REQUIRE(keys.size() == 4);  // the masked keys are not listed
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(keys[r] == order[r]);
    CHECK(weights[r] == doctest::Approx(row[order[r]]).epsilon(2e-3));  // float16 on the page
  }
  CHECK(dom.out.find(">Your</td>") != std::string::npos);  // the token of key 0
}

TEST_CASE("cli_html: hovering a heatmap cell or a token shows its exact weight") {
  Browser b;
  if (!b.present) {
    MESSAGE("skipping: no chromium (Debian's `chromium` package) to load the page");
    return;
  }
  attn::test::TempDir t;
  auto r = run(bin() + " -q --config " + cfg("warner_causal.json") + " --plot " + q(t / "w.html") +
               " --out-dir " + q(t / "out"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // The pointer, played by a script added to this copy of the page: over
  // cell (query 2, key 1) of head 1, then over query token 3.
  std::string page = attn::test::read_text(t / "w.html");
  page.insert(page.rfind("</body>"), R"(<script>
addEventListener("load", () => {
  const tip = () => document.getElementById("tip").textContent;
  const cv = document.querySelector('[data-head="1"] canvas'), r = cv.getBoundingClientRect();
  cv.dispatchEvent(new MouseEvent("mousemove",
      {clientX: r.left + r.width * 1.5 / 6, clientY: r.top + r.height * 2.5 / 6}));
  document.body.dataset.celltip = tip();
  document.querySelectorAll("#qcol .tok")[3].dispatchEvent(
      new MouseEvent("mouseenter", {clientX: 5, clientY: 5}));
  document.body.dataset.tokentip = tip();
});
</script>)");
  attn::test::write_text(t / "hover.html", page);
  auto dom = b.load(t / "hover.html#maps", "--dump-dom");
  REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
  CHECK_MESSAGE(!console_errors(dom.err), dom.err);
  const attn::Tensor a =
      attn::to_float32(attn::read_npy(t / "out/attention.npy"), "attention.npy", false);
  std::smatch m;
  REQUIRE(std::regex_search(dom.out, m,
                            std::regex("data-celltip=\"head 1\\s+query 2 \xC2\xABstarts\xC2\xBB"
                                       "\\s+key 1 \xC2\xABjourney\xC2\xBB\\s+weight ([0-9.]+)\"")));
  CHECK(std::stod(m[1]) == doctest::Approx(a.data[(1 * 6 + 2) * 6 + 1]).epsilon(1e-3));
  // Query 3 "with": its strongest key per head, with the weight.
  REQUIRE(std::regex_search(dom.out, m,
                            std::regex("data-tokentip=\"query 3 [^\"]*head 0: [^(]*"
                                       "\\((\\d)\\) ([0-9.]+)")));
  const float* row = a.ptr() + (0 * 6 + 3) * 6;
  const std::size_t best = std::max_element(row, row + 6) - row;
  CHECK(std::stoul(m[1]) == best);
  CHECK(std::stod(m[2]) == doctest::Approx(row[best]).epsilon(1e-3));
}

TEST_CASE("cli_html: S = 512 with 12 heads loads in chromium, every token in the DOM") {
  Browser b;
  if (!b.present) {
    MESSAGE("skipping: no chromium (Debian's `chromium` package) to load the page");
    return;
  }
  attn::test::TempDir t;
  const std::size_t S = 512, C = 48, H = 12;
  attn::test::write_text(t / "x.npy", attn::encode_npy(attn::test::random_tensor({S, C}, 7)));
  attn::test::write_text(t / "c.json",
                         "{\"attention\": \"multi\", \"hidden_size\": 48, "
                         "\"num_heads\": 12, \"causal\": true, \"layout\": \"fused\", "
                         "\"init\": {\"seed\": 3}, \"input\": \"x.npy\"}");
  auto r = run(bin() + " -q --config " + q(t / "c.json") + " --plot " + q(t / "big.html"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string page = attn::test::read_text(t / "big.html");
  // float16 in base64: 2 bytes a weight, 4/3 for the text.
  CHECK(page.size() < H * S * S * 2 * 4 / 3 + 200000);
  CHECK(page.size() > H * S * S * 2 * 4 / 3);
  for (const char* hash : {"", "#maps"}) {
    auto dom = b.load(t / ("big.html" + std::string(hash)), "--dump-dom");
    REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
    CHECK_MESSAGE(!console_errors(dom.err), dom.err);
    for (std::size_t h = 0; h < H; ++h)
      CHECK(count_of(dom.out, "data-head=\"" + std::to_string(h) + "\"") == 1);
    CHECK(count_of(dom.out, ">0<") >= 2);
    CHECK(count_of(dom.out, ">511<") >= 2);
    CHECK(dom.out.find("data-ready=\"1\"") != std::string::npos);
    // The pinned last query's lines: each head's strongest 6, not a wall of 12 x 512.
    std::smatch m;
    REQUIRE(std::regex_search(dom.out, m, std::regex("id=\"lines\"[^>]*data-drawn=\"(\\d+)\"")));
    CHECK(std::stoi(m[1]) > 12);
    CHECK(std::stoi(m[1]) <= 12 * 6);
  }
}

TEST_CASE("cli_html: the page and the SVG of one run saturate at the same figure") {
  // Past 256 tokens the SVG draws block maxima of fewer cells than the page;
  // both take the colour scale from the SVG's cells.
  for (const std::size_t S : {600, 1500}) {
    CAPTURE(S);
    attn::test::TempDir t;
    attn::test::write_text(t / "x.npy", attn::encode_npy(attn::test::random_tensor({S, 16}, 5)));
    attn::test::write_text(t / "c.json",
                           "{\"attention\": \"multi\", \"hidden_size\": 16, \"num_heads\": 2, "
                           "\"causal\": true, \"layout\": \"fused\", \"init\": {\"seed\": 4}, "
                           "\"input\": \"x.npy\"}");
    for (const char* out : {"m.svg", "m.html"})
      REQUIRE(run(bin() + " -q --config " + q(t / "c.json") + " --color-scale linear --plot " +
                  q(t / out))
                  .exit_code == 0);
    const auto meta = nlohmann::json::parse(
        script_body(attn::test::read_text(t / "m.html"), "type=\"application/json\">"));
    REQUIRE(meta["clipped"] == true);  // the first query's 1.0 dwarfs the long rows
    std::smatch m;
    const std::string svg = attn::test::read_text(t / "m.svg");
    REQUIRE(std::regex_search(svg, m, std::regex("colours saturate at ([0-9.e-]+) ")));
    CHECK(std::stod(m[1]) == doctest::Approx(meta["vmax"].get<double>()).epsilon(0.006));  // %.3g
    // The default past 256 keys (auto): log, one range stated on both.
    for (const char* out : {"a.svg", "a.html"})
      REQUIRE(run(bin() + " -q --config " + q(t / "c.json") + " --plot " + q(t / out)).exit_code ==
              0);
    const auto log_meta = nlohmann::json::parse(
        script_body(attn::test::read_text(t / "a.html"), "type=\"application/json\">"));
    CHECK(log_meta["scale"] == "log");
    CHECK(log_meta["scale_lo"].get<double>() == doctest::Approx(S == 600 ? 1e-3 : 1e-4));
    const std::string log_svg = attn::test::read_text(t / "a.svg");
    CHECK(log_svg.find("colour: " + log_meta["scale_legend"].get<std::string>()) !=
          std::string::npos);
  }
}

TEST_CASE("cli_html: #pin=N pins query token N at any length") {
  Browser b;
  if (!b.present) {
    MESSAGE("skipping: no chromium (Debian's `chromium` package) to load the page");
    return;
  }
  // 1500 tokens in 1024 cells: token 1400 is in cell 955, which holds 1399-1400.
  attn::test::TempDir t;
  write_long_run(t, 1);
  REQUIRE(run(bin() + " -q --config " + q(t / "c.json") + " --plot " + q(t / "p.html")).exit_code ==
          0);
  auto dom = b.load(t / "p.html#pin=1400", "--dump-dom");
  REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
  CHECK_MESSAGE(!console_errors(dom.err), dom.err);
  CHECK(dom.out.find("Pinned queries \xC2\xAB"
                     "1399 [1399\xE2\x80\x93"
                     "1400]\xC2\xBB") != std::string::npos);
}

TEST_CASE("cli_html: past 1,024 tokens the pinned query's top keys are named exactly") {
  Browser b;
  if (!b.present) {
    MESSAGE("skipping: no chromium (Debian's `chromium` package) to load the page");
    return;
  }
  // 1500 tokens in 1024 cells: query 1026 has a cell of its own (700), 1400
  // shares cell 955 with 1399; a key column holds one or two keys. The table
  // lists single keys and, over a cell's queries, each key's largest weight.
  attn::test::TempDir t;
  write_long_run(t, 2);
  REQUIRE(run(bin() + " -q --config " + q(t / "c.json") + " --plot " + q(t / "p.html") + " -o " +
              q(t / "o"))
              .exit_code == 0);
  const attn::Tensor a =
      attn::to_float32(attn::read_npy(t / "o/attention.npy"), "attention.npy", false);
  const std::size_t L = 1500, cells = 1024;
  const std::regex tr(kTopKeyRow);
  const std::regex table("<table data-topkeys-of=\"(\\d)\">(.*?)</table>");
  for (const std::size_t token : {1026, 1400}) {  // #pin names a token: its cell is pinned
    const std::size_t cell = token * cells / L;
    INFO("query " << token << ", cell " << cell);
    auto dom = b.load(t / ("p.html#pin=" + std::to_string(token)), "--dump-dom");
    REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
    CHECK_MESSAGE(!console_errors(dom.err), dom.err);
    std::size_t tables = 0;
    for (auto it = std::sregex_iterator(dom.out.begin(), dom.out.end(), table);
         it != std::sregex_iterator(); ++it, ++tables) {
      const std::size_t h = std::stoul((*it)[1]);
      // Each key's largest weight over the cell's queries, the ten strongest.
      std::vector<float> best(L, 0.0f);
      for (std::size_t i = 0; i < L; ++i)
        if (i * cells / L == cell)
          for (std::size_t j = 0; j < L; ++j)
            best[j] = std::max(best[j], a.data[(h * L + i) * L + j]);
      std::vector<std::size_t> order;
      for (std::size_t j = 0; j < L; ++j)
        if (best[j] > 0) order.push_back(j);
      std::sort(order.begin(), order.end(), [&](std::size_t p, std::size_t r) {
        return best[p] > best[r] || (best[p] == best[r] && p < r);
      });
      order.resize(std::min<std::size_t>(order.size(), 10));
      const std::string rows = (*it)[2];
      std::vector<std::size_t> keys;
      std::vector<double> weights;
      for (auto r = std::sregex_iterator(rows.begin(), rows.end(), tr); r != std::sregex_iterator();
           ++r) {
        keys.push_back(std::stoul((*r)[2]));
        weights.push_back(std::stod((*r)[4]));
      }
      CHECK(keys == order);
      for (std::size_t r = 0; r < std::min(keys.size(), order.size()); ++r)
        CHECK(weights[r] == doctest::Approx(best[order[r]]).epsilon(1e-3));
    }
    CHECK(tables == 2);
  }
}

TEST_CASE("cli_html: with --save q,k the neuron view shows q, k and q*k of the (query, key)") {
  Browser b;
  if (!b.present) {
    MESSAGE("skipping: no chromium (Debian's `chromium` package) to load the page");
    return;
  }
  attn::test::TempDir t;
  // The tiny Llama (H = 4 over Hkv = 2, D = 16, rope): head 3 reads KV head 1.
  const std::string base = bin() + " -q --model " + q(attn::test::source_path("data/tiny-llama")) +
                           " --layer 1 --input " +
                           q(attn::test::source_path("data/tiny-llama-hidden.npy"));
  auto r = run(base + " --heads 3 --save q,k --plot " + q(t / "n.html") + " -o " + q(t / "out"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  auto dom = b.load(t / "n.html#pin=4,key=2", "--dump-dom");
  REQUIRE_MESSAGE(dom.exit_code == 0, dom.err);
  CHECK_MESSAGE(!console_errors(dom.err), dom.err);
  const std::regex section(
      "<section id=\"neuron\" data-head=\"3\" data-query=\"4\" data-key=\"2\" "
      "data-dot=\"([-0-9.e]+)\">");
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_search(dom.out, m, section), dom.out.substr(0, 400));
  const attn::Tensor qs = attn::read_npy_f32(t / "out/q.npy", false);  // (L, H', D)
  const attn::Tensor ks = attn::read_npy_f32(t / "out/k.npy", false);  // (S, Hkv', D)
  REQUIRE(qs.shape == std::vector<std::size_t>{6, 1, 16});
  REQUIRE(ks.shape == std::vector<std::size_t>{6, 1, 16});  // --heads 3: KV head 1 only
  double dot = 0;
  for (std::size_t d = 0; d < 16; ++d) dot += double(qs.data[4 * 16 + d]) * ks.data[2 * 16 + d];
  CHECK(std::stod(m[1]) == doctest::Approx(dot).epsilon(1e-5));
  // Three rows of D cells: q, k and their products.
  for (const char* row : {"data-row=\"q\"", "data-row=\"k\"", "data-row=\"q\xC3\x97k\""})
    CHECK(count_of(dom.out, row) == 1);
  CHECK(count_of(dom.out, "title=\"q[") == 16);
  CHECK(count_of(dom.out, "title=\"q\xC3\x97k[") == 16);

  // Without q and k saved the page carries no neuron view.
  r = run(base + " --save q --plot " + q(t / "plain.html") + " -o " + q(t / "out2"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  dom = b.load(t / "plain.html#pin=4", "--dump-dom");
  CHECK(dom.out.find("<section id=\"neuron\" hidden=\"\">") != std::string::npos);
}

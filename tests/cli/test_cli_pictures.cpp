// cli_pictures: --plot SVG and PNG details end to end: masked cells hatched
// (not the colour of a small weight), a "≥" cap on a saturated colour bar,
// every label drawn up to S = 64, many heads wrapped into a grid, CJK
// and other scripts drawn with real glyphs found through fontconfig; and the
// v2 variants' maps: cross-attention (L queries x T' keys, kv_labels and
// torch MHA's bias_kv / zero_attn columns), --average-heads and sinks.
//
// Letters: H heads, S sequence, L queries, T keys (T' with the extra columns).
#include <doctest/doctest.h>

#include <array>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "attn/npy.h"
#include "cli_checks.h"
#include "json_files.h"
#include "test_util.h"

using attn::test::count_of;
using attn::test::q;
using attn::test::run;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
std::string cfg(const std::string& name) { return attn::test::quoted_config(name); }
// A causal layer with H heads at length S, labels t0..t<S-1>; returns the config path.
std::string long_config(const attn::test::TempDir& t, std::size_t S, std::size_t H) {
  attn::test::write_text(t / "x.npy", attn::encode_npy(attn::test::random_tensor({S, 16}, 3)));
  std::string labels;
  for (std::size_t i = 0; i < S; ++i) labels += (i ? ",\"t" : "\"t") + std::to_string(i) + "\"";
  attn::test::write_text(t / "c.json",
                         "{\"attention\": \"multi\", \"hidden_size\": 16, "
                         "\"num_heads\": " +
                             std::to_string(H) +
                             ", \"head_size\": 4, \"causal\": true, \"layout\": "
                             "\"fused\", \"init\": {\"seed\": 2}, \"input\": \"x.npy\", "
                             "\"labels\": [" +
                             labels + "]}");
  return t / "c.json";
}

// A golden variant's config (tests/golden/variants/NAME) with its paths
// made absolute and `extra`'s keys merged in, written to t/NAME.json.
std::string variant_config(const attn::test::TempDir& t, const std::string& name,
                           const nlohmann::json& extra) {
  const std::string dir = attn::test::source_path("tests/golden/variants/" + name);
  auto cfg = attn::test::read_json(dir + "/config.json");
  for (auto& [key, value] : cfg.items())
    if (value.is_string() &&
        (key == "weights" || key == "input" || key.find("mask") != std::string::npos ||
         key == "positions" || key.find("_input") != std::string::npos))
      value = dir + "/" + value.get<std::string>();
  cfg.merge_patch(extra);
  attn::test::write_text(t / (name + ".json"), cfg.dump(1));
  return t / (name + ".json");
}

}  // namespace

TEST_CASE("cli_pictures: masked cells are hatched, apart from the colour scale") {
  attn::test::TempDir t;
  REQUIRE(run(bin() + " -q --config " + cfg("warner_causal.json") + " --plot " + q(t / "w.svg"))
              .exit_code == 0);
  const std::string svg = attn::test::read_text(t / "w.svg");
  CHECK(count_of(svg, "<pattern id=\"masked\"") == 1);
  // Causal S = 6: rows 0..4 each end in one run of masked keys, in both
  // panels, plus the legend's swatch.
  CHECK(count_of(svg, "fill=\"url(#masked)\"") == 2 * 5 + 1);
  CHECK(svg.find(">masked</text>") != std::string::npos);
  // The darkest colour of the scale (a weight near 0) is not used for them:
  // the smallest weight of the map here is 0.09, no cell is viridis(0).
  CHECK(svg.find("fill=\"#440154\"") == std::string::npos);

  // Past 64 cells a side the map is an image; its masked runs are hatched on top.
  attn::test::TempDir t2;
  const std::string c = long_config(t2, 100, 1);
  REQUIRE(run(bin() + " -q --config " + q(c) + " --plot " + q(t2 / "l.svg")).exit_code == 0);
  const std::string long_svg = attn::test::read_text(t2 / "l.svg");
  CHECK(count_of(long_svg, "<image class=\"heatmap\"") == 1);
  CHECK(count_of(long_svg, "fill=\"url(#masked)\"") == 99 + 1);
}

TEST_CASE("cli_pictures: a capped colour bar says so with a ≥ at its top") {
  attn::test::TempDir t;
  REQUIRE(run(bin() + " -q --config " + cfg("warner_causal.json") + " --plot " + q(t / "w.svg"))
              .exit_code == 0);
  CHECK(attn::test::read_text(t / "w.svg").find("\xE2\x89\xA5") == std::string::npos);
  const std::string c = long_config(t, 200, 1);
  REQUIRE(run(bin() + " -q --config " + q(c) + " --plot " + q(t / "l.svg")).exit_code == 0);
  const std::string svg = attn::test::read_text(t / "l.svg");
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("colours saturate at ([0-9.e-]+) \\(99th")));
  CHECK(svg.find(">\xE2\x89\xA5 " + m[1].str() + "</text>") != std::string::npos);
}

TEST_CASE("cli_pictures: up to S = 64 every label is drawn; past it they thin out") {
  attn::test::TempDir t;
  const std::string c = long_config(t, 64, 2);
  REQUIRE(run(bin() + " -q --config " + q(c) + " --plot " + q(t / "s.svg")).exit_code == 0);
  const std::string svg = attn::test::read_text(t / "s.svg");
  for (int i = 0; i < 64; ++i)  // a row and a column of each of the two panels
    CHECK_MESSAGE(count_of(svg, ">t" + std::to_string(i) + "</text>") == 4, i);
  attn::test::TempDir t2;
  const std::string c2 = long_config(t2, 65, 1);
  REQUIRE(run(bin() + " -q --config " + q(c2) + " --plot " + q(t2 / "s.svg")).exit_code == 0);
  CHECK(count_of(attn::test::read_text(t2 / "s.svg"), ">t1</text>") == 0);
}

TEST_CASE("cli_pictures: heads wrap into a grid about as wide as tall (4: 2 x 2, 12: 4 x 3)") {
  for (const auto& [heads, cols, rows] :
       {std::array<std::size_t, 3>{12, 4, 3}, std::array<std::size_t, 3>{4, 2, 2},
        std::array<std::size_t, 3>{3, 2, 2}, std::array<std::size_t, 3>{2, 2, 1}}) {
    CAPTURE(heads);
    attn::test::TempDir t;
    const std::string c = long_config(t, 8, heads);
    REQUIRE(run(bin() + " -q --config " + q(c) + " --plot " + q(t / "g.svg")).exit_code == 0);
    const std::string svg = attn::test::read_text(t / "g.svg");
    CHECK(count_of(svg, "<g class=\"panel\"") == heads);
    std::set<std::string> xs, ys;
    const std::regex title("<text x=\"([0-9.]+)\" y=\"([0-9.]+)\"[^>]*>head \\d+</text>");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), title);
         it != std::sregex_iterator(); ++it) {
      xs.insert((*it)[1]);
      ys.insert((*it)[2]);
    }
    CHECK(xs.size() == cols);
    CHECK(ys.size() == rows);
  }
}

TEST_CASE("cli_pictures: CJK, Hangul, Thai and Devanagari labels get real glyphs in the PNG") {
  // Characters no font has (private use) all draw as the same empty box, so
  // two PNGs of different such labels are byte-identical; labels in real
  // scripts, drawn with the fonts fontconfig finds, must differ from them.
  attn::test::TempDir t;
  const std::string base = bin() + " -q --config " + cfg("warner_causal.json") + " --heads 0 ";
  auto png = [&](const std::string& name, const std::string& labels) {
    REQUIRE(run(base + "--labels '" + labels + "' --plot " + q(t / name)).exit_code == 0);
    return attn::test::read_text(t / name);
  };
  const std::string box1 = png("box1.png", "\xF3\xB0\x80\x80,\xF3\xB0\x80\x81,a,b,c,d");
  const std::string box2 = png("box2.png", "\xF3\xB0\x80\x82,\xF3\xB0\x80\x83,a,b,c,d");
  REQUIRE(box1 == box2);  // the comparison below can tell boxes apart from glyphs
  for (const char* script : {"\xE6\x97\xA5,\xE6\x9C\xAC",     // 日,本
                             "\xED\x95\x9C,\xEA\xB5\xAD",     // 한,국
                             "\xE0\xB8\x81,\xE0\xB8\x82",     // ก,ข
                             "\xE0\xA4\x95,\xE0\xA4\x96"}) {  // क,ख
    CAPTURE(script);
    CHECK(png("s.png", std::string(script) + ",a,b,c,d") != box1);
  }
}

TEST_CASE("cli_pictures: labels that are not valid UTF-8 draw as U+FFFD in SVG and PNG") {
  attn::test::TempDir t;
  const std::string base = bin() + " -q --config " + cfg("warner_causal.json") +
                           " --labels 'ok,bad\xFF,\xC3,x\x01y,e,f' --plot ";
  REQUIRE(run(base + q(t / "b.svg")).exit_code == 0);
  const std::string svg = attn::test::read_text(t / "b.svg");
  CHECK(count_of(svg, ">bad\xEF\xBF\xBD</text>") == 4);  // a row and a column of both panels
  CHECK(count_of(svg, ">\xEF\xBF\xBD</text>") == 4);
  CHECK(count_of(svg, ">x\xEF\xBF\xBDy</text>") == 4);  // a control character, not allowed in XML
  CHECK(svg.find('\xFF') == std::string::npos);
  auto png = run(base + q(t / "b.png"));
  CHECK_MESSAGE(png.exit_code == 0, png.err);
  CHECK(attn::test::read_text(t / "b.png").rfind("\x89PNG", 0) == 0);
}

TEST_CASE(
    "cli_pictures: cross-attention draws 5 queries x 8 keys with kv_labels and MHA's columns") {
  // torch MHA as cross-attention: L = 5 queries, T = 6 keys from key.npy,
  // then bias_kv and zero_attn: maps (B, 4, 5, 8).
  attn::test::TempDir t;
  const std::string c = variant_config(t, "mha_cross_bool_mask",
                                       {{"labels", {"q0", "q1", "q2", "q3", "q4"}},
                                        {"kv_labels", {"k0", "k1", "k2", "k3", "k4", "k5"}}});
  auto r = run(bin() + " -q --config " + q(c) + " --plot " + q(t / "x.svg"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string svg = attn::test::read_text(t / "x.svg");
  CHECK(count_of(svg, "<g class=\"panel\"") == 4);
  CHECK(svg.find("L = 5 queries x T = 8 keys") != std::string::npos);
  for (const char* l : {">q0</text>", ">q4</text>", ">k0</text>", ">k5</text>", ">bias_kv</text>",
                        ">zero_attn</text>"})
    CHECK_MESSAGE(count_of(svg, l) == 4, l);  // one row or column label per panel
  // Query labels are rows (right-aligned), key labels columns (below the map).
  CHECK(std::regex_search(svg, std::regex("text-anchor=\"end\"[^>]*>q0</text>")));
  CHECK(!std::regex_search(svg, std::regex("text-anchor=\"end\" fill=\"#222222\">k0</text>")));

  // --show: the key line holds the key labels, five rows the query labels.
  r = run("COLUMNS=100 " + bin() + " --config " + q(c) + " --show --heads 1");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto at = r.out.find("\nhead 1\n");
  REQUIRE(at != std::string::npos);
  const std::string keys = r.out.substr(at + 8, r.out.find('\n', at + 8) - at - 8);
  for (const char* k : {"k0", "k5", "bias_kv", "zero_at"})
    CHECK_MESSAGE(keys.find(k) != std::string::npos, k);
  CHECK(r.out.find("\nq4 ") != std::string::npos);
  CHECK(r.out.find("query 4 \"q4\"") != std::string::npos);

  // Without kv_labels, the keys are their positions; a wrong --show-query names L.
  const std::string c2 = variant_config(t, "mha_cross_bool_mask", nlohmann::json::object());
  r = run(bin() + " -q --config " + q(c2) + " --plot " + q(t / "p.svg"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(count_of(attn::test::read_text(t / "p.svg"), ">5</text>") == 4);
  attn::test::check_cli_failure(run(bin() + " --config " + q(c2) + " --show --show-query 5"), 64,
                                {"--show-query", "L = 5"});
}

TEST_CASE("cli_pictures: --average-heads draws one map, the mean, in SVG, HTML and --show") {
  attn::test::TempDir t;
  const std::string c = variant_config(t, "mha_cross_float_mask_avg", nlohmann::json::object());
  auto r = run(bin() + " -q --config " + q(c) + " --plot " + q(t / "m.svg"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string svg = attn::test::read_text(t / "m.svg");
  CHECK(count_of(svg, "<g class=\"panel\"") == 1);
  CHECK(count_of(svg, ">mean of 4 heads</text>") == 1);
  CHECK(svg.find("the mean of the 4 heads (--average-heads)") != std::string::npos);
  REQUIRE(run(bin() + " -q --config " + q(c) + " --plot " + q(t / "m.html")).exit_code == 0);
  CHECK(attn::test::read_text(t / "m.html").find("\"head_names\":[\"mean of 4 heads\"]") !=
        std::string::npos);
  r = run("COLUMNS=80 " + bin() + " --config " + q(c) + " --show");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(count_of(r.out, "\nmean of 4 heads\n") == 2);  // the grid and the head view
  // The same flag on the command line.
  const std::string c2 = variant_config(t, "mha_cross_bool_mask", nlohmann::json::object());
  r = run(bin() + " -q --config " + q(c2) + " --average-heads --plot " + q(t / "f.svg"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(count_of(attn::test::read_text(t / "f.svg"), ">mean of 4 heads</text>") == 1);
}

TEST_CASE("cli_pictures: with sinks, --show's head view gives the row's sum") {
  attn::test::TempDir t;
  const std::string c = variant_config(t, "gptoss_sinks_window", nlohmann::json::object());
  auto r = run("COLUMNS=100 " + bin() + " --config " + q(c) + " --show --heads 0");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m,
                            std::regex("\nhead 0 \\(row sums to (0\\.\\d\\d): the sink takes "
                                       "the rest\\)\n")));
  CHECK(std::stod(m[1]) < 0.999);
  CHECK(r.out.find("colour: 0 to ") != std::string::npos);
}

TEST_CASE("cli_pictures: a model folder's picture is titled by the folder and the layer") {
  // Gemma 2's layer 0 slides (window 4), layer 1 is global; 4 heads, 2 KV heads.
  attn::test::TempDir t;
  const std::string dir = attn::test::source_dir() + "/tests/golden/folders/gemma2/";
  for (const int layer : {0, 1}) {
    CAPTURE(layer);
    const std::string svg_path = t / ("l" + std::to_string(layer) + ".svg");
    auto r = run(bin() + " --model " + q(dir + "model/") + " --layer " + std::to_string(layer) +
                 " --input " + q(dir + "layer0/input.npy") + " --plot " + q(svg_path));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const std::string svg = attn::test::read_text(svg_path);
    CHECK(count_of(svg, ">model, layer " + std::to_string(layer) + "</text>") == 1);
    CHECK(count_of(svg, "config.json") == 0);
    CHECK(count_of(svg, "4 heads, 2 KV heads, rope theta 10000") == 1);
    CHECK(count_of(svg, ", window 4,") == (layer == 0 ? 1 : 0));
  }
  // A snapshot of the Hugging Face cache is titled by its repository.
  const std::string snap = t / "hub/models--google--gemma-2-2b/snapshots/0123abcd";
  REQUIRE(run("mkdir -p " + q(snap) + " && cp " + q(dir) + "model/* " + q(snap)).exit_code == 0);
  auto r = run(bin() + " --model " + q(snap) + " --layer 1 --input " + q(dir + "layer0/input.npy") +
               " --plot " + q(t / "snap.svg"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(count_of(attn::test::read_text(t / "snap.svg"), ">google/gemma-2-2b, layer 1</text>") == 1);
}

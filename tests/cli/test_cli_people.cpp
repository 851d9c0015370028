// cli_people: the built attn-run end to end for people and pipelines (issue
// 6): pictures (SVG structure and labels, PNG size, terminal), stdin/stdout
// round trips (through NumPy when /usr/bin/python3 has it), --attn-stdout,
// --stats against a direct computation, --input-list and --shard coverage.
//
// Letters: B batch, H heads, S sequence.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "attn/npy.h"
#include "json_files.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::count_of;
using attn::test::q;
using attn::test::run;
using attn::test::run_json;
using attn::test::source_path;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
std::string cfg(const std::string& name) { return attn::test::quoted_config(name); }
attn::Tensor npy_file(const std::string& path) {
  return attn::to_float32(attn::read_npy(path), path, false);
}

// A small XML well-formedness check for the SVG we write (no CDATA, no
// comments, no DTD): every tag closed in order, attributes quoted, entities
// known. Returns "" when well formed, else what is wrong.
std::string xml_problem(const std::string& x) {
  std::vector<std::string> open;
  std::size_t i = 0;
  while (i < x.size()) {
    if (x[i] != '<') {
      if (x[i] == '&') {
        const auto semi = x.find(';', i);
        const std::string ent = semi == std::string::npos ? "" : x.substr(i, semi - i + 1);
        if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;")
          return "bad entity at " + std::to_string(i);
      }
      if (open.empty() && !std::isspace(static_cast<unsigned char>(x[i])))
        return "text outside the root at " + std::to_string(i);
      ++i;
      continue;
    }
    const auto end = x.find('>', i);
    if (end == std::string::npos) return "unclosed tag at " + std::to_string(i);
    std::string tag = x.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.front() == '?') continue;  // the XML declaration
    if (tag.front() == '/') {
      if (open.empty() || open.back() != tag.substr(1))
        return "mismatched </" + tag.substr(1) + ">";
      open.pop_back();
      continue;
    }
    const bool self_closing = tag.back() == '/';
    if (self_closing) tag.pop_back();
    const auto name_end = tag.find_first_of(" \t\n");
    const std::string name = tag.substr(0, name_end);
    std::string rest = name_end == std::string::npos ? "" : tag.substr(name_end);
    // name="value" pairs, by hand (std::regex recurses per character and
    // overflows the stack on a long base64 attribute).
    std::set<std::string> seen;
    std::size_t k = 0;
    auto skip_space = [&] {
      while (k < rest.size() && std::isspace(static_cast<unsigned char>(rest[k]))) ++k;
    };
    for (skip_space(); k < rest.size(); skip_space()) {
      const std::size_t eq = rest.find('=', k);
      if (eq == std::string::npos || eq + 1 >= rest.size() || rest[eq + 1] != '"')
        return "bad attributes in <" + name + ">";
      const std::string attr = rest.substr(k, eq - k);
      if (attr.empty() ||
          attr.find_first_not_of(
              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_:.") !=
              std::string::npos)
        return "bad attribute name '" + attr + "' in <" + name + ">";
      if (!seen.insert(attr).second) return "duplicate attribute " + attr;
      const std::size_t close = rest.find('"', eq + 2);
      if (close == std::string::npos || rest.find('<', eq + 2) < close)
        return "bad attribute value in <" + name + ">";
      k = close + 1;
    }
    if (!self_closing) open.push_back(name);
  }
  return open.empty() ? "" : "unclosed <" + open.back() + ">";
}

double svg_attr(const std::string& svg, const std::string& name) {
  std::smatch m;
  const std::regex re("<svg[^>]* " + name + "=\"([0-9.]+)\"");
  REQUIRE(std::regex_search(svg, m, re));
  return std::stod(m[1]);
}

bool have_numpy() { return run("/usr/bin/python3 -c 'import numpy' 2>/dev/null").exit_code == 0; }

// A config with seeded weights and no sequence limit, for long inputs.
std::string long_config(const attn::test::TempDir& t) {
  attn::test::write_text(t / "long.json", R"({"attention": "causal", "hidden_size": 8,
    "num_heads": 2, "layout": "fused", "init": {"seed": 5}})");
  return q(t / "long.json");
}

}  // namespace

TEST_CASE("cli_people: the XML check used below rejects broken documents") {
  CHECK(xml_problem("<svg a=\"1\"><g><text>x &amp; y</text></g></svg>\n") == "");
  CHECK(xml_problem("<svg><g></svg>") != "");
  CHECK(xml_problem("<svg><text>a & b</text></svg>") != "");
  CHECK(xml_problem("<svg a=1></svg>") != "");
  CHECK(xml_problem("<svg a=\"1\" a=\"2\"></svg>") != "");
  CHECK(xml_problem("<svg>") != "");
}

TEST_CASE("cli_people: --plot SVG is well-formed XML with one panel per head and every label") {
  attn::test::TempDir t;
  auto r = run(bin() + " -q --config " + cfg("warner_causal.json") + " --plot " + q(t / "w.svg"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());  // --plot alone prints no context (CONTRACT.md v4)
  const std::string svg = attn::test::read_text(t / "w.svg");
  CHECK_MESSAGE(xml_problem(svg) == "", xml_problem(svg));
  CHECK(count_of(svg, "<g class=\"panel\"") == 2);
  CHECK(svg.find("id=\"head-0\"") != std::string::npos);
  CHECK(svg.find("id=\"head-1\"") != std::string::npos);
  CHECK(svg.find(">head 0</text>") != std::string::npos);
  CHECK(svg.find("configs/warner_causal.json</text>") != std::string::npos);
  // Each token labels a row and a column of both panels.
  for (const char* label : {"Your", "journey", "starts", "with", "one", "step"})
    CHECK_MESSAGE(count_of(svg, std::string(">") + label + "</text>") == 4, label);
  CHECK(svg.find("class=\"legend\"") != std::string::npos);
  CHECK(fs::directory_iterator(t.path) != fs::directory_iterator());
  CHECK(std::distance(fs::directory_iterator(t.path), fs::directory_iterator()) == 1);  // no temp

  // --heads picks panels; --labels replaces the config's labels, escaped as XML.
  auto r2 = run(bin() + " -q --config " + cfg("warner_causal.json") + " --heads 1 --labels " +
                "'a<b,c&d,e,f,g,h' --plot " + q(t / "h1.svg"));
  REQUIRE(r2.exit_code == 0);
  const std::string svg2 = attn::test::read_text(t / "h1.svg");
  CHECK(xml_problem(svg2) == "");
  CHECK(count_of(svg2, "<g class=\"panel\"") == 1);
  CHECK(svg2.find("id=\"head-1\"") != std::string::npos);
  CHECK(count_of(svg2, ">a&lt;b</text>") == 2);
  CHECK(count_of(svg2, ">c&amp;d</text>") == 2);
  CHECK(svg2.find(">journey</text>") == std::string::npos);
}

TEST_CASE("cli_people: --plot PNG is drawn at twice the SVG's size") {
  attn::test::TempDir t;
  for (const char* heads : {"0,1", "0"}) {
    CAPTURE(heads);
    const std::string base =
        bin() + " -q --config " + cfg("warner_causal.json") + " --heads " + heads;
    REQUIRE(run(base + " --plot " + q(t / "w.svg")).exit_code == 0);
    REQUIRE(run(base + " --plot " + q(t / "w.png")).exit_code == 0);
    const std::string svg = attn::test::read_text(t / "w.svg");
    const std::string png = attn::test::read_text(t / "w.png");
    REQUIRE(png.size() > 24);
    CHECK(png.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
    CHECK(png.compare(12, 4, "IHDR") == 0);
    auto be32 = [&](std::size_t at) {
      return (std::uint32_t(std::uint8_t(png[at])) << 24) |
             (std::uint32_t(std::uint8_t(png[at + 1])) << 16) |
             (std::uint32_t(std::uint8_t(png[at + 2])) << 8) |
             std::uint32_t(std::uint8_t(png[at + 3]));
    };
    CHECK(be32(16) == std::uint32_t(2 * svg_attr(svg, "width")));
    CHECK(be32(20) == std::uint32_t(2 * svg_attr(svg, "height")));
  }
  // Two heads side by side are wider than one.
  REQUIRE(run(bin() + " -q --config " + cfg("warner_causal.json") + " --plot " + q(t / "two.svg"))
              .exit_code == 0);
  CHECK(svg_attr(attn::test::read_text(t / "two.svg"), "width") >
        svg_attr(attn::test::read_text(t / "w.svg"), "width"));
}

TEST_CASE("cli_people: a long sequence is drawn downsampled with thinned labels") {
  attn::test::TempDir t;
  attn::test::write_text(t / "x.npy", attn::encode_npy(attn::test::random_tensor({600, 8}, 9)));
  auto r = run(bin() + " -q --config " + long_config(t) + " --input " + q(t / "x.npy") +
               " --plot " + q(t / "long.svg") + " --format npy");
  REQUIRE(r.exit_code == 0);
  const std::string svg = attn::test::read_text(t / "long.svg");
  CHECK(xml_problem(svg) == "");
  CHECK(count_of(svg, "<g class=\"panel\"") == 2);
  CHECK(svg.find("max over a block") != std::string::npos);
  // Thinned: far fewer than 600 row labels per panel, but some (">0<", ">100<" ...).
  const std::size_t labels = count_of(svg, "font-size=\"11\" text-anchor=\"end\"");
  CHECK(labels > 2 * 5);
  CHECK(labels < 2 * 100);
  CHECK(svg.find(">100</text>") != std::string::npos);
  // Past 64 cells a side each panel is one embedded PNG of at most 256 x 256
  // cells, so the file stays small.
  CHECK(count_of(svg, "<image class=\"heatmap\"") == 2);
  CHECK(count_of(svg, "xlink:href=\"data:image/png;base64,iVBORw0KGgo") == 2);  // PNG signature
  CHECK(svg.size() < 1000000);
}

TEST_CASE("cli_people: --show draws every head with labelled rows; plain characters off a tty") {
  auto r = run(bin() + " --config " + cfg("warner_causal.json") + " --show");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("tensor(") == std::string::npos);  // the maps replace the context
  CHECK(r.out.find("\033[") == std::string::npos);    // no colour codes into a file
  CHECK(r.out.find("\nhead 0\n") != std::string::npos);
  CHECK(r.out.find("\nhead 1\n") != std::string::npos);
  // The first query attends only to itself (weight 1: the brightest ramp
  // character); the rest of its row is masked (blank). Six tokens with
  // labels up to 7 characters: cells 8 columns wide, each key labelled.
  CHECK(count_of(r.out, "\n   Your @@@@@@@@" + std::string(40, ' ') + "\n") == 2);
  CHECK(count_of(r.out, "\n        Your    journey starts  with    one     step    \n") == 2);
  for (const char* label : {"journey ", " starts ", "   with ", "    one ", "   step "})
    CHECK(count_of(r.out, std::string("\n") + label) == 2);
}

TEST_CASE("cli_people: --show on a terminal uses 24-bit or 256-colour blocks") {
  // `script` (util-linux) gives attn-run a pseudo-terminal as stdout.
  if (run("command -v script").exit_code != 0) {
    MESSAGE("skipping: no `script` to provide a terminal");
    return;
  }
  const std::string cmd = bin() + " --config " + cfg("warner_causal.json") + " --show --heads 0";
  auto truecolor = run("script -qec \"COLORTERM=truecolor " + cmd + "\" /dev/null");
  REQUIRE(truecolor.exit_code == 0);
  // Weight 1 ("Your" on itself) is the bright end of viridis, #fde725.
  CHECK(truecolor.out.find("\033[48;2;253;231;37m        ") != std::string::npos);
  CHECK(truecolor.out.find("\033[0m") != std::string::npos);
  CHECK(truecolor.out.find("@@") == std::string::npos);
  auto xterm = run("script -qec \"COLORTERM= " + cmd + "\" /dev/null");
  REQUIRE(xterm.exit_code == 0);
  CHECK(xterm.out.find("\033[48;5;") != std::string::npos);
  CHECK(xterm.out.find("\033[48;2;") == std::string::npos);
  auto no_color = run("script -qec \"NO_COLOR=1 " + cmd + "\" /dev/null");
  REQUIRE(no_color.exit_code == 0);
  CHECK(no_color.out.find("\033[") == std::string::npos);
  CHECK(no_color.out.find("@@") != std::string::npos);
}

TEST_CASE("cli_people: stdin and stdout round trip, with and without NumPy") {
  attn::test::TempDir t;
  const std::string npy = attn::test::read_text(source_path("data/sentence_c8.npy"));
  auto from_stdin =
      run(bin() + " --config " + cfg("warner_causal.json") + " --input - --format npy", npy);
  REQUIRE(from_stdin.exit_code == 0);
  CHECK(from_stdin.err.empty());
  auto from_file = run(bin() + " --config " + cfg("warner_causal.json") + " --format npy");
  REQUIRE(from_file.exit_code == 0);
  CHECK(from_stdin.out == from_file.out);
  const attn::Tensor ctx = attn::test::npy_values(from_file.out, "stdout");
  CHECK(ctx.shape == std::vector<std::size_t>{6, 8});
  REQUIRE(run(bin() + " -q --config " + cfg("warner_causal.json") + " --out-dir " + q(t / "o"))
              .exit_code == 0);

  // --attn-stdout: the maps instead of the context, (H, S, S) or (B, H, S, S).
  auto maps = run(bin() + " --config " + cfg("warner_causal.json") + " --attn-stdout --format npy");
  REQUIRE(maps.exit_code == 0);
  const attn::Tensor m = attn::test::npy_values(maps.out, "stdout");
  CHECK(m.shape == std::vector<std::size_t>{2, 6, 6});
  CHECK(m.data == npy_file(t / "o/attention.npy").data);
  auto batched =
      run(bin() + " --config " + cfg("raschka_mha_causal.json") + " --attn-stdout --format json");
  REQUIRE(batched.exit_code == 0);
  const auto j = nlohmann::json::parse(batched.out);
  CHECK(j.size() == 2);
  CHECK(j[0].size() == 2);
  CHECK(j[0][0].size() == 6);
  CHECK(j[0][0][5].size() == 6);
  auto clash = run(bin() + " --config " + cfg("warner_causal.json") + " --attn-stdout --out-dir " +
                   q(t / "p"));
  CHECK(clash.exit_code == 64);
  CHECK(clash.err.find("--attn-stdout") != std::string::npos);

  if (!have_numpy()) {
    MESSAGE("skipping the NumPy round trip: /usr/bin/python3 has no numpy");
    return;
  }
  // NumPy writes the input to the pipe and reads the output from the pipe.
  // (numpy.load seeks, so a pipe is read into BytesIO first.)
  const std::string py_in =
      "/usr/bin/python3 -c 'import sys, numpy; numpy.save(sys.stdout.buffer, "
      "numpy.load(sys.argv[1]))' " +
      q(source_path("data/sentence_c8.npy"));
  const std::string py_out =
      "/usr/bin/python3 -c 'import io, sys, numpy; a = "
      "numpy.load(io.BytesIO(sys.stdin.buffer.read())); "
      "print(a.shape, a.dtype, repr(float(a[0, 0])))'";
  auto np = run(py_in + " | " + bin() + " --config " + cfg("warner_causal.json") +
                " --input - --format npy | " + py_out);
  REQUIRE(np.exit_code == 0);
  char first[64];
  std::snprintf(first, sizeof first, "%.9g", double(ctx.data[0]));
  CHECK_MESSAGE(np.out.find("(6, 8) float32") == 0, np.out);
  CHECK(std::fabs(std::stod(np.out.substr(np.out.rfind(' ') + 1)) - ctx.data[0]) < 1e-7);
  auto np_maps = run(bin() + " --config " + cfg("raschka_mha_causal.json") +
                     " --attn-stdout --format npy | /usr/bin/python3 -c 'import io, sys, numpy; "
                     "a = numpy.load(io.BytesIO(sys.stdin.buffer.read())); print(a.shape, "
                     "bool(abs(a.sum(-1) - 1).max() < 1e-6))'");
  REQUIRE(np_maps.exit_code == 0);
  CHECK(np_maps.out == "(2, 2, 6, 6) True\n");
}

TEST_CASE("cli_people: --stats in run.json match a direct computation from attention.npy") {
  attn::test::TempDir t;
  auto r =
      run(bin() + " --config " + cfg("warner_causal.json") + " --stats --out-dir " + q(t / "o"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(r.err.find("entropy") != std::string::npos);  // the table goes to stderr
  const auto run_json = attn::test::read_json(t / "o/run.json");
  const attn::Tensor a = npy_file(t / "o/attention.npy");  // (H, S, S)
  const std::size_t H = a.shape[0], S = a.shape[1];
  REQUIRE(run_json["stats"].size() == H);
  for (std::size_t h = 0; h < H; ++h) {
    double ent = 0, mx = 0, first = 0;
    for (std::size_t i = 0; i < S; ++i) {
      const float* row = a.ptr() + (h * S + i) * S;
      for (std::size_t k = 0; k < S; ++k)
        if (row[k] > 0) ent -= row[k] * std::log(double(row[k]));
      mx += *std::max_element(row, row + S);
      first += row[0];
    }
    const auto& s = run_json["stats"][h];
    CAPTURE(h);
    CHECK(s["head"] == h);
    CHECK(s["mean_entropy"].get<double>() == doctest::Approx(ent / S).epsilon(1e-6));
    CHECK(s["mean_max_weight"].get<double>() == doctest::Approx(mx / S).epsilon(1e-6));
    CHECK(s["first_token_share"].get<double>() == doctest::Approx(first / S).epsilon(1e-6));
    CHECK(s["fully_masked_rows"] == 0);
    CHECK(s["rows"] == S);
  }
  // --no-attn still gets the statistics (from the streamed blocks), and -q hides the table.
  auto r2 = run(bin() + " -q --config " + cfg("warner_causal.json") +
                " --stats --no-attn --out-dir " + q(t / "n"));
  REQUIRE(r2.exit_code == 0);
  CHECK(r2.err.empty());
  CHECK(!fs::exists(t / "n/attention.npy"));
  const auto run2 = attn::test::read_json(t / "n/run.json");
  CHECK(run2["stats"] == run_json["stats"]);
}

TEST_CASE("cli_people: shards of an input list cover it exactly once") {
  attn::test::TempDir t;
  fs::create_directories(t / "in/sub");
  std::string list = "# seven inputs, one per line\n\n";
  std::vector<std::string> names;
  for (int k = 0; k < 7; ++k) {
    const std::string name = "x" + std::to_string(k);
    names.push_back(name);
    const std::string rel = (k % 2 ? "sub/" : "") + name + ".npy";
    attn::test::write_text(t / ("in/" + rel), attn::encode_npy(attn::test::random_tensor(
                                                  {std::size_t(2 + k % 4), 8}, k)));
    list += (k == 3 ? "  " + rel + "  " : rel) + "\n" + (k == 4 ? "# a comment\n\n" : "");
  }
  attn::test::write_text(t / "in/list.txt", list);
  const std::string base = bin() + " -q --config " + cfg("warner_causal.json") + " --input-list " +
                           q(t / "in/list.txt") + " --out-dir " + q(t / "out");
  std::set<std::string> covered;
  for (int k = 0; k < 3; ++k) {
    auto r = run(base + " --shard " + std::to_string(k) + "/3");
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.empty());
    const auto summary = nlohmann::json::parse(
        attn::test::read_text(t / ("out/batch-" + std::to_string(k) + "-of-3.json")));
    CHECK(summary["shard"]["k"] == k);
    CHECK(summary["list_inputs"] == 7);
    for (const auto& in : summary["inputs"]) {
      const std::string dir = in["dir"];
      CHECK(in["index"].get<int>() % 3 == k);
      CHECK_MESSAGE(covered.insert(dir).second, dir << " ran in two shards");
    }
  }
  CHECK(covered == std::set<std::string>(names.begin(), names.end()));
  for (const auto& name : names) {
    CHECK(fs::exists(t / ("out/" + name + "/context.npy")));
    CHECK(fs::exists(t / ("out/" + name + "/attention.npy")));
    CHECK(fs::exists(t / ("out/" + name + "/run.json")));
  }
  CHECK(!fs::exists(t / "out/batch.json"));

  // A list result equals the single run of the same input.
  REQUIRE(run(bin() + " -q --config " + cfg("warner_causal.json") + " --input " +
              q(t / "in/sub/x3.npy") + " --out-dir " + q(t / "single"))
              .exit_code == 0);
  CHECK(npy_file(t / "out/x3/context.npy").data == npy_file(t / "single/context.npy").data);
  CHECK(npy_file(t / "out/x3/attention.npy").data == npy_file(t / "single/attention.npy").data);

  // Unsharded: one batch.json listing all seven in list order.
  REQUIRE(run(base).exit_code == 0);
  const auto all = attn::test::read_json(t / "out/batch.json");
  REQUIRE(all["inputs"].size() == 7);
  CHECK(all["inputs"][3]["dir"] == "x3");
  CHECK(all["inputs"][3]["line"] == 6);
}

TEST_CASE("cli_people: input-list errors: same names, bad shards, a failing input") {
  attn::test::TempDir t;
  fs::create_directories(t / "sub");
  const std::string x = attn::encode_npy(attn::test::random_tensor({3, 8}, 1));
  attn::test::write_text(t / "a.npy", x);
  attn::test::write_text(t / "sub/a.npy", x);
  attn::test::write_text(t / "dup.txt", "a.npy\nsub/a.npy\n");
  auto dup = run(bin() + " --config " + cfg("warner_causal.json") + " --input-list " +
                 q(t / "dup.txt") + " --out-dir " + q(t / "out"));
  CHECK(dup.exit_code == 65);
  CHECK(dup.err.find("'a.npy' (line 1)") != std::string::npos);
  CHECK(dup.err.find("'sub/a.npy' (line 2)") != std::string::npos);
  CHECK(!fs::exists(t / "out"));  // before anything runs

  for (const char* bad : {"3/3", "1/0", "-1/2", "a/b", "1", "1/2/3", "/2"}) {
    auto r = run(bin() + " --config " + cfg("warner_causal.json") + " --input-list " +
                 q(t / "dup.txt") + " --out-dir " + q(t / "out") + " --shard '" + bad + "'");
    CAPTURE(bad);
    CHECK(r.exit_code == 64);
    CHECK(r.err.find("--shard") != std::string::npos);
  }
  auto no_dir =
      run(bin() + " --config " + cfg("warner_causal.json") + " --input-list " + q(t / "dup.txt"));
  CHECK(no_dir.exit_code == 64);
  CHECK(no_dir.err.find("--out-dir") != std::string::npos);

  // The second input is bad: the first input's folder stays, no summary, one error line.
  attn::test::write_text(t / "wrong.npy", attn::encode_npy(attn::test::random_tensor({3, 5}, 2)));
  attn::test::write_text(t / "mixed.txt", "a.npy\nwrong.npy\n");
  auto mixed = run(bin() + " -q --config " + cfg("warner_causal.json") + " --input-list " +
                   q(t / "mixed.txt") + " --out-dir " + q(t / "m"));
  CHECK(mixed.exit_code == 65);
  CHECK(mixed.err.find("wrong.npy") != std::string::npos);
  CHECK(std::count(mixed.err.begin(), mixed.err.end(), '\n') == 1);
  CHECK(fs::exists(t / "m/a/context.npy"));
  CHECK(!fs::exists(t / "m/wrong"));
  CHECK(!fs::exists(t / "m/batch.json"));

  // Results are committed in groups: an input failing inside the forward pass
  // (its maps already streaming to a temporary) still leaves the inputs before
  // it committed and nothing of its own.
  attn::Tensor huge = attn::test::random_tensor({3, 8}, 3);
  for (float& v : huge.data) v *= 1e30f;
  attn::test::write_text(t / "huge.npy", attn::encode_npy(huge));
  attn::test::write_text(t / "b.npy", x);
  attn::test::write_text(t / "late.txt", "a.npy\nb.npy\nhuge.npy\n");
  auto late = run(bin() + " -q --config " + cfg("warner_causal.json") + " --input-list " +
                  q(t / "late.txt") + " --out-dir " + q(t / "late"));
  CHECK(late.exit_code == 65);
  CHECK(late.err.find("huge.npy") != std::string::npos);
  CHECK(fs::exists(t / "late/a/context.npy"));
  CHECK(fs::exists(t / "late/a/attention.npy"));
  CHECK(fs::exists(t / "late/b/context.npy"));
  CHECK(!fs::exists(t / "late/batch.json"));
  CHECK(!fs::exists(t / "late/huge"));  // a result folder is created only at its commit
}

TEST_CASE("cli_people: picture flags are checked before anything is written") {
  attn::test::TempDir t;
  struct Case {
    std::string args, culprit;
  };
  for (const Case& c : std::vector<Case>{{"--plot x.gif", "--plot"},
                                         {"--plot " + q(t / "a.svg") + " --heads 2", "--heads"},
                                         {"--plot " + q(t / "a.svg") + " --heads 0,x", "--heads"},
                                         {"--show --batch-index 1", "--batch-index"},
                                         {"--plot " + q(t / "a.svg") + " --labels a,b", "--labels"},
                                         {"--show --attn-stdout", "--show"},
                                         {"--shard 0/2", "--shard"}}) {
    CAPTURE(c.args);
    auto r = run(bin() + " --config " + cfg("warner_causal.json") + " " + c.args);
    CHECK(r.exit_code == 64);
    CHECK(r.out.empty());
    CHECK(r.err.find(c.culprit) != std::string::npos);
  }
  CHECK(fs::directory_iterator(t.path) == fs::directory_iterator());
  // A folder in the way of the picture: 73, stdout empty, nothing left behind.
  fs::create_directories(t / "in_the_way.png");
  auto r =
      run(bin() + " --config " + cfg("warner_causal.json") + " --plot " + q(t / "in_the_way.png"));
  CHECK(r.exit_code == 73);
  CHECK(r.out.empty());
  CHECK(std::distance(fs::directory_iterator(t.path), fs::directory_iterator()) == 1);
  // ... and with an output folder too: no context.npy appears in it.
  auto r2 = run(bin() + " --config " + cfg("warner_causal.json") + " --out-dir " + q(t / "o") +
                " --plot " + q(t / "in_the_way.png"));
  CHECK(r2.exit_code == 73);
  CHECK(!fs::exists(t / "o/context.npy"));
  CHECK(!fs::exists(t / "o/run.json"));
}

TEST_CASE("cli_people: --help shows an example of each mode") {
  auto r = run(bin() + " --help");
  REQUIRE(r.exit_code == 0);
  const auto examples = r.out.substr(r.out.find("Examples:"));
  for (const char* flag : {"--plot", "--show", "--stats", "--attn-stdout", "--input-list",
                           "--shard", "--input -", "--dump-weights", "--out-dir"})
    CHECK_MESSAGE(examples.find(flag) != std::string::npos, flag);
}

TEST_CASE("cli_people: the option parser's errors are in attn-run's words, naming the flag") {
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {"--input a.npy --input b.npy", "--input: given 2 times; give it once"},
           {"--threads 0", "--threads: expected a whole number from 1 to 1024, found '0'"},
           {"--threads x", "--threads: expected a whole number from 1 to 1024, found 'x'"},
           {"--format xml", "--format: expected one of text, json, npy; found 'xml'"},
           {"--heads", "--heads: expected a value (LIST) after it"},
           {"--threads", "--threads: expected a value (N) after it"},
           {"--batch-index -1", "--batch-index: expected a whole number 0 or more, found '-1'"},
           {"--show-query x", "--show-query: expected a whole number 0 or more, found 'x'"},
           {"--completion zsh", "--completion: expected one of bash; found 'zsh'"},
           {"--plot a.png b.png", "'b.png': unexpected argument"},
           {"--plot a.png --plot a.png", "--plot: 'a.png' is given twice"}}) {
    CAPTURE(c.args);
    auto r = run(bin() + " --config " + cfg("warner_causal.json") + " " + c.args);
    CHECK(r.exit_code == 64);
    CHECK(r.out.empty());
    CHECK_MESSAGE(r.err.find("attn-run: error: " + c.message) != std::string::npos, r.err);
    CHECK(r.err.find("required") == std::string::npos);  // not CLI11's "At Most 1 required"
  }
}

TEST_CASE("cli_people: --plot given twice draws a PNG and an HTML page from one run") {
  attn::test::TempDir t;
  auto r = run(bin() + " -q --config " + cfg("warner_causal.json") + " --plot " + q(t / "m.png") +
               " --plot " + q(t / "m.html") + " --out-dir " + q(t / "o"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(attn::test::read_text(t / "m.png").substr(1, 3) == "PNG");
  CHECK(attn::test::read_text(t / "m.html").find("<!DOCTYPE html>") == 0);
  CHECK(fs::exists(t / "o/attention.npy"));
  // A bad second name fails before anything is drawn: no first picture either.
  auto bad = run(bin() + " --config " + cfg("warner_causal.json") + " --plot " + q(t / "n.png") +
                 " --plot " + q(t / "n.gif"));
  CHECK(bad.exit_code == 64);
  CHECK(!fs::exists(t / "n.png"));
}

TEST_CASE("cli_people: messages point the right way") {
  attn::test::TempDir t;
  const std::string llama = attn::test::source_dir() + "/tests/golden/folders/llama/model";
  // --model with a weights file: it takes the folder.
  auto file = run(bin() + " --model " + q(llama + "/model.safetensors") + " --layer 0");
  CHECK(file.exit_code == 66);
  CHECK(file.err.find("--model takes a Hugging Face model folder") != std::string::npos);
  // --model without --input: a missing flag (64), not a bad config (78).
  auto no_input = run(bin() + " --model " + q(llama) + " --layer 0");
  CHECK(no_input.exit_code == 64);
  CHECK(no_input.err.find("--input: needed with --model") != std::string::npos);
  // A wrong shape is given as the file has it: (7, 64), not (1, 7, 64).
  attn::test::write_text(t / "x.npy", attn::encode_npy(attn::test::random_tensor({7, 64}, 1)));
  auto shape = run(bin() + " --model " + q(llama) + " --layer 0 --input " + q(t / "x.npy"));
  CHECK(shape.exit_code == 65);
  CHECK(shape.err.find("found shape (7, 64)") != std::string::npos);
  // Bad bytes on stdin are shown as characters.
  auto bytes =
      run("printf 'ab\\001cd' | " + bin() + " --model " + q(llama) + " --layer 0 --input -");
  CHECK(bytes.exit_code == 65);
  CHECK_MESSAGE(bytes.err.find("found 'ab\\x01cd' at the start") != std::string::npos, bytes.err);
  // A whole BERT file without weights_prefix: the prefix its keys hold.
  const std::string bert = attn::test::source_dir() + "/tests/golden/folders/bert/";
  attn::test::write_text(t / "bert.json",
                         "{\"attention\": \"multi\", \"hidden_size\": 32, \"num_heads\": 4, "
                         "\"layout\": \"bert\", \"weights\": " +
                             nlohmann::json(bert + "model/model.safetensors").dump() +
                             ", \"input\": " + nlohmann::json(bert + "layer0/input.npy").dump() +
                             "}");
  auto prefix = run(bin() + " --config " + q(t / "bert.json"));
  CHECK(prefix.exit_code == 65);
  CHECK_MESSAGE(prefix.err.find("set \"weights_prefix\": \"bert.encoder.layer.0.attention.\"") !=
                    std::string::npos,
                prefix.err);
  // --help names the model mode and every exit code.
  auto help = run(bin() + " --help");
  CHECK(help.out.find("attn-run --model DIR|FILE.gguf --layer N") != std::string::npos);
  for (const char* code : {" 64 ", " 65 ", " 66 ", " 70 ", "71 ", " 73 ", "74 ", " 78 "})
    CHECK_MESSAGE(help.out.substr(help.out.find("Exit codes:")).find(code) != std::string::npos,
                  code);
}

// BertAttention returns LayerNorm(output.dense(context) + input); attn-run's
// context is output.dense's. run.json and a note on stderr say so, --with-residual-norm (or
// "residual_norm": true) adds them where the family has that norm, and refuses elsewhere.
TEST_CASE("cli_people: the context says what it is; --with-residual-norm") {
  attn::test::TempDir t;
  const std::string folders = attn::test::source_dir() + "/tests/golden/folders/";
  const std::string bert = folders + "bert/";
  const std::string note = "without the residual add and LayerNorm BertAttention applies";
  const std::string base = bin() + " --model " + q(bert + "model") + " --layer 1 --input " +
                           q(bert + "layer1/input.npy");

  // Plain: the output projection, said once on stderr and in run.json.
  auto plain = run(base + " -o " + q(t / "plain"));
  REQUIRE_MESSAGE(plain.exit_code == 0, plain.err);
  CHECK(count_of(plain.err, note) == 1);
  CHECK(count_of(plain.err, "--with-residual-norm adds them") == 1);
  const nlohmann::json r0 = run_json(t / "plain");
  CHECK(r0["output"].get<std::string>().find("the output projection, without residual add") == 0);
  CHECK(r0["output"].get<std::string>().find("BertAttention's output adds the input") !=
        std::string::npos);
  CHECK(r0["config"]["residual_norm"].is_null());
  CHECK(run(base + " -q -o " + q(t / "quiet")).err.empty());  // not with -q

  // --with-residual-norm: no note; run.json names the norm; the numbers are BertAttention's.
  auto with = run(base + " --with-residual-norm -o " + q(t / "with"));
  REQUIRE_MESSAGE(with.exit_code == 0, with.err);
  CHECK(with.err.find(note) == std::string::npos);
  const nlohmann::json r1 = run_json(t / "with");
  CHECK(r1["output"].get<std::string>().find("LayerNorm(output projection + input)") == 0);
  CHECK(r1["config"]["residual_norm"]["prefix"] ==
        "bert.encoder.layer.1.attention.output.LayerNorm.");
  CHECK(r1["config"]["residual_norm"]["eps"] == 1e-12);
  CHECK(r1["config"]["from_model"]["residual_norm"]["prefix"] ==
        "bert.encoder.layer.1.attention.output.LayerNorm.");
  auto golden = run(bin() + " -q --config " + q(bert + "layer0/case.json") +
                    " --with-residual-norm -o " + q(t / "golden"));
  REQUIRE_MESSAGE(golden.exit_code == 0, golden.err);
  const attn::Tensor got = npy_file(t / "golden/context.npy");
  const attn::Tensor want = npy_file(bert + "layer0/expected/residual_norm.npy");
  REQUIRE(got.shape == want.shape);
  float scale = 0.0f, diff = 0.0f;
  for (std::size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(want.data[i]));
    diff = std::max(diff, std::fabs(got.data[i] - want.data[i]));
  }
  CHECK(diff <= 1e-5f * std::max(1.0f, scale));

  // The config key means the same; an object overrides the family's fields.
  attn::test::write_text(t / "key.json", "{\"model\": " + nlohmann::json(bert + "model").dump() +
                                             ", \"layer\": 1, \"input\": " +
                                             nlohmann::json(bert + "layer1/input.npy").dump() +
                                             ", \"residual_norm\": {\"eps\": 1e-5}}");
  auto key = run(bin() + " --config " + q(t / "key.json") + " -o " + q(t / "key"));
  REQUIRE_MESSAGE(key.exit_code == 0, key.err);
  CHECK(key.err.find(note) == std::string::npos);
  CHECK(run_json(t / "key")["config"]["residual_norm"]["eps"] == 1e-5);
  CHECK(run_json(t / "key")["config"]["residual_norm"]["prefix"] ==
        "bert.encoder.layer.1.attention.output.LayerNorm.");

  // --input-list: every input gets it; without it the note comes once for the run.
  attn::test::write_text(t / "x1.npy", attn::test::read_text(bert + "layer0/input.npy"));
  attn::test::write_text(t / "x2.npy", attn::test::read_text(bert + "layer1/input.npy"));
  attn::test::write_text(t / "list2.txt", "x1.npy\nx2.npy\n");
  const std::string list2 =
      bin() + " --model " + q(bert + "model") + " --layer 0 --input-list " + q(t / "list2.txt");
  auto each = run(list2 + " --with-residual-norm -o " + q(t / "each"));
  REQUIRE_MESSAGE(each.exit_code == 0, each.err);
  CHECK(run_json(t / "each/x1")["config"]["residual_norm"].is_object());
  CHECK(run_json(t / "each/x2")["config"]["residual_norm"].is_object());
  auto each_plain = run(list2 + " -o " + q(t / "each_plain"));
  REQUIRE_MESSAGE(each_plain.exit_code == 0, each_plain.err);
  CHECK(count_of(each_plain.err, note) == 1);
  CHECK(npy_file(t / "each/x1/context.npy").data != npy_file(t / "each_plain/x1/context.npy").data);

  // DistilBERT's norm is outside its attention module: offered, no note.
  const std::string distil = folders + "distilbert/";
  auto d = run(bin() + " --model " + q(distil + "model") + " --layer 2 --input " +
               q(distil + "layer2/input.npy") + " -o " + q(t / "distil"));
  REQUIRE_MESSAGE(d.exit_code == 0, d.err);
  CHECK(d.err.find("LayerNorm") == std::string::npos);
  CHECK(run_json(t / "distil")["output"].get<std::string>().find("TransformerBlock adds") !=
        std::string::npos);
  auto dn = run(bin() + " --model " + q(distil + "model") + " --layer 2 --input " +
                q(distil + "layer2/input.npy") + " --with-residual-norm -o " + q(t / "distil_n"));
  REQUIRE_MESSAGE(dn.exit_code == 0, dn.err);
  CHECK(run_json(t / "distil_n")["config"]["residual_norm"]["prefix"] ==
        "distilbert.transformer.layer.2.sa_layer_norm.");

  // A family without one (pre-norm Llama): 64 naming the flag and the family; the key is 78.
  const std::string llama = folders + "llama/";
  const std::string llama_run = bin() + " --model " + q(llama + "model") + " --layer 0 --input " +
                                q(llama + "layer0/input.npy");
  auto none = run(llama_run + " --with-residual-norm");
  CHECK(none.exit_code == 64);
  CHECK_MESSAGE(
      none.err.find("--with-residual-norm: model_type llama has no LayerNorm") != std::string::npos,
      none.err);
  CHECK(none.err.find("bert, roberta") != std::string::npos);
  auto quiet_llama = run(llama_run + " -o " + q(t / "llama"));
  REQUIRE_MESSAGE(quiet_llama.exit_code == 0, quiet_llama.err);
  CHECK(quiet_llama.err.find("LayerNorm") == std::string::npos);
  CHECK(run_json(t / "llama")["output"] ==
        "the output projection, without residual add or LayerNorm");
  attn::test::write_text(t / "llama.json", "{\"model\": " + nlohmann::json(llama + "model").dump() +
                                               ", \"layer\": 0, \"residual_norm\": true}");
  auto key_none =
      run(bin() + " --config " + q(t / "llama.json") + " --input " + q(llama + "layer0/input.npy"));
  CHECK(key_none.exit_code == 78);
  CHECK(key_none.err.find("residual_norm: model_type llama has no LayerNorm") != std::string::npos);

  // OPT: only OPT-350m's post-norm layers (do_layer_norm_before false) have it after attention.
  auto opt = run(bin() + " --model " + q(folders + "opt/model") + " --layer 1 --input " +
                 q(folders + "opt/layer1/input.npy") + " --with-residual-norm");
  CHECK(opt.exit_code == 64);
  CHECK_MESSAGE(
      opt.err.find("model_type opt with do_layer_norm_before true normalizes before its "
                   "attention (self_attn_layer_norm.), not after it") != std::string::npos,
      opt.err);
  const std::string opt350 = folders + "opt_350m/";
  auto post = run(bin() + " --model " + q(opt350 + "model") + " --layer 1 --input " +
                  q(opt350 + "layer1/input.npy") + " -o " + q(t / "opt350"));
  REQUIRE_MESSAGE(post.exit_code == 0, post.err);
  CHECK(post.err.find("LayerNorm") == std::string::npos);  // OPTAttention's output is o_proj's
  CHECK(run_json(t / "opt350")["output"].get<std::string>().find("OPTDecoderLayer adds") !=
        std::string::npos);
  auto post_n =
      run(bin() + " --model " + q(opt350 + "model") + " --layer 1 --input " +
          q(opt350 + "layer1/input.npy") + " --with-residual-norm -o " + q(t / "opt350n"));
  REQUIRE_MESSAGE(post_n.exit_code == 0, post_n.err);
  CHECK(run_json(t / "opt350n")["config"]["residual_norm"] ==
        nlohmann::json{{"eps", 1e-5}, {"prefix", "model.decoder.layers.1.self_attn_layer_norm."}});

  // The table of a folder's layers runs nothing: the flag has no layer to change.
  auto table = run(bin() + " --model " + q(bert + "model") + " --with-residual-norm");
  CHECK(table.exit_code == 64);
  CHECK(table.err.find("--model: cannot be combined with --with-residual-norm") !=
        std::string::npos);

  // A prefix naming no norm: 65, naming the file's norms nearest the layer.
  attn::test::write_text(t / "wrong.json", "{\"model\": " + nlohmann::json(bert + "model").dump() +
                                               ", \"layer\": 1, \"residual_norm\": {\"prefix\": "
                                               "\"bert.encoder.layer.1.attention.LayerNorm.\"}}");
  auto wrong =
      run(bin() + " --config " + q(t / "wrong.json") + " --input " + q(bert + "layer1/input.npy"));
  CHECK(wrong.exit_code == 65);
  CHECK_MESSAGE(wrong.err.find("missing key \"bert.encoder.layer.1.attention.LayerNorm.weight\"") !=
                    std::string::npos,
                wrong.err);
  CHECK(wrong.err.find("(the file has \"bert.encoder.layer.1.attention.output.LayerNorm.\", ") !=
        std::string::npos);

  // Cross-attention (kv_input): it adds the queries' input, so self-attention only.
  attn::test::write_text(t / "cross.json",
                         "{\"attention\": \"multi\", \"hidden_size\": 4, \"num_heads\": 2, "
                         "\"layout\": \"separate\", \"init\": {\"seed\": 1}, \"input\": [[1, 2, 3, "
                         "4]], \"kv_input\": [[1, 2, 3, 4], [4, 3, 2, 1]]}");
  auto cross = run(bin() + " --config " + q(t / "cross.json") + " --with-residual-norm");
  CHECK(cross.exit_code == 64);
  CHECK(cross.err.find("--with-residual-norm: ") != std::string::npos);
  CHECK(cross.err.find("kv_input (cross-attention)") != std::string::npos);
}

// cli_show: --show end to end at length, on a pseudo-terminal (`script`):
// the grid fits COLUMNS, the header states the real block size and the
// 99th-percentile scale, keys are labelled, masked cells differ from small
// weights, 24-bit and 256-colour output carry only attn-run's own colour
// sequences (a label's ESC arrives escaped), and the head view lists a
// query's strongest keys with the weights of attention.npy.
//
// Letters: H heads, S sequence, n cells per side shown.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "cli_checks.h"
#include "test_util.h"

using attn::test::q;
using attn::test::run;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
// Display columns of UTF-8 text without escape sequences: CJK takes two.
std::size_t columns(const std::string& s) {
  std::size_t cols = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if ((c & 0xC0) == 0x80) continue;
    unsigned cp = c;
    if (c >= 0xE0 && c < 0xF0 && i + 2 < s.size())
      cp = ((c & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
    cols += cp >= 0x2E80 && cp <= 0x9FFF ? 2 : 1;
  }
  return cols;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();  // a pty writes \r\n
    out.push_back(line);
  }
  return out;
}

const std::regex kSgr("\x1b\\[[0-9;]*m");
std::string strip_sgr(const std::string& s) { return std::regex_replace(s, kSgr, ""); }

// A causal 4-head layer at S = 512 with labels tok<i>, one holding an ESC
// sequence and one CJK.
struct LongRun {
  attn::test::TempDir t;
  LongRun() {
    attn::test::write_text(t / "x.npy", attn::encode_npy(attn::test::random_tensor({512, 32}, 11)));
    std::string labels;
    for (int i = 0; i < 512; ++i)
      labels += std::string(i ? ", " : "") + (i == 1   ? "\"\\u001b[31mred\""
                                              : i == 2 ? "\"日本\""
                                                       : "\"tok" + std::to_string(i) + "\"");
    attn::test::write_text(t / "c.json",
                           "{\"attention\": \"multi\", \"hidden_size\": 32, \"num_heads\": 4, "
                           "\"causal\": true, \"layout\": \"fused\", \"init\": {\"seed\": 5}, "
                           "\"input\": \"x.npy\", \"labels\": [" +
                               labels + "]}");
  }
  // --show on a pseudo-terminal `cols` wide, with `env` set.
  attn::test::RunResult show(int cols, const std::string& env, const std::string& flags = "") {
    // The linear scale (capped at the 99th percentile), which auto picks up
    // to 256 keys: these checks are of its colours and header.
    return run("COLUMNS=" + std::to_string(cols) + " script -qec \"" + env + " " + bin() +
               " --config " + q(t / "c.json") + " --show --color-scale linear " + flags +
               "\" /dev/null");
  }
};

bool have_script() { return run("command -v script").exit_code == 0; }

// Checks shared by both colour modes; `sgr` matches attn-run's own sequences.
void check_long_show(const std::string& out, int cols, const std::regex& sgr,
                     const std::string& head) {
  const auto lines = lines_of(out);
  for (const auto& l : lines)
    CHECK_MESSAGE(columns(strip_sgr(l)) <= std::size_t(cols), "line: " << strip_sgr(l));
  // Only colour sequences of attn-run's own: every ESC starts one.
  const std::size_t escs = std::count(out.begin(), out.end(), '\x1b');
  const auto ours =
      std::distance(std::sregex_iterator(out.begin(), out.end(), sgr), std::sregex_iterator());
  CHECK(escs == std::size_t(ours));
  CHECK(out.find("\x1b[31m") == std::string::npos);
  CHECK(out.find("query 1 \"\\e[31mred\"") != std::string::npos);  // the label, escaped
  const std::string plain = strip_sgr(out);
  CHECK(plain.find("99th percentile") != std::string::npos);
  CHECK(plain.find("\xC2\xB7\xC2\xB7") != std::string::npos);  // masked cells

  // The header's block size is the real one: n rows of cells under "head 0",
  // blocks of a to b tokens a side with a n <= S <= b n.
  std::smatch m;
  const std::string flat = std::regex_replace(plain, std::regex("\\s+"), " ");
  REQUIRE(std::regex_search(flat, m,
                            std::regex("block of (\\d+) x \\d+ (to (\\d+) x \\d+ )?weights "
                                       "\\((\\d+) x \\d+ cells for S = 512")));
  const std::size_t a = std::stoul(m[1]), b = m[3].matched ? std::stoul(m[3]) : a;
  const std::size_t n = std::stoul(m[4]);
  CHECK(a * n <= 512);
  CHECK(512 <= b * n);
  CHECK(b - a <= 1);
  const auto head0 = std::find(lines.begin(), lines.end(), head);
  REQUIRE(head0 != lines.end());
  const std::string keys = strip_sgr(*(head0 + 1));
  CHECK(keys.find(" tok0 ") != std::string::npos);  // key columns are labelled
  std::size_t rows = 0;
  for (auto it = head0 + 2; it != lines.end() && !strip_sgr(*it).empty(); ++it) ++rows;
  CHECK(rows == n);
  // The grid uses the width: the last row (every key seen) ends within a
  // cell (two columns) of the edge.
  CHECK(columns(strip_sgr(*(head0 + 1 + rows))) + 1 >= std::size_t(cols));
}

}  // namespace

TEST_CASE("cli_show: S = 512 in 24-bit colour fits COLUMNS, with the real block size") {
  if (!have_script()) {
    MESSAGE("skipping: no `script` (util-linux) to provide a terminal");
    return;
  }
  LongRun lr;
  for (int cols : {80, 131}) {
    CAPTURE(cols);
    auto r = lr.show(cols, "COLORTERM=truecolor", "--heads 0,3 --show-query 1");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find("\x1b[48;2;") != std::string::npos);
    check_long_show(r.out, cols, std::regex("\x1b\\[(0|[34]8;2;\\d+;\\d+;\\d+)m"), "head 3");
  }
}

TEST_CASE("cli_show: S = 512 in 256 colours uses at least 10 distinct palette colours") {
  if (!have_script()) {
    MESSAGE("skipping: no `script` (util-linux) to provide a terminal");
    return;
  }
  LongRun lr;
  auto r = lr.show(100, "COLORTERM= TERM=xterm-256color", "--heads 1 --show-query 1");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("\x1b[48;2;") == std::string::npos);
  check_long_show(r.out, 100, std::regex("\x1b\\[(0|[34]8;5;\\d+)m"), "head 1");
  std::set<std::string> colours;
  const std::regex bg("\x1b\\[48;5;(\\d+)m");
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), bg); it != std::sregex_iterator();
       ++it)
    colours.insert((*it)[1]);
  CHECK(colours.size() >= 10);
}

TEST_CASE("cli_show: plain text off a terminal fits COLUMNS; masked cells blank, small ones not") {
  LongRun lr;
  auto r = run("COLUMNS=60 " + bin() + " --config " + q(lr.t / "c.json") + " --show --heads 2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find('\x1b') == std::string::npos);
  for (const auto& l : lines_of(r.out)) CHECK_MESSAGE(columns(l) <= 60, "line: " << l);
  // Row "tok0": the first query sees only itself (saturated), the rest masked.
  const auto lines = lines_of(r.out);
  const auto row0 = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find(" tok0 @@") != std::string::npos;
  });
  REQUIRE(row0 != lines.end());
  CHECK(row0->find_first_not_of(' ', row0->find("@@") + 2) == std::string::npos);
  // The last row sees every key: no blank cell in it.
  const auto head2 = std::find(lines.begin(), lines.end(), "head 2");
  auto last = head2 + 2;
  while (last + 1 != lines.end() && !(last + 1)->empty()) ++last;
  const std::string cells = last->substr(last->find(' ', last->find_first_not_of(' ')) + 1);
  CHECK(cells.find(' ') == std::string::npos);
}

TEST_CASE("cli_show: the head view lists a query's strongest keys with attention.npy's weights") {
  attn::test::TempDir t;
  const std::string base = bin() + " --config " + attn::test::quoted_config("warner_causal.json");
  REQUIRE(run(base + " -q --out-dir " + q(t / "out")).exit_code == 0);
  const attn::Tensor a = attn::to_float32(attn::read_npy(t / "out/attention.npy"), "attention.npy",
                                          false);  // (H, S, S)
  const char* labels[] = {"Your", "journey", "starts", "with", "one", "step"};
  for (std::size_t h : {0, 1}) {
    auto r = run(base + " --show --show-query 3 --heads " + std::to_string(h));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const auto lines = lines_of(r.out);
    const auto title = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
      return l.rfind("query 3 \"with\": its 5 strongest keys", 0) == 0;
    });
    REQUIRE(title != lines.end());
    auto it = std::find(title, lines.end(), "head " + std::to_string(h));
    REQUIRE(it != lines.end());
    // Query 3 of a causal map sees keys 0..3: four lines, strongest first.
    std::vector<std::size_t> keys;
    double previous = 2;
    for (++it; it != lines.end() && it->rfind("  ", 0) == 0; ++it) {
      std::size_t key = 0;
      char name[32];
      double w = 0;
      REQUIRE(std::sscanf(it->c_str(), " %zu %31s %lf", &key, name, &w) == 3);
      CHECK(std::string(name) == labels[key]);
      CHECK(std::abs(w - a.data[(h * 6 + 3) * 6 + key]) <= 5.01e-5);  // printed with 4 decimals
      CHECK(w <= previous);
      previous = w;
      keys.push_back(key);
    }
    std::sort(keys.begin(), keys.end());
    CHECK(keys == std::vector<std::size_t>{0, 1, 2, 3});
  }
  auto bad = run(base + " --show --show-query 6");
  attn::test::check_cli_failure(bad, 64, {"--show-query", "6", "S = 6"});
}

TEST_CASE("cli_show: bidirectional controls in labels and paths reach the terminal escaped") {
  // U+202E (RLO) would make the rest of a line read backwards, U+2066 (LRI)
  // isolates it: both arrive as "\u202e" / "\u2066", in --show and on stderr.
  attn::test::TempDir t;
  attn::test::write_text(t / "x.npy", attn::encode_npy(attn::test::random_tensor({4, 8}, 3)));
  attn::test::write_text(t / "c.json",
                         "{\"attention\": \"multi\", \"hidden_size\": 8, \"num_heads\": 2, "
                         "\"causal\": true, \"layout\": \"fused\", \"init\": {\"seed\": 1}, "
                         "\"input\": \"x.npy\", "
                         "\"labels\": [\"a\", \"\\u202eevil\", \"\\u2066iso\\u2069\", \"d\"]}");
  auto r = run("COLUMNS=80 " + bin() + " --config " + q(t / "c.json") + " --show --show-query 1");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  for (const char* raw : {"\u202E", "\u2066", "\u2069"})
    CHECK(r.out.find(raw) == std::string::npos);
  CHECK(r.out.find("query 1 \"\\u202eevil\"") != std::string::npos);
  CHECK(r.out.find("\\u2066iso") != std::string::npos);  // row label, cut to its column

  auto bad = run(bin() + " --config " + q(t / "c.json") + " --input " + q(t / "gone\u202Efdp.npy"));
  CHECK(bad.exit_code == 66);
  CHECK(bad.err.find("\u202E") == std::string::npos);
  CHECK(bad.err.find("gone\\u202efdp.npy") != std::string::npos);
}

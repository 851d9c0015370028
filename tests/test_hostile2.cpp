// hostile2: the second-round hostile suite (issue 12), end to end through the
// built binary. Each failure class of CONTRACT.md v2 ("Numerics", "Exit
// codes", "File safety rules", "Output safety rules") is attacked the way a
// careless user, a crafted file or an unlucky machine would; each case checks
// the exit code, one escaped error line naming the culprit, an empty stdout,
// existing outputs byte-for-byte unchanged and no temporary left behind.
#include <doctest/doctest.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "cli_checks.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::check_cli_failure;
using attn::test::run;
using attn::test::RunResult;
using attn::test::snapshot;
using attn::test::source_path;
using attn::test::write_text;

namespace {

std::string q(const std::string& s) { return "'" + s + "'"; }
std::string bin() { return q(attn::test::binary()); }
std::string fixtures() { return source_path("tests/fixtures/hostile"); }
std::string base_cfg() { return q(fixtures() + "/config.json"); }

// Leftover temporaries (OutputDir's ".attn-run-tmp-<pid>-<n>") under `dir`.
std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (it->path().filename().string().find("attn-run-tmp") != std::string::npos)
      found.push_back(it->path().string());
  return found;
}

// A good run of the base config into `out`; its snapshot.
std::map<std::string, std::string> populate(const std::string& out) {
  RunResult good = run(bin() + " -q --config " + base_cfg() + " --out-dir " + q(out));
  REQUIRE_MESSAGE(good.exit_code == 0, good.err);
  return snapshot(out);
}

// Runs `args` with ATTN_TEST_PAUSE_AT=<point> in the background: once the run
// has stopped itself there ("compute": the output folder's attention
// temporary reserved, before the forward pass; "commit": every temporary
// written, nothing renamed) it gets `sig`, then SIGCONT. Deterministic: no timing involved. Returns
// the run's exit status as the shell reports it (128 + signal for a handled one).
RunResult signalled_at(const std::string& point, const std::string& args, const std::string& sig) {
  const std::string script = "ATTN_TEST_PAUSE_AT=" + point + " " + bin() + " " + args +
                             " & p=$!; "
                             "until grep -q '^State:[[:space:]]*T' /proc/$p/status 2>/dev/null; do "
                             "kill -0 $p 2>/dev/null || break; sleep 0.01; done; "
                             "kill -s " +
                             sig + " $p; kill -s CONT $p; wait $p";
  return run("bash -c " + q(script));
}

}  // namespace

attn::Tensor npy_file(const std::string& path) {
  return attn::test::npy_values(attn::test::read_text(path), path);
}

// A (B, S) bool .npy (padding mask, 1 = padded key) built by hand.
std::string bool_npy(std::size_t B, std::size_t S, const std::vector<int>& bits) {
  std::string header = "{'descr': '|b1', 'fortran_order': False, 'shape': (" + std::to_string(B) +
                       ", " + std::to_string(S) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  for (int b : bits) out += char(b);
  return out;
}

// ---- 1. overflow from finite inputs -----------------------------------------

TEST_CASE("hostile2: finite inputs whose scores overflow are exit 65 naming batch, head and row") {
  attn::test::TempDir t;
  const std::string out = t / "out";
  const auto before = populate(out);
  // (2, 5, 4) random, with batch 1 query row 3 at 3e38 (float32's max is 3.4e38).
  attn::Tensor x = attn::test::random_tensor({2, 5, 4}, 5);
  for (std::size_t c = 0; c < 4; ++c) x.data[(1 * 5 + 3) * 4 + c] = 3e38f;
  write_text(t / "fmax.npy", attn::encode_npy(x));
  attn::Tensor all = attn::test::random_tensor({2, 5, 4}, 5);
  for (float& v : all.data) v = 1e30f;
  write_text(t / "e30.npy", attn::encode_npy(all));
  for (const std::string where : {"stream", "maps"}) {
    CAPTURE(where);
    // Without an output folder the streaming path runs; with one, the maps path.
    const std::string dest = where == "maps" ? " --out-dir " + q(out) : "";
    RunResult r =
        run(bin() + " -q --config " + base_cfg() + " --input " + q(t / "fmax.npy") + dest);
    check_cli_failure(r, 65, {"overflow", "batch 1", "head ", "query row 3"});
    r = run(bin() + " -q --config " + base_cfg() + " --input " + q(t / "e30.npy") + dest);
    check_cli_failure(r, 65, {"overflow", "batch 0", "head ", "query row 0"});
    CHECK(snapshot(out) == before);
    CHECK(temporaries(t.path).empty());
  }
  // Large but representable: no error, finite context.
  attn::Tensor fine = attn::test::random_tensor({2, 5, 4}, 5);
  for (float& v : fine.data) v *= 1e15f;
  write_text(t / "e15.npy", attn::encode_npy(fine));
  RunResult ok =
      run(bin() + " -q --config " + base_cfg() + " --input " + q(t / "e15.npy") + " --format npy");
  REQUIRE_MESSAGE(ok.exit_code == 0, ok.err);
  for (float v : attn::test::npy_values(ok.out, "stdout").data) CHECK(std::isfinite(v));
}

TEST_CASE("hostile2: a scale finite in JSON but infinite in float32 is a config error") {
  attn::test::TempDir t;
  write_text(t / "c.json", R"({"attention": "multi", "hidden_size": 4, "num_heads": 2,
      "layout": "fused", "scale": 1e39, "weights": ")" +
                               fixtures() + R"(/weights",
      "input": ")" + fixtures() +
                               R"(/npy/x.npy"})");
  check_cli_failure(run(bin() + " -q --config " + q(t / "c.json")), 78, {"scale", "1e+39"});
}

TEST_CASE("hostile2: both paths agree on fully masked rows, and run.json agrees with --stats") {
  attn::test::TempDir t;
  // x.npy is (2, 3, 4). Batch 0: keys 0 and 1 padded; batch 1: every key
  // padded (3 rows x 2 heads fully masked).
  write_text(t / "mask.npy", bool_npy(2, 3, {1, 1, 0, 1, 1, 1}));
  RunResult maps = run(bin() + " --config " + base_cfg() + " --padding-mask " + q(t / "mask.npy") +
                       " --stats --out-dir " + q(t / "out"));
  REQUIRE_MESSAGE(maps.exit_code == 0, maps.err);
  RunResult stream = run(bin() + " -q --config " + base_cfg() + " --padding-mask " +
                         q(t / "mask.npy") + " --no-attn --out-dir " + q(t / "noattn"));
  REQUIRE_MESSAGE(stream.exit_code == 0, stream.err);
  // The same context from both paths (masked rows zero in both, none other).
  const attn::Tensor a = npy_file(t / "out/context.npy");
  const attn::Tensor b = npy_file(t / "noattn/context.npy");
  CHECK(attn::test::compare(a, b).relative() < 1e-5);
  const std::string run_json = attn::test::read_text(t / "out/run.json");
  CHECK(run_json.find("\"fully_masked_rows\": 6") != std::string::npos);
  // The --stats table's "fully masked" column (in run.json too): 3 per head.
  CHECK(run_json.find("\"fully_masked_rows\": 3") != std::string::npos);
  // Every row of the maps is either all zero (masked) or sums to 1.
  const attn::Tensor m = npy_file(t / "out/attention.npy");
  for (std::size_t row = 0; row < m.size() / 3; ++row) {
    double sum = 0;
    for (std::size_t j = 0; j < 3; ++j) sum += m.data[row * 3 + j];
    CHECK((sum == 0.0 || std::abs(sum - 1.0) < 1e-5));
    CHECK((sum == 0.0) == (row >= 6));  // batch 1's 6 (head, row) pairs only
  }
}

// ---- 6. temporaries: every terminating signal, any number of files --------

TEST_CASE(
    "hostile2: every terminating signal, at the compute or the commit, leaves the folder as it "
    "was") {
  attn::test::TempDir t;
  const std::string out = t / "out";
  const auto before = populate(out);
  const std::map<std::string, int> signals = {
      {"HUP", SIGHUP},       {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"TERM", SIGTERM},
      {"USR1", SIGUSR1},     {"USR2", SIGUSR2}, {"ALRM", SIGALRM}, {"XCPU", SIGXCPU},
      {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF}};
  for (const std::string point : {"compute", "commit"})
    for (const auto& [name, number] : signals) {
      CAPTURE(point);
      CAPTURE(name);
      // Another input, so a commit would change the files.
      RunResult r =
          signalled_at(point,
                       "-q --config " + base_cfg() + " --input " +
                           q(fixtures() + "/npy/valid_fortran_f2.npy") + " --out-dir " + q(out),
                       name);
      CHECK_MESSAGE(r.exit_code == 128 + number, "stderr: " << r.err);
      CHECK(r.out.empty());
      CHECK(snapshot(out) == before);
      CHECK(temporaries(t.path).empty());
    }
}

TEST_CASE("hostile2: a dump of 180 files interrupted at the commit leaves no temporary") {
  attn::test::TempDir t;
  write_text(t / "heads.json",
             R"({"attention": "causal", "hidden_size": 4, "num_heads": 90, "head_size": 2,
                 "out_proj": false, "context_size": 6, "bias": true, "layout": "per_head",
                 "init": {"seed": 1}})");
  const std::string dump = t / "dump";
  for (const std::string sig : {"TERM", "USR1"}) {
    CAPTURE(sig);
    RunResult r = signalled_at(
        "commit", "-q --config " + q(t / "heads.json") + " --dump-weights " + q(dump), sig);
    CHECK(r.exit_code == 128 + (sig == "TERM" ? SIGTERM : SIGUSR1));
    CHECK(temporaries(t.path).empty());
    CHECK((!fs::exists(dump) || fs::is_empty(dump)));
  }
  // Uninterrupted, the same dump writes every file (more than a handful).
  RunResult ok = run(bin() + " -q --config " + q(t / "heads.json") + " --dump-weights " + q(dump));
  REQUIRE_MESSAGE(ok.exit_code == 0, ok.err);
  CHECK(std::distance(fs::directory_iterator(dump), fs::directory_iterator()) > 64);
}

TEST_CASE("hostile2: temporaries of a SIGKILLed run are removed by the next run into the folder") {
  attn::test::TempDir t;
  const std::string out = t / "out";
  const auto before = populate(out);
  RunResult killed =
      signalled_at("commit", "-q --config " + base_cfg() + " --out-dir " + q(out), "KILL");
  CHECK(killed.exit_code == 128 + SIGKILL);
  REQUIRE(!temporaries(out).empty());  // SIGKILL cannot be handled: they are left
  CHECK(snapshot(out).size() > before.size());
  RunResult next = run(bin() + " -q --config " + base_cfg() + " --out-dir " + q(out));
  REQUIRE_MESSAGE(next.exit_code == 0, next.err);
  CHECK(temporaries(t.path).empty());
  const auto after = snapshot(out);  // same inputs: same maps, nothing else left
  CHECK(after.size() == before.size());
  CHECK(after.at("context.npy") == before.at("context.npy"));
  CHECK(after.at("attention.npy") == before.at("attention.npy"));
}

TEST_CASE("hostile2: a file-size limit is exit 74 with no temporary, not SIGXFSZ") {
  attn::test::TempDir t;
  const std::string out = t / "out";
  const auto before = populate(out);
  const std::string x = t / "x.npy";
  write_text(x, attn::encode_npy(attn::test::random_tensor({2, 300, 4}, 3)));
  // ulimit -f counts 1024-byte blocks: 4 KiB is less than the attention map.
  RunResult r = run("bash -c " + q("ulimit -f 4; exec " + bin() + " -q --config " + base_cfg() +
                                   " --input '" + x + "' --out-dir '" + out + "'"));
  check_cli_failure(r, 74, {"attention.npy"});
  CHECK(snapshot(out) == before);
  CHECK(temporaries(t.path).empty());
}

// ---- 3. concurrent runs into one folder ------------------------------------

TEST_CASE("hostile2: 20 concurrent writers into one folder leave one run's complete set") {
  attn::test::TempDir t;
  const std::string out = t / "out";
  // 20 distinguishable inputs: run i's input is random with seed i; run.json
  // names the input, so each file of the final set is traced to its run.
  std::vector<std::map<std::string, std::string>> expected;
  for (int i = 0; i < 20; ++i) {
    const std::string x = t / ("x" + std::to_string(i) + ".npy");
    write_text(x, attn::encode_npy(attn::test::random_tensor({1, 5, 4}, 100 + i)));
    const std::string solo = t / ("solo" + std::to_string(i));
    RunResult r =
        run(bin() + " -q --config " + base_cfg() + " --input " + q(x) + " --out-dir " + q(solo));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    expected.push_back(snapshot(solo));
  }
  for (int round = 0; round < 4; ++round) {
    CAPTURE(round);
    std::string script;
    for (int i = 0; i < 20; ++i)
      script += bin() + " -q --config " + base_cfg() + " --input " +
                q(t / ("x" + std::to_string(i) + ".npy")) + " --out-dir " + q(out) + " & ";
    script += "wait";
    RunResult r = run("bash -c " + q(script));
    REQUIRE(r.exit_code == 0);
    const auto now = snapshot(out);
    REQUIRE(now.count("context.npy") == 1);
    // Which run's context.npy is this? The rest of the set must be that run's.
    int owner = -1;
    for (int i = 0; i < 20; ++i)
      if (expected[i].at("context.npy") == now.at("context.npy")) owner = i;
    REQUIRE(owner >= 0);
    CHECK(now.at("attention.npy") == expected[owner].at("attention.npy"));
    CHECK(now.at("run.json").find("x" + std::to_string(owner) + ".npy") != std::string::npos);
    CHECK(now.size() == expected[owner].size());
    CHECK(temporaries(t.path).empty());
  }
}

// ---- 4. terminal and log injection -----------------------------------------

TEST_CASE("hostile2: a newline and ESC in a path stay escaped on one error line") {
  attn::test::TempDir t;
  const std::string out = t / "out";
  const auto before = populate(out);
  const std::string evil = t.path + "/in\nput\x1b[2J.npy";
  RunResult r =
      run(bin() + " -q --config " + base_cfg() + " --input " + q(evil) + " --out-dir " + q(out));
  check_cli_failure(r, 66, {"in\\nput\\e[2J.npy"});
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(snapshot(out) == before);
}

TEST_CASE("hostile2: an archive member name with a newline and ESC is escaped") {
  attn::test::TempDir t;
  const std::string out = t / "out";
  const auto before = populate(out);
  // A .npz whose only member is a malformed .npy named "x\n\e]0;pwned\a.npy".
  const std::string npz = t / "evil.npz";
  const std::string script =
      "import zipfile,sys\n"
      "z=zipfile.ZipFile(sys.argv[1],'w')\n"
      "z.writestr('x\\n\\x1b]0;pwned\\x07.npy', b'not an npy file')\n"
      "z.close()\n";
  write_text(t / "make.py", script);
  if (run("python3 " + q(t / "make.py") + " " + q(npz)).exit_code != 0) {
    MESSAGE("python3 is not available: skipping the archive member case");
    return;
  }
  RunResult r =
      run(bin() + " -q --config " + base_cfg() + " --weights " + q(npz) + " --out-dir " + q(out));
  CHECK_MESSAGE(r.exit_code == 65, r.err);
  CHECK(r.out.empty());
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find('\x1b') == std::string::npos);
  CHECK(r.err.find('\a') == std::string::npos);
  CHECK(snapshot(out) == before);
  CHECK(temporaries(t.path).empty());
}

// ---- 9. names ---------------------------------------------------------------

TEST_CASE("hostile2: a legal 250-character --plot name works") {
  attn::test::TempDir t;
  const std::string name = std::string(246, 'p') + ".svg";
  REQUIRE(name.size() == 250);
  RunResult r = run(bin() + " -q --config " + base_cfg() + " --plot " + q(t / name));
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(fs::exists(t / name));
  CHECK(temporaries(t.path).empty());
}

// ---- 7. everything commits together, stdout included -------------------------

TEST_CASE("hostile2: a closed stdout (exit 74) leaves an existing --plot and --out-dir untouched") {
  attn::test::TempDir t;
  const std::string out = t / "out";
  populate(out);
  const std::string plot = t / "maps.svg";
  write_text(plot, "an earlier picture");
  const auto before = snapshot(t.path);
  // --show writes its grid to stdout while --out-dir and --plot are staged.
  RunResult r = run(bin() + " -q --config " + base_cfg() + " --input " +
                    q(fixtures() + "/npy/valid_fortran_f2.npy") + " --show --out-dir " + q(out) +
                    " --plot " + q(plot) + " >&-");
  check_cli_failure(r, 74, {"stdout"});
  CHECK(snapshot(t.path) == before);
  CHECK(temporaries(t.path).empty());
  // Printing the context to a closed stdout with only a --plot: the same.
  r = run(bin() + " -q --config " + base_cfg() + " --input " +
          q(fixtures() + "/npy/valid_fortran_f2.npy") + " --plot " + q(plot) + " >&-");
  check_cli_failure(r, 74, {"stdout"});
  CHECK(snapshot(t.path) == before);
  CHECK(temporaries(t.path).empty());
}

// ---- 2. --dump-weights never destroys data -------------------------------------

namespace {
// The hostile config (fused weights, multi-head), with weights `weights` and
// no layout, so loading a folder goes through layout detection.
std::string detect_cfg(const attn::test::TempDir& t, const std::string& weights) {
  const std::string path =
      t / ("detect" + std::to_string(std::hash<std::string>{}(weights)) + ".json");
  write_text(path, R"({"attention": "multi", "hidden_size": 4, "num_heads": 2, "weights": ")" +
                       weights + R"(", "input": ")" + fixtures() + R"(/npy/x.npy"})");
  return q(path);
}
}  // namespace

TEST_CASE("hostile2: --dump-weights into the folder it reads is exit 73 and writes nothing") {
  attn::test::TempDir t;
  const std::string w = t / "w";
  fs::copy(fixtures() + "/weights", w);
  const auto before = snapshot(w);
  RunResult r = run(bin() + " -q --config " + detect_cfg(t, w) + " --dump-weights " + q(w));
  check_cli_failure(r, 73, {"--dump-weights", w});
  CHECK(snapshot(w) == before);
  CHECK(temporaries(t.path).empty());
  // The same folder under another spelling (a trailing "/.") is the same folder.
  r = run(bin() + " -q --config " + detect_cfg(t, w) + " --dump-weights " + q(w + "/."));
  check_cli_failure(r, 73, {"--dump-weights"});
  CHECK(snapshot(w) == before);
}

TEST_CASE("hostile2: a second dump's layout replaces the first's files; other files stay") {
  attn::test::TempDir t;
  const std::string d = t / "dump";
  const std::string cfg = detect_cfg(t, fixtures() + "/weights");
  RunResult first = run(bin() + " -q --config " + cfg + " --dump-weights " + q(d));
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  REQUIRE(fs::exists(d + "/Wqkv.weight.npy"));
  write_text(d + "/notes.txt", "mine");
  RunResult second =
      run(bin() + " -q --config " + cfg + " --layout separate --dump-weights " + q(d));
  REQUIRE_MESSAGE(second.exit_code == 0, second.err);
  CHECK(!fs::exists(d + "/Wqkv.weight.npy"));  // the earlier layout's files are gone
  CHECK(!fs::exists(d + "/Wo.weight.npy"));
  CHECK(fs::exists(d + "/out_proj.weight.npy"));
  CHECK(attn::test::read_text(d + "/notes.txt") == "mine");
  CHECK(temporaries(t.path).empty());
  // The folder loads (one layout, detected) and gives the original numbers.
  RunResult orig = run(bin() + " -q --config " + cfg + " --format npy");
  RunResult again = run(bin() + " -q --config " + detect_cfg(t, d) + " --format npy");
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(attn::test::compare(attn::test::npy_values(again.out, "dumped"),
                            attn::test::npy_values(orig.out, "original"))
            .relative() < 1e-6);
}

// ---- 8. pictures from hostile strings ------------------------------------------

TEST_CASE(
    "hostile2: invalid UTF-8 and noncharacter labels and a Latin-1 config name give good "
    "pictures") {
  attn::test::TempDir t;
  // A config whose file name is Latin-1 ("caf\xe9.json") and whose labels are
  // broken: a lone continuation byte, a noncharacter, a Latin-1 byte.
  const std::string cfg = t.path + "/caf\xe9.json";
  write_text(cfg, R"({"attention": "multi", "hidden_size": 4, "num_heads": 2, "layout": "fused",
      "weights": ")" + fixtures() +
                      R"(/weights", "input": ")" + fixtures() + R"(/npy/x.npy",
      "labels": ["a\u0001b", "\uFFFF", "x"]})");
  // JSON cannot hold invalid UTF-8 itself, so --labels carries those bytes.
  for (const std::string& labels :
       {std::string(""), std::string(" --labels '\x80,\xEF\xB7\x90,caf\xe9'")}) {
    CAPTURE(labels);
    RunResult svg = run(bin() + " -q --config " + q(cfg) + labels + " --plot " + q(t / "m.svg"));
    REQUIRE_MESSAGE(svg.exit_code == 0, svg.err);
    const std::string text = attn::test::read_text(t / "m.svg");
    CHECK(text.find("</svg>") != std::string::npos);
    CHECK(text.find('\x80') == std::string::npos);
    CHECK(text.find("\xEF\xBF\xBF") == std::string::npos);  // U+FFFF never reaches the SVG
    // Well-formed XML, judged by a real parser when python3 is present.
    RunResult parsed =
        run("python3 -c \"import sys, xml.etree.ElementTree as E; "
            "E.parse(sys.argv[1])\" " +
            q(t / "m.svg"));
    if (run("python3 -c 1").exit_code == 0) CHECK_MESSAGE(parsed.exit_code == 0, parsed.err);
    RunResult png = run(bin() + " -q --config " + q(cfg) + labels + " --plot " + q(t / "m.png"));
    REQUIRE_MESSAGE(png.exit_code == 0, png.err);
    const std::string bytes = attn::test::read_text(t / "m.png");
    CHECK(bytes.rfind("\x89PNG", 0) == 0);
    CHECK(bytes.find("IEND") != std::string::npos);
    CHECK(temporaries(t.path).empty());
  }
}

// ---- 9. names -------------------------------------------------------------------

TEST_CASE("hostile2: an --input-list entry named like the summary fails before any input runs") {
  attn::test::TempDir t;
  fs::copy_file(fixtures() + "/npy/x.npy", t / "a.npy");
  fs::copy_file(fixtures() + "/npy/x.npy", t / "summary.json.npy");
  write_text(t / "list.txt", "a.npy\nsummary.json.npy\n");
  RunResult r = run(bin() + " -q --config " + base_cfg() + " --input-list " + q(t / "list.txt") +
                    " --out-dir " + q(t / "out"));
  check_cli_failure(r, 65, {"list.txt", "summary.json", "line 2"});
  CHECK(!fs::exists(t / "out/a"));  // nothing computed
  // A shard's summary name collides the same way, in every shard.
  fs::rename(t / "summary.json.npy", t / "summary-0-of-2.json.npy");
  write_text(t / "list.txt", "a.npy\nsummary-0-of-2.json.npy\n");
  r = run(bin() + " -q --config " + base_cfg() + " --input-list " + q(t / "list.txt") +
          " --shard 1/2 --out-dir " + q(t / "out"));
  check_cli_failure(r, 65, {"summary-0-of-2.json"});
  CHECK(!fs::exists(t / "out/summary-0-of-2.json"));
}

TEST_CASE("hostile2: a NUL byte in a list line is an error, not a cut path") {
  attn::test::TempDir t;
  fs::copy_file(fixtures() + "/npy/x.npy", t / "a.npy");
  write_text(t / "list.txt", std::string("a.npy\0/etc/passwd\n", 18));
  RunResult r = run(bin() + " -q --config " + base_cfg() + " --input-list " + q(t / "list.txt") +
                    " --out-dir " + q(t / "out"));
  check_cli_failure(r, 65, {"list.txt", "line 1", "NUL"});
  CHECK(!fs::exists(t / "out/a"));
}

TEST_CASE("hostile2: an empty --out-dir or --plot name is a usage error, not stdout") {
  for (const std::string flag : {"--out-dir", "--plot"}) {
    CAPTURE(flag);
    check_cli_failure(run(bin() + " -q --config " + base_cfg() + " " + flag + " ''"), 64, {flag});
  }
}

// ---- 5 and 10. bounded reads, memory checked before the work ---------------------

namespace {
// `args` under a 6 GB address-space limit, so the memory verdict does not
// depend on the machine running the test.
RunResult limited(const std::string& args, const std::string& stdin_from = "") {
  return run("bash -c " + q("ulimit -v 6000000; exec " + bin() + " " + args +
                            (stdin_from.empty() ? "" : " < " + stdin_from)));
}
}  // namespace

TEST_CASE("hostile2: --input - from /dev/zero fails at its first bytes") {
  attn::test::TempDir t;
  const std::string out = t / "out";
  const auto before = populate(out);
  // No timeout needed for the verdict: reading /dev/zero whole would never end.
  RunResult r = run("timeout 20 " + bin() + " -q --config " + base_cfg() + " --input - --out-dir " +
                    q(out) + " < /dev/zero");
  check_cli_failure(r, 65, {"-: standard input", "found byte 0"});
  CHECK(snapshot(out) == before);
  // A valid header declaring 160 GB of data: exit 71 before reading it.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000, 4), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string preamble = "\x93NUMPY\x01";
  preamble += '\0';
  preamble += char(header.size());
  preamble += '\0';
  write_text(t / "head.npy", preamble + header);
  r = run("bash -c " +
          q("cat '" + t / "head.npy" + "' /dev/zero | (ulimit -v 6000000; exec " + bin() +
            " -q --config " + base_cfg() + " --input - --out-dir '" + out + "')"));
  check_cli_failure(r, 71, {"-: ", "160000000000 bytes"});
  CHECK(snapshot(out) == before);
  CHECK(temporaries(t.path).empty());
}

TEST_CASE("hostile2: --attn-stdout at S = 200000 is exit 71 naming the size and the flag") {
  attn::test::TempDir t;
  write_text(t / "long.npy", attn::encode_npy(attn::test::random_tensor({1, 200000, 4}, 9)));
  RunResult r = limited("-q --config " + base_cfg() + " --input " + q(t / "long.npy") +
                        " --attn-stdout --format npy");
  // (1, 2, 200000, 200000) float32 maps: 320 GB, twice for the npy copy.
  check_cli_failure(r, 71, {"--attn-stdout", "(1, 2, 200000, 200000)", "bytes"});
}

TEST_CASE("hostile2: a seeded init of hidden_size 65536 is exit 71 naming hidden_size") {
  attn::test::TempDir t;
  write_text(t / "big.json", R"({"attention": "multi", "hidden_size": 65536, "num_heads": 1,
      "layout": "fused", "init": {"seed": 1}})");
  for (const std::string& mode : {std::string(), " --dump-weights " + q(t / "dump")}) {
    CAPTURE(mode);
    RunResult r = limited("-q --config " + q(t / "big.json") + mode);
    check_cli_failure(r, 71, {"hidden_size", "65536", "bytes"});
    CHECK(!fs::exists(t / "dump"));
  }
}

TEST_CASE("hostile2: a NUL character in a config path string is a config error, not a cut path") {
  attn::test::TempDir t;
  const std::string w = fixtures() + "/weights";
  const std::string head =
      R"({"attention": "multi", "hidden_size": 4, "num_heads": 2, "layout": "fused", )";
  write_text(t / "a.json", head + R"("weights": ")" + w + R"(\u0000/etc", "input": ")" +
                               fixtures() + R"(/npy/x.npy"})");
  check_cli_failure(run(bin() + " -q --config " + q(t / "a.json")), 78, {"weights", "NUL"});
  write_text(t / "b.json", head + R"("weights": ")" + w + R"(", "input": ")" + fixtures() +
                               R"(/npy/x.npy", "output": {"dir": "out\u0000x"}})");
  check_cli_failure(run(bin() + " -q --config " + q(t / "b.json")), 78, {"output.dir", "NUL"});
  CHECK(!fs::exists(t / "out"));
}

TEST_CASE("hostile2: --show escapes labels and never cuts an escape in half") {
  attn::test::TempDir t;
  const std::string cfg = t.path + "/name\x1b]0;title\x07.json";
  write_text(cfg, R"({"attention": "multi", "hidden_size": 4, "num_heads": 2, "layout": "fused",
      "weights": ")" + fixtures() +
                      R"(/weights", "input": ")" + fixtures() + R"(/npy/x.npy"})");
  RunResult r = run(bin() + " -q --config " + q(cfg) + " --show --labels " +
                    q("a\x1b]0;pwned\x07,\x1b[2J\x1b[2J\x1b[2J\x1b[2J,c"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.find("\x1b]") == std::string::npos);    // no OSC (retitle) from a label or name
  CHECK(r.out.find("\x1b[2J") == std::string::npos);  // no clear-screen
  CHECK(r.out.find('\a') == std::string::npos);
  CHECK(r.out.find("\\e]0;") != std::string::npos);  // shown, escaped
}

// The hostile suite's output safety, end to end through the
// built binary (CONTRACT.md "Output safety rules").
// Each case checks the exit code, one escaped error line naming the culprit,
// an empty stdout, existing outputs byte-for-byte unchanged and no temporary
// left behind. Numbers, strings, reads and memory are test_hostile_data.cpp;
// runs committing into one folder at once, test_hostile_commits.cpp.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/mount.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "cli_checks.h"
#include "hostile_checks.h"
#include "json_files.h"
#include "png_pixels.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace attn::test::hostile;
using attn::test::check_cli_failure;
using attn::test::run;
using attn::test::RunResult;
using attn::test::snapshot;
using attn::test::source_path;
using attn::test::write_text;

// ---- 6. temporaries: every terminating signal, any number of files --------

TEST_CASE(
    "hostile outputs: every terminating signal, at the compute or the commit, leaves the folder as "
    "it "
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

TEST_CASE("hostile outputs: a run killed or failing before its commit leaves no new folder") {
  attn::test::TempDir t;
  // A signal at the compute or at the commit: neither the out-dir nor a
  // temporary is left (the folder is created by the commit itself).
  for (const std::string point : {"compute", "commit"}) {
    CAPTURE(point);
    const std::string out = t / ("new/sub_" + point);
    RunResult r = signalled_at(point, "-q --config " + base_cfg() + " --out-dir " + q(out), "TERM");
    CHECK(r.exit_code == 128 + SIGTERM);
    CHECK(!fs::exists(out));
    CHECK(temporaries(t / "new").empty());
  }
  // A data error found after the folder was checked (--layer all: the second
  // layer's input is malformed) leaves the layers done before it whole (a
  // rerun resumes there), nothing of the failing one, no run.json.
  fs::create_directories(t / "in");
  fs::copy_file(source_path("data/tiny-llama-hidden.npy"), t / "in/layer_0.npy");
  write_text(t / "in/layer_1.npy", "\x93NUMPY broken");
  RunResult bad = run(bin() + " -q --model " + q(source_path("data/tiny-llama")) +
                      " --layer all --input " + q(t / "in") + " -o " + q(t / "layers_out"));
  CHECK(bad.exit_code == 65);
  CHECK(fs::exists(t / "layers_out/layer_0/context.npy"));
  CHECK(!fs::exists(t / "layers_out/layer_1"));
  CHECK(!fs::exists(t / "layers_out/run.json"));
  CHECK(temporaries(t.path).empty());
  // The successful run creates it.
  REQUIRE(run(bin() + " -q --config " + base_cfg() + " --out-dir " + q(t / "new/ok")).exit_code ==
          0);
  CHECK(fs::exists(t / "new/ok/context.npy"));
}

TEST_CASE("hostile outputs: a dump of 180 files interrupted at the commit leaves no temporary") {
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

TEST_CASE(
    "hostile outputs: temporaries of a SIGKILLed run are removed by the next run into the folder") {
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

TEST_CASE("hostile outputs: a file-size limit is exit 74 with no temporary, not SIGXFSZ") {
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

TEST_CASE("hostile outputs: a CPU-time limit (ulimit -t) ends the run by SIGXCPU, no temporary") {
  // `ulimit -t 2` sets soft and hard limits alike; at the hard limit the
  // kernel sends SIGKILL (137, temporaries left). attn-run lowers its soft
  // limit a second, so the handled SIGXCPU (152) comes first. The layer
  // needs far more than 2 s of CPU (S = 16384, C = 512: about 8 s here); its context file is
  // staged while it computes.
  attn::test::TempDir t;
  const std::string out = t / "out";
  const auto before = populate(out);
  write_text(t / "x.npy", attn::encode_npy(attn::test::random_tensor({16384, 512}, 4)));
  write_text(t / "c.json",
             R"({"attention": "multi", "hidden_size": 512, "num_heads": 8, "layout": "fused",
                 "init": {"seed": 1}})");
  RunResult r =
      run("bash -c " + q("ulimit -t 2; exec " + bin() + " -q --config '" + t / "c.json" +
                         "' --input '" + t / "x.npy" + "' --no-attn --out-dir '" + out + "'"));
  CHECK_MESSAGE(r.exit_code == 128 + SIGXCPU, "stderr: " << r.err);
  CHECK(r.out.empty());
  CHECK(snapshot(out) == before);
  CHECK(temporaries(t.path).empty());
}

// ---- 2. an --input-list run that dies leaves no folder that looks like a result

namespace {
// `n` inputs x_00.. (copies of the base input) and their list in `dir`.
std::string input_list(const std::string& dir, int n) {
  std::string list;
  for (int i = 0; i < n; ++i) {
    const std::string name = std::string("x_") + (i < 10 ? "0" : "") + std::to_string(i);
    fs::copy_file(fixtures() + "/npy/x.npy", dir + "/" + name + ".npy");
    list += name + ".npy\n";
  }
  write_text(dir + "/list.txt", list);
  return dir + "/list.txt";
}

// Every folder in `out` holds an input's complete results; their count.
std::size_t complete_result_folders(const std::string& out) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(out)) {
    if (!e.is_directory()) continue;
    CAPTURE(e.path().string());
    CHECK(fs::exists(e.path() / "context.npy"));
    CHECK(fs::exists(e.path() / "attention.npy"));
    CHECK(fs::exists(e.path() / "run.json"));
    ++n;
  }
  return n;
}
}  // namespace

TEST_CASE("hostile outputs: SIGTERM or SIGINT mid-list leaves only complete result folders") {
  for (const std::string sig : {"TERM", "INT"}) {
    CAPTURE(sig);
    attn::test::TempDir t;
    const std::string list = input_list(t.path, 100);
    const std::string out = t / "out";
    // An empty folder of an input, as a killed run of an older attn-run left it.
    fs::create_directories(out + "/x_99");
    // 100 inputs make at least two commits (groups of at most 64): the
    // signal comes at the second commit (the manifest's, after the first
    // group landed).
    const std::string args =
        "-q --config " + base_cfg() + " --input-list " + q(list) + " --out-dir " + q(out);
    RunResult r = signalled_at("commit:2", args, sig);
    CHECK_MESSAGE(r.exit_code == 128 + (sig == "TERM" ? SIGTERM : SIGINT), "stderr: " << r.err);
    CHECK(temporaries(t.path).empty());
    const std::size_t done = complete_result_folders(out);
    CHECK(done >= 1);                   // the first group committed
    CHECK(done < 100);                  // the rest never looked like results
    CHECK(!fs::exists(out + "/x_99"));  // the old empty folder is gone
    CHECK(!fs::exists(out + "/batch.json"));

    // The rerun completes every input.
    RunResult again = run(bin() + " " + args);
    REQUIRE_MESSAGE(again.exit_code == 0, again.err);
    CHECK(complete_result_folders(out) == 100);
    CHECK(fs::exists(out + "/batch.json"));
    CHECK(temporaries(t.path).empty());
  }
}

TEST_CASE("hostile outputs: a rerun after SIGTERM skips what DIR/manifest.json records done") {
  attn::test::TempDir t;
  const std::string list = input_list(t.path, 100);
  const std::string out = t / "out";
  const std::string args =
      "-q --config " + base_cfg() + " --input-list " + q(list) + " --out-dir " + q(out);
  // Commits: the first group's files, its manifest, then the second group's:
  // killed there, the first group is recorded done, the rest is not.
  RunResult r = signalled_at("commit:3", args, "TERM");
  CHECK_MESSAGE(r.exit_code == 128 + SIGTERM, "stderr: " << r.err);
  CHECK(temporaries(t.path).empty());
  const std::size_t first = complete_result_folders(out);
  const auto manifest = attn::test::read_json(out + "/manifest.json");
  CHECK(manifest["inputs"].size() == first);
  REQUIRE(first >= 1);
  REQUIRE(first < 100);
  const auto kept = snapshot(out + "/x_00");

  RunResult again = run(bin() + " " + args);
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(complete_result_folders(out) == 100);
  const auto summary = attn::test::read_json(out + "/batch.json");
  std::size_t skipped = 0;
  for (const auto& in : summary["inputs"]) skipped += in.value("skipped", false) ? 1 : 0;
  CHECK(skipped == first);  // each input computed exactly once over the two runs
  CHECK(summary["inputs"].size() == 100);
  CHECK(attn::test::read_json(out + "/manifest.json")["inputs"].size() == 100);
  CHECK(snapshot(out + "/x_00") == kept);

  // An input changed since its results were made is computed again, alone.
  write_text(t / "x_00.npy", attn::encode_npy(attn::test::random_tensor({2, 3, 4}, 9)));
  RunResult third = run(bin() + " " + args);
  REQUIRE_MESSAGE(third.exit_code == 0, third.err);
  const auto again_summary = attn::test::read_json(out + "/batch.json");
  skipped = 0;
  for (const auto& in : again_summary["inputs"]) skipped += in.value("skipped", false) ? 1 : 0;
  CHECK(skipped == 99);
  CHECK(snapshot(out + "/x_00") != kept);

  // Another config, other flags or other weights: 73 naming which, nothing written.
  const auto before = snapshot(out);
  check_cli_failure(run(bin() + " " + args + " --no-attn"), 73, {"manifest.json", "--no-attn"});
  check_cli_failure(run(bin() + " " + args + " --stats"), 73, {"manifest.json", "--stats"});
  fs::copy(fixtures() + "/weights", t / "w", fs::copy_options::recursive);
  check_cli_failure(run(bin() + " " + args + " --weights " + q(t / "w")), 73,
                    {"manifest.json", "weights"});
  CHECK(snapshot(out) == before);
  CHECK(temporaries(t.path).empty());
}

// A tmpfs of 128 KiB holds about ten inputs' results (three small files
// each, a 4 KiB page apiece). Mounting needs root (CI runs as root);
// elsewhere the case is skipped with a message.
TEST_CASE("hostile outputs: a full disk mid-list is 74 and leaves only complete result folders") {
  attn::test::TempDir t;
  const std::string list = input_list(t.path, 40);
  const std::string mnt = t / "small";
  fs::create_directory(mnt);
  if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=128k") != 0) {
    MESSAGE("skipped: cannot mount a small tmpfs here (needs root)");
    return;
  }
  struct Unmount {
    std::string dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{mnt};
  const std::string out = mnt + "/out";
  RunResult r = run(bin() + " -q --config " + base_cfg() + " --input-list " + q(list) +
                    " --out-dir " + q(out));
  check_cli_failure(r, 74, {out});
  CHECK(temporaries(mnt).empty());
  const std::size_t done = complete_result_folders(out);
  CHECK(done < 40);
  CHECK(!fs::exists(out + "/batch.json"));
}

// ---- 9. names ---------------------------------------------------------------

TEST_CASE("hostile outputs: a legal 250-character --plot name works") {
  attn::test::TempDir t;
  const std::string name = std::string(246, 'p') + ".svg";
  REQUIRE(name.size() == 250);
  RunResult r = run(bin() + " -q --config " + base_cfg() + " --plot " + q(t / name));
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(fs::exists(t / name));
  CHECK(temporaries(t.path).empty());
}

TEST_CASE(
    "hostile outputs: a --plot name longer than the file system allows fails before the run") {
  attn::test::TempDir t;
  const std::string out = t / "out";
  const auto before = populate(out);
  const std::string name = std::string(252, 'p') + ".svg";  // 256 bytes: NAME_MAX is 255
  RunResult r =
      run(bin() + " -q --config " + base_cfg() + " --out-dir " + q(out) + " --plot " + q(t / name));
  check_cli_failure(r, 73, {name + ": name is 256 bytes long", "at most 255"});
  CHECK(snapshot(out) == before);
  CHECK(temporaries(t.path).empty());
}

// ---- 7. everything commits together, stdout included -------------------------

TEST_CASE(
    "hostile outputs: a closed stdout (exit 74) leaves an existing --plot and --out-dir "
    "untouched") {
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
  // Printing the context (--format asks for it beside the picture) to a
  // closed stdout with only a --plot: the same.
  r = run(bin() + " -q --config " + base_cfg() + " --input " +
          q(fixtures() + "/npy/valid_fortran_f2.npy") + " --plot " + q(plot) +
          " --format text >&-");
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

TEST_CASE(
    "hostile outputs: --dump-weights into the folder it reads is exit 73 and writes nothing") {
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

TEST_CASE("hostile outputs: a second dump's layout replaces the first's files; other files stay") {
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
    "hostile outputs: invalid UTF-8 and noncharacter labels and a Latin-1 config name give good "
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
    // Every panel and the legend drawn: the right half (head 1's panel and
    // the colour bar) holds about as much ink as with plain ASCII strings.
    RunResult plain =
        run(bin() + " -q --config " + base_cfg() + " --labels a,b,c --plot " + q(t / "plain.png"));
    REQUIRE_MESSAGE(plain.exit_code == 0, plain.err);
    const auto right = attn::test::png_ink(t / "m.png", 0.5, 1.0);
    const auto right_plain = attn::test::png_ink(t / "plain.png", 0.5, 1.0);
    REQUIRE(right.width > 0);
    CHECK(right_plain.share > 0.05);
    CHECK(right.share > 0.7 * right_plain.share);
    CHECK(temporaries(t.path).empty());
  }
}

// ---- 9. names -------------------------------------------------------------------

TEST_CASE(
    "hostile outputs: an --input-list entry named like the batch file fails before any input "
    "runs") {
  attn::test::TempDir t;
  fs::copy_file(fixtures() + "/npy/x.npy", t / "a.npy");
  fs::copy_file(fixtures() + "/npy/x.npy", t / "batch.json.npy");
  write_text(t / "list.txt", "a.npy\nbatch.json.npy\n");
  RunResult r = run(bin() + " -q --config " + base_cfg() + " --input-list " + q(t / "list.txt") +
                    " --out-dir " + q(t / "out"));
  check_cli_failure(r, 65, {"list.txt", "batch.json", "line 2"});
  CHECK(!fs::exists(t / "out/a"));  // nothing computed
  // A shard's batch file name collides the same way, in every shard.
  fs::rename(t / "batch.json.npy", t / "batch-0-of-2.json.npy");
  write_text(t / "list.txt", "a.npy\nbatch-0-of-2.json.npy\n");
  r = run(bin() + " -q --config " + base_cfg() + " --input-list " + q(t / "list.txt") +
          " --shard 1/2 --out-dir " + q(t / "out"));
  check_cli_failure(r, 65, {"batch-0-of-2.json"});
  CHECK(!fs::exists(t / "out/batch-0-of-2.json"));
  // The names an earlier attn-run gave these files are refused too (its merge still reads them).
  for (const char* old : {"summary.json", "summary-0-of-2.json"}) {
    CAPTURE(old);
    fs::copy_file(fixtures() + "/npy/x.npy", t / (std::string(old) + ".npy"));
    write_text(t / "list.txt", "a.npy\n" + std::string(old) + ".npy\n");
    r = run(bin() + " -q --config " + base_cfg() + " --input-list " + q(t / "list.txt") +
            " --out-dir " + q(t / "old"));
    check_cli_failure(r, 65, {"list.txt", old, "line 2"});
  }
}

TEST_CASE("hostile outputs: a NUL byte in a list line is an error, not a cut path") {
  attn::test::TempDir t;
  fs::copy_file(fixtures() + "/npy/x.npy", t / "a.npy");
  write_text(t / "list.txt", std::string("a.npy\0/etc/passwd\n", 18));
  RunResult r = run(bin() + " -q --config " + base_cfg() + " --input-list " + q(t / "list.txt") +
                    " --out-dir " + q(t / "out"));
  check_cli_failure(r, 65, {"list.txt", "line 1", "NUL"});
  CHECK(!fs::exists(t / "out/a"));
}

TEST_CASE("hostile outputs: an empty --out-dir or --plot name is a usage error, not stdout") {
  for (const std::string flag : {"--out-dir", "--plot"}) {
    CAPTURE(flag);
    check_cli_failure(run(bin() + " -q --config " + base_cfg() + " " + flag + " ''"), 64, {flag});
  }
}

TEST_CASE("hostile outputs: --plot inside --out-dir commits with the folder under one lock") {
  // Two staged sets in one folder: its lock is taken once (a second flock on
  // the same folder would wait on itself forever), and both land together.
  attn::test::TempDir t;
  const std::string out = t / "out";
  populate(out);
  RunResult r = run("timeout 60 " + bin() + " -q --config " + base_cfg() + " --out-dir " + q(out) +
                    " --plot " + q(out + "/maps.svg"));
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(fs::exists(out + "/maps.svg"));
  CHECK(fs::exists(out + "/context.npy"));
  CHECK(temporaries(t.path).empty());
}

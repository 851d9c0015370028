// cli_flags: the command line as a person meets it, through the built binary:
// --help's usage line per mode, "did you mean" for a mistyped flag, flag
// conflicts (exit 64, one line naming both flags, empty stdout), --labels-file,
// -o and `-o -`, the generated bash completion and the man page.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "cli_checks.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::check_cli_failure;
using attn::test::q;
using attn::test::run;
using attn::test::source_path;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
std::string cfg(const std::string& name) { return attn::test::quoted_config(name); }
bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The long flags the completion offers: every visible option.
std::set<std::string> completion_flags() {
  auto r = run(bin() + " --completion bash");
  REQUIRE(r.exit_code == 0);
  std::set<std::string> flags;
  const std::regex flag(R"(--[a-z][a-z-]+)");
  const auto words = r.out.substr(r.out.rfind("compgen -W '"));
  for (std::sregex_iterator it(words.begin(), words.end(), flag), end; it != end; ++it)
    flags.insert(it->str());
  return flags;
}

}  // namespace

TEST_CASE("cli_flags: --help shows a usage line per mode and no file a clone lacks") {
  auto r = run(bin() + " --help");
  REQUIRE(r.exit_code == 0);
  const auto usage = r.out.substr(0, r.out.find("Options:"));
  for (const char* line :
       {"attn-run --config FILE [--weights PATH] [--input PATH|-] [-o DIR]",
        "attn-run --config FILE --input-list LIST -o DIR [--shard K/N|auto[:N]] [--keep-going]",
        "attn-run --merge-shards DIR", "attn-run --config FILE --dump-weights [DIR|FILE]",
        "attn-run --help | --version"})
    CHECK_MESSAGE(has(usage, line), line);
  CHECK(has(r.out, "--dump-weights [DIR|FILE]"));  // the folder is optional
  CHECK(has(r.out, "-o,--out-dir DIR"));
  CHECK(has(r.out, "--labels-file FILE"));
  CHECK(has(r.out, "--model DIR|FILE.gguf"));  // a GGUF file too
  CHECK(has(r.out, "or last:4"));
  CHECK(has(r.out, "a (layers, B, S, C) stack, or a folder of layer_N.npy"));  // --input
  CHECK_FALSE(has(r.out, "CONTRACT"));
  CHECK_FALSE(has(r.out, "--completion"));  // hidden: for packagers
}

TEST_CASE("cli_flags: a mistyped flag gets the nearest one, with or without --config") {
  for (const std::string& config : {std::string(), " --config " + cfg("warner_causal.json")}) {
    CAPTURE(config);
    auto r = run(bin() + config + " --out_dir /tmp/x");
    check_cli_failure(r, 64, {"--out_dir: unknown flag", "did you mean --out-dir?"});
    r = run(bin() + config + " --labels_file=x.txt");
    check_cli_failure(r, 64, {"--labels_file: unknown flag", "did you mean --labels-file?"});
    r = run(bin() + config + " --stat");
    check_cli_failure(r, 64, {"--stat: unknown flag", "did you mean --stats?"});
    // Far from every flag: no guess, and never "config required".
    r = run(bin() + config + " --frobnicate");
    check_cli_failure(r, 64, {"--frobnicate: unknown flag"});
    CHECK_FALSE(has(r.err, "did you mean"));
    CHECK_FALSE(has(r.err, "required"));
  }
  check_cli_failure(run(bin() + " --config " + cfg("warner_causal.json") + " stray"), 64,
                    {"'stray': unexpected argument"});
  check_cli_failure(run(bin()), 64, {"--config: a config file is required"});
  check_cli_failure(run(bin() + " -q"), 64, {"--config: a config file is required"});
}

TEST_CASE("cli_flags: conflicting flags exit 64 with one line naming both") {
  const std::string base = bin() + " --config " + cfg("warner_causal.json");
  attn::test::TempDir t;
  attn::test::write_text(t / "labels.txt", "a\nb\nc\nd\ne\nf\n");
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {" --attn-stdout --no-attn", {"--attn-stdout", "--no-attn"}},
      {" --show --format json", {"--show", "--format"}},
      {" --format text --show", {"--show", "--format"}},
      {" --show --attn-stdout", {"--show", "--attn-stdout"}},
      {" --labels a,b,c,d,e,f --labels-file " + q(t / "labels.txt"), {"--labels", "--labels-file"}},
      {" --merge-summaries " + q(t.path), {"--merge-summaries", "--config"}},
  };
  for (const auto& [flags, culprits] : cases) {
    CAPTURE(flags);
    check_cli_failure(run(base + flags), 64, culprits);
  }
  CHECK(std::distance(fs::directory_iterator(t.path), fs::directory_iterator()) == 1);
}

TEST_CASE("cli_flags: an empty value (an unset shell variable) is exit 64 naming the flag") {
  // --layer "" printed the model's table (exit 0) and --heads "" drew every
  // head, as if the flag were absent; --model "" asked for a --config.
  attn::test::TempDir t;
  const std::string model = q(source_path("data/tiny-llama"));
  const std::string input = q(source_path("data/tiny-llama-hidden.npy"));
  const std::string out = " -o " + q(t / "o");
  check_cli_failure(run(bin() + " --model " + model + " --layer ''"), 64,
                    {"--layer", "empty string"});
  check_cli_failure(run(bin() + " --model " + model + " --layer '' --input " + input + out), 64,
                    {"--layer", "empty string"});
  check_cli_failure(run(bin() + " --model '' --layer 1 --input " + input + out), 64,
                    {"--model", "empty string"});
  check_cli_failure(run(bin() + " --model " + model + " --layer 1 --input ''" + out), 64,
                    {"--input", "empty string"});
  check_cli_failure(
      run(bin() + " --model " + model + " --layer 1 --input " + input + out + " --heads ''"), 64,
      {"--heads", "empty string"});
  check_cli_failure(run(bin() + " --config ''"), 64, {"--config", "empty string"});
  CHECK(!fs::exists(t / "o"));
}

TEST_CASE("cli_flags: --format npy refuses a terminal unless -o - asks for the bytes") {
  if (run("command -v script").exit_code != 0) {
    MESSAGE("skipping: no `script` to provide a terminal");
    return;
  }
  const std::string cmd = bin() + " --config " + cfg("warner_causal.json") + " --format npy";
  // `script` gives attn-run a pseudo-terminal as stdout and stderr; -e passes the exit code.
  auto tty = run("script -qec \"" + cmd + "\" /dev/null");
  CHECK(tty.exit_code == 64);
  CHECK(has(tty.out, "attn-run: error: --format npy: stdout is a terminal"));
  CHECK_FALSE(has(tty.out, "NUMPY"));
  auto forced = run("script -qec \"" + cmd + " -o -\" /dev/null");
  CHECK(forced.exit_code == 0);
  CHECK(has(forced.out, "\x93NUMPY"));
  // A redirect is not a terminal: the bytes flow.
  auto piped = run(cmd);
  CHECK(piped.exit_code == 0);
  CHECK(piped.out.rfind("\x93NUMPY", 0) == 0);
  // --format text on a terminal is fine.
  CHECK(run("script -qec \"" + bin() + " --config " + cfg("warner_causal.json") + "\" /dev/null")
            .exit_code == 0);
}

TEST_CASE("cli_flags: -o is --out-dir, and -o - sends results to stdout over the config's folder") {
  attn::test::TempDir t;
  auto r = run(bin() + " -q --config " + cfg("warner_causal.json") + " -o " + q(t / "short"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(fs::exists(t / "short/context.npy"));
  CHECK(fs::exists(t / "short/attention.npy"));

  // A config whose output.dir is set: -o - overrides it.
  const std::string data = source_path("data");
  attn::test::write_text(t / "to_dir.json",
                         R"({"attention": "causal", "hidden_size": 8, "num_heads": 2,
                             "weights": ")" +
                             data + R"(/warner_causal",
                             "input": ")" +
                             data + R"(/sentence_c8.npy",
                             "output": {"dir": "cfg_out"}})");
  r = run(bin() + " -q --config " + q(t / "to_dir.json") + " -o -");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.rfind("tensor([", 0) == 0);
  CHECK_FALSE(fs::exists(t / "cfg_out"));
  r = run(bin() + " -q --config " + q(t / "to_dir.json"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(fs::exists(t / "cfg_out/context.npy"));
}

TEST_CASE("cli_flags: --labels-file gives one label per line, commas included") {
  attn::test::TempDir t;
  attn::test::write_text(t / "labels.txt", "Your\njourney\na, b\nwith\r\none\nstep\n");
  const std::string base = bin() + " -q --config " + cfg("warner_causal.json");
  auto r = run(base + " --labels-file " + q(t / "labels.txt") + " --plot " + q(t / "w.svg"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string svg = attn::test::read_text(t / "w.svg");
  CHECK(has(svg, "a, b"));    // one label holding a comma
  CHECK(has(svg, ">with<"));  // the \r of a Windows line end is not part of it
  CHECK_FALSE(has(svg, ">with\r"));
  // --labels splits the same text at the comma: one label too many.
  check_cli_failure(run(base + " --labels 'Your,journey,a, b,with,one,step' --show"), 64,
                    {"--labels: expected 6 labels", "found 7"});
  attn::test::write_text(t / "five.txt", "a\nb\nc\nd\ne\n");
  check_cli_failure(run(base + " --labels-file " + q(t / "five.txt") + " --show"), 64,
                    {"--labels-file: expected 6 labels", "found 5"});
  check_cli_failure(run(base + " --labels-file " + q(t / "none.txt") + " --show"), 66,
                    {"none.txt"});
  CHECK_FALSE(fs::exists(t / "none.txt"));
}

TEST_CASE("cli_flags: the bash completion is generated from the options and works in bash") {
  attn::test::TempDir t;
  REQUIRE(run(bin() + " --completion bash > " + q(t / "attn-run")).exit_code == 0);
  auto words = [&](const std::string& line, int cword) {
    // COMP_WORDS as bash splits the command line; COMP_CWORD the word completed.
    auto r = run("cd " + q(source_path("configs")) + " && bash -c 'source " + q(t / "attn-run") +
                 " && COMP_WORDS=(" + line + ") && COMP_CWORD=" + std::to_string(cword) +
                 " && _attn_run && echo \"${COMPREPLY[*]}\"'");
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    return r.out.substr(0, r.out.find('\n'));
  };
  auto complete = run("bash -c 'source " + q(t / "attn-run") + " && complete -p attn-run'");
  CHECK(complete.out == "complete -F _attn_run attn-run\n");
  CHECK(words("attn-run --ou", 1) == "--out-dir");
  CHECK(words("attn-run --format \"\"", 2) == "text json npy");
  CHECK(has(words("attn-run --layout \"\"", 2), "torch_mha"));
  CHECK(words("attn-run --config warner_ca", 2) == "warner_causal.json");
  CHECK(words("attn-run --threads \"\"", 2).empty());
  // --model takes a folder or a GGUF file: both complete.
  CHECK(words("attn-run --model ../tests/golden/gguf/llama/mod", 2) ==
        "../tests/golden/gguf/llama/model.gguf");
  CHECK(has(words("attn-run --model ../data/tiny-l", 2) + " ", "../data/tiny-llama "));
  // --dump-weights takes an optional folder: a flag may follow it.
  CHECK(words("attn-run --dump-weights --layo", 2) == "--layout");
  CHECK(words("attn-run -", 1).find("--merge-shards") != std::string::npos);
  CHECK_FALSE(has(words("attn-run --", 1), "--completion"));
}

TEST_CASE("cli_flags: the man page documents every flag and formats cleanly") {
  const std::string page = attn::test::read_text(source_path("docs/attn-run.1"));
  const auto flags = completion_flags();
  CHECK(flags.size() >= 25);
  for (const std::string& f : flags) {
    std::string roff;  // "--out-dir" is written \-\-out\-dir in roff
    for (char c : f) roff += c == '-' ? std::string("\\-") : std::string(1, c);
    CHECK_MESSAGE(has(page, roff), f, " is not in docs/attn-run.1");
  }
  // The model modes name GGUF files and --layer all's form.
  CHECK(has(page, ".BI \\-\\-model \" DIR|FILE.gguf\""));
  CHECK(has(page, ".IR all | A\\-B | LIST"));
  if (run("command -v groff").exit_code != 0) {
    MESSAGE("skipping the groff check: no groff");
    return;
  }
  // -ww: every warning; a clean page prints none.
  auto r = run("groff -man -Tutf8 -ww -z " + q(source_path("docs/attn-run.1")));
  CHECK(r.exit_code == 0);
  CHECK_MESSAGE(r.err.empty(), r.err);
}

namespace {
// run.json's threads of a run of the shipped config with `env` before the command.
int threads_used(const std::string& env, const std::string& dir) {
  auto r = run(env + " " + bin() + " -q --config " + cfg("warner_causal.json") + " -o " + q(dir));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const std::string json = attn::test::read_text(dir + "/run.json");
  const std::smatch m = [&] {
    std::smatch found;
    std::regex_search(json, found, std::regex(R"("threads": ([0-9]+))"));
    return found;
  }();
  REQUIRE(m.size() == 2);
  return std::stoi(m[1]);
}
}  // namespace

TEST_CASE("cli_flags: the default threads follow the affinity mask and the cgroup's CPU quota") {
  attn::test::TempDir t;
  if (run("taskset -c 0 true").exit_code == 0) CHECK(threads_used("taskset -c 0", t / "a") == 1);
  // A cgroup tree as Slurm or a container runtime makes it (read through
  // the test hook ATTN_TEST_PROC_SELF in place of /proc/self).
  const std::string fake = t / "proc", tree = t / "cg";
  fs::create_directories(fake);
  // cgroup v2: the job's own cpu.max unlimited, its parent's one CPU.
  fs::create_directories(tree + "/v2/slurm/job_7");
  attn::test::write_text(fake + "/cgroup", "0::/slurm/job_7\n");
  attn::test::write_text(fake + "/mountinfo",
                         "30 25 0:26 / " + tree + "/v2 rw,nosuid - cgroup2 cgroup2 rw\n");
  attn::test::write_text(tree + "/v2/slurm/job_7/cpu.max", "max 100000\n");
  attn::test::write_text(tree + "/v2/slurm/cpu.max", "100000 100000\n");
  CHECK(threads_used("ATTN_TEST_PROC_SELF=" + q(fake), t / "b") == 1);
  // cgroup v1 (cpu,cpuacct): half a CPU is one thread.
  fs::create_directories(tree + "/v1/docker/abc");
  attn::test::write_text(fake + "/cgroup", "4:cpu,cpuacct:/docker/abc\n1:name=systemd:/\n");
  attn::test::write_text(fake + "/mountinfo",
                         "35 25 0:30 / " + tree + "/v1 rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n");
  attn::test::write_text(tree + "/v1/docker/abc/cpu.cfs_quota_us", "50000\n");
  attn::test::write_text(tree + "/v1/docker/abc/cpu.cfs_period_us", "100000\n");
  CHECK(threads_used("ATTN_TEST_PROC_SELF=" + q(fake), t / "c") == 1);
  // No quota: the affinity decides; --threads always wins.
  attn::test::write_text(tree + "/v1/docker/abc/cpu.cfs_quota_us", "-1\n");
  CHECK(threads_used("ATTN_TEST_PROC_SELF=" + q(fake), t / "d") >= 1);
  auto r = run("taskset -c 0 " + bin() + " -q --threads 3 --config " + cfg("warner_causal.json") +
               " -o " + q(t / "e"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(has(attn::test::read_text(t / "e/run.json"), "\"threads\": 3"));
}

TEST_CASE("cli_flags: --plot without -o prints no context unless --format or -o - asks") {
  // CONTRACT.md "(v4) Inputs": a run for its picture keeps stdout clean.
  attn::test::TempDir t;
  const std::string base = bin() + " -q --config " + cfg("warner_causal.json");
  auto plain = run(base);
  REQUIRE(plain.exit_code == 0);
  auto json_alone = run(base + " --format json");
  REQUIRE(json_alone.exit_code == 0);

  auto r = run(base + " --plot " + q(t / "a.svg"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out.empty());
  CHECK(fs::exists(t / "a.svg"));
  // --format or -o - ask for the context too: the values printed without
  // --plot (which computes the maps for the picture, on a path that may round
  // the last bit differently).
  r = run(base + " --plot " + q(t / "b.svg") + " --format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto with_plot = nlohmann::json::parse(r.out),
             alone = nlohmann::json::parse(json_alone.out);
  REQUIRE(with_plot.size() == alone.size());
  for (std::size_t i = 0; i < alone.size(); ++i)
    for (std::size_t j = 0; j < alone[i].size(); ++j)
      CHECK(with_plot[i][j].get<double>() ==
            doctest::Approx(alone[i][j].get<double>()).epsilon(1e-5));
  for (const std::string& asked : {std::string(" --format text"), std::string(" -o -")}) {
    CAPTURE(asked);
    r = run(base + " --plot " + q(t / "c.svg") + asked);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.rfind("tensor([[", 0) == 0);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') ==
          std::count(plain.out.begin(), plain.out.end(), '\n'));
  }
  CHECK(fs::exists(t / "c.svg"));
  // The flags that print something else are unchanged: --show draws on stdout.
  r = run(base + " --plot " + q(t / "e.svg") + " --show");
  CHECK(!r.out.empty());
  CHECK(r.out != plain.out);
}

TEST_CASE("cli_flags: --attention-mask and --keep-going are offered by completion and help") {
  const auto flags = completion_flags();
  for (const char* f : {"--attention-mask", "--keep-going", "--shard"}) CHECK(flags.count(f) == 1);
  auto r = run(bin() + " --help");
  CHECK(has(r.out, "--attention-mask FILE"));
  CHECK(has(r.out, "auto:N"));
  CHECK(has(r.out, "the first failure's"));
  check_cli_failure(run(bin() + " --config " + cfg("warner_causal.json") + " --keep-going"), 64,
                    {"--keep-going", "--input-list"});
}

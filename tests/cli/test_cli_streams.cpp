// cli_streams: files read once may come from a pipe (CONTRACT.md
// "File safety rules"): `--input-list -` reads the list from standard input;
// a FIFO or bash's process substitution <(...) works as --input,
// --padding-mask, --input-list and --config, bounded as standard input is
// (garbage fails at its first bytes, a .npy header declaring more than memory
// is exit 71 before the data is read); weights, read in pieces, must be
// regular files.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "attn/npy.h"
#include "cli_checks.h"
#include "json_files.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::check_cli_failure;
using attn::test::q;
using attn::test::run;
using attn::test::RunResult;
using attn::test::write_text;

namespace {

std::string bin() { return attn::test::quoted_binary(); }
std::string cfg() { return attn::test::quoted_config("warner_causal.json"); }

// `script` run by bash (process substitution needs it), in folder `dir`.
RunResult bash_in(const std::string& dir, const std::string& script) {
  return run("cd " + q(dir) + " && timeout 60 bash -c " + q(script));
}

// A (B, S) bool .npy.
std::string mask_npy(std::size_t B, std::size_t S, const std::vector<int>& bits) {
  std::string header = "{'descr': '|b1', 'fortran_order': False, 'shape': (" + std::to_string(B) +
                       ", " + std::to_string(S) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += char(header.size());
  out += '\0';
  out += header;
  for (int b : bits) out += char(b);
  return out;
}

}  // namespace

TEST_CASE("cli_streams: --input-list - reads the list from standard input") {
  attn::test::TempDir t;
  const auto x = attn::encode_npy(attn::test::random_tensor({6, 8}, 1));
  write_text(t / "a.npy", x);
  write_text(t / "b.npy", x);
  // Paths relative to the working folder.
  RunResult r = run("cd " + q(t.path) + " && " + bin() + " -q --config " + cfg() +
                        " --input-list - --out-dir out",
                    "a.npy\n# a comment\nb.npy\n");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(fs::exists(t / "out/a/context.npy"));
  CHECK(fs::exists(t / "out/b/context.npy"));
  const auto summary = attn::test::read_json(t / "out/batch.json");
  CHECK(summary["input_list"] == "-");
  CHECK(summary["inputs"].size() == 2);

  // The same from a pipe: <(...) lists paths relative to the working folder too.
  r = bash_in(t.path, bin() + " -q --config " + cfg() +
                          " --input-list <(printf \"b.npy\\n\") --out-dir piped");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(fs::exists(t / "piped/b/context.npy"));
  CHECK(!fs::exists(t / "piped/a"));
}

TEST_CASE("cli_streams: --input and --padding-mask from <(...) or a FIFO equal the files") {
  attn::test::TempDir t;
  write_text(t / "x.npy", attn::encode_npy(attn::test::random_tensor({2, 6, 8}, 2)));
  write_text(t / "m.npy", mask_npy(2, 6, {0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1}));
  write_text(t / "x.json", "[[1, 2, 3, 4, 5, 6, 7, 8], [0.5, -1, 2, 0, 0, 1, 1, 3]]");
  const std::string base = bin() + " -q --config " + cfg() + " --format json";
  RunResult files = bash_in(t.path, base + " --input x.npy --padding-mask m.npy");
  REQUIRE_MESSAGE(files.exit_code == 0, files.err);
  RunResult piped = bash_in(t.path, base + " --input <(cat x.npy) --padding-mask <(cat m.npy)");
  REQUIRE_MESSAGE(piped.exit_code == 0, piped.err);
  CHECK(piped.out == files.out);

  // JSON through a pipe, too.
  RunResult json_file = bash_in(t.path, base + " --input x.json");
  RunResult json_piped = bash_in(t.path, base + " --input <(cat x.json)");
  REQUIRE_MESSAGE(json_piped.exit_code == 0, json_piped.err);
  CHECK(json_piped.out == json_file.out);

  // A named pipe whose writer comes later: opened as `cat` opens it.
  RunResult fifo = bash_in(t.path, "mkfifo p; (sleep 0.5; cat x.npy > p) & " + base +
                                       " --input p --padding-mask m.npy; s=$?; wait; exit $s");
  REQUIRE_MESSAGE(fifo.exit_code == 0, fifo.err);
  CHECK(fifo.out == files.out);

  // A config read through a pipe (it is read twice: looked at, then loaded).
  // (Its paths made absolute: a pipe has no folder of its own to resolve them against.)
  std::string config_text =
      attn::test::read_text(attn::test::source_path("configs/warner_causal.json"));
  for (std::size_t at; (at = config_text.find("\"../data/")) != std::string::npos;)
    config_text.replace(at, 9, "\"" + attn::test::source_path("data") + "/");
  write_text(t / "c.json", config_text);
  RunResult cfg_file = bash_in(t.path, bin() + " -q --config c.json --input x.npy --format json");
  RunResult cfg_piped =
      bash_in(t.path, bin() + " -q --config <(cat c.json) --input x.npy --format json");
  REQUIRE_MESSAGE(cfg_piped.exit_code == 0, cfg_piped.err);
  CHECK(cfg_piped.out == cfg_file.out);
}

TEST_CASE("cli_streams: a pipe is bounded as standard input is") {
  attn::test::TempDir t;
  const std::string base = bin() + " -q --config " + cfg();
  // Zeros: neither a .npy nor JSON, refused at the first bytes (not read to the end).
  RunResult zeros = bash_in(t.path, base + " --input <(cat /dev/zero)");
  check_cli_failure(zeros, 65, {"/dev/fd/", "neither"});
  // A valid header declaring 4e16 bytes, then zeros: 71 before the data is read.
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (100000000, 100000000), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string preamble = "\x93NUMPY\x01";
  preamble += '\0';
  preamble += char(header.size());
  preamble += '\0';
  write_text(t / "head.npy", preamble + header);
  RunResult huge = bash_in(t.path, base + " --input <(cat head.npy /dev/zero)");
  check_cli_failure(huge, 71, {"/dev/fd/", "declares 40000000000000128 bytes"});
  // A truncated .npy stream is the reader's own error.
  write_text(t / "x.npy", attn::encode_npy(attn::test::random_tensor({6, 8}, 2)));
  RunResult cut = bash_in(t.path, base + " --input <(head -c 100 x.npy)");
  check_cli_failure(cut, 65, {"/dev/fd/", "truncated"});
  // Weights are read in pieces, more than once: a pipe is refused, by name.
  RunResult weights = bash_in(t.path, base + " --weights <(cat x.npy) --input x.npy");
  check_cli_failure(weights, 66, {"/dev/fd/", "FIFO"});
  // /dev/zero itself is a device, not a stream to read once.
  check_cli_failure(bash_in(t.path, base + " --input /dev/zero"), 66, {"/dev/zero", "device"});
}

// Helpers of the hostile suites (test_hostile*.cpp): the fixtures, the
// built binary, leftover temporaries, a populated output folder, a signal
// delivered at a known point of a run (ATTN_TEST_PAUSE_AT), small .npy images.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "test_util.h"

namespace attn::test::hostile {

using attn::test::RunResult;
namespace fs = std::filesystem;

using attn::test::q;
inline std::string bin() { return q(attn::test::binary()); }
inline std::string fixtures() { return source_path("tests/fixtures/hostile"); }
inline std::string base_cfg() { return q(fixtures() + "/config.json"); }

// Leftover temporaries (OutputDir's ".attn-run-tmp-<pid>-<n>") under `dir`.
inline std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (it->path().filename().string().find("attn-run-tmp") != std::string::npos)
      found.push_back(it->path().string());
  return found;
}

// A good run of the base config into `out`; its snapshot.
inline std::map<std::string, std::string> populate(const std::string& out) {
  RunResult good = run(bin() + " -q --config " + base_cfg() + " --out-dir " + q(out));
  REQUIRE_MESSAGE(good.exit_code == 0, good.err);
  return snapshot(out);
}

// Runs `args` with ATTN_TEST_PAUSE_AT=<point> in the background: once the run
// has stopped itself there ("compute": the output folder's attention
// temporary reserved, before the forward pass; "commit": every temporary
// written, nothing renamed) it gets `sig`, then SIGCONT. Deterministic: no timing involved. Returns
// the run's exit status as the shell reports it (128 + signal for a handled one).
inline RunResult signalled_at(const std::string& point, const std::string& args,
                              const std::string& sig) {
  const std::string script = "ATTN_TEST_PAUSE_AT=" + point + " " + bin() + " " + args +
                             " & p=$!; " + attn::test::until_stopped("p") + "kill -s " + sig +
                             " $p; kill -s CONT $p; wait $p";
  return run("bash -c " + q(script));
}

inline attn::Tensor npy_file(const std::string& path) {
  return attn::test::npy_values(attn::test::read_text(path), path);
}

// A (B, S) bool .npy (padding mask, 1 = padded key) built by hand.
inline std::string bool_npy(std::size_t B, std::size_t S, const std::vector<int>& bits) {
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

}  // namespace attn::test::hostile

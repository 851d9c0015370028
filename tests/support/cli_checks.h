// The failure contract of CONTRACT.md ("Exit codes") on one run of the
// binary: the exit code, nothing on stdout, exactly one stderr line
// "attn-run: error: ..." that names every culprit (file, key or flag).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "test_util.h"

namespace attn::test {

inline void check_cli_failure(const RunResult& r, int code,
                              const std::vector<std::string>& culprits) {
  CHECK_MESSAGE(r.exit_code == code, "stderr: " << r.err);
  CHECK_MESSAGE(r.out.empty(), "stdout: " << r.out.substr(0, 200));
  CHECK_MESSAGE(r.err.rfind("attn-run: error: ", 0) == 0, "stderr: " << r.err);
  CHECK_MESSAGE(std::count(r.err.begin(), r.err.end(), '\n') == 1, "stderr: " << r.err);
  for (const std::string& c : culprits)
    CHECK_MESSAGE(r.err.find(c) != std::string::npos, "stderr: " << r.err << "culprit: " << c);
}

}  // namespace attn::test

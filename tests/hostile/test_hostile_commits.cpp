// The hostile suite's concurrent commits, end to end through the built
// binary (CONTRACT.md "Output safety rules"): runs writing into one folder
// at once leave one run's complete set and no temporary, whichever way each
// found the folder (there at its start, made meanwhile, swapped whole by an
// --input-list rerun). Two cases stop runs at known points
// (ATTN_TEST_PAUSE_AT), so the interleaving they test is certain.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "hostile_checks.h"
#include "test_util.h"

using namespace attn::test::hostile;
using attn::test::run;
using attn::test::RunResult;
using attn::test::snapshot;
using attn::test::until_stopped;
using attn::test::write_text;

namespace {

// n distinguishable inputs in `t` (x<i>.npy: random with seed 100 + i; run.json
// names its input, so each file of a folder is traced to its run) and what a
// run of each alone writes.
std::vector<std::map<std::string, std::string>> inputs(const attn::test::TempDir& t, int n) {
  std::vector<std::map<std::string, std::string>> expected;
  for (int i = 0; i < n; ++i) {
    const std::string x = t / ("x" + std::to_string(i) + ".npy");
    write_text(x, attn::encode_npy(attn::test::random_tensor({1, 5, 4}, 100 + i)));
    const std::string solo = t / ("solo" + std::to_string(i));
    RunResult r =
        run(bin() + " -q --config " + base_cfg() + " --input " + q(x) + " --out-dir " + q(solo));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    expected.push_back(snapshot(solo));
  }
  return expected;
}

std::string run_of(const attn::test::TempDir& t, int input, const std::string& out) {
  return bin() + " -q --config " + base_cfg() + " --input " +
         q(t / ("x" + std::to_string(input) + ".npy")) + " --out-dir " + q(out);
}

// `now` is input `i`'s complete set: its arrays, its run.json, nothing else.
void check_set_of(const std::map<std::string, std::string>& now,
                  const std::map<std::string, std::string>& expected, int i) {
  REQUIRE(now.count("context.npy") == 1);
  CHECK(now.at("context.npy") == expected.at("context.npy"));
  CHECK(now.at("attention.npy") == expected.at("attention.npy"));
  CHECK(now.at("run.json").find("x" + std::to_string(i) + ".npy") != std::string::npos);
  CHECK(now.size() == expected.size());
}

}  // namespace

TEST_CASE("hostile commits: 20 concurrent writers into one folder leave one run's complete set") {
  attn::test::TempDir t;
  const std::string out = t / "out";
  const auto expected = inputs(t, 20);
  for (int round = 0; round < 4; ++round) {
    CAPTURE(round);
    std::string script;
    for (int i = 0; i < 20; ++i) script += run_of(t, i, out) + " & ";
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
    check_set_of(now, expected[owner], owner);
    CHECK(temporaries(t.path).empty());
  }
}

TEST_CASE(
    "hostile commits: a run that found no folder waits for the lock of one made meanwhile before "
    "it merges into it") {
  // Run 0 starts with no out folder (it stages beside it) and stops before
  // its commit; the folder is made; run 1 finds it, stages in it and stops
  // after its first rename, holding the folder's lock. Run 0 goes on: it must
  // wait for that lock (its files merged one by one among run 1's left a
  // mix), then replace run 1's set with its own whole.
  attn::test::TempDir t;
  const std::string out = t / "out";
  const auto expected = inputs(t, 2);
  const std::string script =
      "ATTN_TEST_PAUSE_AT=commit " + run_of(t, 0, out) + " & a=$!; " + until_stopped("a") +
      "mkdir " + q(out) + "; ATTN_TEST_PAUSE_AT=rename " + run_of(t, 1, out) + " & c=$!; " +
      until_stopped("c") +
      "kill -s CONT $a; "
      // Run 0 finishes (the bug this case catches) or blocks on the lock;
      // either way run 1 goes on after at most 20 s.
      "for i in $(seq 400); do kill -0 $a 2>/dev/null || break; "
      "case \"$(cat /proc/$a/wchan 2>/dev/null)\" in *lock*) break;; esac; sleep 0.05; done; "
      "kill -s CONT $c; wait $c; c_rc=$?; wait $a; echo \"$? $c_rc\"";
  RunResult r = run("bash -c " + q(script));
  REQUIRE_MESSAGE(r.out == "0 0\n", std::string(r.out + r.err));
  check_set_of(snapshot(out), expected[0], 0);
  CHECK(temporaries(t.path).empty());
}

TEST_CASE(
    "hostile commits: an --input-list rerun that swaps a result folder whole carries a live run's "
    "temporaries across") {
  // Run 1 writes into result folder out/x0 and stops before its commit, its
  // temporaries staged in the folder. An --input-list rerun (its input
  // changed) replaces out/x0 by swapping in a new folder: run 1's
  // temporaries must go across with it (they were deleted with the old
  // folder, and run 1 failed), and run 1 then commits its set over the new one.
  attn::test::TempDir t;
  const std::string out = t / "out", list = t / "list.txt";
  const auto expected = inputs(t, 3);
  write_text(list, t / "x0.npy\n");
  const std::string list_run =
      bin() + " -q --config " + base_cfg() + " --input-list " + q(list) + " --out-dir " + q(out);
  RunResult first = run(list_run);
  REQUIRE_MESSAGE(first.exit_code == 0, first.err);
  const std::string script = "ATTN_TEST_PAUSE_AT=commit " + run_of(t, 1, out + "/x0") +
                             " & c=$!; " + until_stopped("c") + "cp " + q(t / "x2.npy") + " " +
                             q(t / "x0.npy") + "; " + list_run +
                             "; list_rc=$?; kill -s CONT $c; wait $c; echo \"$list_rc $?\"";
  RunResult r = run("bash -c " + q(script));
  REQUIRE_MESSAGE(r.out == "0 0\n", std::string(r.out + r.err));
  check_set_of(snapshot(out + "/x0"), expected[1], 1);
  CHECK(temporaries(t.path).empty());
}

// OutputDir's commit (attn/output.h): what a result folder holds after it,
// whichever way the folder comes to be (made in place, created whole at the
// commit, swapped whole for an earlier one, or merged into one made
// meanwhile): the files written, the user's own files of an earlier folder,
// and never a stale result that the run asked to remove (a rerun without
// --top-k must not leave the last run's top-k files beside its new context).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <string>

#include "attn/output.h"
#include "test_util.h"

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// An earlier run's folder: its context, a result this run does not make
// (attention.npy), and the user's notes.
void earlier_folder(const std::string& dir) {
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);
  write_text(dir + "/context.npy", "old context");
  write_text(dir + "/attention.npy", "old maps");
  write_text(dir + "/notes.txt", "mine");
}

// This run's files, and the stale name it removes.
void stage(attn::OutputDir& out) {
  out.add("context.npy", "new context");
  out.add("run.json", "{}");
  out.remove_on_commit("attention.npy");
}

void check_result(const std::string& dir, bool had_notes) {
  CHECK(read_text(dir + "/context.npy") == "new context");
  CHECK(read_text(dir + "/run.json") == "{}");
  CHECK_FALSE(exists(dir + "/attention.npy"));
  CHECK(exists(dir + "/notes.txt") == had_notes);
  if (had_notes) CHECK(read_text(dir + "/notes.txt") == "mine");
}

}  // namespace

TEST_CASE("OutputDir: a result folder never keeps a stale result, however it is committed") {
  attn::test::TempDir tmp;
  SUBCASE("made in place over an earlier folder") {
    earlier_folder(tmp / "r");
    attn::OutputDir out(tmp / "r");
    stage(out);
    out.commit();
    check_result(tmp / "r", true);
  }
  SUBCASE("created whole at the commit, where none was") {
    attn::OutputDir out(tmp / "r", tmp.path);
    stage(out);
    out.commit();
    check_result(tmp / "r", false);
  }
  SUBCASE("created whole at the commit, swapped for an earlier folder") {
    earlier_folder(tmp / "r");
    attn::OutputDir out(tmp / "r", tmp.path);
    stage(out);
    out.commit();
    check_result(tmp / "r", true);
  }
  SUBCASE("merged into a folder made meanwhile (replace false)") {
    attn::OutputDir out(tmp / "r", tmp.path, false);
    stage(out);
    earlier_folder(tmp / "r");  // another commit made it after this one began
    out.commit();
    check_result(tmp / "r", true);
  }
  SUBCASE("several folders committed together, one swapped and one new") {
    earlier_folder(tmp / "a");
    attn::OutputDir a(tmp / "a", tmp.path), b(tmp / "b", tmp.path);
    stage(a);
    stage(b);
    attn::commit_together({&a, &b});
    check_result(tmp / "a", true);
    check_result(tmp / "b", false);
  }
}

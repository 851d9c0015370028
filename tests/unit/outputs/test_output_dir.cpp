// OutputDir's commit (attn/output.h): what a result folder holds after it,
// whichever way the folder comes to be (made in place, created whole at the
// commit, swapped whole for an earlier one, or merged into one made
// meanwhile): the files written, the user's own files of an earlier folder,
// and never a stale result that the run asked to remove (a rerun without
// --top-k must not leave the last run's top-k files beside its new context).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/output.h"
#include "attn/tensor.h"
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

namespace {

// The names in `dir` (none when it is absent).
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("OutputDir: files staged in memory for a reader, the folder untouched, never committed") {
  attn::test::TempDir tmp;
  const std::string pack = tmp / "pack";  // --pack's folder, the staging folder's parent
  REQUIRE(::mkdir(pack.c_str(), 0755) == 0);
  write_text(pack + "/index.csv", "rows");
  {
    attn::OutputDir staged(pack + "/.attn-run-input", pack);
    staged.stage_in_memory(4096);
    staged.add("run.json", "{\"a\": 1}");
    // A streamed .npy within the budget, written in pieces as the pass does.
    const int ctx = staged.add_streamed_npy("context.npy", {2, 3});
    const float rows[6] = {1, 2, 3, 4, 5, 6};
    staged.write_at(ctx, 3, rows + 3, 3);
    {
      attn::BlockWriter writer(staged, ctx);
      writer.write(0, rows, 3 * sizeof(float));
      writer.finish();
    }
    // In memory: nothing in the pack's folder, no hidden folder; the reader
    // opens them by staged_path.
    CHECK(entries(pack) == std::vector<std::string>{"index.csv"});
    CHECK(read_text(staged.staged_path("run.json")) == "{\"a\": 1}");
    const std::string npy = read_text(staged.staged_path("context.npy"));
    const attn::Tensor t = attn::test::npy_values(npy, "context.npy");
    CHECK(t.shape == std::vector<std::size_t>{2, 3});
    CHECK(t.data == std::vector<float>{1, 2, 3, 4, 5, 6});
    // Past what is left of the budget (4096 - 8 - 128 - 24): in the hidden folder.
    const std::string big(4090, 'x');
    staged.add("attention.npy", big);
    const std::string on_disk = staged.staged_path("attention.npy");
    CHECK(on_disk.rfind(pack + "/.attn-run-tmp-", 0) == 0);
    CHECK(read_text(on_disk) == big);
    CHECK(entries(pack).size() == 2);  // index.csv and the hidden folder
    CHECK(staged.names() == std::vector<std::string>{"run.json", "context.npy", "attention.npy"});
    // Never committed: refused before anything is renamed or created.
    try {
      staged.commit();
      FAIL("a folder staged in memory was committed");
    } catch (const attn::Error& e) {
      CHECK(e.code() == attn::Exit::software);
    }
    CHECK_FALSE(exists(pack + "/.attn-run-input"));
  }
  // Dropped: the hidden folder and its file gone, the pack's own file kept.
  CHECK(entries(pack) == std::vector<std::string>{"index.csv"});
  CHECK(read_text(pack + "/index.csv") == "rows");
}

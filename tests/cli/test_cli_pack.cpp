// cli_pack: --input-list ... --pack (docs/packed-shards.md) through the built
// binary: each shard's inputs packed into DIR/pack-K-of-N/, every input's
// slice of each packed file byte for byte its folder-layout file; a run
// killed mid-batch (SIGKILL at a commit) and rerun gives the packs of a
// clean run; --keep-going failures add index rows but no data, and their
// fixed rerun appends them; the fingerprint keeps packs and folders apart
// (73); --merge-shards checks the packs cover the list once and writes
// DIR/index.csv; NumPy memory-maps every file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "attn/npy.h"
#include "cli_checks.h"
#include "hostile_checks.h"
#include "json_files.h"
#include "test_util.h"

namespace fs = std::filesystem;
using attn::test::check_cli_failure;
using attn::test::q;
using attn::test::read_json;
using attn::test::read_text;
using attn::test::run;
using attn::test::source_path;
using nlohmann::json;

namespace {

std::string bin() { return attn::test::quoted_binary(); }

std::string batch_cmd(const std::string& list, const std::string& dir, const std::string& more) {
  return bin() + " -q --threads 1 --config " + attn::test::quoted_config("warner_causal.json") +
         " --input-list " + q(list) + " -o " + q(dir) + " " + more;
}

// A .npy file's data: the bytes after its header (version 1.0 or 2.0).
std::string npy_data(const std::string& path) {
  const std::string bytes = read_text(path);
  REQUIRE(bytes.size() >= 12);
  const auto byte = [&](std::size_t i) { return std::size_t(std::uint8_t(bytes[i])); };
  const std::size_t offset = bytes[6] == 1
                                 ? 10 + (byte(8) | byte(9) << 8)
                                 : 12 + (byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24);
  return bytes.substr(offset);
}

// index.npy's rows, each `cols` int64.
std::vector<std::vector<std::int64_t>> index_rows(const std::string& pack) {
  const std::string data = npy_data(pack + "/index.npy");
  const std::size_t cols = read_json(pack + "/manifest.json")["index"]["columns"].size();
  std::vector<std::vector<std::int64_t>> rows(data.size() / (8 * cols),
                                              std::vector<std::int64_t>(cols));
  for (std::size_t r = 0; r < rows.size(); ++r)
    std::memcpy(rows[r].data(), data.data() + r * cols * 8, cols * 8);
  return rows;
}

// The bytes of rows [row, row + n) of a packed file whose rows hold `row_bytes` bytes.
std::string slice(const std::string& file, std::int64_t row, std::int64_t n,
                  std::size_t row_bytes) {
  return npy_data(file).substr(std::size_t(row) * row_bytes, std::size_t(n) * row_bytes);
}

// Every input's slice of every packed file equals its folder run's file.
void check_pack_against_folders(const std::string& pack, const std::string& folders) {
  const json m = read_json(pack + "/manifest.json");
  const json cols = m["index"]["columns"];
  const auto col = [&](const std::string& name) {
    for (std::size_t i = 0; i < cols.size(); ++i)
      if (cols[i] == name) return i;
    FAIL("no index column " << name);
    return std::size_t(0);
  };
  // the list's entries in order (the example list's lines)
  const std::vector<std::string> names = {"short", "four", "pair", "six", "sentence_c8"};
  for (const auto& row : index_rows(pack)) {
    const std::string dir = folders + "/" + names.at(std::size_t(row[0]));
    CAPTURE(dir);
    CHECK(row[col("exit_code")] == 0);
    const std::size_t O = m["files"]["context.npy"]["cols"].get<std::size_t>();
    CHECK(slice(pack + "/context.npy", row[col("context_row")], row[col("context_rows")], O * 4) ==
          npy_data(dir + "/context.npy"));
    CHECK(slice(pack + "/attention.npy", row[col("attention_offset")], row[col("attention_count")],
                4) == npy_data(dir + "/attention.npy"));
    for (const auto& [file, item] : {std::pair<std::string, std::size_t>{"topk_values", 4},
                                     {"topk_indices", 8},
                                     {"summary", 4},
                                     {"key_stats", 4}}) {
      const std::size_t width = m["files"][file + ".npy"]["cols"].get<std::size_t>();
      CHECK(slice(pack + "/" + file + ".npy", row[col(file + "_row")], row[col(file + "_rows")],
                  width * item) == npy_data(dir + "/" + file + ".npy"));
    }
  }
}

bool python_numpy() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  return ok;
}

}  // namespace

TEST_CASE("cli_pack: two shards' packs hold each input's folder files byte for byte; merged") {
  attn::test::TempDir t;
  const std::string list = source_path("docs/list_example/inputs.txt");
  const std::string outputs = "--top-k 2 --summary --key-stats";
  auto folders = run(batch_cmd(list, t / "folders", outputs));
  REQUIRE_MESSAGE(folders.exit_code == 0, folders.err);
  for (int k : {0, 1}) {
    auto r =
        run(batch_cmd(list, t / "packed", outputs + " --pack --shard " + std::to_string(k) + "/2"));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.empty());
  }
  // No folder per input, no batch file: the packs and DIR's manifest.
  CHECK_FALSE(fs::exists(t / "packed/short"));
  for (const char* pack : {"packed/pack-0-of-2", "packed/pack-1-of-2"}) {
    CAPTURE(pack);
    for (const char* file :
         {"context.npy", "attention.npy", "topk_values.npy", "topk_indices.npy", "summary.npy",
          "key_stats.npy", "index.npy", "index.csv", "manifest.json"})
      CHECK(fs::exists(t / (std::string(pack) + "/" + file)));
    check_pack_against_folders(t / pack, t / "folders");
  }
  // Shard 0 of 2: list entries 0, 2, 4 (short, pair, sentence_c8), in list order.
  const auto rows = index_rows(t / "packed/pack-0-of-2");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0][0] == 0);
  CHECK(rows[1][0] == 2);
  CHECK(rows[2][0] == 4);
  // pair.npy is (2, 5, C): B 2, S 5, T 5, and 10 context rows.
  CHECK(rows[1][2] == 2);
  CHECK(rows[1][3] == 5);
  CHECK(rows[1][4] == 5);
  CHECK(rows[1][6] == 10);
  // Each data file's header counts its committed rows: (R, O) with R the rows' sum.
  const attn::Tensor ctx = attn::read_npy_f32(t / "packed/pack-0-of-2/context.npy", false);
  CHECK(ctx.shape == std::vector<std::size_t>{3 + 10 + 6, 8});

  auto merged = run(bin() + " -q --merge-shards " + q(t / "packed"));
  REQUIRE_MESSAGE(merged.exit_code == 0, merged.err);
  const std::string csv = read_text(t / "packed/index.csv");
  CHECK(csv.rfind("name,path,pack,list_index,line,", 0) == 0);
  CHECK(csv.find("\nshort,") != std::string::npos);
  CHECK(csv.find(",pack-1-of-2,1,") != std::string::npos);  // four.npy, entry 1, in shard 1
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 6);

  // A rerun packs nothing again and leaves the packs byte for byte.
  const auto before = attn::test::snapshot(t / "packed/pack-0-of-2");
  auto again = run(batch_cmd(list, t / "packed", outputs + " --pack --shard 0/2"));
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  CHECK(attn::test::snapshot(t / "packed/pack-0-of-2") == before);
}

TEST_CASE("cli_pack: the merge names a missing input and the shard to resubmit") {
  attn::test::TempDir t;
  const std::string list = source_path("docs/list_example/inputs.txt");
  REQUIRE(run(batch_cmd(list, t / "packed", "--pack --shard 0/2")).exit_code == 0);
  check_cli_failure(run(bin() + " --merge-shards " + q(t / "packed")), 66,
                    {"2 of 5 inputs have no result", "four.npy", "resubmit shard(s) 1 of 2"});
  CHECK_FALSE(fs::exists(t / "packed/index.csv"));
}

TEST_CASE("cli_pack: a run killed at a commit and rerun gives the packs of a clean run") {
  attn::test::TempDir t;
  // 70 short inputs of the warner config's width (C = 8): more than one
  // commit group (64 inputs or 1 s) however fast the machine, so the kill at
  // the second commit leaves a committed group and one written, not committed.
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::string list_text;
  for (int i = 0; i < 70; ++i) {
    attn::Tensor x(std::vector<std::size_t>{std::size_t(2 + i % 4), 8});
    for (float& v : x.data) v = normal(rng);
    const std::string name = "x_" + std::to_string(i) + ".npy";
    attn::test::write_text(t / name, attn::encode_npy(x));
    list_text += name + "\n";
  }
  attn::test::write_text(t / "list.txt", list_text);
  const std::string args = "-q --threads 1 --config " +
                           attn::test::quoted_config("warner_causal.json") + " --input-list " +
                           q(t / "list.txt") + " --pack --top-k 2";
  auto clean = run(bin() + " " + args + " -o " + q(t / "clean"));
  REQUIRE_MESSAGE(clean.exit_code == 0, clean.err);

  auto killed =
      attn::test::hostile::signalled_at("pack-commit:2", args + " -o " + q(t / "resumed"), "KILL");
  CHECK(killed.exit_code == 137);
  const json committed = read_json(t / "resumed/pack-0-of-1/manifest.json");
  CHECK(committed["inputs_packed"].get<int>() >= 1);
  CHECK(committed["inputs_packed"].get<int>() < 70);
  // The second group's bytes are in the files, beyond what the manifest counts.
  CHECK(fs::file_size(t / "resumed/pack-0-of-1/context.npy") >
        128 + committed["files"]["context.npy"]["bytes"].get<std::size_t>());

  auto rerun = run(bin() + " " + args + " -o " + q(t / "resumed"));
  REQUIRE_MESSAGE(rerun.exit_code == 0, rerun.err);
  for (const char* file : {"context.npy", "attention.npy", "topk_values.npy", "topk_indices.npy",
                           "index.npy", "index.csv"}) {
    CAPTURE(file);
    CHECK(read_text(t / (std::string("resumed/pack-0-of-1/") + file)) ==
          read_text(t / (std::string("clean/pack-0-of-1/") + file)));
  }
  CHECK(attn::test::hostile::temporaries(t / "resumed").empty());
}

TEST_CASE("cli_pack: --keep-going packs no rows for a failure, indexes it, and appends its fix") {
  attn::test::TempDir t;
  const attn::Tensor x = attn::read_npy_f32(source_path("data/sentence_c8.npy"), false);
  attn::Tensor y = x;
  for (float& v : y.data) v = -v;
  attn::test::write_text(t / "x_0.npy", attn::encode_npy(x));
  attn::test::write_text(t / "x_2.npy", "\x93NUMPY not really");
  attn::test::write_text(t / "x_3.npy", attn::encode_npy(y));
  attn::test::write_text(t / "list.txt", "x_0.npy\nx_1.npy\nx_2.npy\nx_3.npy\n");
  const std::string cmd = batch_cmd(t / "list.txt", t / "out", "--pack --keep-going");
  const std::string pack = t / "out/pack-0-of-1";

  auto r = run(cmd);
  CHECK(r.exit_code == 66);  // the first failure's (x_1: missing); x_2's is 65
  CHECK_MESSAGE(r.err.find("2 of 4 inputs failed") != std::string::npos, r.err);
  auto rows = index_rows(pack);
  REQUIRE(rows.size() == 4);
  CHECK(rows[1][9] == 66);
  CHECK(rows[2][9] == 65);
  CHECK(rows[1][6] == 0);  // no context rows
  CHECK(rows[2][6] == 0);
  CHECK(rows[3][5] == rows[0][6]);  // x_3's rows follow x_0's
  const json m = read_json(pack + "/manifest.json");
  CHECK(m["failed"]["x_1"]["exit_code"] == 66);
  CHECK(m["failed"]["x_2"]["exit_code"] == 65);
  CHECK(read_text(pack + "/index.csv").find("x_1.npy") != std::string::npos);
  check_cli_failure(run(bin() + " --merge-shards " + q(t / "out")), 66,
                    {"2 of 4 inputs have no result", "x_1.npy", "x_2.npy"});

  // Fixed: the rerun computes x_1 and x_2 only and appends them.
  attn::test::write_text(t / "x_1.npy", attn::encode_npy(y));
  attn::test::write_text(t / "x_2.npy", attn::encode_npy(x));
  auto again = run(cmd);
  REQUIRE_MESSAGE(again.exit_code == 0, again.err);
  rows = index_rows(pack);
  REQUIRE(rows.size() == 6);
  CHECK(rows[4][0] == 1);
  CHECK(rows[5][0] == 2);
  CHECK(rows[4][9] == 0);
  CHECK(rows[4][5] == 2 * rows[0][6]);  // after x_0's and x_3's rows
  CHECK(read_json(pack + "/manifest.json")["failed"].empty());
  // x_1's rows are its input's run alone.
  auto one =
      run(bin() + " -q --threads 1 --config " + attn::test::quoted_config("warner_causal.json") +
          " --input " + q(t / "x_1.npy") + " -o " + q(t / "one"));
  REQUIRE(one.exit_code == 0);
  CHECK(slice(pack + "/context.npy", rows[4][5], rows[4][6], 8 * 4) ==
        npy_data(t / "one/context.npy"));
  auto merged = run(bin() + " -q --merge-shards " + q(t / "out"));
  REQUIRE_MESSAGE(merged.exit_code == 0, merged.err);
  CHECK(read_text(t / "out/index.csv").find("\nx_2,") != std::string::npos);
}

TEST_CASE("cli_pack: packs and folders never share a DIR; other settings are 73 naming the flag") {
  attn::test::TempDir t;
  const std::string list = source_path("docs/list_example/inputs.txt");
  REQUIRE(run(batch_cmd(list, t / "packed", "--pack --top-k 2")).exit_code == 0);
  check_cli_failure(run(batch_cmd(list, t / "packed", "--pack --top-k 3")), 73,
                    {"--top-k: was 2, now 3"});
  check_cli_failure(run(batch_cmd(list, t / "packed", "--top-k 2")), 73, {"--pack"});
  REQUIRE(run(batch_cmd(list, t / "folders", "")).exit_code == 0);
  check_cli_failure(run(batch_cmd(list, t / "folders", "--pack")), 73, {"--pack"});
  // Outputs whose rows do not concatenate are refused before any work.
  for (const std::string flag : {"--head-stats", "--save q", "--stats"}) {
    CAPTURE(flag);
    check_cli_failure(run(batch_cmd(list, t / "refused", "--pack " + flag)), 64,
                      {flag.substr(0, flag.find(' ')), "--pack"});
  }
  CHECK_FALSE(fs::exists(t / "refused"));
  check_cli_failure(run(bin() + " --config " + attn::test::quoted_config("warner_causal.json") +
                        " --input " + q(source_path("data/sentence_c8.npy")) + " --pack"),
                    64, {"--pack", "--input-list"});
}

TEST_CASE("cli_pack: NumPy memory-maps every packed file and reads an input back") {
  if (!python_numpy()) {
    MESSAGE("skipped: /usr/bin/python3 has no NumPy");
    return;
  }
  attn::test::TempDir t;
  const std::string list = source_path("docs/list_example/inputs.txt");
  REQUIRE(run(batch_cmd(list, t / "packed", "--pack --top-k 2 --summary")).exit_code == 0);
  REQUIRE(run(batch_cmd(list, t / "folders", "--top-k 2 --summary")).exit_code == 0);
  // pair.npy (list entry 2, (2, 5, C)) read back as the README shows, against its folder.
  const std::string script =
      "import numpy as np, sys\n"
      "p, f = sys.argv[1], sys.argv[2]\n"
      "for name in ['context', 'attention', 'topk_values', 'topk_indices', 'summary', 'index']:\n"
      "    a = np.load(p + '/' + name + '.npy', mmap_mode='r')\n"
      "    assert isinstance(a, np.memmap), name\n"
      "index = np.load(p + '/index.npy', mmap_mode='r')\n"
      "i, line, B, S, T, row, rows, off, count = index[2][:9]\n"
      "ctx = np.load(p + '/context.npy', mmap_mode='r')[row:row + rows].reshape(B, S, -1)\n"
      "maps = np.load(p + '/attention.npy', mmap_mode='r')[off:off + count].reshape(B, -1, S, T)\n"
      "assert np.array_equal(ctx, np.load(f + '/pair/context.npy'))\n"
      "assert np.array_equal(maps, np.load(f + '/pair/attention.npy'))\n"
      "print('ok')\n";
  attn::test::write_text(t / "read.py", script);
  auto r = run("/usr/bin/python3 " + q(t / "read.py") + " " + q(t / "packed/pack-0-of-1") + " " +
               q(t / "folders"));
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.out == "ok\n");
}

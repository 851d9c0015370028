// A shard's packed outputs (--pack; docs/packed-shards.md): DIR/pack-K-of-N/
// holds one .npy per output kind however many inputs the shard runs, each
// input's rows appended to the rows before it, plus index.npy / index.csv
// (where each input's rows are) and manifest.json (the committed length of
// every file: the truth after a crash).
//
// Writing: an input's files are first staged as the folder layout writes
// them (so its bytes are the folder layout's), then appended at each file's
// end; commit() makes a group durable: data fsynced, each header's shape
// rewritten in place (the header has room for any shape), index rows
// appended, then manifest.json replaced atomically. A rerun truncates every
// file to the manifest's lengths, so bytes of a group in flight when the run
// died are gone, and skips the inputs the index holds.
//
// Letters: R rows of a file, O out size, M map elements, n index rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "attn/output.h"
#include "modes/input_list_file.h"

namespace app {

// One packed output: rows (R, cols) of its folder-layout file concatenated,
// or with `flat` every element one after the other, (M,).
struct PackedKind {
  std::string name;   // "context.npy", as the folder layout names it
  std::string descr;  // "<f4", "<i8"
  std::size_t item = 4;
  bool flat = false;
};

// index.npy's fixed columns; each kind after context.npy and attention.npy
// adds two ("<stem>_row", "<stem>_rows").
inline constexpr std::size_t kPackIndexColumns = 10;
std::vector<std::string> pack_index_columns(const std::vector<PackedKind>& kinds);

// A field of index.csv: quoted when it holds a comma, a quote or a line break.
std::string pack_csv_field(const std::string& s);

// "pack-K-of-N", and back (nullopt for any other name).
std::string pack_folder_name(std::size_t k, std::size_t n);
std::optional<std::pair<std::size_t, std::size_t>> parse_pack_folder_name(const std::string& name);

class PackWriter {
 public:
  // Opens `dir` (created when absent) for this run: an exclusive lock held
  // until destruction (another run writing it: exit 73), every file cut back
  // to the committed lengths of its manifest.json. Exit 73 when the manifest
  // is another kind's, records other settings than `fingerprint` (naming
  // them), or a file is shorter than it says. kinds[0] is context.npy.
  // `about` (list, shard, config, weights) is written into the manifest.
  PackWriter(std::string dir, std::vector<PackedKind> kinds, nlohmann::json fingerprint,
             nlohmann::json about);
  ~PackWriter();
  PackWriter(const PackWriter&) = delete;
  PackWriter& operator=(const PackWriter&) = delete;

  // True when list entry `list_index` has committed rows (exit code 0).
  bool done(std::size_t list_index) const { return done_.count(list_index) != 0; }

  // Appends an input's staged files (as the folder layout wrote them into
  // `staged`, not committed) after every file's end; its index row (B batch
  // entries, S queries, T keys) waits for commit(). Exit 70 when a staged
  // file is not the .npy its kind expects.
  void append(const attn::OutputDir& staged, const ListEntry& e, std::size_t B, std::size_t S,
              std::size_t T);
  // --keep-going: an input that failed adds no rows; its index row holds the
  // exit code, and the manifest lists it until a rerun packs it.
  void append_failure(const ListEntry& e, int exit_code, const std::string& error);
  std::size_t pending() const { return pending_rows_.size(); }
  // Makes the pending inputs durable (see above). Exit 74 on a write error.
  void commit();

 private:
  struct File {
    PackedKind kind;
    int fd = -1;
    std::string path;
    std::size_t cols = 0;         // columns of a row (unknown, 0, until an input adds one)
    std::uint64_t committed = 0;  // bytes of data committed (after the header)
    std::uint64_t end = 0;        // bytes of data written, committed or not
  };
  std::string dir_;
  std::vector<File> files_;
  nlohmann::json fingerprint_, about_;
  int index_fd_ = -1, csv_fd_ = -1;  // index.npy (locked) and index.csv
  std::size_t index_rows_ = 0;       // committed
  std::uint64_t csv_bytes_ = 0;      // committed
  std::set<std::size_t> done_;
  nlohmann::json failed_ = nlohmann::json::object();  // name -> the failure, until packed
  std::vector<std::int64_t> pending_rows_flat_;
  std::vector<std::size_t> pending_rows_;  // list index of each pending row
  std::string pending_csv_;
  std::size_t columns_ = 0;  // of an index row
  void open_all(const nlohmann::json& manifest);
  void write_header(int fd, const std::string& path, const std::string& descr,
                    const std::vector<std::uint64_t>& shape);
  void write_manifest();
};

// A pack's committed index, for the merge: its manifest and the rows of
// index.npy it counts, each pack_index_columns(...) wide; a null manifest
// and no rows when nothing was committed. Exit 65 when the pack's files do
// not hold what its manifest says.
struct PackIndex {
  nlohmann::json manifest;
  std::size_t columns = 0;
  std::vector<std::int64_t> rows;  // n * columns
};
PackIndex read_pack_index(const std::string& dir);

}  // namespace app

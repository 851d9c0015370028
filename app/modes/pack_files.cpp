// A shard's packed outputs: the files, their commit and their resumption
// (pack_files.h).
//
// Letters: R rows of a file, O out size, M map elements, n index rows.
#include "modes/pack_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "attn/error.h"
#include "attn/escape.h"
#include "attn/files.h"
#include "modes/run_fingerprint.h"

namespace app {
namespace {

using attn::Error;
using attn::Exit;
using nlohmann::json;

constexpr const char* kPackManifestKind = "attn-run pack";
constexpr int kPackManifestFormat = 1;
constexpr std::size_t kPackHeaderBytes = 128;  // any shape up to 2^63 rows fits
constexpr std::size_t kMaxPackManifestBytes = std::size_t(64) << 20;
constexpr std::size_t kStagedHeaderMax = 10000;  // NumPy's own cap (CONTRACT.md)

std::string errno_message() { return std::strerror(errno); }

// A .npy header of exactly kPackHeaderBytes (version 1.0, padded with spaces
// as NumPy pads), so a larger shape is later written over it in place.
std::string pack_npy_header(const std::string& descr, const std::vector<std::uint64_t>& shape) {
  std::string dims;
  for (std::uint64_t d : shape) dims += std::to_string(d) + ", ";
  if (shape.size() > 1)
    dims.resize(dims.size() - 2);  // (R, O); a 1-D shape keeps "(M,)"
  else if (!dims.empty())
    dims.resize(dims.size() - 1);
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  dict.resize(kPackHeaderBytes - 10 - 1, ' ');
  dict += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += char(dict.size() & 0xff);
  out += char(dict.size() >> 8);
  return out + dict;
}

void pwrite_all(int fd, const void* data, std::size_t n, std::uint64_t at,
                const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, off_t(at));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw Error(Exit::io, attn::printable(path) + ": cannot write: " + errno_message());
    p += w;
    n -= std::size_t(w);
    at += std::uint64_t(w);
  }
}

void sync_file(int fd, const std::string& path) {
  if (::fdatasync(fd) != 0)
    throw Error(Exit::io, attn::printable(path) + ": cannot write to the disk: " + errno_message());
}

void truncate_file(int fd, std::uint64_t bytes, const std::string& path) {
  if (::ftruncate(fd, off_t(bytes)) != 0)
    throw Error(Exit::io, attn::printable(path) + ": cannot truncate: " + errno_message());
}

std::uint64_t file_size(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? std::uint64_t(st.st_size) : 0;
}

int open_pack_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(Exit::cant_create, attn::printable(path) + ": cannot open: " + errno_message());
  return fd;
}

// A staged .npy of the folder layout: where its data starts, its dtype and shape.
struct StagedNpy {
  std::size_t data_offset = 0;
  std::string descr;
  std::vector<std::uint64_t> shape;
};

StagedNpy read_staged_header(int fd, const std::string& path) {
  std::string head(kStagedHeaderMax + 12, '\0');
  const ssize_t got = ::pread(fd, head.data(), head.size(), 0);
  const auto bad = [&](const std::string& what) {
    return Error(Exit::software, attn::printable(path) + ": staged file " + what);
  };
  if (got < 12 || head.compare(0, 6, "\x93NUMPY") != 0) throw bad("is not a .npy");
  const auto byte = [&](std::size_t i) { return std::size_t(std::uint8_t(head[i])); };
  const bool v1 = head[6] == 1;
  const std::size_t len =
      v1 ? byte(8) | byte(9) << 8 : byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
  StagedNpy s;
  s.data_offset = (v1 ? 10 : 12) + len;
  if (s.data_offset > std::size_t(got)) throw bad("has a header longer than expected");
  const std::string dict = head.substr(v1 ? 10 : 12, len);
  const auto descr = dict.find("'descr': '");
  const auto shape = dict.find("'shape': (");
  if (descr == std::string::npos || shape == std::string::npos) throw bad("has no descr or shape");
  s.descr = dict.substr(descr + 10, dict.find('\'', descr + 10) - descr - 10);
  std::size_t i = shape + 10;
  while (i < dict.size() && dict[i] != ')') {
    if (dict[i] < '0' || dict[i] > '9') {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < dict.size() && dict[end] >= '0' && dict[end] <= '9') ++end;
    s.shape.push_back(std::stoull(dict.substr(i, end - i)));
    i = end;
  }
  return s;
}

// `bytes` bytes from `in` at `from` to `out` at `to`: in the kernel where it
// can (copy_file_range), else through a buffer.
void copy_bytes(int in, std::uint64_t from, int out, std::uint64_t to, std::uint64_t bytes,
                const std::string& path) {
  while (bytes > 0) {
    loff_t a = loff_t(from), b = loff_t(to);
    const ssize_t n = ::copy_file_range(in, &a, out, &b, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // not supported here (or a short source): the buffer below
    from += std::uint64_t(n), to += std::uint64_t(n), bytes -= std::uint64_t(n);
  }
  std::vector<char> buffer(std::size_t(1) << 20);
  while (bytes > 0) {
    const std::size_t want = std::size_t(std::min<std::uint64_t>(bytes, buffer.size()));
    const ssize_t n = ::pread(in, buffer.data(), want, off_t(from));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw Error(Exit::io, attn::printable(path) + ": cannot read its staged bytes: " +
                                (n < 0 ? errno_message() : "the file is short"));
    pwrite_all(out, buffer.data(), std::size_t(n), to, path);
    from += std::uint64_t(n), to += std::uint64_t(n), bytes -= std::uint64_t(n);
  }
}

std::string stem(const std::string& name) { return name.substr(0, name.rfind(".npy")); }

json read_pack_manifest(const std::string& path, Exit unreadable) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return nullptr;
  const auto bytes = attn::read_file(path, kMaxPackManifestBytes);
  json m = json::parse(bytes.begin(), bytes.end(), nullptr, false);
  if (!m.is_object() || m.value("kind", "") != kPackManifestKind ||
      m.value("format", 0) != kPackManifestFormat || !m.contains("files") ||
      !m["files"].is_object() || !m.contains("index") || !m["index"].is_object())
    throw Error(unreadable, attn::printable(path) +
                                ": not the manifest of an attn-run --pack shard; use another "
                                "--out-dir, or remove the folder to start over");
  return m;
}

}  // namespace

// A CSV field: quoted when it holds a comma, a quote or a line break.
std::string pack_csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::vector<std::string> pack_index_columns(const std::vector<PackedKind>& kinds) {
  std::vector<std::string> cols = {"list_index",
                                   "line",
                                   "batch",
                                   "queries",
                                   "keys",
                                   "context_row",
                                   "context_rows",
                                   "attention_offset",
                                   "attention_count",
                                   "exit_code"};
  for (const PackedKind& k : kinds)
    if (k.name != "context.npy" && k.name != "attention.npy") {
      cols.push_back(stem(k.name) + "_row");
      cols.push_back(stem(k.name) + "_rows");
    }
  return cols;
}

std::string pack_folder_name(std::size_t k, std::size_t n) {
  return "pack-" + std::to_string(k) + "-of-" + std::to_string(n);
}

std::optional<std::pair<std::size_t, std::size_t>> parse_pack_folder_name(const std::string& name) {
  if (name.rfind("pack-", 0) != 0) return std::nullopt;
  const std::string mid = name.substr(5);
  const auto of = mid.find("-of-");
  const auto number = [](const std::string& s) -> std::optional<std::size_t> {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    return std::stoul(s);
  };
  if (of == std::string::npos) return std::nullopt;
  const auto k = number(mid.substr(0, of)), n = number(mid.substr(of + 4));
  if (!k || !n) return std::nullopt;
  return std::pair{*k, *n};
}

PackWriter::PackWriter(std::string dir, std::vector<PackedKind> kinds, json fingerprint, json about)
    : dir_(std::move(dir)), fingerprint_(std::move(fingerprint)), about_(std::move(about)) {
  { attn::OutputDir folder(dir_); }  // created when absent; a killed run's temporaries removed
  const std::string index_path = dir_ + "/index.npy";
  index_fd_ = open_pack_file(index_path);
  // One writer per pack for the whole run (a shard run twice at once).
  while (::flock(index_fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    throw Error(Exit::cant_create,
                attn::printable(dir_) +
                    ": another attn-run is writing this pack (it holds index.npy's lock); "
                    "wait for it, or give this run another --out-dir");
  }
  for (PackedKind& k : kinds) {
    File f;
    f.path = dir_ + "/" + k.name;
    f.kind = std::move(k);
    files_.push_back(std::move(f));
  }
  const std::string manifest_path = dir_ + "/manifest.json";
  const json m = read_pack_manifest(manifest_path, Exit::cant_create);
  if (!m.is_null())
    check_same_settings(m.value("fingerprint", json()), fingerprint_, manifest_path);
  std::vector<PackedKind> names;
  for (const File& f : files_) names.push_back(f.kind);
  columns_ = pack_index_columns(names).size();
  open_all(m);
}

PackWriter::~PackWriter() {
  for (File& f : files_)
    if (f.fd >= 0) ::close(f.fd);
  if (csv_fd_ >= 0) ::close(csv_fd_);
  if (index_fd_ >= 0) ::close(index_fd_);  // the lock goes with it
}

void PackWriter::write_header(int fd, const std::string& path, const std::string& descr,
                              const std::vector<std::uint64_t>& shape) {
  const std::string h = pack_npy_header(descr, shape);
  pwrite_all(fd, h.data(), h.size(), 0, path);
}

void PackWriter::open_all(const json& m) {
  const std::string manifest_path = dir_ + "/manifest.json";
  const auto damaged = [&](const std::string& path, const std::string& what) {
    return Error(Exit::cant_create, attn::printable(path) + ": " + what + " than " +
                                        attn::printable(manifest_path) +
                                        " committed; the pack is damaged: remove " +
                                        attn::printable(dir_) + " and run this shard again");
  };
  for (File& f : files_) {
    f.fd = open_pack_file(f.path);
    if (!m.is_null()) {
      const json& entry = m["files"].value(f.kind.name, json());
      if (!entry.is_object()) throw damaged(f.path, "not listed, or other settings");
      f.committed = entry.value("bytes", std::uint64_t(0));
      f.cols = entry.value("cols", std::size_t(0));
    }
    if (f.committed && file_size(f.fd) < kPackHeaderBytes + f.committed)
      throw damaged(f.path, "shorter");
    // The bytes of a group in flight when a run died go; its header says the committed shape.
    truncate_file(f.fd, kPackHeaderBytes + f.committed, f.path);
    f.end = f.committed;
    const std::uint64_t elements = f.committed / f.kind.item;
    write_header(f.fd, f.path, f.kind.descr,
                 f.kind.flat ? std::vector<std::uint64_t>{elements}
                             : std::vector<std::uint64_t>{f.cols ? elements / f.cols : 0, f.cols});
  }
  const std::string index_path = dir_ + "/index.npy", csv_path = dir_ + "/index.csv";
  index_rows_ = m.is_null() ? 0 : m["index"].value("rows", std::size_t(0));
  const std::uint64_t index_bytes = std::uint64_t(index_rows_) * columns_ * 8;
  if (index_rows_ && file_size(index_fd_) < kPackHeaderBytes + index_bytes)
    throw damaged(index_path, "shorter");
  truncate_file(index_fd_, kPackHeaderBytes + index_bytes, index_path);
  write_header(index_fd_, index_path, "<i8", {index_rows_, columns_});
  std::vector<std::int64_t> rows(index_rows_ * columns_);
  if (!rows.empty() &&
      ::pread(index_fd_, rows.data(), index_bytes, kPackHeaderBytes) != ssize_t(index_bytes))
    throw damaged(index_path, "shorter");
  for (std::size_t r = 0; r < index_rows_; ++r)
    if (rows[r * columns_ + 9] == 0) done_.insert(std::size_t(rows[r * columns_]));
  csv_fd_ = open_pack_file(csv_path);
  csv_bytes_ = m.is_null() ? 0 : m["index"].value("csv_bytes", std::uint64_t(0));
  if (file_size(csv_fd_) < csv_bytes_) throw damaged(csv_path, "shorter");
  truncate_file(csv_fd_, csv_bytes_, csv_path);
  if (csv_bytes_ == 0) {  // a new pack: the header line
    std::vector<PackedKind> names;
    for (const File& f : files_) names.push_back(f.kind);
    std::string line = "name,path";
    for (const std::string& c : pack_index_columns(names)) line += "," + c;
    line += ",error\n";
    pwrite_all(csv_fd_, line.data(), line.size(), 0, csv_path);
    csv_bytes_ = line.size();
  }
  if (!m.is_null() && m.contains("failed") && m["failed"].is_object()) failed_ = m["failed"];
}

void PackWriter::append(const attn::OutputDir& staged, const ListEntry& e, std::size_t B,
                        std::size_t S, std::size_t T) {
  std::vector<std::int64_t> row(columns_, 0);
  row[0] = std::int64_t(e.index), row[1] = std::int64_t(e.line);
  row[2] = std::int64_t(B), row[3] = std::int64_t(S), row[4] = std::int64_t(T);
  std::size_t extra = kPackIndexColumns;
  std::vector<std::uint64_t> ends;  // to take back a half-appended input
  for (const File& f : files_) ends.push_back(f.end);
  try {
    for (File& f : files_) {
      const std::string path = staged.staged_path(f.kind.name);
      if (path.empty())
        throw Error(Exit::software, attn::printable(f.path) + ": the input " +
                                        attn::printable(e.path) + " staged no " + f.kind.name);
      const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (in < 0)
        throw Error(Exit::io, attn::printable(path) + ": cannot open: " + errno_message());
      std::uint64_t bytes = 0, first = 0, count = 0;
      try {
        const StagedNpy npy = read_staged_header(in, path);
        std::uint64_t elements = 1;
        for (std::uint64_t d : npy.shape) elements *= d;
        bytes = elements * f.kind.item;
        const std::size_t cols = f.kind.flat || npy.shape.empty() ? 1 : npy.shape.back();
        if (npy.descr != f.kind.descr || file_size(in) != npy.data_offset + bytes ||
            (!f.kind.flat && f.cols && cols != f.cols))
          throw Error(Exit::software, attn::printable(path) + ": staged " + npy.descr +
                                          " file is not the " + f.kind.name + " of this pack");
        if (!f.kind.flat) f.cols = cols;
        copy_bytes(in, npy.data_offset, f.fd, kPackHeaderBytes + f.end, bytes, f.path);
        const std::uint64_t unit = f.kind.flat ? f.kind.item : f.kind.item * f.cols;
        first = f.end / unit, count = bytes / unit;
      } catch (...) {
        ::close(in);
        throw;
      }
      ::close(in);
      std::size_t at = extra;
      if (f.kind.name == "context.npy")
        at = 5;
      else if (f.kind.name == "attention.npy")
        at = 7;
      else
        extra += 2;
      row[at] = std::int64_t(first), row[at + 1] = std::int64_t(count);
      f.end += bytes;
    }
  } catch (...) {
    for (std::size_t i = 0; i < files_.size(); ++i) files_[i].end = ends[i];
    throw;
  }
  pending_rows_flat_.insert(pending_rows_flat_.end(), row.begin(), row.end());
  pending_rows_.push_back(e.index);
  pending_csv_ += pack_csv_field(e.name) + "," + pack_csv_field(e.path);
  for (std::int64_t v : row) pending_csv_ += "," + std::to_string(v);
  pending_csv_ += ",\n";
  failed_.erase(e.name);
}

void PackWriter::append_failure(const ListEntry& e, int exit_code, const std::string& error) {
  std::vector<std::int64_t> row(columns_, 0);
  row[0] = std::int64_t(e.index), row[1] = std::int64_t(e.line), row[9] = exit_code;
  std::size_t extra = kPackIndexColumns;
  for (const File& f : files_) {  // where its rows would have started; none added
    const std::uint64_t unit =
        f.kind.flat ? f.kind.item : f.kind.item * std::max<std::size_t>(1, f.cols);
    const std::size_t at = f.kind.name == "context.npy"     ? 5
                           : f.kind.name == "attention.npy" ? 7
                                                            : (extra += 2) - 2;
    row[at] = std::int64_t(f.end / unit);
  }
  pending_rows_flat_.insert(pending_rows_flat_.end(), row.begin(), row.end());
  pending_rows_.push_back(e.index);
  pending_csv_ += pack_csv_field(e.name) + "," + pack_csv_field(e.path);
  for (std::int64_t v : row) pending_csv_ += "," + std::to_string(v);
  pending_csv_ += "," + pack_csv_field(error) + "\n";
  failed_[e.name] = {{"path", e.path},
                     {"line", e.line},
                     {"index", e.index},
                     {"error", error},
                     {"exit_code", exit_code}};
}

void PackWriter::commit() {
  if (pending_rows_.empty()) return;
  // The data first, then the headers that count it: a header never counts
  // bytes that are not on the disk.
  for (File& f : files_) {
    sync_file(f.fd, f.path);
    const std::uint64_t elements = f.end / f.kind.item;
    write_header(f.fd, f.path, f.kind.descr,
                 f.kind.flat ? std::vector<std::uint64_t>{elements}
                             : std::vector<std::uint64_t>{f.cols ? elements / f.cols : 0, f.cols});
    sync_file(f.fd, f.path);
  }
  const std::string index_path = dir_ + "/index.npy", csv_path = dir_ + "/index.csv";
  const std::size_t rows = index_rows_ + pending_rows_.size();
  pwrite_all(index_fd_, pending_rows_flat_.data(), pending_rows_flat_.size() * 8,
             kPackHeaderBytes + std::uint64_t(index_rows_) * columns_ * 8, index_path);
  write_header(index_fd_, index_path, "<i8", {rows, columns_});
  sync_file(index_fd_, index_path);
  pwrite_all(csv_fd_, pending_csv_.data(), pending_csv_.size(), csv_bytes_, csv_path);
  sync_file(csv_fd_, csv_path);
  attn::test_pause_point("pack-commit");  // everything written, the manifest not yet
  index_rows_ = rows;
  csv_bytes_ += pending_csv_.size();
  for (File& f : files_) f.committed = f.end;
  for (std::size_t r = 0; r < pending_rows_.size(); ++r)
    if (pending_rows_flat_[r * columns_ + 9] == 0) done_.insert(pending_rows_[r]);
  write_manifest();  // the commit
  pending_rows_.clear();
  pending_rows_flat_.clear();
  pending_csv_.clear();
}

void PackWriter::write_manifest() {
  json m;
  m["kind"] = kPackManifestKind;
  m["format"] = kPackManifestFormat;
  m["attn_run_version"] = ATTN_VERSION;
  for (const auto& [key, value] : about_.items()) m[key] = value;
  m["fingerprint"] = fingerprint_;
  m["files"] = json::object();
  for (const File& f : files_) {
    const std::uint64_t elements = f.committed / f.kind.item;
    m["files"][f.kind.name] = {
        {"bytes", f.committed},
        {"cols", f.cols},
        {"dtype", f.kind.descr == "<i8" ? "int64" : "float32"},
        {"shape", f.kind.flat ? json::array({elements})
                              : json::array({f.cols ? elements / f.cols : 0, f.cols})}};
  }
  std::vector<PackedKind> names;
  for (const File& f : files_) names.push_back(f.kind);
  m["index"] = {
      {"rows", index_rows_}, {"columns", pack_index_columns(names)}, {"csv_bytes", csv_bytes_}};
  m["inputs_packed"] = done_.size();
  m["failed"] = failed_;
  attn::OutputDir out(dir_);
  out.add("manifest.json", m.dump(2) + "\n");
  out.commit();
}

PackIndex read_pack_index(const std::string& dir) {
  PackIndex p;
  const std::string manifest_path = dir + "/manifest.json", index_path = dir + "/index.npy";
  p.manifest = read_pack_manifest(manifest_path, Exit::data);
  if (p.manifest.is_null()) return p;  // nothing committed yet
  const json& index = p.manifest["index"];
  const std::size_t rows = index.value("rows", std::size_t(0));
  p.columns =
      index.contains("columns") && index["columns"].is_array() ? index["columns"].size() : 0;
  if (p.columns < kPackIndexColumns)
    throw Error(Exit::data, attn::printable(manifest_path) + ": index.columns: expected at least " +
                                std::to_string(kPackIndexColumns) + " names");
  std::size_t size = 0;
  const int fd = attn::open_regular_file(index_path, size);
  const std::uint64_t bytes = std::uint64_t(rows) * p.columns * 8;
  p.rows.resize(rows * p.columns);
  const bool ok =
      size >= kPackHeaderBytes + bytes &&
      (bytes == 0 || ::pread(fd, p.rows.data(), bytes, kPackHeaderBytes) == ssize_t(bytes));
  ::close(fd);
  if (!ok)
    throw Error(Exit::data, attn::printable(index_path) + ": holds fewer than the " +
                                std::to_string(rows) + " rows its manifest committed");
  return p;
}

}  // namespace app

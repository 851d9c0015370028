// A regular file mapped read-only (private to lib/src). Mapping reads
// nothing: headers are parsed from the mapping, and a tensor's pages are
// faulted in only when it is converted, then dropped again. Opening has the
// same safety checks as read_file (files.h): regular files only, checked on
// the open descriptor, so a FIFO or /dev/zero never hangs or fills memory.
//
// A file truncated while it is mapped would kill the process with SIGBUS
// at the first page past its new end. A SIGBUS handler (installed with the
// first mapping) puts a page of zeros there instead and marks the file
// lost; every reader checks the mark after reading (check_intact, reading
// below), so the run ends with a clean error naming the file (Exit::no_input)
// and never uses the zeros. Faults outside attn-run's mappings go to the
// handler that was there before (or kill as SIGBUS does).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "containers/stored.h"

namespace attn::detail {

// A file's first and last bytes, read with pread before anything is mapped
// (CONTRACT.md "File safety rules": a header is checked before any data).
struct FileEnds {
  const std::uint8_t* head;  // the first head_n bytes
  std::size_t head_n;        // min(size, kEndBytes)
  const std::uint8_t* tail;  // the last tail_n bytes (a zip's end record)
  std::size_t tail_n;        // min(size, kEndBytes)
  std::size_t size;          // of the whole file
};
// Enough for the largest .npy header (10,000 bytes) and a zip end record with
// the longest comment (22 + 65,535 bytes).
constexpr std::size_t kEndBytes = 22 + 65535;

class MappedFile {
 public:
  // A reader's check of a file's ends; throws the reader's error (Exit::data).
  using EndsCheck = std::function<void(const FileEnds&)>;

  // Exit::no_input when missing, a folder, a device or unreadable. A FIFO
  // (a named pipe, bash's <(...)) holding a .npy or a JSON array is read once
  // into memory, bounded as standard input is: the .npy header first, then
  // the data it declares (Exit::unavailable when more than memory allows), a
  // JSON array up to 1 GiB; anything else is Exit::data at its first bytes.
  // `check` sees the file's first and last bytes before the file is mapped,
  // so a huge file with a bad header fails at once, whatever its size and
  // the address space allowed. A file the address space cannot map is
  // Exit::unavailable saying how large it is.
  // With `whole` false nothing is mapped (data() is null): the caller maps
  // the spans it reads with window() (a GGUF file: its header and the
  // layer's tensors, not the whole file).
  static std::shared_ptr<const MappedFile> open(const std::string& path,
                                                const EndsCheck& check = {}, bool whole = true);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  const std::uint8_t* data() const { return data_; }  // the whole file, or null (see open)
  std::size_t size() const { return size_; }

  // Bytes [offset, offset + length) of the file mapped on their own (the
  // pages around them), while the returned handle lives. Exit::unavailable
  // when the address space cannot map them.
  class Window;
  std::shared_ptr<const Window> window(std::size_t offset, std::size_t length) const;

  // Exit::no_input naming `name` and the file when it was truncated while
  // in use: it is now shorter than when it was opened (touching the lost
  // pages would fault), or a read of the mapping faulted already.
  void check_intact(const std::string& name) const;
  // Drop the pages of [offset, offset + length) from memory (they are read
  // again from the file if touched later).
  void release(std::size_t offset, std::size_t length) const;
  // [offset, offset + length) into dst by pread of the file at the path,
  // opened again (no descriptor stays open); false when the path now holds
  // another file or this one got shorter (the mapping's check_intact then
  // names it). Exit::no_input naming `name` when the read fails.
  bool read(std::size_t offset, std::size_t length, void* dst, const std::string& name) const;
  // Every span so, the file opened once.
  bool read(const ReadSpan* spans, std::size_t n, const std::string& name) const;

 private:
  MappedFile() = default;
  std::vector<std::uint8_t> stream_;       // a FIFO's bytes (data_ points here), else empty
  int fd_ = -1;                            // opened without `whole`: for window()
  mutable std::atomic<bool> lost_{false};  // a read faulted past the file's end (SIGBUS)
  void* slot_ = nullptr;                   // the whole mapping's entry in the SIGBUS list
  bool streamed_ = false;
  std::string path_;
  unsigned long long dev_ = 0, ino_ = 0;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

class MappedFile::Window {
 public:
  Window(const std::uint8_t* data, void* base, std::size_t mapped, void* slot)
      : data_(data), base_(base), mapped_(mapped), slot_(slot) {}
  ~Window();
  Window(const Window&) = delete;
  Window& operator=(const Window&) = delete;
  const std::uint8_t* data() const { return data_; }  // the bytes asked for

 private:
  const std::uint8_t* data_;
  void* base_;          // the mapping (page-aligned)
  std::size_t mapped_;  // its length
  void* slot_;          // its entry in the SIGBUS handler's list
};

// Runs f, which reads `file`'s mapping, and returns what it returns; when the
// file was truncated meanwhile, that is the error (check_intact's), not what
// f made of the zeros it read (a malformed header, say).
template <class F>
auto reading(const MappedFile& file, const std::string& name, F&& f) -> decltype(f()) {
  try {
    auto result = f();
    file.check_intact(name);
    return result;
  } catch (const std::exception&) {
    file.check_intact(name);
    throw;
  }
}

// Test hook: with ATTN_TEST_PAUSE_AT=read (or read:N) the process stops
// itself (SIGSTOP) the first (Nth) time a tensor's bytes are about to be read
// from a file, after the checks that precede the read, so a test can
// truncate the file at the worst moment.
void test_pause_before_read();

// A span of a mapped file holding one tensor's data.
class MappedRegion final : public Region {
 public:
  MappedRegion(std::shared_ptr<const MappedFile> f, std::size_t offset, std::size_t length)
      : file_(std::move(f)), offset_(offset), length_(length) {}
  ByteView bytes(const std::string& name) const override;
  void done(std::size_t offset, std::size_t length) const override;
  bool read(std::size_t offset, std::size_t length, void* dst,
            const std::string& name) const override;
  bool read_spans(const ReadSpan* spans, std::size_t n, const std::string& name) const override;
  void check_read(const std::string& name) const override { file_->check_intact(name); }

 private:
  std::shared_ptr<const MappedFile> file_;
  std::size_t offset_, length_;
};

}  // namespace attn::detail

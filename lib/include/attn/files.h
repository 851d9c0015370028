// Reading whole files safely: regular files only (a folder, a FIFO or
// /dev/zero never hangs or exhausts memory), bounded size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn {

// Whole contents of a regular file, or of a FIFO (a named pipe, <(...))
// read to its end. Exit::no_input when missing, a folder, a device or socket,
// or unreadable; Exit::data when larger than max_bytes.
std::vector<std::uint8_t> read_file(const std::string& path, std::size_t max_bytes);

// A read-only descriptor of a regular file (with its size) or of a FIFO
// (fifo set, size 0; opened blocking, so a named pipe waits for its writer);
// the checks and errors of read_file. The caller closes it.
int open_file_or_fifo(const std::string& path, std::size_t& size, bool& fifo);

// Reads a FIFO opened by open_file_or_fifo (non-blocking): while a writer is
// connected it waits for data as long as it takes; with no writer at all for
// kWriterWaitMs it is Exit::no_input (a FIFO nobody writes to never hangs a
// run). 0 at the end of the stream.
class FifoReader {
 public:
  static constexpr int kWriterWaitMs = 3000;
  FifoReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  std::size_t read(void* dst, std::size_t n);  // at least 1 byte, or 0 at the end

 private:
  int fd_;
  std::string name_;
  bool writer_seen_ = false;
};

// Everything the FIFO `fd` holds up to its end, at most max_bytes
// (Exit::data past that, naming `name`).
std::vector<std::uint8_t> read_stream(int fd, const std::string& name, std::size_t max_bytes);

// A read-only descriptor (O_CLOEXEC, non-blocking open) of a regular file
// and its size, with the same checks and errors as read_file; the caller
// closes it.
int open_regular_file(const std::string& path, std::size_t& size);

// Whole standard input, at most max_bytes (Exit::data past that).
std::vector<std::uint8_t> read_stdin(std::size_t max_bytes);

// `path` resolved against `base_dir` unless absolute (config-relative paths).
std::string resolve_path(const std::string& base_dir, const std::string& path);

bool is_directory(const std::string& path);

}  // namespace attn

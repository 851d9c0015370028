// Reading whole files without surprises. The path is checked with stat()
// first (for a clear message), then opened non-blocking and checked again
// with fstat() on the open descriptor, so only a regular file of known size
// is read as a file: /dev/zero or a folder can neither hang us nor fill
// memory. A FIFO (a named pipe, or bash's <(...) process substitution) is
// read once, as standard input is: to its end, bounded by the same limit.
#include "attn/files.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "attn/error.h"

namespace attn {

namespace {

[[noreturn]] void fail_open(const std::string& path, int err) {
  if (err == ENOENT || err == ENOTDIR) throw Error(Exit::no_input, path + ": no such file");
  throw Error(Exit::no_input, path + ": cannot open (" + std::strerror(err) + ")");
}

void check_kind(const std::string& path, const struct stat& st, bool fifo_ok = false) {
  if (S_ISDIR(st.st_mode)) throw Error(Exit::no_input, path + ": is a folder, expected a file");
  if (fifo_ok && S_ISFIFO(st.st_mode)) return;
  if (S_ISFIFO(st.st_mode))
    throw Error(Exit::no_input,
                path +
                    ": a FIFO, expected a regular file (this file is read in pieces, more "
                    "than once)");
  if (!S_ISREG(st.st_mode))
    throw Error(Exit::no_input,
                path + ": not a regular file (a device or socket), expected a file");
}

// Closes the descriptor on every path out, exceptions included.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

int open_regular_file(const std::string& path, std::size_t& size) {
  if (path.empty()) throw Error(Exit::no_input, "(empty path): no such file");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) fail_open(path, errno);
  check_kind(path, st);

  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f.fd < 0) fail_open(path, errno);
  // The path may have been replaced between stat() and open(): judge what
  // was actually opened.
  if (::fstat(f.fd, &st) != 0) fail_open(path, errno);
  check_kind(path, st);
  size = static_cast<std::size_t>(st.st_size);
  const int fd = f.fd;
  f.fd = -1;
  return fd;
}

int open_file_or_fifo(const std::string& path, std::size_t& size, bool& fifo) {
  if (path.empty()) throw Error(Exit::no_input, "(empty path): no such file");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) fail_open(path, errno);
  check_kind(path, st, true);
  fifo = S_ISFIFO(st.st_mode);
  if (!fifo) return open_regular_file(path, size);
  // Non-blocking: opening never waits; FifoReader waits for the writer.
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f.fd < 0) fail_open(path, errno);
  if (::fstat(f.fd, &st) != 0) fail_open(path, errno);
  check_kind(path, st, true);
  fifo = S_ISFIFO(st.st_mode);
  size = fifo ? 0 : static_cast<std::size_t>(st.st_size);
  const int fd = f.fd;
  f.fd = -1;
  return fd;
}

std::size_t FifoReader::read(void* dst, std::size_t n) {
  for (;;) {
    const ssize_t r = ::read(fd_, dst, n);
    if (r > 0) {
      writer_seen_ = true;
      return std::size_t(r);
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno != EAGAIN)
      throw Error(Exit::no_input, name_ + ": cannot read (" + std::strerror(errno) + ")");
    if (r == 0 && writer_seen_) return 0;  // the writer closed it: the end
    // No data yet. EAGAIN: a writer is connected, wait for it as long as it
    // takes. 0 before any writer: wait a little for one to connect (a named
    // pipe's writer may open it just after us), then give up.
    if (r < 0) writer_seen_ = true;
    struct pollfd p = {fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, r < 0 ? -1 : kWriterWaitMs);
    if (ready < 0 && errno != EINTR)
      throw Error(Exit::no_input, name_ + ": cannot read (" + std::strerror(errno) + ")");
    if (ready == 0)
      throw Error(Exit::no_input, name_ + ": a FIFO nobody writes to (no writer in " +
                                      std::to_string(kWriterWaitMs / 1000) + " s)");
    if (p.revents & POLLHUP) writer_seen_ = true;  // one came and went: its end is the end
  }
}

std::vector<std::uint8_t> read_stream(int fd, const std::string& name, std::size_t max_bytes) {
  std::vector<std::uint8_t> data;
  std::uint8_t buf[1 << 16];
  FifoReader in(fd, name);
  for (;;) {
    const std::size_t n = in.read(buf, sizeof buf);
    if (n == 0) break;
    if (std::size_t(n) > max_bytes - data.size())
      throw Error(Exit::data, name + ": the stream is longer than the limit of " +
                                  std::to_string(max_bytes) + " bytes");
    data.insert(data.end(), buf, buf + n);
  }
  return data;
}

std::vector<std::uint8_t> read_file(const std::string& path, std::size_t max_bytes) {
  // A FIFO gives its bytes once: a second read of the same path in this run
  // (a config is looked at, then loaded) gets what the first one got, and
  // never opens the pipe again (with its writer gone, that would wait forever).
  static std::mutex m;
  static std::map<std::pair<dev_t, ino_t>, std::vector<std::uint8_t>> seen;
  struct stat before;
  if (!path.empty() && ::stat(path.c_str(), &before) == 0 && S_ISFIFO(before.st_mode)) {
    const std::lock_guard<std::mutex> lock(m);
    const auto it = seen.find({before.st_dev, before.st_ino});
    if (it != seen.end()) {
      if (it->second.size() > max_bytes)
        throw Error(Exit::data, path + ": the stream is longer than the limit of " +
                                    std::to_string(max_bytes) + " bytes");
      return it->second;
    }
  }
  std::size_t size = 0;
  bool fifo = false;
  Fd f;
  f.fd = open_file_or_fifo(path, size, fifo);
  if (fifo) {
    std::vector<std::uint8_t> bytes = read_stream(f.fd, path, max_bytes);
    struct stat st;
    if (::fstat(f.fd, &st) == 0) {
      const std::lock_guard<std::mutex> lock(m);
      seen[{st.st_dev, st.st_ino}] = bytes;
    }
    return bytes;
  }
  if (size > max_bytes)
    throw Error(Exit::data, path + ": file is " + std::to_string(size) +
                                " bytes, more than the limit of " + std::to_string(max_bytes));

  std::vector<std::uint8_t> data(static_cast<std::size_t>(size));
  std::size_t got = 0;
  while (got < data.size()) {
    const std::size_t chunk = std::min<std::size_t>(data.size() - got, std::size_t(1) << 30);
    const ssize_t n = ::read(f.fd, data.data() + got, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(Exit::no_input, path + ": read error (" + std::strerror(errno) + ")");
    }
    if (n == 0)
      throw Error(Exit::no_input, path + ": file shrank while being read (expected " +
                                      std::to_string(size) + " bytes, got " + std::to_string(got) +
                                      ")");
    got += std::size_t(n);
  }
  return data;
}

std::vector<std::uint8_t> read_stdin(std::size_t max_bytes) {
  std::vector<std::uint8_t> data;
  std::uint8_t buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(Exit::no_input,
                  std::string("-: cannot read standard input (") + std::strerror(errno) + ")");
    }
    if (n == 0) break;
    if (std::size_t(n) > max_bytes - data.size())
      throw Error(Exit::data, "-: standard input is longer than the limit of " +
                                  std::to_string(max_bytes) + " bytes");
    data.insert(data.end(), buf, buf + n);
  }
  return data;
}

std::string resolve_path(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty() || path == "-") return path;
  if (base_dir.back() == '/') return base_dir + path;
  return base_dir + "/" + path;
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace attn

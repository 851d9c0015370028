// Reading whole files without surprises. The path is checked with stat()
// first (for a clear message), then opened non-blocking (opening a FIFO for
// reading would otherwise wait for a writer) and checked again with fstat()
// on the open descriptor, so only a regular file of known size is ever read:
// /dev/zero, a FIFO or a folder can neither hang us nor fill memory.
#include "attn/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "attn/error.h"

namespace attn {

namespace {

[[noreturn]] void fail_open(const std::string& path, int err) {
  if (err == ENOENT || err == ENOTDIR) throw Error(Exit::no_input, path + ": no such file");
  throw Error(Exit::no_input, path + ": cannot open (" + std::strerror(err) + ")");
}

void check_kind(const std::string& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode)) throw Error(Exit::no_input, path + ": is a folder, expected a file");
  if (!S_ISREG(st.st_mode))
    throw Error(Exit::no_input,
                path + ": not a regular file (a device, FIFO or socket), expected a file");
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

std::vector<std::uint8_t> read_file(const std::string& path, std::size_t max_bytes) {
  std::size_t size = 0;
  Fd f;
  f.fd = open_regular_file(path, size);
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

#include "cli/stdout_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "attn/error.h"

namespace app {
namespace {
bool g_stdout_closed = false;
}  // namespace

void guard_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", O_RDWR);  // the lowest free number: fd
    if (opened != fd && opened >= 0) ::close(opened);
    if (fd == STDOUT_FILENO) g_stdout_closed = true;
  }
}

void write_stdout(const std::string& bytes) {
  if (g_stdout_closed && !bytes.empty())
    throw attn::Error(attn::Exit::io, std::string("stdout: write failed: ") + std::strerror(EBADF));
  const char* p = bytes.data();
  std::size_t n = bytes.size();
  while (n > 0) {
    ssize_t w = ::write(STDOUT_FILENO, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE) std::_Exit(0);  // the reader is gone: nothing to report
      throw attn::Error(attn::Exit::io,
                        std::string("stdout: write failed: ") + std::strerror(errno));
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace app

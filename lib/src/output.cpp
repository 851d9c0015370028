// All-or-nothing output folder (CONTRACT.md "Outputs", "Exit codes"):
// stage every file as ".<name>.attn-run-tmp-<pid>-<n>" inside the target folder
// (same file system, so rename is atomic), rename them all in commit().
#include "attn/output.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include "attn/error.h"
#include "attn/npy.h"

namespace attn {
namespace {

// Temporaries alive right now, for the signal handler. Fixed-size storage
// because a handler may only do async-signal-safe work (unlink, _exit).
constexpr int kMaxLive = 64;
constexpr int kMaxPath = 4096;
char g_live[kMaxLive][kMaxPath];
std::atomic<bool> g_live_used[kMaxLive];

void live_add(const std::string& path) {
  if (path.size() >= kMaxPath) return;
  for (int i = 0; i < kMaxLive; ++i) {
    if (g_live_used[i].load()) continue;
    std::memcpy(g_live[i], path.c_str(), path.size() + 1);
    g_live_used[i].store(true);
    return;
  }
}

void live_remove(const std::string& path) {
  for (int i = 0; i < kMaxLive; ++i)
    if (g_live_used[i].load() && path == g_live[i]) g_live_used[i].store(false);
}

extern "C" void cleanup_and_exit(int sig) {
  for (int i = 0; i < kMaxLive; ++i)
    if (g_live_used[i].load()) ::unlink(g_live[i]);
  ::_exit(128 + sig);
}

std::string errno_text() { return std::strerror(errno); }

// Full write with EINTR handling; false with errno set on failure.
bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

}  // namespace

void install_cleanup_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = cleanup_and_exit;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

OutputDir::OutputDir(std::string dir) : dir_(std::move(dir)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
    throw Error(Exit::cant_create, dir_ + ": output folder is a file, expected a folder");
  fs::create_directories(dir_, ec);
  if (ec) throw Error(Exit::cant_create, dir_ + ": cannot create output folder: " + ec.message());
  if (::access(dir_.c_str(), W_OK | X_OK) != 0)
    throw Error(Exit::cant_create, dir_ + ": output folder is not writable");
}

OutputDir::~OutputDir() { discard(); }

std::string OutputDir::temp_name(const std::string& name) const {
  static std::atomic<int> counter{0};
  return dir_ + "/." + name + ".attn-run-tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(counter++);
}

static int open_temp(const std::string& temp, const std::string& final_path) {
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(Exit::cant_create, final_path + ": cannot create: " + errno_text());
  return fd;
}

OutputDir::Staged& OutputDir::stage(const std::string& name) {
  Staged s;
  s.final_path = dir_ + "/" + name;
  if (std::filesystem::is_directory(s.final_path))
    throw Error(Exit::cant_create, s.final_path + ": a folder is in the way of the output file");
  s.temp_path = temp_name(name);
  live_add(s.temp_path);
  staged_.push_back(s);
  Staged& st = staged_.back();
  st.fd = open_temp(st.temp_path, st.final_path);
  return st;
}

void OutputDir::add(const std::string& name, const std::string& bytes) {
  Staged& st = stage(name);
  bool ok = write_all(st.fd, bytes.data(), bytes.size()) && ::fsync(st.fd) == 0;
  int saved = errno;
  ::close(st.fd);
  st.fd = -1;
  errno = saved;
  if (!ok) throw Error(Exit::io, st.final_path + ": write failed: " + errno_text());
}

int OutputDir::add_streamed_npy(const std::string& name, const std::vector<std::size_t>& shape) {
  Staged& st = stage(name);
  std::string header = npy_header_f32(shape);
  st.data_offset = header.size();
  std::size_t total = header.size() + Tensor::count(shape) * sizeof(float);
  // Reserve the space now so a full disk fails before the compute, not after.
  int rc = ::posix_fallocate(st.fd, 0, static_cast<off_t>(total));
  if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) {
    errno = rc;
    throw Error(Exit::io, st.final_path + ": cannot reserve " + std::to_string(total) +
                              " bytes: " + errno_text());
  }
  if (rc != 0 && ::ftruncate(st.fd, static_cast<off_t>(total)) != 0)
    throw Error(Exit::io, st.final_path + ": cannot size file: " + errno_text());
  if (::pwrite(st.fd, header.data(), header.size(), 0) != static_cast<ssize_t>(header.size()))
    throw Error(Exit::io, st.final_path + ": write failed: " + errno_text());
  return static_cast<int>(staged_.size() - 1);
}

void OutputDir::write_at(int handle, std::size_t first, const float* values, std::size_t count) {
  const Staged& st = staged_.at(static_cast<std::size_t>(handle));
  const char* p = reinterpret_cast<const char*>(values);
  std::size_t n = count * sizeof(float);
  off_t off = static_cast<off_t>(st.data_offset + first * sizeof(float));
  while (n > 0) {
    ssize_t w = ::pwrite(st.fd, p, n, off);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw Error(Exit::io, st.final_path + ": write failed: " + errno_text());
    }
    p += w;
    off += w;
    n -= static_cast<std::size_t>(w);
  }
}

void OutputDir::commit() {
  for (Staged& s : staged_) {
    if (s.fd < 0) continue;
    bool ok = ::fsync(s.fd) == 0;
    int saved = errno;
    ::close(s.fd);
    s.fd = -1;
    errno = saved;
    if (!ok) throw Error(Exit::io, s.final_path + ": write failed: " + errno_text());
  }
  // The renames are the moment the outputs change: hold SIGINT/SIGTERM/SIGHUP
  // off until all of them are done, so a signal yields the old set or the new
  // set, never a mix. A pending signal is delivered after the unblock.
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  for (Staged& s : staged_) {
    if (::rename(s.temp_path.c_str(), s.final_path.c_str()) != 0) {
      int saved = errno;
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      errno = saved;
      throw Error(Exit::io, s.final_path + ": cannot rename into place: " + errno_text());
    }
    live_remove(s.temp_path);
    s.temp_path.clear();
  }
  for (const std::string& path : stale_) ::unlink(path.c_str());
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  committed_ = true;
  staged_.clear();
}

void OutputDir::discard() {
  for (Staged& s : staged_) {
    if (s.fd >= 0) ::close(s.fd);
    s.fd = -1;
    if (!s.temp_path.empty()) {
      ::unlink(s.temp_path.c_str());
      live_remove(s.temp_path);
    }
  }
  staged_.clear();
}

}  // namespace attn

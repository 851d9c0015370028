// All-or-nothing output folder (CONTRACT.md "Outputs", "Exit codes"):
// stage every file as ".attn-run-tmp-<pid>-<n>" inside the target folder
// (same file system, so rename is atomic), rename them all in commit() under
// the folder's lock. A folder created at the commit (an --input-list result,
// a layer of --layer all) is staged whole in a hidden folder of that name
// beside it and appears by one rename.
#include "attn/output.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/npy.h"
#include "outputs/cleanup.h"

namespace attn {
namespace {

// Temporary names: ".attn-run-tmp-<pid>-<n>", short so that any legal final
// name still has a legal temporary (NAME_MAX), and carrying the pid so the
// next run can tell a killed run's leftovers from a live run's.
constexpr const char* kTempPrefix = ".attn-run-tmp-";

// Is `name` a temporary (".attn-run-tmp-<pid>-<n>") of a process that no
// longer exists (a SIGKILLed run, a power loss)? A live pid, ours or another
// run's, is not.
bool dead_temporary(const std::string& name) {
  const std::string prefix = kTempPrefix;
  if (name.rfind(prefix, 0) != 0) return false;
  char* end = nullptr;
  const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
  if (pid <= 0 || *end != '-') return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM;
}

// Remove the dead temporaries in `dir`: files, and the hidden folders a
// result folder is staged in with what they hold.
void remove_dead_temporaries(const std::string& dir) {
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (!dead_temporary(it->path().filename().string())) continue;
    std::error_code gone;
    std::filesystem::remove_all(it->path(), gone);  // a symlink itself, never its target
  }
}

// An exclusive lock on the folder itself (flock on its fd) for the renames,
// so two runs committing into one folder never interleave their files.
class FolderLock {
 public:
  explicit FolderLock(const std::string& dir)
      : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0)
      throw Error(Exit::io, dir + ": cannot open output folder: " + std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd_);
      throw Error(Exit::io, dir + ": cannot lock output folder: " + std::strerror(saved));
    }
  }
  ~FolderLock() { ::close(fd_); }  // closing releases the lock
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

  std::pair<dev_t, ino_t> id() const {  // the folder locked, whatever its name names now
    struct stat st {};
    ::fstat(fd_, &st);
    return {st.st_dev, st.st_ino};
  }

 private:
  int fd_;
};

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

OutputDir::OutputDir(std::string dir) : dir_(std::move(dir)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir_, ec) && !fs::is_directory(dir_, ec))
    throw Error(Exit::cant_create, dir_ + ": output folder is a file, expected a folder");
  fs::create_directories(dir_, ec);
  if (ec) throw Error(Exit::cant_create, dir_ + ": cannot create output folder: " + ec.message());
  if (::access(dir_.c_str(), W_OK | X_OK) != 0)
    throw Error(Exit::cant_create, dir_ + ": output folder is not writable");
  remove_dead_temporaries(dir_);
  staging_ = dir_;
}

OutputDir::OutputDir(std::string dir, std::string staging_dir, bool replace)
    : dir_(std::move(dir)), staging_(std::move(staging_dir)), deferred_(true), replace_(replace) {
  struct stat st {};
  if (::lstat(dir_.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) &&
      !(S_ISLNK(st.st_mode) && is_directory(dir_)))
    throw Error(Exit::cant_create, dir_ + ": output folder is a file, expected a folder");
  if (!is_directory(staging_))
    throw Error(Exit::cant_create, staging_ + ": output folder is missing");
}

OutputDir::~OutputDir() { discard(); }

std::unique_ptr<OutputDir> open_output_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) || fs::is_symlink(dir, ec)) return std::make_unique<OutputDir>(dir);
  std::string parent = fs::path(dir).parent_path().string();
  if (parent.empty()) parent = ".";
  fs::create_directories(parent, ec);
  if (ec || !is_directory(parent))
    throw Error(Exit::cant_create,
                dir + ": cannot create output folder: " +
                    (ec ? ec.message() : parent + " is a file, expected a folder"));
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw Error(Exit::cant_create,
                dir + ": cannot create output folder: " + parent + " is not writable");
  remove_dead_temporaries(parent);
  return std::make_unique<OutputDir>(dir, parent, false);
}

namespace {
std::string unique_temp(const std::string& folder) {
  static std::atomic<int> counter{0};
  return folder + "/" + kTempPrefix + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}
}  // namespace

std::string OutputDir::temp_name(const std::string& name) {
  if (!deferred_) return unique_temp(staging_);
  // A folder created at the commit: its files are staged under their own
  // names in one hidden folder beside it, renamed into place as a whole.
  if (hidden_.empty()) {
    const std::string hidden = unique_temp(staging_);
    hidden_live_ = live_add(hidden);
    if (::mkdir(hidden.c_str(), 0777) != 0) {
      live_remove(hidden_live_);
      hidden_live_ = nullptr;
      throw Error(Exit::cant_create,
                  dir_ + ": cannot create its staging folder in " + staging_ + ": " + errno_text());
    }
    hidden_ = hidden;
  }
  return hidden_ + "/" + name;
}

static int open_temp(const std::string& temp, const std::string& final_path) {
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(Exit::cant_create, final_path + ": cannot create: " + errno_text());
  return fd;
}

void OutputDir::stage_in_memory(std::size_t budget) {
  // Readers open a memfd by its /proc/self/fd path.
  memory_left_ = ::access("/proc/self/fd", X_OK) == 0 ? budget : 0;
}

OutputDir::Staged& OutputDir::stage(const std::string& name, std::size_t bytes) {
  Staged s;
  s.final_path = dir_ + "/" + name;
  if (std::filesystem::is_directory(s.final_path))
    throw Error(Exit::cant_create, s.final_path + ": a folder is in the way of the output file");
  if (bytes <= memory_left_) {
    const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
    if (fd >= 0) {  // else (no memfd, no descriptor left) in the folder
      memory_left_ -= bytes;
      s.fd = fd;
      s.in_memory = true;
      s.temp_path = "/proc/self/fd/" + std::to_string(fd);
      staged_.push_back(s);
      return staged_.back();
    }
  }
  s.temp_path = temp_name(name);
  s.live = live_add(s.temp_path);
  staged_.push_back(s);
  Staged& st = staged_.back();
  st.fd = open_temp(st.temp_path, st.final_path);
  return st;
}

void OutputDir::add(const std::string& name, const std::string& bytes) {
  Staged& st = stage(name, bytes.size());
  if (st.in_memory) {
    if (!write_all(st.fd, bytes.data(), bytes.size()))
      throw Error(Exit::io, st.final_path + ": write failed (staged in memory): " + errno_text());
    return;
  }
  // Its fsync waits for the commit (flush_staged), with the other files': an
  // --input-list run flushes a group's files on a helper thread instead of
  // one fsync per small file on the main one (0.5-0.8 ms each here). Closed
  // now, so a folder of many small files holds no descriptor per file.
  bool ok = write_all(st.fd, bytes.data(), bytes.size());
  if (ok) ::sync_file_range(st.fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  int saved = errno;
  ::close(st.fd);
  st.fd = -1;
  st.unsynced = ok;
  errno = saved;
  if (!ok) throw Error(Exit::io, st.final_path + ": write failed: " + errno_text());
}

int OutputDir::add_streamed_npy(const std::string& name, const std::vector<std::size_t>& shape) {
  return add_streamed_npy(name, shape, "<f4", sizeof(float));
}

int OutputDir::add_streamed_npy(const std::string& name, const std::vector<std::size_t>& shape,
                                const std::string& descr, std::size_t item_size) {
  const std::string header = npy_header(shape, descr);
  const std::size_t data_bytes = Tensor::count(shape) * item_size;
  const std::size_t total = header.size() + data_bytes;
  Staged& st = stage(name, total);
  st.data_offset = header.size();
  st.data_bytes = data_bytes;
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
  write_bytes_at(handle, first * sizeof(float), values, count * sizeof(float));
}

void OutputDir::write_bytes_at(int handle, std::size_t first_byte, const void* data,
                               std::size_t bytes) {
  const Staged& st = staged_.at(static_cast<std::size_t>(handle));
  const char* p = static_cast<const char*>(data);
  std::size_t n = bytes;
  off_t off = static_cast<off_t>(st.data_offset + first_byte);
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

OutputDir::StreamedFile OutputDir::streamed_file(int handle, bool direct) const {
  const Staged& st = staged_.at(static_cast<std::size_t>(handle));
  StreamedFile f;
  f.fd = st.fd;
  f.data_offset = st.data_offset;
  f.data_bytes = st.data_bytes;
  f.path = st.final_path;
  if (direct && !st.in_memory)
    f.direct_fd = ::open(st.temp_path.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
  return f;
}

void OutputDir::check_name(const std::string& name) const {
  errno = 0;
  const long name_max = ::pathconf(dir_.c_str(), _PC_NAME_MAX);
  if (name_max > 0 && name.size() > static_cast<std::size_t>(name_max))  // a huge one quoted cut
    throw Error(Exit::cant_create,
                dir_ + "/" + (name.size() > 300 ? name.substr(0, 300) + "..." : name) +
                    ": name is " + std::to_string(name.size()) +
                    " bytes long; the file system allows at most " + std::to_string(name_max));
}

void OutputDir::flush_staged() {
  for (Staged& s : staged_) {
    if (s.fd < 0 && !s.unsynced) continue;  // already on the disk
    // An add()ed file was closed after its write: fsync it through a new descriptor.
    if (s.fd < 0) s.fd = ::open(s.temp_path.c_str(), O_RDONLY | O_CLOEXEC);
    bool ok = s.fd >= 0 && ::fsync(s.fd) == 0;
    int saved = errno;
    if (s.fd >= 0) ::close(s.fd);
    s.fd = -1;
    s.unsynced = false;
    errno = saved;
    if (!ok) throw Error(Exit::io, s.final_path + ": write failed: " + errno_text());
  }
}

std::vector<std::string> OutputDir::names() const {
  std::vector<std::string> out;
  for (const Staged& f : staged_) out.push_back(f.final_path.substr(dir_.size() + 1));
  return out;
}

std::string OutputDir::staged_path(const std::string& name) const {
  const std::string final_path = dir_ + "/" + name;
  for (const Staged& f : staged_)
    if (f.final_path == final_path) return f.temp_path;
  return "";
}

void OutputDir::commit() { commit_together({this}); }

void flush_together(const std::vector<OutputDir*>& dirs) {
  for (OutputDir* d : dirs)
    for (const OutputDir::Staged& s : d->staged_)
      if (s.in_memory)
        throw Error(Exit::software,
                    s.final_path + ": staged in memory, for a reader; never committed");
  // Writeback of every file starts first, so the fsyncs that follow wait on
  // I/O already under way together, not on one file's after another's.
  for (OutputDir* d : dirs)
    for (const OutputDir::Staged& s : d->staged_)
      if (s.fd >= 0) ::sync_file_range(s.fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  for (OutputDir* d : dirs) d->flush_staged();
}

namespace {

using FolderLocks = std::vector<std::unique_ptr<FolderLock>>;

// Folders by (device, inode): one lock per folder, as flock on a second
// descriptor of a folder this process already locked would wait on itself.
std::map<std::pair<dev_t, ino_t>, std::string> by_identity(const std::vector<std::string>& dirs) {
  std::map<std::pair<dev_t, ino_t>, std::string> folders;
  for (const std::string& dir : dirs) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0)
      throw Error(Exit::io, dir + ": output folder is gone: " + errno_text());
    folders.emplace(std::pair{st.st_dev, st.st_ino}, dir);
  }
  return folders;
}

// Locks the folders `names()` lists, in (device, inode) order so two runs
// never wait on each other. While this run waited another may have swapped
// one of them for a new folder, or made a folder this run merges into:
// then the names no longer give the folders locked, and it locks again.
FolderLocks lock_folders(const std::function<std::vector<std::string>()>& names) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const auto wanted = by_identity(names());
    FolderLocks locks;
    for (const auto& [id, dir] : wanted) locks.push_back(std::make_unique<FolderLock>(dir));
    const auto now = by_identity(names());
    bool same = now.size() == wanted.size();
    auto lock = locks.begin();
    for (auto it = now.begin(); same && it != now.end(); ++it, ++lock)
      same = it->first == (*lock)->id();
    if (same) return locks;
  }
  throw Error(Exit::io,
              names().front() + ": output folder kept changing while waiting for its lock");
}

}  // namespace

void commit_together(const std::vector<OutputDir*>& dirs) {
  test_pause_point("commit");
  flush_together(dirs);
  // An existing folder is locked itself, whoever's files go into it: a run
  // that found it at its start and one that staged beside it and finds it
  // made meanwhile merge into it under one lock. A folder created at the
  // commit is locked through the folder it is staged in (it does not exist
  // yet), which every run creating it locks.
  const FolderLocks locks = lock_folders([&] {
    std::vector<std::string> names;
    for (const OutputDir* d : dirs) {
      if (!d->deferred_ || is_directory(d->dir_)) names.push_back(d->dir_);
      if (d->deferred_) names.push_back(d->staging_);
    }
    return names;
  });
  // The renames are the moment the outputs change: under the folders' locks
  // (another run's commit waits), with the cleanup signals held off until all
  // of them are done, so a signal yields the old set or the new set, never a
  // mix. A pending signal is delivered after the unblock.
  sigset_t previous;
  block_cleanup_signals(&previous);
  for (OutputDir* d : dirs) {
    // A folder created at the commit appears whole, its files in it, by
    // one rename of its hidden staging folder: a SIGKILL between two
    // renames leaves whole folders and hidden ones, never part of a folder.
    if (d->deferred_ && !d->hidden_.empty()) {
      try {
        d->commit_deferred();
      } catch (...) {
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        throw;
      }
      test_pause_point("rename");
      continue;
    }
    for (OutputDir::Staged& s : d->staged_) {
      if (::rename(s.temp_path.c_str(), s.final_path.c_str()) != 0) {
        int saved = errno;
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        errno = saved;
        throw Error(Exit::io, s.final_path + ": cannot rename into place: " + errno_text());
      }
      live_remove(s.live);
      s.temp_path.clear();
      test_pause_point("rename");
    }
  }
  for (OutputDir* d : dirs)
    for (const std::string& path : d->stale_) ::unlink(path.c_str());
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  for (OutputDir* d : dirs) {
    d->committed_ = true;
    d->staged_.clear();
  }
}

void OutputDir::commit_deferred() {
  namespace fs = std::filesystem;
  const auto fail = [&](Exit code, const std::string& what) {
    throw Error(code, dir_ + ": " + what + ": " + errno_text());
  };
  struct stat st {};
  if (::lstat(dir_.c_str(), &st) != 0) {  // absent: the staging folder becomes it
    if (::rename(hidden_.c_str(), dir_.c_str()) != 0) fail(Exit::io, "cannot rename into place");
    stale_.clear();  // a new folder holds no stale file (an --input-list's 10 unlinks an input)
  } else if (S_ISDIR(st.st_mode) && replace_) {
    // An earlier result folder: swapped whole for the new one. What the
    // old one holds that this commit neither writes nor removes (a user's
    // notes) stays: files are linked into the new set before the swap (so a
    // kill never loses them), folders moved across after it. So do the
    // temporaries of live runs staging into it (they rename them under the
    // new folder's lock); a dead run's stay behind and go with the old.
    std::vector<std::string> names, moved;
    for (const Staged& f : staged_) names.push_back(fs::path(f.final_path).filename().string());
    std::error_code ec;
    for (auto it = fs::directory_iterator(dir_, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      const std::string name = it->path().filename().string();
      const std::string path = dir_ + "/" + name;
      if (std::find(names.begin(), names.end(), name) != names.end() ||
          std::find(stale_.begin(), stale_.end(), path) != stale_.end() || dead_temporary(name))
        continue;
      struct stat e {};
      if (::lstat(path.c_str(), &e) != 0) continue;
      if (S_ISDIR(e.st_mode) || ::link(path.c_str(), (hidden_ + "/" + name).c_str()) != 0)
        moved.push_back(name);
    }
    std::string old = hidden_;  // where the old folder ends up
    if (::renameat2(AT_FDCWD, hidden_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) != 0) {
      if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) fail(Exit::io, "cannot swap");
      // No exchange on this file system: the old folder moves aside first
      // (for a moment there is no folder, never a partial one).
      old = unique_temp(staging_);
      if (::rename(dir_.c_str(), old.c_str()) != 0) fail(Exit::io, "cannot move aside");
      if (::rename(hidden_.c_str(), dir_.c_str()) != 0) fail(Exit::io, "cannot rename into place");
    }
    for (const std::string& name : moved)
      ::rename((old + "/" + name).c_str(), (dir_ + "/" + name).c_str());
    fs::remove_all(old, ec);
    stale_.clear();  // the old folder's stale files stayed in it, and went with it
  } else if ((S_ISLNK(st.st_mode) && is_directory(dir_)) || (S_ISDIR(st.st_mode) && !replace_)) {
    // A folder linked elsewhere by the user, or one made meanwhile that is
    // not this commit's to replace: the files go into it one by one.
    for (Staged& f : staged_)
      if (::rename(f.temp_path.c_str(), f.final_path.c_str()) != 0)
        fail(Exit::io, fs::path(f.final_path).filename().string() + ": cannot rename into place");
    ::rmdir(hidden_.c_str());
  } else {
    errno = EEXIST;
    fail(Exit::cant_create, "cannot create output folder: a file is in the way");
  }
  for (Staged& f : staged_) {
    live_remove(f.live);
    f.temp_path.clear();
  }
  live_remove(hidden_live_);
  hidden_live_ = nullptr;
  hidden_.clear();
}

void OutputDir::discard() {
  for (Staged& s : staged_) {
    if (s.fd >= 0) ::close(s.fd);
    s.fd = -1;
    if (!s.temp_path.empty() && !s.in_memory) {
      ::unlink(s.temp_path.c_str());
      live_remove(s.live);
    }
  }
  staged_.clear();
  if (!hidden_.empty()) {
    ::rmdir(hidden_.c_str());
    live_remove(hidden_live_);
    hidden_live_ = nullptr;
    hidden_.clear();
  }
}

}  // namespace attn

// MappedFile (mapped_file.h).
#include "containers/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "attn/error.h"
#include "attn/files.h"
#include "containers/npy_internal.h"

namespace attn::detail {

namespace {

// ---- the SIGBUS handler and the mappings it knows -------------------------

// Mappings alive, for the handler: blocks of slots that only grow (a slot is
// reused once free) and are never freed, so the handler may walk them at any
// time, lock-free. Slot states: 0 free, 1 being filled, 2 live.
struct MapSlot {
  std::atomic<int> state{0};
  std::atomic<std::uintptr_t> begin{0}, end{0};
  std::atomic<std::atomic<bool>*> lost{nullptr};
};
struct MapBlock {
  MapSlot slots[256];
  MapBlock* next = nullptr;
};
std::atomic<MapBlock*> g_map_blocks{nullptr};
std::size_t g_page = 4096;
struct sigaction g_previous_sigbus {};

extern "C" void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto at = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (MapBlock* b = g_map_blocks.load(); b; b = b->next)
    for (MapSlot& s : b->slots) {
      if (s.state.load() != 2 || at < s.begin.load() || at >= s.end.load()) continue;
      // A page of this mapping past the file's end: zeros in its place (the
      // read goes on), the file marked lost (the reader stops after it).
      void* page = reinterpret_cast<void*>(at & ~(g_page - 1));
      if (::mmap(page, g_page, PROT_READ, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) !=
          MAP_FAILED) {
        if (std::atomic<bool>* lost = s.lost.load()) lost->store(true);
        return;
      }
    }
  // Not one of ours: whoever handled SIGBUS before, or the default (the
  // faulting access runs again and ends the process as SIGBUS does).
  if ((g_previous_sigbus.sa_flags & SA_SIGINFO) && g_previous_sigbus.sa_sigaction) {
    g_previous_sigbus.sa_sigaction(sig, info, context);
  } else if (g_previous_sigbus.sa_handler != SIG_DFL && g_previous_sigbus.sa_handler != SIG_IGN) {
    g_previous_sigbus.sa_handler(sig);
  } else {
    ::signal(SIGBUS, SIG_DFL);
  }
}

void install_sigbus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_page = std::size_t(::sysconf(_SC_PAGESIZE));
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous_sigbus);
  });
}

// Registers [p, p + n) of a file whose lost mark is `lost`; the slot to free.
void* map_add(const void* p, std::size_t n, std::atomic<bool>* lost) {
  install_sigbus_handler();
  MapSlot* slot = nullptr;
  for (MapBlock* b = g_map_blocks.load(); b && !slot; b = b->next)
    for (MapSlot& s : b->slots) {
      int expected = 0;
      if (s.state.compare_exchange_strong(expected, 1)) {
        slot = &s;
        break;
      }
    }
  if (!slot) {
    auto* b = new MapBlock;  // never freed: the handler may walk it at any time
    slot = &b->slots[0];
    slot->state.store(1);
    b->next = g_map_blocks.load();
    while (!g_map_blocks.compare_exchange_weak(b->next, b)) {
    }
  }
  slot->begin.store(reinterpret_cast<std::uintptr_t>(p));
  slot->end.store(reinterpret_cast<std::uintptr_t>(p) + n);
  slot->lost.store(lost);
  slot->state.store(2);
  return slot;
}

void map_remove(void* slot) {
  if (slot) static_cast<MapSlot*>(slot)->state.store(0);
}

// The address space cannot map `bytes` of `path`: Exit::unavailable saying so.
[[noreturn]] void cannot_map(const std::string& path, std::size_t bytes, const char* what) {
  struct rlimit as {};
  const bool limited = ::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY;
  throw Error(Exit::unavailable,
              path + ": " + what + " " + std::to_string(bytes) +
                  " bytes and the address space left cannot map it" +
                  (limited ? " (ulimit -v allows " + std::to_string(as.rlim_cur) + " bytes)"
                           : std::string()) +
                  "; raise the limit or run on a machine with more memory");
}

// Exactly `n` bytes at `offset` of `fd`; Exit::no_input when they cannot be read.
void pread_all(int fd, std::uint8_t* dst, std::size_t n, std::size_t offset,
               const std::string& path) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::pread(fd, dst + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      throw Error(Exit::no_input, path + ": read failed (" +
                                      (r == 0 ? std::string("file shrank") : std::strerror(errno)) +
                                      ")");
    got += std::size_t(r);
  }
}

// Up to `n` more bytes of the FIFO appended to `out`; fewer only at its end.
void read_more(FifoReader& in, std::vector<std::uint8_t>& out, std::size_t n) {
  const std::size_t start = out.size();
  out.resize(start + n);
  std::size_t got = 0;
  while (got < n) {
    const std::size_t r = in.read(out.data() + start + got, n - got);
    if (r == 0) break;
    got += r;
  }
  out.resize(start + got);
}

constexpr std::size_t kMaxJsonStream = std::size_t(1) << 30;

// Bytes this process may hold: physical memory, lowered by RLIMIT_AS.
std::size_t memory_allowed() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  std::size_t limit = pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : SIZE_MAX;
  struct rlimit as {};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    limit = std::min<std::size_t>(limit, as.rlim_cur);
  return limit;
}

// A FIFO's whole stream, read as standard input is: its first bytes judged
// before the rest is read, the read bounded by what they declare.
std::vector<std::uint8_t> read_fifo(int fd, const std::string& path) {
  std::vector<std::uint8_t> bytes;
  FifoReader in(fd, path);
  read_more(in, bytes, kEndBytes);
  if (bytes.size() < kEndBytes) return bytes;  // the whole stream
  if (std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0) {
    const std::size_t total = npy_image_size(bytes.data(), bytes.size(), path);
    if (total > memory_allowed())
      throw Error(Exit::unavailable, path + ": the .npy stream declares " + std::to_string(total) +
                                         " bytes, more than the " +
                                         std::to_string(memory_allowed()) +
                                         " bytes this process may use");
    // One byte past the declared image: the reader reports trailing bytes.
    if (total + 1 > bytes.size()) read_more(in, bytes, total + 1 - bytes.size());
    return bytes;
  }
  std::size_t i = 0;
  while (i < bytes.size() && std::isspace(bytes[i])) ++i;
  if (i < bytes.size() && bytes[i] == '[') {
    read_more(in, bytes, kMaxJsonStream + 1 - bytes.size());
    if (bytes.size() > kMaxJsonStream)
      throw Error(Exit::data, path + ": JSON input larger than 1 GiB; use .npy");
    return bytes;
  }
  throw Error(Exit::data, path +
                              ": a FIFO is read once, as a .npy or a JSON array; this one is "
                              "neither (weights and archives must be regular files)");
}

// The descriptor closed on every path out, exceptions included.
struct OpenFd {
  int fd;
  ~OpenFd() { ::close(fd); }
};

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, const EndsCheck& check,
                                                   bool whole) {
  std::shared_ptr<MappedFile> f(new MappedFile);
  f->path_ = path;
  // The mapping keeps the file; no descriptor stays open past this function
  // (a folder of a thousand .npy files must not run out of them).
  bool fifo = false;
  const OpenFd fd{open_file_or_fifo(path, f->size_, fifo)};
  if (fifo) {
    f->stream_ = read_fifo(fd.fd, path);
    f->streamed_ = true;
    f->size_ = f->stream_.size();
    f->data_ = f->stream_.data();
    const std::size_t n = std::min(f->size_, kEndBytes);
    if (check) check(FileEnds{f->data_, n, f->data_ + f->size_ - n, n, f->size_});
    return f;
  }
  struct stat st;
  if (::fstat(fd.fd, &st) == 0) f->dev_ = st.st_dev, f->ino_ = st.st_ino;
  if (check) {
    const std::size_t n = std::min(f->size_, kEndBytes);
    std::vector<std::uint8_t> head(n), tail(n);
    pread_all(fd.fd, head.data(), n, 0, path);
    pread_all(fd.fd, tail.data(), n, f->size_ - n, path);
    check(FileEnds{head.data(), n, tail.data(), n, f->size_});
  }
  if (!whole) {  // spans are mapped as they are read (window)
    f->fd_ = ::dup(fd.fd);
    if (f->fd_ < 0)
      throw Error(Exit::no_input, path + ": cannot open (" + std::strerror(errno) + ")");
    ::fcntl(f->fd_, F_SETFD, FD_CLOEXEC);
    return f;
  }
  void* p = f->size_ > 0 ? ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd.fd, 0) : nullptr;
  if (p == MAP_FAILED && errno == ENOMEM) cannot_map(path, f->size_, "the file is");
  if (p == MAP_FAILED)
    throw Error(Exit::no_input, path + ": cannot map the file (" + std::strerror(errno) + ")");
  f->data_ = static_cast<const std::uint8_t*>(p);
  if (f->size_ > 0) f->slot_ = map_add(p, f->size_, &f->lost_);
  return f;
}

MappedFile::~MappedFile() {
  map_remove(slot_);
  if (data_ != nullptr && !streamed_) ::munmap(const_cast<std::uint8_t*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

std::shared_ptr<const MappedFile::Window> MappedFile::window(std::size_t offset,
                                                             std::size_t length) const {
  static const std::uint8_t kEmpty[1] = {0};
  if (data_ != nullptr) return std::make_shared<Window>(data_ + offset, nullptr, 0, nullptr);
  if (length == 0) return std::make_shared<Window>(kEmpty, nullptr, 0, nullptr);
  const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
  const std::size_t first = offset / page * page, mapped = offset - first + length;
  void* p = ::mmap(nullptr, mapped, PROT_READ, MAP_PRIVATE, fd_, off_t(first));
  if (p == MAP_FAILED && errno == ENOMEM) cannot_map(path_, length, "a span of");
  if (p == MAP_FAILED)
    throw Error(Exit::no_input, path_ + ": cannot map the file (" + std::strerror(errno) + ")");
  void* slot = map_add(p, mapped, &lost_);
  return std::make_shared<Window>(static_cast<const std::uint8_t*>(p) + (offset - first), p, mapped,
                                  slot);
}

MappedFile::Window::~Window() {
  map_remove(slot_);
  if (base_) ::munmap(base_, mapped_);
}

void MappedFile::check_intact(const std::string& name) const {
  if (streamed_) return;  // in memory: nothing can shrink under us
  const std::string what = name == path_ ? name : name + ": " + path_;
  if (lost_.load())
    throw Error(Exit::no_input, what + " was truncated while attn-run read it (it was " +
                                    std::to_string(size_) +
                                    " bytes when opened); nothing was written");
  // The same file (device and inode) at the path, now shorter: touching the
  // lost pages would fault. A file replaced by rename keeps the old inode,
  // and with it our mapping, intact.
  struct stat st;
  if (::stat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_ &&
      std::size_t(st.st_size) < size_)
    throw Error(Exit::no_input, what + " was truncated while in use (it was " +
                                    std::to_string(size_) + " bytes when opened, " +
                                    std::to_string(st.st_size) + " now)");
}

void test_pause_before_read() {
  const char* at = std::getenv("ATTN_TEST_PAUSE_AT");
  if (!at || std::strncmp(at, "read", 4) != 0 || (at[4] != '\0' && at[4] != ':')) return;
  static std::atomic<long> times{0};
  const long nth = at[4] == ':' ? std::strtol(at + 5, nullptr, 10) : 1;
  if (++times == nth) ::raise(SIGSTOP);
}

void MappedFile::release(std::size_t offset, std::size_t length) const {
  if (data_ == nullptr || length == 0 || streamed_) return;  // never drop a stream's memory
  const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
  // Whole pages inside the span only: a neighbour's bytes may share the ends.
  const std::size_t first = (offset + page - 1) / page * page;
  const std::size_t last = (offset + length) / page * page;
  if (last > first)
    ::madvise(const_cast<std::uint8_t*>(data_) + first, last - first, MADV_DONTNEED);
}

bool MappedFile::read(std::size_t offset, std::size_t length, void* dst,
                      const std::string& name) const {
  const ReadSpan span{offset, length, dst};
  return read(&span, 1, name);
}

bool MappedFile::read(const ReadSpan* spans, std::size_t n, const std::string& name) const {
  if (streamed_) {  // the stream cannot be read again: it is all in memory
    for (std::size_t i = 0; i < n; ++i) {
      if (spans[i].offset > size_ || spans[i].length > size_ - spans[i].offset) return false;
      std::memcpy(spans[i].dst, data_ + spans[i].offset, spans[i].length);
    }
    return true;
  }
  const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) {
    ::close(fd);
    return false;
  }
  for (std::size_t i = 0; i < n; ++i) {
    auto* out = static_cast<std::uint8_t*>(spans[i].dst);
    const std::size_t offset = spans[i].offset, length = spans[i].length;
    std::size_t got = 0;
    while (got < length) {
      const ssize_t r = ::pread(fd, out + got, length - got, static_cast<off_t>(offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) {  // shorter now: bytes() and its check_intact name the truncation
        ::close(fd);
        return false;
      }
      if (r < 0) {
        const int err = errno;
        ::close(fd);
        throw Error(Exit::no_input,
                    name + ": " + path_ + ": read failed (" + std::strerror(err) + ")");
      }
      got += std::size_t(r);
    }
  }
  ::close(fd);
  return true;
}

bool MappedRegion::read(std::size_t offset, std::size_t length, void* dst,
                        const std::string& name) const {
  test_pause_before_read();
  return file_->read(offset_ + offset, length, dst, name);
}

bool MappedRegion::read_spans(const ReadSpan* spans, std::size_t n, const std::string& name) const {
  test_pause_before_read();
  std::vector<ReadSpan> in_file(spans, spans + n);
  for (ReadSpan& s : in_file) s.offset += offset_;
  return file_->read(in_file.data(), n, name);
}

ByteView MappedRegion::bytes(const std::string& name) const {
  file_->check_intact(name);
  test_pause_before_read();
  if (file_->data()) return {file_->data() + offset_, length_, file_};
  const auto w = file_->window(offset_, length_);  // the file is mapped a span at a time
  return {w->data(), length_, w};
}

void MappedRegion::done(std::size_t offset, std::size_t length) const {
  file_->release(offset_ + offset, length);
}

}  // namespace attn::detail

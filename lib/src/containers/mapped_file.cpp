// MappedFile (mapped_file.h).
#include "containers/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "attn/error.h"
#include "attn/files.h"

namespace attn::detail {

namespace {

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

// The descriptor closed on every path out, exceptions included.
struct OpenFd {
  int fd;
  ~OpenFd() { ::close(fd); }
};

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path,
                                                   const EndsCheck& check) {
  std::shared_ptr<MappedFile> f(new MappedFile);
  f->path_ = path;
  // The mapping keeps the file; no descriptor stays open past this function
  // (a folder of a thousand .npy files must not run out of them).
  const OpenFd fd{open_regular_file(path, f->size_)};
  struct stat st;
  if (::fstat(fd.fd, &st) == 0) f->dev_ = st.st_dev, f->ino_ = st.st_ino;
  if (check) {
    const std::size_t n = std::min(f->size_, kEndBytes);
    std::vector<std::uint8_t> head(n), tail(n);
    pread_all(fd.fd, head.data(), n, 0, path);
    pread_all(fd.fd, tail.data(), n, f->size_ - n, path);
    check(FileEnds{head.data(), n, tail.data(), n, f->size_});
  }
  void* p = f->size_ > 0 ? ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd.fd, 0) : nullptr;
  if (p == MAP_FAILED && errno == ENOMEM) {
    struct rlimit as {};
    const bool limited = ::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY;
    throw Error(Exit::unavailable,
                path + ": the file is " + std::to_string(f->size_) +
                    " bytes and the address space left cannot map it" +
                    (limited ? " (ulimit -v allows " + std::to_string(as.rlim_cur) + " bytes)"
                             : std::string()) +
                    "; raise the limit or run on a machine with more memory");
  }
  if (p == MAP_FAILED)
    throw Error(Exit::no_input, path + ": cannot map the file (" + std::strerror(errno) + ")");
  f->data_ = static_cast<const std::uint8_t*>(p);
  return f;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

void MappedFile::check_intact(const std::string& name) const {
  // The same file (device and inode) at the path, now shorter: touching the
  // lost pages would raise SIGBUS. A file replaced by rename keeps the old
  // inode, and with it our mapping, intact.
  struct stat st;
  if (::stat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_ &&
      std::size_t(st.st_size) < size_)
    throw Error(Exit::data, name + ": " + path_ + " was truncated while in use (it was " +
                                std::to_string(size_) + " bytes when opened)");
}

void MappedFile::release(std::size_t offset, std::size_t length) const {
  if (data_ == nullptr || length == 0) return;
  const std::size_t page = std::size_t(::sysconf(_SC_PAGESIZE));
  // Whole pages inside the span only: a neighbour's bytes may share the ends.
  const std::size_t first = (offset + page - 1) / page * page;
  const std::size_t last = (offset + length) / page * page;
  if (last > first)
    ::madvise(const_cast<std::uint8_t*>(data_) + first, last - first, MADV_DONTNEED);
}

bool MappedFile::read(std::size_t offset, std::size_t length, void* dst,
                      const std::string& name) const {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) {
    ::close(fd);
    return false;
  }
  auto* out = static_cast<std::uint8_t*>(dst);
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
  ::close(fd);
  return true;
}

bool MappedRegion::read(std::size_t offset, std::size_t length, void* dst,
                        const std::string& name) const {
  return file_->read(offset_ + offset, length, dst, name);
}

ByteView MappedRegion::bytes(const std::string& name) const {
  file_->check_intact(name);
  return {file_->data() + offset_, length_, file_};
}

void MappedRegion::done(std::size_t offset, std::size_t length) const {
  file_->release(offset_ + offset, length);
}

}  // namespace attn::detail

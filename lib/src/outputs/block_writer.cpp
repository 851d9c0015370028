// BlockWriter (attn/output.h): a streamed .npy's blocks written by one
// thread, their whole pages with O_DIRECT.
//
// Why: attention.npy is the largest thing a run writes (32 heads x 2048 x
// 2048 floats = 512 MB for one Llama layer). Written with pwrite, every page
// is a fresh page-cache page the kernel allocates and copies into; on this
// project's VMs that copy ran at 0.6 GB/s and took 28% of the run's CPU
// time, and the commit's fsync then wrote it all again. O_DIRECT sends the
// block from our buffer to the disk (1.2 GB/s there, 0.1 s of CPU for
// 512 MB), and the commit has nothing left to flush.
//
// A block [off, off + len) of the file (off counted from the file's start)
// goes out as: [off, A) through the page cache, [A, E) with O_DIRECT, [E, end)
// through the page cache, where A and E are off and end rounded in to whole
// pages. Blocks never share a whole page, so no page is written both ways.
// Each buffer holds its bytes shifted by off % kPage, so the memory of [A, E)
// is page-aligned as O_DIRECT needs.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "attn/error.h"
#include "attn/output.h"
#include "attn/tensor.h"

namespace attn {
namespace {

constexpr std::size_t kPage = 4096;  // O_DIRECT's alignment (any block device's)
// A buffer is one huge page (detail::alloc_buffer): its first touch is one fault, not the
// 512 of 4 KiB pages (about 3,000 for the six, on the compute thread that fills them first).
constexpr std::size_t kBufferBytes = detail::kHugeBytes;
constexpr std::size_t kPiece = kBufferBytes - kPage;  // bytes a buffer carries (see below)
constexpr std::size_t kBuffers = 6;                   // queued pieces: 2 per worker, and some slack

std::size_t round_up(std::size_t x) { return (x + kPage - 1) / kPage * kPage; }
std::size_t round_down(std::size_t x) { return x / kPage * kPage; }

}  // namespace

struct BlockWriter::State {
  struct FreeDelete {
    void operator()(char* p) const { detail::free_buffer(p, kBufferBytes); }
  };
  struct Piece {
    char* buf;        // holds the bytes from buf + off % kPage
    std::size_t off;  // file offset
    std::size_t len;
  };
  OutputDir::StreamedFile file;
  std::vector<std::unique_ptr<char, FreeDelete>> buffers;
  std::mutex m;
  std::condition_variable has_free, has_work;
  std::vector<char*> free;
  std::deque<Piece> queue;
  bool closing = false;   // no more pieces come: write what is queued, then end
  bool dropping = false;  // the run failed: write nothing more
  std::exception_ptr error;
  std::thread writer;
  bool small = false;  // written by write() itself: no buffers, no writer thread

  void fail(const std::exception_ptr& e) {
    std::lock_guard<std::mutex> lock(m);
    if (!error) error = e;
  }

  // All of [p, p + n) at file offset `at`; false with errno on failure.
  static bool pwrite_all(int fd, const char* p, std::size_t n, std::size_t at) {
    while (n > 0) {
      const ssize_t w = ::pwrite(fd, p, n, static_cast<off_t>(at));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      p += w, at += static_cast<std::size_t>(w), n -= static_cast<std::size_t>(w);
    }
    return true;
  }

  void write_through_cache(const Piece& pc, std::size_t a, std::size_t b) {
    if (a < b && !pwrite_all(file.fd, pc.buf + pc.off % kPage + (a - pc.off), b - a, a))
      throw Error(Exit::io, file.path + ": write failed: " + std::strerror(errno));
  }

  void write_piece(const Piece& pc) {
    const std::size_t end = pc.off + pc.len;
    const std::size_t A = round_up(pc.off), E = round_down(end);
    if (file.direct_fd < 0 || A >= E) return write_through_cache(pc, pc.off, end);
    write_through_cache(pc, pc.off, A);
    if (!pwrite_all(file.direct_fd, pc.buf + pc.off % kPage + (A - pc.off), E - A, A)) {
      if (errno != EINVAL)
        throw Error(Exit::io, file.path + ": write failed: " + std::strerror(errno));
      // The file system takes O_DIRECT opens but not these writes (its block
      // is larger than a page, say): the page cache from now on.
      ::close(file.direct_fd);
      file.direct_fd = -1;
      write_through_cache(pc, A, E);
    }
    write_through_cache(pc, E, end);
  }

  void run() {
    for (;;) {
      Piece pc;
      bool skip;
      {
        std::unique_lock<std::mutex> lock(m);
        has_work.wait(lock, [&] { return closing || !queue.empty(); });
        if (queue.empty()) return;
        pc = queue.front();
        queue.pop_front();
        skip = dropping || error;
      }
      if (!skip) try {
          write_piece(pc);
        } catch (...) {
          fail(std::current_exception());
        }
      {
        std::lock_guard<std::mutex> lock(m);
        free.push_back(pc.buf);
      }
      has_free.notify_one();
    }
  }
};

BlockWriter::BlockWriter(OutputDir& out, int handle, bool direct) : s_(std::make_unique<State>()) {
  // 1,000 short inputs of an --input-list (S = 128, a 384 KiB context each):
  // six 2 MiB buffers and a thread per file took 0.9 ms an input, a fifth of its time.
  s_->file = out.streamed_file(handle, false);
  s_->small = s_->file.data_bytes <= kPiece;
  if (s_->small) return;
  if (direct) s_->file = out.streamed_file(handle, true);
  for (std::size_t i = 0; i < kBuffers; ++i) {
    char* p = nullptr;
    try {
      p = static_cast<char*>(detail::alloc_buffer(kBufferBytes));
    } catch (const std::bad_alloc&) {
      throw Error(Exit::unavailable, s_->file.path + ": out of memory for the write buffers");
    }
    s_->buffers.emplace_back(p);
    s_->free.push_back(p);
  }
  s_->writer = std::thread([st = s_.get()] { st->run(); });
}

BlockWriter::~BlockWriter() {
  {
    std::lock_guard<std::mutex> lock(s_->m);
    s_->closing = s_->dropping = true;
  }
  s_->has_work.notify_one();
  if (s_->writer.joinable()) s_->writer.join();
  if (s_->file.direct_fd >= 0) ::close(s_->file.direct_fd);
}

bool BlockWriter::direct() const { return s_->file.direct_fd >= 0; }

void BlockWriter::write(std::size_t first_byte, const void* data, std::size_t bytes) {
  const char* src = static_cast<const char*>(data);
  std::size_t off = s_->file.data_offset + first_byte;
  const std::size_t end = off + bytes;
  if (s_->small) {  // blocks never overlap: concurrent pwrites need no lock
    if (!State::pwrite_all(s_->file.fd, src, bytes, off))
      throw Error(Exit::io, s_->file.path + ": write failed: " + std::strerror(errno));
    return;
  }
  while (off < end) {
    // A piece ends on a page boundary (or the block's end), so only the
    // block's two ends are ever partial pages.
    const std::size_t stop = std::min(end, round_down(off + kPiece));
    char* buf;
    {
      std::unique_lock<std::mutex> lock(s_->m);
      s_->has_free.wait(lock, [&] { return !s_->free.empty() || s_->error; });
      if (s_->error) std::rethrow_exception(s_->error);
      buf = s_->free.back();
      s_->free.pop_back();
    }
    std::memcpy(buf + off % kPage, src, stop - off);
    {
      std::lock_guard<std::mutex> lock(s_->m);
      s_->queue.push_back({buf, off, stop - off});
    }
    s_->has_work.notify_one();
    src += stop - off;
    off = stop;
  }
}

void BlockWriter::finish() {
  {
    std::lock_guard<std::mutex> lock(s_->m);
    s_->closing = true;
  }
  s_->has_work.notify_one();
  if (s_->writer.joinable()) s_->writer.join();
  if (s_->error) std::rethrow_exception(s_->error);
}

}  // namespace attn

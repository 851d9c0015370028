// The pool of base/warm_pool.h: one region on huge pages, faulted in by a
// detached thread, its blocks handed out best fit and merged back on free.
#include "base/warm_pool.h"

#include <sys/mman.h>

#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>

#include "attn/tensor.h"

namespace attn::detail {
namespace {

// MADV_POPULATE_WRITE huge page by huge page, so a block handed out early
// finds the region's start faulted in first.
void populate(char* p, std::size_t n) {
#ifdef MADV_POPULATE_WRITE
  for (std::size_t o = 0; o < n; o += kHugeBytes)
    if (::madvise(p + o, n - o < kHugeBytes ? n - o : kHugeBytes, MADV_POPULATE_WRITE) != 0)
      return;  // EINVAL before Linux 5.14: the pages fault in on first use instead
#else
  (void)p;
  (void)n;
#endif
}

// Blocks are whole 4 KiB pages (warm_block_bytes): a block never shares a
// page with the next, and the region's huge pages serve every block inside them.
class WarmPool {
 public:
  void reserve(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (base_ || bytes == 0) return;
    const std::size_t size = (bytes + kHugeBytes - 1) / kHugeBytes * kHugeBytes;
    base_ = static_cast<char*>(std::aligned_alloc(kHugeBytes, size));
    if (!base_) return;  // no pool: every block comes from alloc_buffer
    size_ = size;
    ::madvise(base_, size_, MADV_HUGEPAGE);  // a hint: 4 KiB pages if refused
    free_[base_] = size_;
    // Detached: it touches only the region, which lives until the process ends.
    std::thread(populate, base_, size_).detach();
  }

  void* take(std::size_t bytes) {
    const std::size_t want = warm_block_bytes(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->second >= want && (best == free_.end() || it->second < best->second)) best = it;
    if (best == free_.end()) return nullptr;
    char* p = best->first;
    const std::size_t left = best->second - want;
    free_.erase(best);
    if (left) free_[p + want] = left;
    return p;
  }

  bool give_back(void* block, std::size_t bytes) {
    char* p = static_cast<char*>(block);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!base_ || p < base_ || p >= base_ + size_) return false;
    auto it = free_.emplace(p, warm_block_bytes(bytes)).first;
    if (auto next = std::next(it); next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
    return true;
  }

  // The free blocks' pages back to the system (MADV_DONTNEED): the blocks
  // stay the pool's, and fault in again, zeroed, when next used.
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [p, n] : free_) ::madvise(p, n, MADV_DONTNEED);
  }

  WarmPoolState state() {
    std::lock_guard<std::mutex> lock(mutex_);
    WarmPoolState s{size_, 0};
    for (const auto& [p, n] : free_) s.free += n;
    return s;
  }

 private:
  std::mutex mutex_;
  char* base_ = nullptr;
  std::size_t size_ = 0;
  std::map<char*, std::size_t> free_;  // free blocks by address: start -> bytes
};

WarmPool& pool() {
  static WarmPool* p = new WarmPool;  // never destroyed: the populating thread may outlive main
  return *p;
}

}  // namespace

void warm_reserve(std::size_t bytes) { pool().reserve(bytes); }

void warm_release() { pool().release(); }

void* alloc_warm(std::size_t bytes) {
  if (void* p = pool().take(bytes)) return p;
  return alloc_buffer(bytes);
}

void free_warm(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  if (!pool().give_back(p, bytes)) free_buffer(p, bytes);
}

WarmPoolState warm_pool_state() { return pool().state(); }

}  // namespace attn::detail

// Large buffers on transparent huge pages (tensor.h's detail::alloc_buffer).
// THP here is "madvise" mode: a 2 MiB-aligned region gets huge pages on its
// first touch only when asked. Measured on this VM: touching 64 MB of fresh
// memory took about 420 ms in 4 KiB pages (16,500 faults) and 9-12 ms with
// huge pages (145 faults).
#include <sys/mman.h>

#include <cstdlib>
#include <new>

#include "attn/tensor.h"

namespace attn::detail {
namespace {

// Smaller buffers on a cache line's boundary: plain new gave 16-byte alignment
// (glibc), so every 64-byte vector load of a kernel's panel crossed two lines
// (Intel, one core: the projections' micro-kernel 10% slower on such panels).
constexpr std::align_val_t kAlign{64};

std::size_t rounded(std::size_t bytes) {
  return (bytes + kHugeBytes - 1) / kHugeBytes * kHugeBytes;
}

}  // namespace

void* alloc_buffer(std::size_t bytes) {
  if (bytes < kHugeBytes) return ::operator new(bytes, kAlign);
  void* p = std::aligned_alloc(kHugeBytes, rounded(bytes));
  if (p == nullptr) throw std::bad_alloc();
  ::madvise(p, rounded(bytes), MADV_HUGEPAGE);  // a hint: 4 KiB pages if refused
  return p;
}

void free_buffer(void* p, std::size_t bytes) noexcept {
  if (bytes < kHugeBytes)
    ::operator delete(p, kAlign);
  else
    std::free(p);
}

}  // namespace attn::detail

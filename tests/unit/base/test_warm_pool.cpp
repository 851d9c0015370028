// The warm pool (lib/src/base/warm_pool.h): one region set aside and faulted
// in ahead, its blocks handed out best fit, merged back when freed, and
// alloc_buffer's memory when it has no room. One process, one region: the
// checks run in order in one test case.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "attn/tensor.h"
#include "base/warm_pool.h"

using namespace attn::detail;

namespace {

bool in_region(const void* p, const void* first, std::size_t region) {
  const auto a = reinterpret_cast<std::uintptr_t>(p), b = reinterpret_cast<std::uintptr_t>(first);
  return a >= b && a < b + region;
}

}  // namespace

TEST_CASE("warm pool: blocks from the region, merged back, and the heap past it") {
  constexpr std::size_t kMiB = std::size_t(1) << 20;
  // Before any reserve: alloc_buffer's memory, freed as such.
  CHECK(warm_pool_state().region == 0);
  void* before = alloc_warm(3 * kMiB);
  REQUIRE(before != nullptr);
  std::memset(before, 1, 3 * kMiB);
  free_warm(before, 3 * kMiB);

  // 5 MiB asked: a region of whole huge pages, all of it free.
  warm_reserve(5 * kMiB);
  const WarmPoolState s0 = warm_pool_state();
  CHECK(s0.region == 6 * kMiB);
  CHECK(s0.free == s0.region);
  warm_reserve(64 * kMiB);  // once per process: no second region
  CHECK(warm_pool_state().region == s0.region);

  // Written while the populating thread may still run: what is written stays.
  auto* a = static_cast<std::uint32_t*>(alloc_warm(3 * kMiB + 5));  // 769 pages
  const std::size_t a_words = 3 * kMiB / 4;
  for (std::size_t i = 0; i < a_words; ++i) a[i] = std::uint32_t(i * 2654435761u);
  CHECK(warm_pool_state().free == s0.region - 769 * 4096);
  auto* b = static_cast<char*>(alloc_warm(2 * kMiB));
  CHECK(in_region(b, a, s0.region));
  CHECK(b == reinterpret_cast<char*>(a) + 769 * 4096);  // the next pages
  // 6 MiB - 769 - 512 pages = 255 pages left: 2 MiB more comes from the heap.
  auto* c = static_cast<char*>(alloc_warm(2 * kMiB));
  CHECK_FALSE(in_region(c, a, s0.region));
  CHECK(warm_pool_state().free == 255 * 4096);
  std::memset(c, 7, 2 * kMiB);
  free_warm(c, 2 * kMiB);
  bool intact = true;
  for (std::size_t i = 0; i < a_words; ++i) intact &= a[i] == std::uint32_t(i * 2654435761u);
  CHECK(intact);

  // Freed blocks merge with their free neighbours: the whole region is one
  // block again, so 6 MiB fits at its start.
  free_warm(a, 3 * kMiB + 5);
  free_warm(b, 2 * kMiB);
  CHECK(warm_pool_state().free == s0.region);
  void* whole = alloc_warm(6 * kMiB);
  CHECK(whole == static_cast<void*>(a));
  CHECK(warm_pool_state().free == 0);
  free_warm(whole, 6 * kMiB);

  // The buffers of the forward pass's working memory use it through WarmBuffer.
  {
    attn::WarmBuffer buffer(1000);
    CHECK(in_region(buffer.data(), a, s0.region));
    CHECK(warm_pool_state().free == s0.region - 4096);
  }

  // warm_release gives the free blocks' pages back: written, freed and
  // released, a block reads as fresh zeros when taken again, and stays the pool's.
  auto* d = static_cast<std::uint32_t*>(alloc_warm(kMiB));
  for (std::size_t i = 0; i < kMiB / 4; ++i) d[i] = 0xdeadbeef;
  free_warm(d, kMiB);
  warm_release();
  CHECK(warm_pool_state().free == s0.region);
  auto* e = static_cast<std::uint32_t*>(alloc_warm(kMiB));
  CHECK(e == d);
  bool zeros = true;
  for (std::size_t i = 0; i < kMiB / 4; ++i) zeros &= e[i] == 0;
  CHECK(zeros);
  free_warm(e, kMiB);
}

// Memory faulted in ahead of the forward pass, while the weights and inputs
// load (base/warm_pool.cpp). A first touch of fresh memory costs about 10 us
// per 4 KiB page on a VM (0.4 GB/s; 0.6-0.8 GB/s on huge pages, the AMD EPYC
// VM of 2026-12): a GPT-2-small layer's first chunk spent 5 ms of its 15 ms
// projection faulting in the 9 MB of q and of the k and v panels.
#pragma once

#include <cstddef>

#include "attn/tensor.h"

namespace attn::detail {

// Sets aside one region of `bytes` (once per process; later calls do nothing)
// and faults it in on a thread of its own (MADV_POPULATE_WRITE, Linux 5.14 and
// later; on older kernels the region is simply fresh memory). The pool's
// blocks are handed out by alloc_warm while the thread runs: populating a
// page never changes what was written to it.
void warm_reserve(std::size_t bytes);

// Gives the pages of the pool's free blocks back to the system, so a run's
// peak memory after its forward pass (writing its outputs) is what it was
// without the pool; the blocks fault in again when next used.
void warm_release();

// The bytes a block of `bytes` takes in the pool: whole 4 KiB pages. The
// blocks come from alloc_warm (attn/tensor.h, for BufferAllocator), best fit,
// and free_warm merges them back with their free neighbours.
inline std::size_t warm_block_bytes(std::size_t bytes) { return (bytes + 4095) / 4096 * 4096; }

// The pool's region size and free bytes (0, 0 before warm_reserve): for tests.
struct WarmPoolState {
  std::size_t region = 0, free = 0;
};
WarmPoolState warm_pool_state();

}  // namespace attn::detail

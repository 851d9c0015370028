// The one threading layer of the forward pass: plain std::thread workers
// pulling task numbers from an atomic counter (dynamic scheduling, because
// causal query blocks carry uneven work). BLAS is kept single-threaded
// inside them by BlasThreads (kernel_blas.cpp).
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels.h"

namespace attn::kernels {

int resolve_threads(int threads) {
  if (threads > 0) return threads;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

void parallel_for(std::size_t n_tasks, int threads,
                  const std::function<void(std::size_t task, int worker)>& fn) {
  const int workers = static_cast<int>(
      std::max<std::size_t>(1, std::min<std::size_t>(resolve_threads(threads), n_tasks)));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  // The error of the lowest-numbered failing task, so a run reports the same
  // (batch, head, row) whichever worker got there first: every task below a
  // failed one was handed out before it and still runs to its end.
  std::exception_ptr first_error;
  std::size_t first_failed = n_tasks;
  std::mutex error_mutex;

  auto loop = [&](int worker) {
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) return;
      const std::size_t task = next.fetch_add(1, std::memory_order_relaxed);
      if (task >= n_tasks) return;
      try {
        fn(task, worker);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (task < first_failed) {
          first_failed = task;
          first_error = std::current_exception();
        }
        failed.store(true);
        return;
      }
    }
  };

  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(workers - 1));
  for (int w = 1; w < workers; ++w) pool.emplace_back(loop, w);
  loop(0);
  for (auto& t : pool) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace attn::kernels

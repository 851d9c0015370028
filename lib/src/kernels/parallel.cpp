// The one threading layer of the forward pass: workers pulling task numbers
// from an atomic counter (dynamic scheduling, because causal query blocks
// carry uneven work). BLAS is kept single-threaded inside them by
// BlasThreads (kernels/blas.cpp).
//
// The workers persist: a forward pass calls parallel_for three or four times
// (projections, positions, attention, output), and --input-list runs
// thousands of forward passes, so threads are started once per process and
// then woken per call. A call that finds the pool busy (another thread's
// forward pass, or a parallel_for nested inside a task) starts threads of
// its own for that call, as every call once did.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "attn/cpus.h"
#include "kernels/kernels.h"

namespace attn::kernels {

int resolve_threads(int threads) { return threads > 0 ? threads : available_cpus(); }

namespace {

using TaskFn = std::function<void(std::size_t task, int worker)>;

// One parallel_for call: the task counter and the first error.
class Job {
 public:
  Job(std::size_t n_tasks, const TaskFn& fn) : n_tasks_(n_tasks), fn_(fn) {}

  // Runs tasks until none is left (or one failed) as `worker`.
  void work(int worker) {
    for (;;) {
      if (failed_.load(std::memory_order_relaxed)) return;
      const std::size_t task = next_.fetch_add(1, std::memory_order_relaxed);
      if (task >= n_tasks_) return;
      try {
        fn_(task, worker);
      } catch (...) {
        // The error of the lowest-numbered failing task, so a run reports the
        // same (batch, head, row) whichever worker got there first: every task
        // below a failed one was handed out before it and still runs to its end.
        std::lock_guard<std::mutex> lock(error_mutex_);
        if (task < first_failed_) {
          first_failed_ = task;
          first_error_ = std::current_exception();
        }
        failed_.store(true);
        return;
      }
    }
  }
  void rethrow() const {
    if (first_error_) std::rethrow_exception(first_error_);
  }

 private:
  std::size_t n_tasks_;
  const TaskFn& fn_;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::exception_ptr first_error_;
  std::size_t first_failed_ = SIZE_MAX;
  std::mutex error_mutex_;
};

// Workers 1..n-1 kept alive between calls: awake a while after each
// (spin_until), then asleep on a condition variable.
class Pool {
 public:
  // Runs `job` on `workers` workers (the caller is worker 0). False when the
  // pool is busy: the caller then runs the job some other way.
  bool run(Job& job, int workers) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (int(threads_.size()) < workers - 1) {
        const int id = int(threads_.size()) + 1;
        threads_.emplace_back([this, id] { loop(id); });
        threads_.back().detach();  // idle at exit; the process ends them
      }
      job_ = &job;
      wanted_ = workers - 1;
      running_ = workers - 1;
      ++generation_;
      posted_.store(generation_, std::memory_order_release);
    }
    wake_.notify_all();
    job.work(0);
    spin_until([this] { return running_.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return running_ == 0; });
    job_ = nullptr;
    return true;
  }

 private:
  void loop(int id) {
    std::uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      if (generation_ == seen) {  // the next call, awake a while before sleeping
        lock.unlock();
        spin_until([&] { return posted_.load(std::memory_order_acquire) != seen; });
        lock.lock();
      }
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (id > wanted_) continue;  // this call wants fewer workers
      Job* job = job_;
      lock.unlock();
      job->work(id);
      lock.lock();
      if (--running_ == 0) done_.notify_one();
    }
  }

  // Returns once done() holds or after kSpin, without sleeping: a pass's
  // calls (projections, attention, output projection, chunk after chunk) come
  // microseconds apart, and a thread asleep on a condition variable took about
  // 40 us to wake on the AMD EPYC VM (a futex wake-up): a worker's share of
  // every call, and the caller's wait for the last worker, waited that long
  // (2 tasks of 50 us: 104 us a call asleep, 59 us awake). Past kSpin (between the
  // inputs of an --input-list, say) the threads sleep.
  template <class Done>
  static void spin_until(Done&& done) {
    constexpr auto kSpin = std::chrono::microseconds(100);
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 1; !done(); ++i) {
      pause();
      if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return;
    }
  }
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }

  std::mutex busy_;   // one call at a time
  std::mutex mutex_;  // guards the fields below
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  Job* job_ = nullptr;
  int wanted_ = 0;
  std::atomic<int> running_{0};  // workers still in the call (changed under mutex_)
  std::uint64_t generation_ = 0;
  std::atomic<std::uint64_t> posted_{0};  // generation_, for spin_until to read unlocked
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: its detached threads may outlive main
  return *p;
}

}  // namespace

void parallel_for(std::size_t n_tasks, int threads, const TaskFn& fn) {
  const int workers = static_cast<int>(
      std::max<std::size_t>(1, std::min<std::size_t>(resolve_threads(threads), n_tasks)));
  Job job(n_tasks, fn);
  if (workers == 1) {
    job.work(0);
  } else if (!pool().run(job, workers)) {
    std::vector<std::thread> own;
    own.reserve(static_cast<std::size_t>(workers - 1));
    for (int w = 1; w < workers; ++w) own.emplace_back([&job, w] { job.work(w); });
    job.work(0);
    for (auto& t : own) t.join();
  }
  job.rethrow();
}

void parallel_row_blocks(std::size_t rows, std::size_t block, int threads,
                         const std::function<void(std::size_t r0, std::size_t r1)>& fn) {
  parallel_for((rows + block - 1) / block, threads, [&](std::size_t task, int) {
    fn(task * block, std::min(rows, (task + 1) * block));
  });
}

}  // namespace attn::kernels

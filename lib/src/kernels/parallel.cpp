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

// Workers 1..n-1 kept alive between calls, sleeping on a condition variable.
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
    }
    wake_.notify_all();
    job.work(0);
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

  std::mutex busy_;   // one call at a time
  std::mutex mutex_;  // guards the fields below
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  Job* job_ = nullptr;
  int wanted_ = 0, running_ = 0;
  std::uint64_t generation_ = 0;
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

}  // namespace attn::kernels

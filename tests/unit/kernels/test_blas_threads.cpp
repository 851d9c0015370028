// attn::use_own_threads_only (kernels/blas.cpp): OpenBLAS, which every build
// loads (--check-f64's float64 products), starts cores - 1 threads of its own
// when it is loaded, each spinning on sched_yield for about 0.1 s: a short
// run's first tenth of a second with a core stolen (a GPT-2-small layer's
// cold compute 132 -> 88 ms once they were stopped again). Its own binary, so
// no other test's threads are counted.
#include <dirent.h>
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "attn/linear.h"

namespace {

int threads_of_this_process() {
  DIR* d = opendir("/proc/self/task");
  REQUIRE(d != nullptr);
  int n = 0;
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

}  // namespace

TEST_CASE("use_own_threads_only leaves the process one thread: OpenBLAS's are stopped") {
  MESSAGE("threads at start: " << threads_of_this_process() << " on "
                               << sysconf(_SC_NPROCESSORS_ONLN) << " CPUs");
  attn::use_own_threads_only();
  // blas_thread_shutdown_ joins them; a second of grace for the kernel to reap them
  int n = threads_of_this_process();
  for (int i = 0; i < 100 && n > 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = threads_of_this_process();
  }
  CHECK(n == 1);
}

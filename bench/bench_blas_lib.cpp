// bench_blas_lib: another BLAS library's sgemm beside attn::linear on the
// projections' shapes, in turns in one process: what the best library on this
// machine reaches against its FMA peak (Intel's MKL from Debian's non-free
// archive, BLIS, OpenBLAS at another core type...). The library is opened
// with dlopen (RTLD_DEEPBIND, so its own symbols win over the OpenBLAS this
// binary links, which it cannot be: bench_forward times that one) and its
// threads are its own (MKL_NUM_THREADS, BLIS_NUM_THREADS: set them to the
// cores; MKL from Debian also wants MKL_THREADING_LAYER=GNU).
//
// usage: bench_blas_lib LIBRARY.so [threads=0 (all cores)] [reps=5]
// Shapes (y = x W^T, x row-major (M, K), W (N, K)): GPT-2-small's Q|K|V at
// B*S = 4096 (4096 x 2304 x 768) and the Llama-3-8B-shaped layer's Q|K|V and
// output projection at S = 2048 (2048 x 6144 x 4096, 2048 x 4096 x 4096).
// Prints the median GFLOP/s of each (after one warm-up call) and checks that
// the library's product equals attn::linear's (within float rounding).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "attn/linear.h"

namespace {

// cblas_sgemm's C signature (enums as int: CblasRowMajor 101, NoTrans 111, Trans 112).
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                       float, float*, int);

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class F>
double median_seconds(int reps, F&& f) {
  f();  // warm-up: first touch, the library's thread start
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(seconds_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs("usage: bench_blas_lib LIBRARY.so [threads=0] [reps=5]\n", stderr);
    return 2;
  }
  const int threads = argc > 2 ? std::atoi(argv[2]) : 0;
  const int reps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
  if (lib == nullptr) {
    std::fprintf(stderr, "bench_blas_lib: %s\n", dlerror());
    return 1;
  }
  const auto sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "cblas_sgemm"));
  if (sgemm == nullptr) {
    std::fprintf(stderr, "bench_blas_lib: %s has no cblas_sgemm\n", argv[1]);
    return 1;
  }
  // The OpenBLAS linked here is single-threaded for attn-run's own workers
  // (use_own_threads_only); bench_forward times it with its own threads.
  if (reinterpret_cast<void*>(sgemm) == dlsym(RTLD_DEFAULT, "cblas_sgemm")) {
    std::fprintf(stderr,
                 "bench_blas_lib: %s is the OpenBLAS this binary links: see bench_forward\n",
                 argv[1]);
    return 1;
  }
  attn::use_own_threads_only();
  struct Shape {
    const char* name;
    std::size_t M, N, K;
  };
  const Shape shapes[] = {{"GPT-2 Q|K|V", 4096, 2304, 768},
                          {"Llama Q|K|V", 2048, 6144, 4096},
                          {"Llama out", 2048, 4096, 4096}};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (const Shape& s : shapes) {
    std::vector<float> x(s.M * s.K), w(s.N * s.K), y_lib(s.M * s.N), y_own(s.M * s.N);
    for (float& v : x) v = uniform(rng);
    for (float& v : w) v = uniform(rng);
    const attn::MatrixRef W{w.data(), s.N, s.K};
    const auto run_lib = [&] {
      sgemm(101, 111, 112, int(s.M), int(s.N), int(s.K), 1.0f, x.data(), int(s.K), w.data(),
            int(s.K), 0.0f, y_lib.data(), int(s.N));
    };
    const auto run_own = [&] {
      attn::linear(x.data(), s.K, s.M, W, nullptr, y_own.data(), s.N, threads);
    };
    // In turns, so a change of the host's speed moves both.
    std::vector<double> t_lib, t_own;
    for (int round = 0; round < 2; ++round) {
      t_lib.push_back(median_seconds(reps, run_lib));
      t_own.push_back(median_seconds(reps, run_own));
    }
    double worst = 0.0;  // |difference| / sqrt(K): float rounding of K products of |v| <= 1
    for (std::size_t i = 0; i < y_lib.size(); ++i)
      worst = std::max(worst, double(std::fabs(y_lib[i] - y_own[i])));
    worst /= std::sqrt(double(s.K));
    if (!(worst < 1e-4)) {
      std::fprintf(stderr,
                   "bench_blas_lib: %s: the library's product differs from attn::linear's\n",
                   s.name);
      return 1;
    }
    const double flops = 2.0 * double(s.M) * double(s.N) * double(s.K);
    const double lib_rate = flops / std::min(t_lib[0], t_lib[1]) / 1e9;
    const double own_rate = flops / std::min(t_own[0], t_own[1]) / 1e9;
    std::printf("%-12s M=%zu N=%zu K=%zu: library %.1f GFLOP/s, attn::linear %.1f (%.2fx)\n",
                s.name, s.M, s.N, s.K, lib_rate, own_rate, own_rate / lib_rate);
  }
  return 0;
}

// The private kernels (lib/src/kernels.h) against scalar versions: the
// polynomial exp against std::exp, the fused exp-and-sum on rows with masked
// (-inf) entries and odd tails, row max, and the task hand-out of the thread
// layer.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../lib/src/kernels.h"

using namespace attn::kernels;

TEST_CASE("kernels: polynomial exp is within 3 ulp-ish of std::exp on [-87, 0]") {
  double worst = 0;
  for (int i = 0; i <= 200000; ++i) {
    const float x = -87.0f + 87.0f * float(i) / 200000.0f;
    const double want = std::exp(double(x));
    worst = std::max(worst, std::fabs(exp_approx(x) - want) / want);
  }
  INFO("worst relative error " << worst);
  CHECK(worst < 4e-7);
  CHECK(exp_approx(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(exp_approx(0.0f) == 1.0f);
}

TEST_CASE("kernels: exp_shift_sum matches the scalar loop, masked entries become 0") {
  for (std::size_t n : {0u, 1u, 5u, 16u, 17u, 31u, 64u, 100u}) {
    CAPTURE(n);
    std::vector<float> row(n);
    for (std::size_t j = 0; j < n; ++j)
      row[j] = (j % 7 == 3) ? -std::numeric_limits<float>::infinity() : std::sin(float(j)) * 9.0f;
    const float mx = n ? row_max(row.data(), n) : 0.0f;
    float scalar_max = -std::numeric_limits<float>::infinity();
    for (float v : row) scalar_max = std::max(scalar_max, v);
    if (n) CHECK(mx == scalar_max);
    double want_sum = 0;
    std::vector<double> want(n);
    for (std::size_t j = 0; j < n; ++j) want_sum += want[j] = std::exp(double(row[j]) - mx);
    const float sum = exp_shift_sum(row.data(), n, mx);
    CHECK(sum == doctest::Approx(want_sum).epsilon(1e-6));
    for (std::size_t j = 0; j < n; ++j) {
      CHECK(row[j] == doctest::Approx(want[j]).epsilon(1e-6));
      if (j % 7 == 3) CHECK(row[j] == 0.0f);
    }
    scale_row(row.data(), n, 0.5f);
    for (std::size_t j = 0; j < n; ++j)
      CHECK(row[j] == doctest::Approx(want[j] * 0.5).epsilon(1e-6));
  }
  CHECK(row_max(nullptr, 0) == -std::numeric_limits<float>::infinity());
}

TEST_CASE("kernels: parallel_for runs every task exactly once and rethrows") {
  for (int threads : {1, 2, 5}) {
    std::vector<std::atomic<int>> hits(1000);
    std::atomic<int> max_worker{0};
    parallel_for(hits.size(), threads, [&](std::size_t t, int worker) {
      int seen = max_worker.load();
      while (worker > seen && !max_worker.compare_exchange_weak(seen, worker)) {
      }
      ++hits[t];
    });
    CHECK(max_worker.load() < threads);
    for (auto& h : hits) REQUIRE(h.load() == 1);
  }
  CHECK_THROWS_AS(parallel_for(50, 2,
                               [](std::size_t t, int) {
                                 if (t == 7) throw std::runtime_error("task 7");
                               }),
                  std::runtime_error);
  CHECK(resolve_threads(3) == 3);
  CHECK(resolve_threads(0) >= 1);
}

TEST_CASE("kernels: the persistent workers serve many calls, nested and concurrent ones too") {
  // Many calls in a row with varying worker counts: every task once per call.
  for (int round = 0; round < 200; ++round) {
    const int threads = 1 + round % 6;
    std::vector<std::atomic<int>> hits(37 + round % 50);
    parallel_for(hits.size(), threads, [&](std::size_t t, int worker) {
      REQUIRE(worker < threads);
      ++hits[t];
    });
    for (auto& h : hits) REQUIRE(h.load() == 1);
  }
  // A parallel_for inside a task (the pool is busy): runs on threads of its own.
  std::atomic<int> inner{0};
  parallel_for(4, 2,
               [&](std::size_t, int) { parallel_for(10, 2, [&](std::size_t, int) { ++inner; }); });
  CHECK(inner.load() == 40);
  // Two callers at once (forward() from two threads): both complete.
  std::atomic<int> a{0}, b{0};
  std::thread other([&] {
    for (int i = 0; i < 50; ++i) parallel_for(100, 2, [&](std::size_t, int) { ++a; });
  });
  for (int i = 0; i < 50; ++i) parallel_for(100, 2, [&](std::size_t, int) { ++b; });
  other.join();
  CHECK(a.load() == 5000);
  CHECK(b.load() == 5000);
  // The lowest failing task's error wins, whichever worker saw it first.
  for (int round = 0; round < 20; ++round) {
    try {
      parallel_for(64, 3, [](std::size_t t, int) {
        if (t == 5 || t == 40) throw std::runtime_error("task " + std::to_string(t));
      });
      FAIL("no error");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "task 5");
    }
  }
}

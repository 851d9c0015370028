// The private kernels (lib/src/kernels/kernels.h) against scalar versions: the
// polynomial exp against std::exp, the fused exp-and-sum on rows with masked
// (-inf) entries and odd tails, row max, and the task hand-out of the thread
// layer, and the tile products of kernels/tile_gemm.cpp against double loops.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "attn/attention.h"
#include "attn/error.h"
#include "kernels/kernels.h"
#include "kernels/micro.h"
#include "kernels/vec_exp.h"

using namespace attn::kernels;

TEST_CASE("kernels: polynomial exp is within about an ulp of exp on [-87, 0]") {
  double worst = 0;
  for (int i = 0; i <= 200000; ++i) {
    const float x = -87.0f + 87.0f * float(i) / 200000.0f;
    const double want = std::exp(double(x));
    worst = std::max(worst, std::fabs(exp_approx(x) - want) / want);
  }
  INFO("worst relative error " << worst);
  // 8.6e-8 here; Cephes' degree-7 form, used before, 1.17e-7. Without fused multiply-adds (the
  // portable SSE2 build) each step of the polynomial rounds twice: 1.04e-7, still an ulp.
#if defined(__FMA__)
  CHECK(worst < 1e-7);
#else
  CHECK(worst < 1.2e-7);
#endif
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

TEST_CASE("kernels: row_max finds the max and min wherever they lie, at every length") {
  // Four running maxima, a whole-vector loop and a scalar tail: the extremes
  // in each of them, at lengths around every multiple of the vector width.
  const float inf = std::numeric_limits<float>::infinity();
  for (std::size_t n = 1; n <= 200; ++n)
    for (std::size_t at : {std::size_t(0), n / 3, n / 2 + 1, n - 1}) {
      if (at >= n) continue;
      CAPTURE(n);
      CAPTURE(at);
      std::vector<float> row(n);
      for (std::size_t j = 0; j < n; ++j) row[j] = std::sin(float(j) * 0.7f) * 9.0f;
      row[at] = 50.0f;
      row[n - 1 - at] = n - 1 - at == at ? 50.0f : -50.0f;
      float least = 0.0f;
      CHECK(row_max(row.data(), n) == 50.0f);
      CHECK(row_max(row.data(), n, least) == 50.0f);
      CHECK(least == *std::min_element(row.begin(), row.end()));
      row[at] = inf;  // an overflowed score is seen wherever it is
      CHECK(row_max(row.data(), n, least) == inf);
      row[at] = -inf;
      row_max(row.data(), n, least);
      CHECK(least == -inf);
    }
  std::vector<float> masked(100, -inf);  // a row with no allowed key
  float least = 0.0f;
  CHECK(row_max(masked.data(), masked.size(), least) == -inf);
  CHECK(least == -inf);
}

TEST_CASE("kernels: exp_shifted gives exp_batch's bits for every d <= 0 and keeps NaN") {
  // Every 97th float from -0 down to -inf (about 22 million of the 2^31
  // non-positive ones: normal, subnormal, below the underflow and -inf), in
  // whole batches, and a NaN in each lane.
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> d;
  for (std::uint64_t bits = 0x80000000u; bits <= 0xff800000u; bits += 97) {
    const std::uint32_t b = std::uint32_t(bits);
    float x;
    std::memcpy(&x, &b, sizeof x);
    d.push_back(x);
  }
  for (float x : {-0.0f, 0.0f, kUnder, std::nextafter(kUnder, -inf), -inf}) d.push_back(x);
  while (d.size() % kLanes) d.push_back(-1.0f);
  // exp_shifted against exp_batch on every sample, and the scalar exp of the
  // digests' weights (exp_approx) against it on each batch's first.
  std::size_t differ = 0, scalar_differ = 0;
  for (std::size_t j = 0; j < d.size(); j += kLanes) {
    alignas(64) float got[kLanes], want[kLanes];
    exp_shifted(Batch::load_unaligned(d.data() + j)).store_aligned(got);
    exp_batch(Batch::load_unaligned(d.data() + j)).store_aligned(want);
    differ += std::size_t(std::memcmp(got, want, sizeof got) != 0);
    const float scalar = exp_approx(d[j]);
    scalar_differ += std::size_t(std::memcmp(&scalar, want, sizeof scalar) != 0);
  }
  CHECK(differ == 0);
  CHECK(scalar_differ == 0);
  for (std::size_t lane = 0; lane < kLanes; ++lane) {
    alignas(64) float x[kLanes], e[kLanes];
    std::fill(x, x + kLanes, -2.0f);
    x[lane] = std::numeric_limits<float>::quiet_NaN();
    exp_shifted(Batch::load_aligned(x)).store_aligned(e);
    CHECK(std::isnan(e[lane]));
    CHECK(e[(lane + 1) % kLanes] == exp_approx(-2.0f));
  }
  // exp_shift_sum's sum (of a whole batch or of the tail) carries a NaN
  // score, and +inf - +inf; exp(0) = 1 sums exactly.
  for (std::size_t at : {3u, 33u}) {
    std::vector<float> row(40, 1.0f);
    CHECK(exp_shift_sum(row.data(), row.size(), 1.0f) == 40.0f);
    std::fill(row.begin(), row.end(), 1.0f);
    row[at] = std::numeric_limits<float>::quiet_NaN();
    CHECK(std::isnan(exp_shift_sum(row.data(), row.size(), 1.0f)));
    std::fill(row.begin(), row.end(), 1.0f);
    row[at] = inf;
    CHECK(std::isnan(exp_shift_sum(row.data(), row.size(), inf)));
  }
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

TEST_CASE("kernels: a worker joins calls that follow closely (still awake) and after a pause") {
  // Two tasks that each wait for the other to start: both workers must be in
  // the call. Between calls a short gap (the worker still spinning) or 2 ms
  // (asleep on the condition variable, woken by the call).
  for (int round = 0; round < 40; ++round) {
    const bool pause = round % 2 == 1;
    if (pause) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::atomic<int> started{0};
    std::atomic<int> met{0};
    parallel_for(2, 2, [&](std::size_t, int) {
      ++started;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (started.load() < 2 && std::chrono::steady_clock::now() < until) {
      }
      if (started.load() == 2) ++met;
    });
    CAPTURE(round);
    CHECK(met.load() == 2);
  }
}

namespace {

// Uniform floats in [-1, 1) from a fixed LCG (no <random> distribution
// differences between libstdc++ versions).
std::vector<float> lcg_floats(std::size_t n, std::uint32_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = float(seed >> 8) / float(1u << 23) - 1.0f;
  }
  return v;
}

}  // namespace

TEST_CASE("kernels: tile products match double loops, remainders and diagonals included") {
  // Shapes around the micro-kernel's blocks (rows 6/8, columns 16/32 wide),
  // strides wider than the rows, as inside the projection buffers.
  for (std::size_t n : {1, 5, 8, 13, 128})
    for (std::size_t m : {1, 7, 32, 45, 256})
      for (std::size_t K : {1, 16, 64, 80})
        for (std::ptrdiff_t off : {std::ptrdiff_t(0), std::ptrdiff_t(-3), std::ptrdiff_t(20)})
          for (bool diagonal : {false, true}) {
            CAPTURE(n);
            CAPTURE(m);
            CAPTURE(K);
            CAPTURE(off);
            CAPTURE(diagonal);
            auto past = [&](std::size_t r, std::size_t j) {
              return diagonal && std::ptrdiff_t(j) > std::ptrdiff_t(r) + off;
            };
            // Scores: c (n, m) = 0.5 * a (n, K) kt (K, m), kt columns [col0, col0 + m)
            // of a packed (K, col0 + m + 3): a view that starts inside a panel gathers it.
            const std::size_t col0 = m % 2 ? 5 : 0;
            const std::size_t lda = K + 3, ldt = col0 + m + 3, ldc = m + 2;
            const auto a = lcg_floats(n * lda, 1), kt_all = lcg_floats(K * ldt, 2);
            std::vector<float> kt_packed(panels_floats(K, ldt));
            const Panels kt = pack_panels(kt_all.data(), ldt, 1, K, ldt, kt_packed.data());
            std::vector<float> c(n * ldc, 7.0f);
            tile_gemm(n, m, K, 0.5f, a.data(), lda, kt.cols_from(col0), 0.0f, c.data(), ldc,
                      diagonal ? Diagonal{Diagonal::columns, off} : Diagonal{});
            double worst = 0;
            for (std::size_t r = 0; r < n; ++r) {
              for (std::size_t j = 0; j < m; ++j) {
                double want = 0;
                for (std::size_t k = 0; k < K; ++k)
                  want += double(a[r * lda + k]) * kt_all[k * ldt + col0 + j];
                const float got = c[r * ldc + j];
                if (past(r, j))  // not needed: 0 or the value, never stale memory
                  REQUIRE((got == 0.0f || std::fabs(got - 0.5 * want) < 1e-4));
                else
                  worst = std::max(worst, std::fabs(got - 0.5 * want));
              }
              CHECK(c[r * ldc + m] == 7.0f);  // past the row: untouched
            }
            CHECK(worst < 1e-4);

            // P v: y (n, N) = p (n, m) v (m, N) + beta y, p 0 past the diagonal;
            // v rows [row0, row0 + m) of a packed (row0 + m, N), given transposed.
            const std::size_t row0 = n % 2 ? 3 : 0;
            const std::size_t N = K, ldp = m + 1, ldvt = row0 + m + 4, ldy = N + 2;
            auto p = lcg_floats(n * ldp, 3);
            for (std::size_t r = 0; r < n; ++r)
              for (std::size_t j = 0; j < m; ++j)
                if (past(r, j)) p[r * ldp + j] = 0;
            const auto vt = lcg_floats(N * ldvt, 4);  // (N, ldvt): v^T
            std::vector<float> v_packed(panels_floats(row0 + m, N));
            const Panels v = pack_panels(vt.data(), 1, ldvt, row0 + m, N, v_packed.data());
            for (float beta : {0.0f, 1.0f}) {
              std::vector<float> y = lcg_floats(n * ldy, 5), y0 = y;
              tile_gemm(n, N, m, 1.0f, p.data(), ldp, v.rows_from(row0), beta, y.data(), ldy,
                        diagonal ? Diagonal{Diagonal::depth, off} : Diagonal{});
              double worst_pv = 0;
              for (std::size_t r = 0; r < n; ++r) {
                for (std::size_t d = 0; d < N; ++d) {
                  double want = beta * y0[r * ldy + d];
                  for (std::size_t j = 0; j < m; ++j)
                    want += double(p[r * ldp + j]) * vt[d * ldvt + row0 + j];
                  worst_pv = std::max(worst_pv, std::fabs(y[r * ldy + d] - want));
                }
                CHECK(y[r * ldy + N] == y0[r * ldy + N]);  // past the row: untouched
              }
              CHECK(worst_pv < 1e-4);
            }
          }
}

TEST_CASE("kernels: P v cut into depth slices gives the bits of one pass") {
  // Where the CPU's cut asks for it (Intel: depths past 256 in slices of 256),
  // tile_gemm carries each block's sums from slice to slice: the same FMAs in
  // the same order as one pass (AMD's cut: none below 1024). Row blocks whose
  // causal depth ends in the first slice, in a later one, or at the tile's end.
  const DepthSlicing mine = depth_slicing();
  for (std::size_t n : {13, 128, 256})
    for (std::size_t m : {257, 300, 512})
      for (std::size_t N : {64, 80})
        for (std::ptrdiff_t off : {std::ptrdiff_t(-3), std::ptrdiff_t(0), std::ptrdiff_t(300)})
          for (bool diagonal : {false, true})
            for (float beta : {0.0f, 1.0f}) {
              CAPTURE(n);
              CAPTURE(m);
              CAPTURE(N);
              CAPTURE(off);
              CAPTURE(diagonal);
              CAPTURE(beta);
              const std::size_t ldp = m + 1, ldy = N + 2;
              auto p = lcg_floats(n * ldp, 3);
              for (std::size_t r = 0; r < n; ++r)
                for (std::size_t j = 0; j < m; ++j)
                  if (diagonal && std::ptrdiff_t(j) > std::ptrdiff_t(r) + off) p[r * ldp + j] = 0;
              const auto vt = lcg_floats(N * m, 4);  // (N, m): v^T
              std::vector<float> v_packed(panels_floats(m, N));
              const Panels v = pack_panels(vt.data(), 1, m, m, N, v_packed.data());
              const Diagonal diag = diagonal ? Diagonal{Diagonal::depth, off} : Diagonal{};
              const std::vector<float> y0 = lcg_floats(n * ldy, 5);
              std::vector<float> one_pass = y0, sliced = y0;
              set_depth_slicing({512, 1024});
              tile_gemm(n, N, m, 1.0f, p.data(), ldp, v, beta, one_pass.data(), ldy, diag);
              set_depth_slicing({256, 256});
              tile_gemm(n, N, m, 1.0f, p.data(), ldp, v, beta, sliced.data(), ldy, diag);
              set_depth_slicing(mine);
              CHECK(std::memcmp(one_pass.data(), sliced.data(), n * ldy * sizeof(float)) == 0);
              double worst = 0;
              for (std::size_t r = 0; r < n; r += 7)
                for (std::size_t d = 0; d < N; ++d) {
                  double want = beta * y0[r * ldy + d];
                  for (std::size_t j = 0; j < m; ++j)
                    want += double(p[r * ldp + j]) * vt[d * m + j];
                  worst = std::max(worst, std::fabs(sliced[r * ldy + d] - want));
                }
              CHECK(worst < 1e-4);
            }
}

TEST_CASE("kernels: scores over a head dimension past 256 cut into slices give one pass's bits") {
  // q k^T with D = 300 or 512 (past Intel's cut): sliced depths, with the causal
  // diagonal's blocks wholly past it zeroed once and the others carried over.
  const DepthSlicing mine = depth_slicing();
  for (std::size_t D : {300, 512})
    for (std::size_t n : {13, 128})
      for (bool diagonal : {false, true}) {
        CAPTURE(D);
        CAPTURE(n);
        CAPTURE(diagonal);
        const std::size_t m = 96, ldc = m + 1;
        const auto q = lcg_floats(n * D, 1), kt_all = lcg_floats(D * m, 2);
        std::vector<float> kt_packed(panels_floats(D, m));
        const Panels kt = pack_panels(kt_all.data(), m, 1, D, m, kt_packed.data());
        const Diagonal diag = diagonal ? Diagonal{Diagonal::columns, -40} : Diagonal{};
        std::vector<float> one_pass(n * ldc, 7.0f), sliced = one_pass;
        set_depth_slicing({512, 1024});
        tile_gemm(n, m, D, 0.5f, q.data(), D, kt, 0.0f, one_pass.data(), ldc, diag);
        set_depth_slicing({256, 256});
        tile_gemm(n, m, D, 0.5f, q.data(), D, kt, 0.0f, sliced.data(), ldc, diag);
        set_depth_slicing(mine);
        CHECK(std::memcmp(one_pass.data(), sliced.data(), n * ldc * sizeof(float)) == 0);
        double worst = 0;
        for (std::size_t r = 0; r < n; ++r)
          for (std::size_t j = 0; j < m; ++j) {
            if (diagonal && std::ptrdiff_t(j) > std::ptrdiff_t(r) - 40) continue;
            double want = 0;
            for (std::size_t k = 0; k < D; ++k) want += double(q[r * D + k]) * kt_all[k * m + j];
            worst = std::max(worst, std::fabs(sliced[r * ldc + j] - 0.5 * want));
          }
        CHECK(worst < 1e-4);
      }
}

TEST_CASE("kernels: linear (y = x W^T + b) matches double loops on every row and column") {
  // Rows around the panels (16/32 wide) and the task blocks (128 rows of x,
  // 256 rows of W), W rows not a multiple of the 6/8-row blocks, wide strides.
  // M = 1000: groups of panels at least twice the workers, each worker
  // packing its own (a last group of fewer panels, a last panel of 8 rows).
  for (std::size_t M : {1, 31, 33, 200, 1000})
    for (std::size_t N : {3, 64, 261})
      for (std::size_t K : {1, 48, 100})
        for (bool with_bias : {false, true})
          for (int threads : {1, 2, 3}) {
            CAPTURE(M);
            CAPTURE(N);
            CAPTURE(K);
            CAPTURE(with_bias);
            CAPTURE(threads);
            const std::size_t lda = K + 3, ldo = N + 5;
            const auto x = lcg_floats(M * lda, 6), W = lcg_floats(N * K, 7), b = lcg_floats(N, 8);
            std::vector<float> y(M * ldo, 7.0f);
            attn::linear(x.data(), lda, M, attn::MatrixRef{W.data(), N, K},
                         with_bias ? b.data() : nullptr, y.data(), ldo, threads);
            double worst = 0;
            for (std::size_t i = 0; i < M; ++i) {
              for (std::size_t n = 0; n < N; ++n) {
                double want = with_bias ? b[n] : 0.0;
                for (std::size_t k = 0; k < K; ++k) want += double(x[i * lda + k]) * W[n * K + k];
                worst = std::max(worst, std::fabs(y[i * ldo + n] - want));
              }
              CHECK(y[i * ldo + N] == 7.0f);  // past the row: untouched
            }
            CHECK(worst < 1e-4);
          }
}

TEST_CASE("kernels: linear at depths cut into slices matches double loops, as each CPU cuts them") {
  // Deep W's run in depth slices whose sums carry over, cut per CPU (AMD:
  // slices of 512 past 1024 inputs; others: 256 past 256, and past 1024 in
  // long tasks of 8 x panels by 128 W rows): every way on this machine, with
  // a whole number of slices, a last short one, and x rows both packed up
  // front (M = 33: one group; M = 200: two, one per worker on two threads)
  // and per worker (M = 600; and 1000 in long tasks: 4 groups of 8 panels,
  // the last of 8 rows).
  constexpr std::size_t kLastGroupRows = 8 * 32;  // every row of the last group is checked
  const attn::kernels::DepthSlicing mine = attn::kernels::depth_slicing();
  for (attn::kernels::DepthSlicing cut :
       {attn::kernels::DepthSlicing{512, 1024}, attn::kernels::DepthSlicing{256, 256},
        attn::kernels::DepthSlicing{256, 256, 1024}}) {
    attn::kernels::set_depth_slicing(cut);
    for (std::size_t M : {33, 200, 600, 1000})
      for (std::size_t K : {300, 768, 1025, 1536, 2100})
        for (int threads : {1, 2}) {
          if (M == 1000 && !cut.long_tasks(K)) continue;  // only long tasks' groups
          CAPTURE(cut.slice);
          CAPTURE(cut.long_tasks_above);
          CAPTURE(M);
          CAPTURE(K);
          CAPTURE(threads);
          const std::size_t N = 261, lda = K + 1;
          const auto x = lcg_floats(M * lda, 16), W = lcg_floats(N * K, 17), b = lcg_floats(N, 18);
          std::vector<float> y(M * N);
          attn::linear(x.data(), lda, M, attn::MatrixRef{W.data(), N, K}, b.data(), y.data(), N,
                       threads);
          double worst = 0;
          for (std::size_t i = 0; i < M; ++i) {
            if (M > 600 && i % 7 != 0 && i + kLastGroupRows < M) continue;  // time: a sample
            for (std::size_t n = 0; n < N; ++n) {
              double want = b[n];
              for (std::size_t k = 0; k < K; ++k) want += double(x[i * lda + k]) * W[n * K + k];
              worst = std::max(worst, std::fabs(y[i * N + n] - want));
            }
          }
          CHECK(worst < 1e-3);
        }
  }
  attn::kernels::set_depth_slicing(mine);
}

namespace {

// One head of L queries over T keys (D wide), self-contained: kt and v packed.
HeadView small_head(const float* q, std::size_t L, const Panels& kt, const Panels& v, float* y,
                    std::size_t T, std::size_t D) {
  HeadView hv;
  hv.q = q;
  hv.kt = kt;
  hv.v = v;
  hv.y = y;
  hv.ld_q = hv.ld_y = D;
  hv.L = L;
  hv.T = hv.T_ext = T;
  hv.D = D;
  hv.key_end = T;
  return hv;
}

// run() throws the overflow error of CONTRACT.md "Numerics" naming `where`.
template <class F>
void check_overflow_error(F&& run, const std::string& where) {
  try {
    run();
    FAIL("no error");
  } catch (const attn::Error& e) {
    CHECK(e.code() == attn::Exit::data);
    CHECK(std::string(e.what()).find("overflow float32 at " + where) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("kernels: one key's overflow among finite scores; past the causal diagonal, none") {
  // D = 2, two queries and two keys: q0.k1 = -1e40 (-inf in float32), every
  // other score finite. Without causal row 0 sees key 1: an overflow, though
  // its max is finite. Under causal key 1 is past row 0's diagonal (its
  // product is computed in a partial block, then masked): no error, and row
  // 0's output is v0.
  const std::size_t D = 2, T = 2;
  std::vector<float> q = {1.0f, -1e20f, 1.0f, 1.0f};
  std::vector<float> k = {1.0f, 0.0f, 0.0f, 1e20f};  // (T, D)
  std::vector<float> v = {3.0f, 4.0f, 5.0f, 6.0f};
  std::vector<float> kt_packed(panels_floats(D, T)), v_packed(panels_floats(T, D));
  for (bool causal : {false, true})
    for (bool maps : {false, true}) {
      CAPTURE(causal);
      CAPTURE(maps);
      std::vector<float> y(T * D, 0.0f), rows(T * T);
      HeadView hv = small_head(q.data(), 2, pack_panels(k.data(), 1, D, D, T, kt_packed.data()),
                               pack_panels(v.data(), D, 1, T, D, v_packed.data()), y.data(), T, D);
      hv.causal = causal;
      Scratch sc;
      const auto run = [&] {
        if (maps)
          attend_maps(hv, 0, 2, sc, rows.data());
        else
          attend_stream(hv, 0, 2, sc);
      };
      if (causal) {
        run();
        CHECK(y[0] == 3.0f);
        CHECK(y[1] == 4.0f);
        // Row 1: scores 1 and 1e20 (the second key takes all the weight).
        CHECK(y[2] == 5.0f);
        CHECK(y[3] == 6.0f);
      } else {
        check_overflow_error(run, "batch 0, head 0, query row 0");
      }
    }
}

TEST_CASE("kernels: scores that overflow to -inf are an overflow, not a masked row") {
  // One query, 3 keys, D = 2: q.k = -2e40 for every key, -inf in float32,
  // which must not pass for "no allowed key" (a row silently zeroed).
  const std::size_t D = 2, T = 3;
  std::vector<float> q = {1e20f, 1e20f}, kt(D * T, -1e20f), v(T * D, 1.0f), y(D, 0.0f);
  for (float sign : {-1.0f, 1.0f}) {
    CAPTURE(sign);
    for (float& x : kt) x = sign * 1e20f;
    std::vector<float> kt_packed(panels_floats(D, T)), v_packed(panels_floats(T, D));
    HeadView hv = small_head(q.data(), 1, pack_panels(kt.data(), T, 1, D, T, kt_packed.data()),
                             pack_panels(v.data(), D, 1, T, D, v_packed.data()), y.data(), T, D);
    hv.head = 1;
    Scratch sc;
    std::vector<float> rows(T);
    for (bool maps : {false, true}) {
      CAPTURE(maps);
      check_overflow_error(
          [&] {
            if (maps)
              attend_maps(hv, 0, 1, sc, rows.data());
            else
              attend_stream(hv, 0, 1, sc);
          },
          "batch 0, head 1, query row 0");
    }
  }
}

namespace {

// Softmax(q k^T * scale) v in double for row i of one head: causal (j <= i)
// and a sliding window of W keys (j > i - W, and j < i + W without causal).
std::vector<double> reference_row(const std::vector<float>& q, const std::vector<float>& k,
                                  const std::vector<float>& v, std::size_t i, std::size_t S,
                                  std::size_t D, double scale, bool causal, std::size_t W) {
  std::vector<double> s(S, -std::numeric_limits<double>::infinity()), y(D, 0.0);
  double m = -std::numeric_limits<double>::infinity(), l = 0.0;
  for (std::size_t j = 0; j < S; ++j) {
    if ((causal && j > i) || (W && j + W <= i) || (W && !causal && j >= i + W)) continue;
    double dot = 0.0;
    for (std::size_t d = 0; d < D; ++d) dot += double(q[i * D + d]) * double(k[j * D + d]);
    s[j] = dot * scale;
    m = std::max(m, s[j]);
  }
  for (std::size_t j = 0; j < S; ++j) {
    if (s[j] == -std::numeric_limits<double>::infinity()) continue;
    const double e = std::exp(s[j] - m);
    l += e;
    for (std::size_t d = 0; d < D; ++d) y[d] += e * double(v[j * D + d]);
  }
  for (double& x : y) x /= l;
  return y;
}

}  // namespace

TEST_CASE("kernels: a query block of 256 rows gives the bits of two blocks of 128") {
  // The forward pass takes 256 rows per task where a head's keys and values
  // outgrow the caches (query_block): rows are independent, and without a
  // window every block's key tiles start at key 0, so the context must not
  // depend on the block's size. S = 1200 (three key tiles, a short last block).
  const std::size_t D = 64, S = 1200;
  std::vector<float> q = lcg_floats(S * D, 31), k = lcg_floats(S * D, 32),
                     v = lcg_floats(S * D, 33);
  for (float& x : q) x *= 4.0f;  // sharper rows: a running max that moves between tiles
  std::vector<float> kt_packed(panels_floats(D, S)), v_packed(panels_floats(S, D));
  const Panels kt = pack_panels(k.data(), 1, D, D, S, kt_packed.data());
  const Panels vp = pack_panels(v.data(), D, 1, S, D, v_packed.data());
  // OpenBLAS's tiles (builds narrower than AVX2) keep 128 rows: their bits depend on a call's rows.
  const std::size_t long_block = micro::kOwnTiles ? kLongQueryBlock : kQueryBlock;
  CHECK(query_block(S, D) == kQueryBlock);
  CHECK(query_block(16384, 64) == long_block);
  CHECK(query_block(8192, 128) == long_block);
  const float scale = 0.125f;
  for (bool causal : {true, false})
    for (std::size_t window : {std::size_t(0), std::size_t(300)}) {
      CAPTURE(causal);
      CAPTURE(window);
      std::vector<float> y_short(S * D, 7.0f), y_long(S * D, 9.0f);  // every entry written
      Scratch sc;
      const auto run = [&](std::size_t rows, std::vector<float>& y) {
        for (std::size_t i0 = 0; i0 < S; i0 += rows) {
          HeadView hv = small_head(q.data(), S, kt, vp, y.data(), S, D);
          hv.scale = scale;
          hv.causal = causal;
          hv.window = window;
          attend_stream(hv, i0, std::min(rows, S - i0), sc);
        }
      };
      run(kQueryBlock, y_short);
      run(kLongQueryBlock, y_long);
      // With a window the blocks' key tiles start where their first row's window does.
      if (window == 0 && micro::kOwnTiles)
        CHECK(std::memcmp(y_short.data(), y_long.data(), S * D * sizeof(float)) == 0);
      double worst = 0.0;
      for (std::size_t i = 0; i < S; i += 7) {
        const std::vector<double> want = reference_row(q, k, v, i, S, D, scale, causal, window);
        for (std::size_t d = 0; d < D; ++d)
          for (const auto* y : {&y_short, &y_long})
            worst = std::max(worst, std::abs(double((*y)[i * D + d]) - want[d]));
      }
      CHECK(worst < 2e-6);
    }
}

TEST_CASE("kernels: scores over D_qk of q's and k's columns, context over Dv of v's (mla)") {
  // DeepSeek's mla lays q, k and v out at one head size Db = max(Dqk, Dv),
  // zeros past each one's own width (forward/mla.cpp). The kernels read Dqk
  // columns of q and k and Dv of v, and write Dv of y: here NaN past those
  // widths (a read would show) and y's other columns a sentinel. Against
  // the zero-padded layout run at Db: the same bits in the Dv columns.
  // S = 700: two key tiles and a short one, causal and not, both paths.
  const std::size_t S = 700, Db = 80;
  for (const auto& [Dqk, Dv] : {std::pair<std::size_t, std::size_t>{72, 40}, {48, 80}}) {
    CAPTURE(Dqk);
    CAPTURE(Dv);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> q = lcg_floats(S * Db, 41), k = lcg_floats(S * Db, 42),
                       v = lcg_floats(S * Db, 43);
    std::vector<float> q0 = q, k0 = k, v0 = v;  // zeros past the widths: the padded layout
    for (std::size_t i = 0; i < S; ++i)
      for (std::size_t d = 0; d < Db; ++d) {
        if (d >= Dqk) q[i * Db + d] = k[i * Db + d] = nan, q0[i * Db + d] = k0[i * Db + d] = 0.0f;
        if (d >= Dv) v[i * Db + d] = nan, v0[i * Db + d] = 0.0f;
      }
    std::vector<float> kt_packed(panels_floats(Db, S)), v_packed(panels_floats(S, Db));
    std::vector<float> kt0_packed(panels_floats(Db, S)), v0_packed(panels_floats(S, Db));
    const Panels kt = pack_panels(k.data(), 1, Db, Db, S, kt_packed.data());
    const Panels vp = pack_panels(v.data(), Db, 1, S, Db, v_packed.data());
    const Panels kt0 = pack_panels(k0.data(), 1, Db, Db, S, kt0_packed.data());
    const Panels vp0 = pack_panels(v0.data(), Db, 1, S, Db, v0_packed.data());
    for (bool causal : {true, false})
      for (bool maps : {false, true}) {
        CAPTURE(causal);
        CAPTURE(maps);
        std::vector<float> y(S * Db, 5.0f), y0(S * Db, 5.0f), rows(kQueryBlock * S);
        Scratch sc;
        for (std::size_t i0 = 0; i0 < S; i0 += kQueryBlock) {
          const std::size_t n = std::min(kQueryBlock, S - i0);
          HeadView narrow = small_head(q.data(), S, kt, vp, y.data(), S, Dqk);
          narrow.ld_q = narrow.ld_y = Db;
          narrow.Dv = Dv;
          HeadView padded = small_head(q0.data(), S, kt0, vp0, y0.data(), S, Db);
          for (HeadView* hv : {&narrow, &padded}) {
            hv->scale = 0.125f;
            hv->causal = causal;
            if (maps)
              attend_maps(*hv, i0, n, sc, rows.data());
            else
              attend_stream(*hv, i0, n, sc);
          }
        }
        std::size_t differ = 0, touched = 0;
        for (std::size_t i = 0; i < S; ++i)
          for (std::size_t d = 0; d < Db; ++d) {
            const float got = y[i * Db + d];
            if (d < Dv)
              differ += std::memcmp(&got, &y0[i * Db + d], sizeof(float)) != 0;
            else
              touched += got != 5.0f;
          }
        // OpenBLAS's tiles (builds narrower than AVX2) sum Dqk and Db terms in different orders.
        if (micro::kOwnTiles) CHECK(differ == 0);
        CHECK(touched == 0);
        double worst = 0.0;
        for (std::size_t i = 0; i < S; i += 9) {
          const std::vector<double> want = reference_row(q0, k0, v0, i, S, Db, 0.125, causal, 0);
          for (std::size_t d = 0; d < Dv; ++d)
            worst = std::max(worst, std::abs(double(y[i * Db + d]) - want[d]));
        }
        CHECK(worst < 2e-6);
      }
  }
}

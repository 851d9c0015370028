// The register-blocked micro-kernel behind attn-run's own small GEMMs (the
// attention tiles, kernels/tile_gemm.cpp; the projections, kernels/linear.cpp):
// an MR x NR block of C = A B held in registers (NR = two vectors of xsimd's
// widest batch) while k runs over the depth, one broadcast of A and two vector
// loads of B per k, then handed row by row to a store.
#pragma once

#include <cstddef>
#include <type_traits>

#include "kernels/simd.h"

namespace attn::kernels::micro {

using Batch = xsimd::batch<float>;
constexpr std::size_t kLanes = Batch::size;
constexpr std::size_t kNR = 2 * kLanes;
// 2 * MR accumulators plus two B vectors and a broadcast: 19 of AVX-512's 32
// registers, 15 of AVX2's 16.
constexpr std::size_t kMR = kLanes >= 16 ? 8 : 6;

// Where these beat OpenBLAS 0.3.21, measured on the two machines this
// project has run on (2 cores each):
// - attention tiles (128 x 256 x 64, no packing per call): AVX-512, one
//   core, 188 vs 83 GFLOP/s (OpenBLAS at its Haswell core type); AVX2 (AMD
//   EPYC, OpenBLAS's Zen kernels) 86-96 vs about 60.
// - projections: AVX-512, 1.3-1.7x OpenBLAS; AVX2, the same rate at
//   B*S = 4096 rows and without OpenBLAS's packing of all of W per call,
//   which took 10% of an --input-list run of 1,000 inputs of S = 128.
// So 8 lanes or more (AVX2, AVX-512) use them both. Narrower builds
// (-DATTN_NATIVE=OFF: SSE2) call OpenBLAS, whose kernels are chosen at run
// time.
constexpr bool kOwnTiles = kLanes >= 8;
constexpr bool kOwnProjections = kLanes >= 8;
// linear_own packs x with pack_panels, whose panels are kNR wide only where
// the tiles are attn-run's own.
static_assert(!kOwnProjections || kOwnTiles);
// Whether this build's float32 products call OpenBLAS (its thread count is
// then managed per call, kernels/blas.cpp). OpenBLAS is linked and loaded
// either way: --check-f64's float64 products are its dgemm.
constexpr bool kCallsBlas = !kOwnTiles || !kOwnProjections;

// store(r, lo, hi) receives row r < MR of the block: columns [0, kLanes) in
// lo, [kLanes, NR) in hi, of sum_k a[r][k] b[k][0..NR). a: MR rows of stride
// lda; b: K rows of NR floats, stride ldb. With `next` (MR rows of stride
// lda, the a of a coming block), one cache line of each of its rows is
// prefetched per 16 k: a projection's next rows of W come from L3 while this
// block runs (its blocks went 244 -> 262 GFLOP/s per core this way, Zen 5 at
// a peak of 265, W 2304 x 768).
// With `init` (MR rows of NR floats), the sums start from
// init's values instead of 0: a depth cut into slices, each slice's call
// carrying the last one's sums, gives the same FMAs in the same order, so the
// same bits as one call over the whole depth.
template <std::size_t MR, class Store>
inline void block(const float* a, std::size_t lda, const float* b, std::size_t ldb, std::size_t K,
                  const float* next, Store&& store, const float* init = nullptr) {
  constexpr std::size_t kLine = 64 / sizeof(float);
  Batch lo[MR], hi[MR];
  for (std::size_t r = 0; r < MR; ++r) {
    lo[r] = init ? Batch::load_unaligned(init + r * kNR) : Batch(0.0f);
    hi[r] = init ? Batch::load_unaligned(init + r * kNR + kLanes) : Batch(0.0f);
  }
  auto step = [&](std::size_t k) {
    const Batch b0 = Batch::load_unaligned(b + k * ldb);
    const Batch b1 = Batch::load_unaligned(b + k * ldb + kLanes);
    for (std::size_t r = 0; r < MR; ++r) {
      const Batch ar(a[r * lda + k]);
      lo[r] = xsimd::fma(ar, b0, lo[r]);
      hi[r] = xsimd::fma(ar, b1, hi[r]);
    }
  };
  if (!next) {
    // One plain loop: 3-5% faster than the prefetching one (Intel, one core).
    // Two k a pass: the attention tiles' products 2-5% faster (Intel, one
    // core, tile_gemm alone: P v 146-153 -> 156-158 GFLOP/s at D = 64, 145-151
    // -> 155-158 at D = 128); the same FMAs in the same order.
#pragma GCC unroll 2
    for (std::size_t k = 0; k < K; ++k) step(k);
  } else {
    for (std::size_t k0 = 0; k0 < K; k0 += kLine) {
      for (std::size_t r = 0; r < MR; ++r) __builtin_prefetch(next + r * lda + k0, 0, 3);
      const std::size_t k1 = k0 + kLine < K ? k0 + kLine : K;
      for (std::size_t k = k0; k < k1; ++k) step(k);
    }
  }
  for (std::size_t r = 0; r < MR; ++r) store(r, lo[r], hi[r]);
}

template <std::size_t MR, class Store>
inline void block(const float* a, std::size_t lda, const float* b, std::size_t ldb, std::size_t K,
                  Store&& store) {
  block<MR>(a, lda, b, ldb, K, static_cast<const float*>(nullptr), store);
}

// f(std::integral_constant<std::size_t, mr>{}) for a row count 1 <= mr <= kMR
// known only at run time (the last rows of a matrix).
template <std::size_t I = 1, class F>
inline void with_rows(std::size_t mr, F&& f) {
  if constexpr (I < kMR) {
    if (mr == I) return f(std::integral_constant<std::size_t, I>{});
    return with_rows<I + 1>(mr, f);
  } else {
    f(std::integral_constant<std::size_t, kMR>{});
  }
}

}  // namespace attn::kernels::micro

// Row scans of the map reductions (row_scan.h), in GCC/Clang vector
// extensions of 8 floats (AVX/AVX-512 registers under -march=native; SSE
// pairs otherwise), with a scalar tail.
#include "kernels/row_scan.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

// The vector helpers below are file-local: the ABI note a build without AVX
// gives for passing 8-float vectors by value does not concern them (the build
// passes -Wno-psabi, CMakeLists.txt).

namespace attn::kernels {
namespace {

typedef float f8 __attribute__((vector_size(32)));
typedef float f4 __attribute__((vector_size(16)));
typedef int i8 __attribute__((vector_size(32)));
typedef double d4 __attribute__((vector_size(32)));

f8 load8(const float* p) {
  f8 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

f8 splat(float x) { return f8{x, x, x, x, x, x, x, x}; }

// The two halves of an 8-float vector as doubles. With AVX one conversion
// per half (and one extract): GCC 12 built each half from its lanes, 11
// operations per 8 floats, which held sum_range to 8 floats per 3 cycles.
void widen(f8 v, d4& lo, d4& hi) {
#if defined(__AVX__)
  lo = d4(_mm256_cvtps_pd(_mm256_castps256_ps128(__m256(v))));
  hi = d4(_mm256_cvtps_pd(_mm256_extractf128_ps(__m256(v), 1)));
#else
  const f4 a = {v[0], v[1], v[2], v[3]}, b = {v[4], v[5], v[6], v[7]};
  lo = __builtin_convertvector(a, d4);
  hi = __builtin_convertvector(b, d4);
#endif
}

bool any_lane(i8 m) {
  const i8 a = m | __builtin_shufflevector(m, m, 4, 5, 6, 7, 0, 1, 2, 3);
  const i8 b = a | __builtin_shufflevector(a, a, 2, 3, 0, 1, 6, 7, 4, 5);
  return (b[0] | b[1]) != 0;
}

double hsum(d4 v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// ln(x) for normal x > 0, Cephes' logf in 8 lanes: x = m 2^e with m in
// [sqrt(1/2), sqrt(2)), ln(1 + (m - 1)) by its minimax polynomial. Lanes
// with x <= 0 give garbage the caller masks out; a subnormal x (a weight
// below 1.2e-38) gives a wrong log times x, i.e. about 0, as it should.
f8 log8(f8 x) {
  i8 bits;
  std::memcpy(&bits, &x, sizeof bits);
  i8 e = ((bits >> 23) & 0xff) - 126;  // x = m 2^e, m in [0.5, 1)
  const i8 mbits = (bits & 0x007fffff) | 0x3f000000;
  f8 m;
  std::memcpy(&m, &mbits, sizeof m);
  const i8 small = m < splat(0.707106781186547524f);  // -1 where m < sqrt(1/2)
  e += small;                                         // m -> 2m, e -> e - 1
  f8 add;
  const i8 mi_small = mbits & small;
  std::memcpy(&add, &mi_small, sizeof add);
  m = m + add - 1.0f;
  const f8 ef = __builtin_convertvector(e, f8);
  const f8 z = m * m;
  f8 y = splat(7.0376836292e-2f);
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z;
  y += ef * -2.12194440e-4f;
  y += z * -0.5f;
  return m + y + ef * 0.693359375f;
}

}  // namespace

RowScan scan_row(const float* p, std::size_t n, std::size_t i) {
  RowScan s;
  d4 total_lo = {}, total_hi = {}, plogp_lo = {}, plogp_hi = {}, dist_lo = {}, dist_hi = {};
  f8 best = splat(0.0f);  // weights are >= 0: a lane of zeros points at key 0
  i8 best_at = {};
  const f8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
  const i8 lane_i = {0, 1, 2, 3, 4, 5, 6, 7};
  const f8 fi = splat(float(i));
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const f8 v = load8(p + j);
    const i8 pos = v > splat(0.0f);
    if (!any_lane(pos)) continue;  // masked keys (a causal row's future): nothing to add
    const f8 lv = log8(v);
    f8 t;
    const i8 tb = [&] {
      f8 prod = v * lv;
      i8 b;
      std::memcpy(&b, &prod, sizeof b);
      return b & pos;  // 0 where v <= 0
    }();
    std::memcpy(&t, &tb, sizeof t);
    f8 d = fi - (splat(float(j)) + lane);
    d = d < splat(0.0f) ? -d : d;  // |i - j|, exact below 2^24
    const f8 vd = v * d;
    d4 a, b;
    widen(v, a, b);
    total_lo += a, total_hi += b;
    widen(t, a, b);
    plogp_lo += a, plogp_hi += b;
    widen(vd, a, b);
    dist_lo += a, dist_hi += b;
    const i8 better = v > best;  // strict: each lane keeps its first maximum
    best = better ? v : best;
    best_at = better ? (lane_i + int(j)) : best_at;
  }
  s.total = hsum(total_lo) + hsum(total_hi);
  s.plogp = hsum(plogp_lo) + hsum(plogp_hi);
  s.distance = hsum(dist_lo) + hsum(dist_hi);
  float top = -1.0f;
  std::size_t at = 0;
  for (int k = 0; k < 8 && j >= 8; ++k)  // the lanes' maxima: the lowest index among equals
    if (best[k] > top || (best[k] == top && std::size_t(best_at[k]) < at))
      top = best[k], at = std::size_t(best_at[k]);
  for (; j < n; ++j) {
    const float v = p[j];
    s.total += v;
    if (v > 0.0f) s.plogp += double(v * std::log(v));
    s.distance += double(v) * double(i > j ? i - j : j - i);
    if (v > top) top = v, at = j;
  }
  s.argmax = at;
  return s;
}

double sum_range(const float* p, std::size_t lo, std::size_t hi) {
  d4 a = {}, b = {};
  std::size_t j = lo;
  for (; j + 8 <= hi; j += 8) {
    d4 x, y;
    widen(load8(p + j), x, y);
    a += x, b += y;
  }
  double s = hsum(a) + hsum(b);
  for (; j < hi; ++j) s += p[j];
  return s;
}

std::size_t first_above(const float* p, std::size_t from, std::size_t n, float t) {
  std::size_t j = from;
  const f8 tv = splat(t);
  for (; j + 16 <= n; j += 16) {
    if (any_lane((load8(p + j) > tv) | (load8(p + j + 8) > tv))) break;
  }
  for (; j < n; ++j)
    if (p[j] > t) return j;
  return n;
}

template <class Index>
void top_k_update(const float* p, std::size_t n, Index j0, std::size_t K, float* values,
                  Index* indices, std::size_t& kept) {
  for (std::size_t j = 0;; ++j) {
    if ((j = first_above(p, j, n,
                         kept == K ? values[K - 1] : -std::numeric_limits<float>::infinity())) == n)
      return;
    const float v = p[j];
    // A later key goes after every kept value it does not exceed.
    std::size_t at = kept < K ? kept++ : K - 1;
    while (at > 0 && values[at - 1] < v) {
      values[at] = values[at - 1];
      indices[at] = indices[at - 1];
      --at;
    }
    values[at] = v;
    indices[at] = j0 + Index(j);
  }
}
template void top_k_update(const float*, std::size_t, std::int64_t, std::size_t, float*,
                           std::int64_t*, std::size_t&);
template void top_k_update(const float*, std::size_t, std::int32_t, std::size_t, float*,
                           std::int32_t*, std::size_t&);

bool top_k_by_slices(const float* p, std::size_t n, std::size_t K, float* values,
                     std::int64_t* indices) {
  const std::size_t m = n / kTopKGroups / 8 * 8;  // slice length, a multiple of the lanes
  if (K == 0 || m < K || m < 8) return false;
  thread_local std::vector<float> slice_max, sorted;
  slice_max.assign(p, p + m);
  for (std::size_t g = 1; g < kTopKGroups; ++g) {
    const float* q = p + g * m;
    for (std::size_t c = 0; c < m; c += 8) {
      const f8 a = load8(slice_max.data() + c), b = load8(q + c);
      const f8 top = a < b ? b : a;
      std::memcpy(slice_max.data() + c, &top, sizeof top);
    }
  }
  sorted = slice_max;
  std::nth_element(sorted.begin(), sorted.begin() + std::ptrdiff_t(K - 1), sorted.end(),
                   std::greater<float>());
  const float t = sorted[K - 1];
  if (!(t > 0.0f)) return false;  // mostly masked (an early causal row): the scan is faster
  thread_local std::vector<std::pair<float, std::int64_t>> cand;
  cand.clear();
  for (std::size_t c = 0; c < m; ++c)
    if (slice_max[c] >= t)
      for (std::size_t g = 0; g < kTopKGroups; ++g)
        if (p[g * m + c] >= t) cand.emplace_back(p[g * m + c], std::int64_t(g * m + c));
  for (std::size_t j = kTopKGroups * m; j < n; ++j)
    if (p[j] >= t) cand.emplace_back(p[j], std::int64_t(j));
  // At least K candidates: the K slice maxima that reach t are among them.
  std::partial_sort(cand.begin(), cand.begin() + std::ptrdiff_t(K), cand.end(),
                    [](const auto& a, const auto& b) {
                      return a.first > b.first || (a.first == b.first && a.second < b.second);
                    });
  for (std::size_t k = 0; k < K; ++k) values[k] = cand[k].first, indices[k] = cand[k].second;
  return true;
}

}  // namespace attn::kernels

// Softmax pieces on raw float rows, vectorized with xsimd: row max, a
// polynomial exp fused with the row sum, row scaling. exp dominates the
// non-GEMM time of attention (ARCHITECTURE.md), so it is one pass over the
// row, not a chain of lazy expressions.
// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512
// intrinsics as instantiated by xsimd 8.1; silence it for that header only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "attn/error.h"
#include "kernels/kernels.h"

namespace attn::kernels {
namespace {

using Batch = xsimd::batch<float>;
using IntBatch = xsimd::batch<std::int32_t>;
constexpr std::size_t kLanes = Batch::size;

// Cephes expf (Moshier): exp(x) = 2^n * exp(r), n = round(x / ln 2),
// r = x - n ln 2 in two parts, exp(r) by a degree-6 polynomial. Inputs below
// kUnder give exactly 0 (masked scores are -inf, and exp(-87) < float's
// normal range anyway).
constexpr float kOver = 88.0f;
constexpr float kUnder = -87.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kP0 = 1.9875691500e-4f, kP1 = 1.3981999507e-3f, kP2 = 8.3334519073e-3f,
                kP3 = 4.1665795894e-2f, kP4 = 1.6666665459e-1f, kP5 = 5.0000001201e-1f;

// p * 2^n for whole n in [-126, 127] (2^n a normal float, so the product is
// p * 2^n rounded once either way: the same bits). AVX-512's vscalefps in one
// instruction; else 2^n built in the exponent field, (n + 127) << 23.
inline Batch times_pow2(Batch p, Batch n) {
#if defined(__AVX512F__)
  if constexpr (kLanes == 16) return _mm512_scalef_ps(p, n);
#endif
  const IntBatch bits = xsimd::to_int((n + Batch(127.0f)) * Batch(8388608.0f));
  return p * xsimd::bitwise_cast<Batch>(bits);
}

inline Batch exp_batch(Batch x) {
  const auto underflow = x < Batch(kUnder);
  x = xsimd::min(x, Batch(kOver));
  x = xsimd::max(x, Batch(kUnder));
  const Batch n = xsimd::nearbyint(x * Batch(kLog2e));
  Batch r = xsimd::fnma(n, Batch(kLn2Hi), x);
  r = xsimd::fnma(n, Batch(kLn2Lo), r);
  Batch p = Batch(kP0);
  p = xsimd::fma(p, r, Batch(kP1));
  p = xsimd::fma(p, r, Batch(kP2));
  p = xsimd::fma(p, r, Batch(kP3));
  p = xsimd::fma(p, r, Batch(kP4));
  p = xsimd::fma(p, r, Batch(kP5));
  p = xsimd::fma(p, r * r, r + Batch(1.0f));
  return xsimd::select(underflow, Batch(0.0f), times_pow2(p, n));
}

inline float exp_scalar(float x) {
  if (x < kUnder) return 0.0f;
  x = std::min(x, kOver);
  const float n = std::nearbyint(x * kLog2e);
  float r = x - n * kLn2Hi;
  r = r - n * kLn2Lo;
  float p = kP0;
  p = p * r + kP1;
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  p = p * r + kP5;
  p = p * (r * r) + (r + 1.0f);
  return std::ldexp(p, static_cast<int>(n));
}

}  // namespace

float exp_approx(float x) { return exp_scalar(x); }

float row_max(const float* row, std::size_t n) {
  float best = -std::numeric_limits<float>::infinity();
  std::size_t j = 0;
  if (n >= kLanes) {
    Batch m = Batch::load_unaligned(row);
    for (j = kLanes; j + kLanes <= n; j += kLanes)
      m = xsimd::max(m, Batch::load_unaligned(row + j));
    alignas(64) float lanes[kLanes];
    m.store_aligned(lanes);
    for (float v : lanes) best = std::max(best, v);
  }
  for (; j < n; ++j) best = std::max(best, row[j]);
  return best;
}

bool any_nan(const float* row, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j)
    if (row[j] != row[j]) return true;
  return false;
}

float exp_shift_sum(float* row, std::size_t n, float shift) {
  const Batch s(shift);
  Batch sum(0.0f);
  // x - shift <= 0 or -inf for every finite or masked score; it is NaN only
  // for a NaN score or an infinite one (+inf - +inf): the overflow flag, one
  // compare per lane on values already in registers.
  auto bad = Batch(0.0f) != Batch(0.0f);
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const Batch d = Batch::load_unaligned(row + j) - s;
    bad = bad || (d != d);
    const Batch e = exp_batch(d);
    e.store_unaligned(row + j);
    sum += e;
  }
  float total = xsimd::any(bad) ? std::numeric_limits<float>::quiet_NaN() : xsimd::hadd(sum);
  if (j < n) {
    // Tail through a padded lane buffer so it uses the same vector exp.
    alignas(64) float tail[kLanes];
    const std::size_t left = n - j;
    for (std::size_t t = 0; t < kLanes; ++t) {
      tail[t] = t < left ? row[j + t] : -std::numeric_limits<float>::infinity();
      if (std::isnan(tail[t] - shift)) total = std::numeric_limits<float>::quiet_NaN();
    }
    const Batch e = exp_batch(Batch::load_aligned(tail) - s);
    e.store_aligned(tail);
    for (std::size_t t = 0; t < left; ++t) {
      row[j + t] = tail[t];
      total += tail[t];
    }
  }
  return total;
}

void scale_row(float* row, std::size_t n, float s) {
  const Batch f(s);
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    (Batch::load_unaligned(row + j) * f).store_unaligned(row + j);
  for (; j < n; ++j) row[j] *= s;
}

void softcap_row(float* row, std::size_t n, float c) {
  // As modeling_gemma2: tanh(s / c) * c, the division kept (not a reciprocal).
  const Batch cb(c);
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    (xsimd::tanh(Batch::load_unaligned(row + j) / cb) * cb).store_unaligned(row + j);
  for (; j < n; ++j) row[j] = std::tanh(row[j] / c) * c;
}

namespace {

[[noreturn]] void overflow(const HeadView& hv, std::size_t row, const char* what) {
  throw Error(Exit::data, "input: " + std::string(what) + " overflow float32 at batch " +
                              std::to_string(hv.batch) + ", head " + std::to_string(hv.head) +
                              ", query row " + std::to_string(row) +
                              " (finite inputs too large for float32 attention)");
}

// Every value of v[0..n) finite: x * 0 is NaN exactly when x is inf or NaN,
// and one NaN poisons the sum (vectorized; the rows here are short, so no
// early exit is needed).
bool all_finite(const float* v, std::size_t n) {
  Batch acc(0.0f);
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) acc += Batch::load_unaligned(v + j) * Batch(0.0f);
  float tail = 0.0f;
  for (; j < n; ++j) tail += v[j] * 0.0f;
  const float total = xsimd::hadd(acc) + tail;
  return total == total;
}

}  // namespace

void check_scores(const HeadView& hv, std::size_t i0, std::size_t n, std::size_t j0,
                  const float* tile, std::size_t ldt, std::size_t mb) {
  if (!hv.check_overflow) return;
  for (std::size_t r = 0; r < n; ++r)
    if (!all_finite(tile + r * ldt, causal_prefix(hv, i0 + r, j0, mb)))
      overflow(hv, i0 + r, "attention scores");
}

void check_row_sum(const HeadView& hv, std::size_t row, float sum) {
  if (!hv.check_overflow) return;
  if (!(sum >= 0.0f) || std::isinf(sum)) overflow(hv, row, "attention scores");
}

void check_output_rows(const HeadView& hv, std::size_t i0, std::size_t n) {
  if (!hv.check_overflow) return;
  for (std::size_t r = 0; r < n; ++r)
    if (!all_finite(hv.y + (i0 + r) * hv.ld_y, hv.D)) overflow(hv, i0 + r, "attention outputs");
}

}  // namespace attn::kernels

// The vectorized exp of the softmax (Cephes expf in xsimd lanes), shared by
// the softmax pieces (softmax.cpp) and the online row digests (row_digest.cpp)
// so both give the same weights bit for bit.
#pragma once

#include "kernels/simd.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <cstddef>
#include <cstdint>

namespace attn::kernels {

using Batch = xsimd::batch<float>;
using IntBatch = xsimd::batch<std::int32_t>;
constexpr std::size_t kLanes = Batch::size;

// exp(x) = 2^n * exp(r), n = round(x / ln 2), r = x - n ln 2 in two parts
// (Cody and Waite, as Cephes' expf), exp(r) by a degree-6 polynomial with
// p(0) = 1, its coefficients fitted for the least worst relative error on
// [-ln 2 / 2, ln 2 / 2] (Lawson's weighted least squares, float64, then
// rounded to float): over every 7th float of [-87, 0], at most 1.03 ulp from
// exp in float64, where Cephes' degree-7 form was 1.26 ulp with one more
// operation. Inputs below kUnder give exactly 0 (masked scores are -inf, and
// exp(-87) < float's normal range anyway).
constexpr float kOver = 88.0f;
constexpr float kUnder = -87.0f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
// p(r) = 1 + r (kC1 + r (kC2 + ... + r kC6))
constexpr float kC1 = 1.0f, kC2 = 4.9999994040e-1f, kC3 = 1.6666430235e-1f, kC4 = 4.1668005288e-2f,
                kC5 = 8.3741955459e-3f, kC6 = 1.3843607157e-3f;

// a * b + c and c - a * b, each rounded once. xsimd 8.1 has no AVX-512 kernel
// for fma: its generic a * b + c is fused only where the compiler contracts it
// (-O2 and up), so an -O1 build (the sanitizers') rounded twice: its exp was
// an ulp from the fused one on 1 float in 225.
inline Batch fused(Batch a, Batch b, Batch c) {
#if defined(__AVX512F__)
  if constexpr (kLanes == 16) return _mm512_fmadd_ps(a, b, c);
#endif
  return xsimd::fma(a, b, c);
}
inline Batch fused_neg(Batch a, Batch b, Batch c) {
#if defined(__AVX512F__)
  if constexpr (kLanes == 16) return _mm512_fnmadd_ps(a, b, c);
#endif
  return xsimd::fnma(a, b, c);
}

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

// The polynomial part of exp for x in [kUnder, kOver] (or NaN; exp_shifted
// also passes lower x and zeroes what comes out): returns p and sets
// n = round(x / ln 2), with exp(x) = p * 2^n, p the degree-6 polynomial of
// r = x - n ln 2. Shared by exp_batch and exp_shifted, so both
// give the same bits (and exp_approx, exp_batch on one lane).
inline Batch exp_reduced(Batch x, Batch& n) {
  n = xsimd::nearbyint(x * Batch(kLog2e));
  Batch r = fused_neg(n, Batch(kLn2Hi), x);
  r = fused_neg(n, Batch(kLn2Lo), r);
  Batch p = Batch(kC6);
  for (float c : {kC5, kC4, kC3, kC2, kC1}) p = fused(p, r, Batch(c));
  return fused(p, r, Batch(1.0f));
}

inline Batch exp_batch(Batch x) {
  const auto underflow = x < Batch(kUnder);
  x = xsimd::min(x, Batch(kOver));
  x = xsimd::max(x, Batch(kUnder));
  Batch n;
  const Batch p = exp_reduced(x, n);
  return xsimd::select(underflow, Batch(0.0f), times_pow2(p, n));
}

// exp(d) for a shifted score d = s - m of a softmax row: d <= 0, -inf (a
// masked key) or NaN (a NaN score, or +inf - +inf). The same bits as
// exp_batch for every d <= 0, and NaN for NaN, so a row's sum carries the
// NaN and no lane needs a check of its own. On AVX-512 the underflow's zeros
// come from a zero-masked vscalefps, so no clamp is needed: a lane below
// kUnder (-inf, or a large finite d whose reduction overflows to NaN) is
// zeroed whatever its p, and every other lane is in exp_batch's range. 16
// vector operations a batch with its load, store and sum (about 6.7 cycles on
// Zen 5, where the clamped degree-7 form took 8.9).
inline Batch exp_shifted(Batch d) {
#if defined(__AVX512F__)
  if constexpr (kLanes == 16) {
    const __mmask16 normal = _mm512_cmp_ps_mask(d, Batch(kUnder), _CMP_NLT_UQ);  // not d < kUnder
    Batch n;
    const Batch p = exp_reduced(d, n);
    return _mm512_maskz_scalef_ps(normal, p, n);
  }
#endif
  const Batch e = exp_batch(d);
  return xsimd::select(xsimd::isnan(d), d, e);
}

}  // namespace attn::kernels

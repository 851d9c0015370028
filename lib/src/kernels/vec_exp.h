// The vectorized exp of the softmax (Cephes expf in xsimd lanes), shared by
// the softmax pieces (softmax.cpp) and the online row digests (row_digest.cpp)
// so both give the same weights bit for bit.
#pragma once

// GCC 12 reports a false -Wmaybe-uninitialized inside its own AVX-512
// intrinsics as instantiated by xsimd 8.1; silence it for that header only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <cstddef>
#include <cstdint>

namespace attn::kernels {

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

// The polynomial part of exp for x clamped to [kUnder, kOver] (or NaN):
// returns p and sets n = round(x / ln 2), with exp(x) = p * 2^n, p the
// degree-6 polynomial of r = x - n ln 2. Shared by exp_batch and
// exp_shifted, so both give the same bits.
inline Batch exp_reduced(Batch x, Batch& n) {
  n = xsimd::nearbyint(x * Batch(kLog2e));
  Batch r = xsimd::fnma(n, Batch(kLn2Hi), x);
  r = xsimd::fnma(n, Batch(kLn2Lo), r);
  Batch p = Batch(kP0);
  p = xsimd::fma(p, r, Batch(kP1));
  p = xsimd::fma(p, r, Batch(kP2));
  p = xsimd::fma(p, r, Batch(kP3));
  p = xsimd::fma(p, r, Batch(kP4));
  p = xsimd::fma(p, r, Batch(kP5));
  return xsimd::fma(p, r * r, r + Batch(1.0f));
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
// NaN and no lane needs a check of its own: with d <= 0 the upper clamp has
// nothing to do, and the lower one keeps NaN (AVX's max returns its second
// operand when either is NaN). On AVX-512 the underflow's zeros come from a
// zero-masked vscalefps. 19 vector operations a batch with its load, store
// and sum, where exp_batch and a NaN check take 23.
inline Batch exp_shifted(Batch d) {
#if defined(__AVX512F__)
  if constexpr (kLanes == 16) {
    const __mmask16 normal = _mm512_cmp_ps_mask(d, Batch(kUnder), _CMP_NLT_UQ);  // not d < kUnder
    const Batch x = _mm512_max_ps(Batch(kUnder), d);                             // NaN stays NaN
    Batch n;
    const Batch p = exp_reduced(x, n);
    return _mm512_maskz_scalef_ps(normal, p, n);
  }
#endif
  const Batch e = exp_batch(d);
  return xsimd::select(xsimd::isnan(d), d, e);
}

}  // namespace attn::kernels

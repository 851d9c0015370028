// float32 values rounded to bfloat16 or float16 and back, as torch's
// .to(dtype) rounds them (nearest, ties to even; subnormals kept; past the
// largest finite value, inf): an embedding scaled in its table's dtype
// (token_input.cpp, Gemma's normalizer) rounds each product so.
//
// round_to is the plain definition; round_to_bf16 / round_to_f16 / round_scaled
// the fast forms, the same bits for every float (tests/unit/base/test_dtype_round.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "attn/dtype.h"
#include "base/float_bits.h"

namespace attn::detail {

// x rounded to nearest-even with `bits` significand bits (the leading one
// included) and no exponent below `min_exp` (subnormals): bfloat16 is (8,
// -126), float16 (11, -14). Exact in double: x / ulp is an integer-valued
// double's neighbour, rounded by nearbyint in the default mode (to even).
// inf and NaN as they are; float16's overflow (past 65504 after rounding) is
// inf, kept apart here (round_to_dtype).
inline float round_to(float x, int bits, int min_exp) {
  if (x == 0.0f || !std::isfinite(x)) return x;
  int e = 0;
  std::frexp(double(x), &e);  // x = m * 2^e, m in [0.5, 1): the leading bit is 2^(e-1)
  const int lead = std::max(e - 1, min_exp);
  const double ulp = std::ldexp(1.0, lead - (bits - 1));
  return static_cast<float>(std::nearbyint(double(x) / ulp) * ulp);
}

// bfloat16 is float32's upper half (the same exponent range, so its
// subnormals and overflow are float32's): the pattern rounded to its upper
// 16 bits, ties to even. inf and NaN as they are.
inline float round_to_bf16(float x) {
  const std::uint32_t b = bits_of(x);
  if ((b & 0x7f800000u) == 0x7f800000u) return x;
  return float_of((b + 0x7fffu + ((b >> 16) & 1u)) & 0xffff0000u);
}

// float16: the CPU's own conversion where the build has F16C (round to
// nearest even, subnormals, inf from 65520 up), else round_to. inf and NaN as
// they are.
inline float round_to_f16(float x) {
  if (!std::isfinite(x)) return x;
#if defined(__F16C__)
  return _cvtsh_ss(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#else
  const float r = round_to(x, 11, -14);
  return std::fabs(r) > 65504.0f ? std::copysign(std::numeric_limits<float>::infinity(), r) : r;
#endif
}

// One value in dtype t (bf16, f16; any other dtype as it is).
inline float round_to_dtype(float x, DType t) {
  if (t == DType::bf16) return round_to_bf16(x);
  if (t == DType::f2) return round_to_f16(x);
  return x;
}

// x[i] = round_to_dtype(x[i] * s, t) for i < n.
inline void round_scaled(float* x, std::size_t n, float s, DType t) {
  if (t == DType::bf16) {
    for (std::size_t i = 0; i < n; ++i) x[i] = round_to_bf16(x[i] * s);
  } else {
    for (std::size_t i = 0; i < n; ++i) x[i] = round_to_dtype(x[i] * s, t);
  }
}

}  // namespace attn::detail

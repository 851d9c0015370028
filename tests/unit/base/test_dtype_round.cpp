// The embedding scale's rounding to bfloat16 / float16 (base/dtype_round.h):
// the fast forms give round_to's bits (the plain definition, ties to even,
// subnormals, overflow to inf) for every kind of float, and torch's values
// at the edges.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/dtype_round.h"
#include "base/float_bits.h"

namespace {

using attn::DType;
using namespace attn::detail;

// round_to's float16, with its overflow to inf (what round_to_f16 must give).
float plain_f16(float x) {
  const float r = round_to(x, 11, -14);
  return std::isfinite(r) && std::fabs(r) > 65504.0f
             ? std::copysign(std::numeric_limits<float>::infinity(), r)
             : r;
}

// Patterns of every kind: random, float32 subnormals, near float32's top,
// float16's range (its subnormals, ties, the overflow edge).
std::vector<std::uint32_t> patterns() {
  std::vector<std::uint32_t> p;
  std::mt19937 g(7);
  for (int i = 0; i < 400000; ++i) {
    const std::uint32_t b = g();
    switch (i % 5) {
      case 0:
        p.push_back(b);
        break;
      case 1:
        p.push_back(b & 0x807fffffu);
        break;  // subnormals
      case 2:
        p.push_back(b | 0x7f000000u);
        break;  // near the top, inf, NaN
      case 3:
        p.push_back((b & 0x87ffffffu) | 0x30000000u);
        break;  // 2^-31 .. 2^16: float16's
      default:
        p.push_back((b & 0x8000e000u) | 0x33000000u | (b & 0x00ffe000u) | 0x1000u);  // ties
    }
  }
  for (float x : {0.0f, -0.0f, 65504.0f, 65519.996f, 65520.0f, -65520.0f, 1.0f + 1.0f / 256,
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::infinity()})
    p.push_back(bits_of(x));
  return p;
}

}  // namespace

TEST_CASE("dtype round: bfloat16 and float16 give round_to's bits for every kind of float") {
  std::size_t nan_bf16 = 0, nan_f16 = 0, checked = 0;
  for (std::uint32_t b : patterns()) {
    const float x = float_of(b);
    if (std::isnan(x)) {  // NaN stays NaN, the same bits
      nan_bf16 += bits_of(round_to_bf16(x)) == b;
      nan_f16 += bits_of(round_to_f16(x)) == b;
      continue;
    }
    ++checked;
    const std::uint32_t want_bf16 = bits_of(round_to(x, 8, -126)), want_f16 = bits_of(plain_f16(x));
    if (bits_of(round_to_bf16(x)) != want_bf16 || bits_of(round_to_f16(x)) != want_f16) {
      CAPTURE(b);
      CHECK(bits_of(round_to_bf16(x)) == want_bf16);
      CHECK(bits_of(round_to_f16(x)) == want_f16);
    }
  }
  CHECK(checked > 340000);  // a tenth of the patterns are NaN
  CHECK(nan_bf16 > 0);
  CHECK(nan_bf16 == nan_f16);
}

TEST_CASE("dtype round: torch's values at the edges, and the scaled block as one by one") {
  // torch.tensor(x).to(torch.bfloat16) / .to(torch.float16), back as float32.
  CHECK(round_to_bf16(1.0f + 1.0f / 256) == 1.0f);               // a tie: to even
  CHECK(round_to_bf16(1.0f + 3.0f / 256) == 1.0f + 4.0f / 256);  // a tie: to even, upward
  CHECK(std::isinf(round_to_bf16(std::numeric_limits<float>::max())));
  CHECK(round_to_f16(65504.0f) == 65504.0f);
  CHECK(round_to_f16(65519.0f) == 65504.0f);
  CHECK(std::isinf(round_to_f16(65520.0f)));
  CHECK(round_to_f16(1e-8f) == 0.0f);                     // below half the smallest subnormal
  CHECK(round_to_f16(6e-8f) == 5.9604644775390625e-08f);  // float16's smallest subnormal
  CHECK(round_to_f16(0.1f) == 0.0999755859375f);
  CHECK(round_to_bf16(0.1f) == 0.10009765625f);
  for (DType t : {DType::bf16, DType::f2, DType::f4}) {
    std::vector<float> x(1000), want(1000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(i) * 0.37f - 150.0f;
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = round_to_dtype(x[i] * 53.5f, t);
    round_scaled(x.data(), x.size(), 53.5f, t);
    CHECK(std::memcmp(x.data(), want.data(), x.size() * sizeof(float)) == 0);
  }
}

// PyTorch 1.13's CPU sampling kernels, rewritten in portable C++ so that
// they give the same bits on any machine (torch_rng.h). The references are
// ATen's own sources: core/TransformationHelper.h (uniform_real, normal),
// core/DistributionsHelper.h (uniform_real_distribution,
// normal_distribution), native/cpu/DistributionTemplates.h (uniform_kernel,
// normal_kernel, normal_fill_AVX2) and native/cpu/avx_mathfun.h (log256_ps,
// sincos256_ps: cephes' logf and sinf/cosf, eight lanes at a time).
//
// Bit-exactness of the float path: torch's AVX2 kernels are compiled with
// -mavx2 -mfma, and GCC fuses each multiply whose only use is an add into one
// fused multiply-add. Those fusions are written below as std::fma, and no
// other product here feeds an add, so a compiler that contracts (GCC
// -ffp-contract=fast, -march=native) and one that does not produce the same
// bits. Checked against torch's own kernels on all 2^24 inputs a float
// uniform draw can take.
#include "layer/torch_rng.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/float_bits.h"

namespace attn::detail {

namespace {

constexpr double kPi = 3.14159265358979323846;  // c10::pi<double>

// avx_mathfun.h's log256_ps, one lane: cephes' logf. x > 0 (here (0, 1]).
float cephes_log(float x) {
  x = std::max(x, float_of(0x00800000u));  // cut off denormals
  const std::int32_t exponent = static_cast<std::int32_t>(bits_of(x) >> 23) - 0x7f;
  x = float_of((bits_of(x) & ~0x7f800000u) | bits_of(0.5f));  // mantissa in [0.5, 1)
  float e = static_cast<float>(exponent);
  e = e + 1.0f;
  // if (x < SQRTHF) { e -= 1; x = x + x - 1; } else { x = x - 1; }
  const bool small = x < 0.707106781186547524f;
  const float tmp = small ? x : 0.0f;
  x = x - 1.0f;
  e = e - (small ? 1.0f : 0.0f);
  x = x + tmp;
  const float z = x * x;
  float y = std::fma(7.0376836292E-2f, x, -1.1514610310E-1f);
  y = std::fma(y, x, 1.1676998740E-1f);
  y = std::fma(y, x, -1.2420140846E-1f);
  y = std::fma(y, x, 1.4249322787E-1f);
  y = std::fma(y, x, -1.6668057665E-1f);
  y = std::fma(y, x, 2.0000714765E-1f);
  y = std::fma(y, x, -2.4999993993E-1f);
  y = std::fma(y, x, 3.3333331174E-1f);
  y = y * x;
  y = std::fma(y, z, e * -2.12194440e-4f);  // y * z + e * q1
  y = std::fma(-z, 0.5f, y);                // y - z * 0.5
  x = x + y;
  return std::fma(e, 0.693359375f, x);  // x + e * q2
}

// avx_mathfun.h's sincos256_ps, one lane: cephes' sinf and cosf together.
// x >= 0 and small (here [0, 2*pi)), so the integer conversion cannot overflow.
void cephes_sincos(float x, float* s, float* c) {
  std::uint32_t sign_sin = bits_of(x) & 0x80000000u;
  x = float_of(bits_of(x) & 0x7fffffffu);
  float y = x * 1.27323954473516f;                // 4 / pi
  std::int32_t j = static_cast<std::int32_t>(y);  // truncation, as cvttps
  j = (j + 1) & ~1;
  y = static_cast<float>(j);
  const std::uint32_t swap_sign_sin = static_cast<std::uint32_t>(j & 4) << 29;
  const bool first_poly = (j & 2) == 0;
  // Extended precision modular arithmetic: x = ((x - y*DP1) - y*DP2) - y*DP3.
  x = std::fma(y, -0.78515625f, x);
  x = std::fma(y, -2.4187564849853515625e-4f, x);
  x = std::fma(y, -3.77489497744594108e-8f, x);
  const std::uint32_t sign_cos = static_cast<std::uint32_t>(~(j - 2) & 4) << 29;
  sign_sin ^= swap_sign_sin;

  const float z = x * x;
  // cos polynomial, for 0 <= x <= pi/4
  float yc = std::fma(2.443315711809948E-005f, z, -1.388731625493765E-003f);
  yc = std::fma(yc, z, 4.166664568298827E-002f);
  yc = yc * z;
  yc = std::fma(yc, z, -(z * 0.5f));  // yc * z - z * 0.5
  yc = yc + 1.0f;
  // sin polynomial
  float ys = std::fma(-1.9515295891E-4f, z, 8.3321608736E-3f);
  ys = std::fma(ys, z, -1.6666654611E-1f);
  ys = ys * z;
  ys = std::fma(ys, x, x);
  // Select with the kernel's own masked adds and subtractions (signed zeros included).
  const float ysin2 = first_poly ? ys : 0.0f;
  const float ysin1 = first_poly ? 0.0f : yc;
  ys = ys - ysin2;
  yc = yc - ysin1;
  *s = float_of(bits_of(ysin1 + ysin2) ^ sign_sin);
  *c = float_of(bits_of(yc + ys) ^ sign_cos);
}

// normal_fill_16_AVX2, one lane at a time: Box-Muller on the 16 uniforms in
// data, pairing data[j] (radius) with data[j + 8] (angle).
void normal_fill_16(float* data, float std) {
  const float two_pi = static_cast<float>(2.0f * kPi);
  for (std::size_t j = 0; j < 8; ++j) {
    const float u1 = 1.0f - data[j];  // [0, 1) -> (0, 1] for log
    const float u2 = data[j + 8];
    const float radius = std::sqrt(-2.0f * cephes_log(u1));
    const float theta = two_pi * u2;
    float s, c;
    cephes_sincos(theta, &s, &c);
    const float n1 = radius * c;
    const float n2 = radius * s;
    data[j] = std::fma(n1, std, 0.0f);  // _mm256_fmadd_ps(n, std, mean): -0 becomes +0
    data[j + 8] = std::fma(n2, std, 0.0f);
  }
}

}  // namespace

std::uint64_t TorchGenerator::random64() {
  const std::uint64_t hi = random();
  const std::uint64_t lo = random();
  return (hi << 32) | lo;  // detail::make64BitsFrom32Bits(hi, lo)
}

// uniform_real<float>: the 24 low bits of one draw times 2^-24, in double.
float TorchGenerator::uniform01_float() {
  return static_cast<float>(static_cast<double>(random() & 0xFFFFFFu) * (1.0 / 16777216.0));
}

// uniform_real<double>: the 53 low bits of random64() times 2^-53.
double TorchGenerator::uniform01_double() {
  return static_cast<double>(random64() & ((std::uint64_t(1) << 53) - 1)) *
         (1.0 / 9007199254740992.0);
}

double TorchGenerator::normal_double() {
  if (next_double_normal_) {
    const double cached = *next_double_normal_;
    next_double_normal_.reset();
    return cached;
  }
  const double u1 = uniform01_double();
  const double u2 = uniform01_double();
  const double r = std::sqrt(-2.0 * std::log(1.0 - u2));
  const double theta = 2.0 * kPi * u1;
  next_double_normal_ = r * std::sin(theta);
  return r * std::cos(theta);
}

// uniform_kernel on float: from and to are cast to float first and their
// difference taken in float; each value is formed in double and rounded once.
void TorchGenerator::uniform(float* out, std::size_t n, double from, double to) {
  const float f = static_cast<float>(from);
  const double span = static_cast<double>(static_cast<float>(to) - f);
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(random() & 0xFFFFFFu) * (1.0 / 16777216.0);
    out[i] = static_cast<float>(x * span + static_cast<double>(f));
  }
}

void TorchGenerator::normal(float* out, std::size_t n, double std) {
  if (n < 16) {  // cpu_serial_kernel over at::normal_distribution<double>(0, std)
    // transformation::normal: val * std + mean, mean 0 (so a -0 becomes +0).
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(normal_double() * std + 0.0);
    return;
  }
  // normal_fill_AVX2: n uniforms, Box-Muller in blocks of 16; a ragged tail
  // redraws 16 fresh uniforms for the last 16 values.
  const float s = static_cast<float>(std);
  for (std::size_t i = 0; i < n; ++i) out[i] = uniform01_float();
  for (std::size_t i = 0; i + 16 <= n; i += 16) normal_fill_16(out + i, s);
  if (n % 16 != 0) {
    float* tail = out + n - 16;
    for (std::size_t i = 0; i < 16; ++i) tail[i] = uniform01_float();
    normal_fill_16(tail, s);
  }
}

}  // namespace attn::detail

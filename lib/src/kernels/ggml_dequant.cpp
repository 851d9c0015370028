// ggml's dequantization (ggml_dequant.h).
//
// Block layouts are those of ggml/src/ggml-common.h (offsets in bytes below);
// each dequant_<type> follows ggml-quants.c's dequantize_row_<type>: the same
// element order, the same integer decoding, the same float operations in the
// same order (a scale is converted from fp16 first, then multiplied by the
// integer sub-scale, then by the quant: (d * sc) * q, as ggml writes
// `d * sc[is] * q1`). Blocks are read byte by byte (no struct punning), so
// the code is independent of the host's alignment rules.
//
// The AVX2 paths (Q4_K, Q6_K, Q5_K, Q8_0, Q4_0) do exactly the scalar
// operations eight lanes at a time, and F16 uses F16C's conversion where
// compiled in; test_gguf checks them bit for bit against
// dequantize_row_scalar, ggml_check/compare_ggml.sh against ggml.
#include "kernels/ggml_dequant.h"

#include <cstring>

#if defined(__AVX2__) || defined(__F16C__)
#include <immintrin.h>
#endif

#include "base/float_bits.h"

namespace attn::kernels {

namespace {

using detail::float_of;

// ggml-common.h kvalues_iq4nl: the 16 levels of IQ4_NL and IQ4_XS.
constexpr std::int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};
// ggml-common.h kvalues_mxfp4: E2M1 values, doubled (the scale is halved).
constexpr std::int8_t kMxfp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

inline std::uint16_t u16_at(const std::uint8_t* p) {
  return std::uint16_t(p[0] | (unsigned(p[1]) << 8));
}
inline std::uint32_t u32_at(const std::uint8_t* p) {
  return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) |
         (std::uint32_t(p[3]) << 24);
}
inline float f16_at(const std::uint8_t* p) { return fp16_to_fp32(u16_at(p)); }

// `v` unchanged, through an empty asm the optimizer cannot see into, so the
// product passed through it is never fused with the subtraction after it
// (clang contracts `a * b - c` within a statement by default, GCC across
// statements and through vector intrinsics). For finite scales fusing
// changes nothing (the product is exact); this keeps the scalar and SIMD
// paths of Q4_K and Q5_K identical bit for bit even for NaN scales, where
// the NaN that wins depends on fusion.
template <class T>
inline T unfused(T v) {
#if defined(__GNUC__) && defined(__x86_64__)
  __asm__("" : "+x"(v));
#elif defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(v));
#endif
  return v;
}

// ggml-impl.h ggml_e8m0_to_fp32_half: 2^(e - 128), the two smallest subnormal.
inline float e8m0_half(std::uint8_t e) {
  return float_of(e < 2 ? std::uint32_t(0x00200000) << e : std::uint32_t(e - 1) << 23);
}

// ggml-quants.c get_scale_min_k4: the 6-bit scale and min of sub-block j
// (0..7) packed in the 12 bytes of Q4_K and Q5_K.
inline void scale_min_k4(int j, const std::uint8_t* q, int& sc, int& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// ---- one block each, scalar: the reference semantics ----

// Q4_0, 18 bytes: d (f16) @0, qs[16] @2. y = (q - 8) * d.
void block_q4_0(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  const std::uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = float((qs[j] & 0x0F) - 8) * d;
    y[j + 16] = float((qs[j] >> 4) - 8) * d;
  }
}

// Q4_1, 20 bytes: d @0, m @2, qs[16] @4. y = q * d + m.
void block_q4_1(const std::uint8_t* b, float* y) {
  const float d = f16_at(b), m = f16_at(b + 2);
  const std::uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = float(qs[j] & 0x0F) * d + m;
    y[j + 16] = float(qs[j] >> 4) * d + m;
  }
}

// Q5_0, 22 bytes: d @0, qh (u32) @2, qs[16] @6. y = (q - 16) * d.
void block_q5_0(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  const std::uint32_t qh = u32_at(b + 2);
  const std::uint8_t* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    const int h0 = int(((qh >> j) << 4) & 0x10), h1 = int((qh >> (j + 12)) & 0x10);
    y[j] = float(((qs[j] & 0x0F) | h0) - 16) * d;
    y[j + 16] = float(((qs[j] >> 4) | h1) - 16) * d;
  }
}

// Q5_1, 24 bytes: d @0, m @2, qh @4, qs[16] @8. y = q * d + m.
void block_q5_1(const std::uint8_t* b, float* y) {
  const float d = f16_at(b), m = f16_at(b + 2);
  const std::uint32_t qh = u32_at(b + 4);
  const std::uint8_t* qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    const int h0 = int(((qh >> j) << 4) & 0x10), h1 = int((qh >> (j + 12)) & 0x10);
    y[j] = float((qs[j] & 0x0F) | h0) * d + m;
    y[j + 16] = float((qs[j] >> 4) | h1) * d + m;
  }
}

// Q8_0, 34 bytes: d @0, qs[32] (int8) @2. y = q * d.
void block_q8_0(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  for (int j = 0; j < 32; ++j) y[j] = float(std::int8_t(b[2 + j])) * d;
}

// MXFP4, 17 bytes: e (E8M0) @0, qs[16] @1. y = kvalues[q] * 2^(e-128).
void block_mxfp4(const std::uint8_t* b, float* y) {
  const float d = e8m0_half(b[0]);
  const std::uint8_t* qs = b + 1;
  for (int j = 0; j < 16; ++j) {
    y[j] = float(kMxfp4Values[qs[j] & 0x0F]) * d;
    y[j + 16] = float(kMxfp4Values[qs[j] >> 4]) * d;
  }
}

// IQ4_NL, 18 bytes: d @0, qs[16] @2. y = d * kvalues[q].
void block_iq4_nl(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  const std::uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * float(kIq4nlValues[qs[j] & 0x0F]);
    y[j + 16] = d * float(kIq4nlValues[qs[j] >> 4]);
  }
}

// Q2_K, 84 bytes: scales[16] @0 (low nibble scale, high nibble min),
// qs[64] @16 (2 bits), d @80, dmin @82. 16 groups of 16:
// y = (d * sc) * q - (dmin * m).
void block_q2_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* sc = b;
  const float d = f16_at(b + 80), dmin = f16_at(b + 82);
  int is = 0;
  for (int n = 0; n < 2; ++n) {
    const std::uint8_t* q = b + 16 + 32 * n;
    for (int shift = 0; shift < 8; shift += 2) {
      for (int half = 0; half < 2; ++half) {
        const float dl = d * float(sc[is] & 0xF), ml = dmin * float(sc[is] >> 4);
        ++is;
        for (int l = 0; l < 16; ++l) *y++ = dl * float((q[l + 16 * half] >> shift) & 3) - ml;
      }
    }
  }
}

// Q3_K, 110 bytes: hmask[32] @0 (high bit, inverted), qs[64] @32 (low 2
// bits), scales[12] @96 (sixteen 6-bit scales, biased by 32), d @108.
// y = (d * (sc - 32)) * (q - (hbit ? 0 : 4)).
void block_q3_k(const std::uint8_t* b, float* y) {
  const std::uint8_t* hm = b;
  const std::uint8_t* s = b + 96;
  const float d = f16_at(b + 108);
  // The unpacking of ggml's kmask1/kmask2 shuffle, sub-block j: low 4 bits
  // from byte j (j < 8) or the high nibble of byte j - 8, high 2 bits from
  // byte 8 + j % 4 at bit 2 * (j / 4).
  int scales[16];
  for (int j = 0; j < 16; ++j) {
    const int low = j < 8 ? s[j] & 0xF : s[j - 8] >> 4;
    const int high = (s[8 + (j & 3)] >> (2 * (j / 4))) & 3;
    scales[j] = (low | (high << 4)) - 32;
  }
  int is = 0;
  for (int n = 0; n < 2; ++n) {
    const std::uint8_t* q = b + 32 + 32 * n;
    for (int j = 0; j < 4; ++j) {
      const int shift = 2 * j;
      const std::uint8_t m = std::uint8_t(1u << (4 * n + j));
      for (int half = 0; half < 2; ++half) {
        const float dl = d * float(scales[is++]);
        for (int l = 16 * half; l < 16 * half + 16; ++l)
          *y++ = dl * float(((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
      }
    }
  }
}

// Q4_K, 144 bytes: d @0, dmin @2, scales[12] @4 (eight 6-bit scales and
// mins), qs[128] @16. 8 groups of 32: y = (d * sc) * q - (dmin * m).
void block_q4_k(const std::uint8_t* b, float* y) {
  const float d = f16_at(b), dmin = f16_at(b + 2);
  const std::uint8_t* scales = b + 4;
  const std::uint8_t* q = b + 16;
  for (int j = 0; j < 8; j += 2, q += 32) {
    int sc, m;
    scale_min_k4(j, scales, sc, m);
    const float d1 = d * float(sc), m1 = dmin * float(m);
    scale_min_k4(j + 1, scales, sc, m);
    const float d2 = d * float(sc), m2 = dmin * float(m);
    for (int l = 0; l < 32; ++l) *y++ = unfused(d1 * float(q[l] & 0xF)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = unfused(d2 * float(q[l] >> 4)) - m2;
  }
}

// Q5_K, 176 bytes: d @0, dmin @2, scales[12] @4, qh[32] @16 (fifth bit),
// qs[128] @48. y = (d * sc) * q - (dmin * m).
void block_q5_k(const std::uint8_t* b, float* y) {
  const float d = f16_at(b), dmin = f16_at(b + 2);
  const std::uint8_t* scales = b + 4;
  const std::uint8_t* qh = b + 16;
  const std::uint8_t* ql = b + 48;
  for (int j = 0; j < 8; j += 2, ql += 32) {
    const std::uint8_t u1 = std::uint8_t(1u << j), u2 = std::uint8_t(2u << j);
    int sc, m;
    scale_min_k4(j, scales, sc, m);
    const float d1 = d * float(sc), m1 = dmin * float(m);
    scale_min_k4(j + 1, scales, sc, m);
    const float d2 = d * float(sc), m2 = dmin * float(m);
    for (int l = 0; l < 32; ++l)
      *y++ = unfused(d1 * float((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0))) - m1;
    for (int l = 0; l < 32; ++l)
      *y++ = unfused(d2 * float((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0))) - m2;
  }
}

// Q6_K, 210 bytes: ql[128] @0 (low 4 bits), qh[64] @128 (high 2 bits),
// scales[16] (int8) @192, d @208. y = (d * sc) * (q - 32).
void block_q6_k(const std::uint8_t* b, float* y) {
  const float d = f16_at(b + 208);
  for (int n = 0; n < 2; ++n, y += 128) {
    const std::uint8_t* ql = b + 64 * n;
    const std::uint8_t* qh = b + 128 + 32 * n;
    const std::int8_t* sc = reinterpret_cast<const std::int8_t*>(b + 192 + 8 * n);
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * float(sc[is]) * float(q1);
      y[l + 32] = d * float(sc[is + 2]) * float(q2);
      y[l + 64] = d * float(sc[is + 4]) * float(q3);
      y[l + 96] = d * float(sc[is + 6]) * float(q4);
    }
  }
}

// IQ4_XS, 136 bytes: d @0, scales_h (u16) @2, scales_l[4] @4, qs[128] @8.
// 8 groups of 32: y = (d * (ls - 32)) * kvalues[q].
void block_iq4_xs(const std::uint8_t* b, float* y) {
  const float d = f16_at(b);
  const unsigned scales_h = u16_at(b + 2);
  const std::uint8_t* scales_l = b + 4;
  const std::uint8_t* qs = b + 8;
  for (int ib = 0; ib < 8; ++ib, y += 32, qs += 16) {
    const int ls =
        ((scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF) | (((scales_h >> (2 * ib)) & 3) << 4);
    const float dl = d * float(ls - 32);
    for (int j = 0; j < 16; ++j) {
      y[j] = dl * float(kIq4nlValues[qs[j] & 0xF]);
      y[j + 16] = dl * float(kIq4nlValues[qs[j] >> 4]);
    }
  }
}

template <void (*Block)(const std::uint8_t*, float*), int kElems, int kBytes>
void blocks(const void* src, float* dst, std::size_t n) {
  const auto* b = static_cast<const std::uint8_t*>(src);
  for (std::size_t i = 0; i < n / kElems; ++i) Block(b + i * kBytes, dst + i * kElems);
}

void rows_f32(const void* src, float* dst, std::size_t n) {
  if (n > 0) std::memcpy(dst, src, n * sizeof(float));  // dst may be null when n is 0
}

void rows_f16(const void* src, float* dst, std::size_t n) {
  const auto* b = static_cast<const std::uint8_t*>(src);
  for (std::size_t i = 0; i < n; ++i) dst[i] = f16_at(b + 2 * i);
}

// ggml_compute_bf16_to_fp32: the 16 bits on top, NaNs kept as they are.
void rows_bf16(const void* src, float* dst, std::size_t n) {
  const auto* b = static_cast<const std::uint8_t*>(src);
  for (std::size_t i = 0; i < n; ++i) dst[i] = float_of(std::uint32_t(u16_at(b + 2 * i)) << 16);
}

#if defined(__AVX2__)

// Eight int32 lanes -> float, times `scale`: the scalar `float(q) * d`.
inline void store8(float* y, __m256i q, __m256 scale) {
  _mm256_storeu_ps(y, _mm256_mul_ps(_mm256_cvtepi32_ps(q), scale));
}
// (d1 * q) - m1, eight lanes.
inline void store8_min(float* y, __m256i q, __m256 d1, __m256 m1) {
  _mm256_storeu_ps(y, _mm256_sub_ps(unfused(_mm256_mul_ps(d1, _mm256_cvtepi32_ps(q))), m1));
}
// 32 bytes -> four groups of 8 int32 (unsigned bytes).
inline void store32_min(float* y, __m256i bytes, __m256 d1, __m256 m1) {
  const __m128i lo = _mm256_castsi256_si128(bytes), hi = _mm256_extracti128_si256(bytes, 1);
  store8_min(y, _mm256_cvtepu8_epi32(lo), d1, m1);
  store8_min(y + 8, _mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)), d1, m1);
  store8_min(y + 16, _mm256_cvtepu8_epi32(hi), d1, m1);
  store8_min(y + 24, _mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8)), d1, m1);
}

void block_q4_k_avx2(const std::uint8_t* b, float* y) {
  const float d = f16_at(b), dmin = f16_at(b + 2);
  const std::uint8_t* scales = b + 4;
  const std::uint8_t* q = b + 16;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int j = 0; j < 8; j += 2, q += 32, y += 64) {
    int sc, m;
    scale_min_k4(j, scales, sc, m);
    const float d1 = d * float(sc), m1 = dmin * float(m);
    scale_min_k4(j + 1, scales, sc, m);
    const float d2 = d * float(sc), m2 = dmin * float(m);
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    store32_min(y, _mm256_and_si256(bytes, low4), _mm256_set1_ps(d1), _mm256_set1_ps(m1));
    store32_min(y + 32, _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4), _mm256_set1_ps(d2),
                _mm256_set1_ps(m2));
  }
}

void block_q5_k_avx2(const std::uint8_t* b, float* y) {
  const float d = f16_at(b), dmin = f16_at(b + 2);
  const std::uint8_t* scales = b + 4;
  const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 16));
  const std::uint8_t* ql = b + 48;
  const __m256i low4 = _mm256_set1_epi8(0x0F), zero = _mm256_setzero_si256(),
                sixteen = _mm256_set1_epi8(16);
  for (int j = 0; j < 8; j += 2, ql += 32, y += 64) {
    int sc, m;
    scale_min_k4(j, scales, sc, m);
    const float d1 = d * float(sc), m1 = dmin * float(m);
    scale_min_k4(j + 1, scales, sc, m);
    const float d2 = d * float(sc), m2 = dmin * float(m);
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
    // 16 where bit j (resp. j + 1) of qh is set.
    const __m256i u1 = _mm256_set1_epi8(char(1u << j)), u2 = _mm256_set1_epi8(char(2u << j));
    const __m256i h1 =
        _mm256_andnot_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, u1), zero), sixteen);
    const __m256i h2 =
        _mm256_andnot_si256(_mm256_cmpeq_epi8(_mm256_and_si256(qh, u2), zero), sixteen);
    store32_min(y, _mm256_add_epi8(_mm256_and_si256(bytes, low4), h1), _mm256_set1_ps(d1),
                _mm256_set1_ps(m1));
    store32_min(y + 32, _mm256_add_epi8(_mm256_and_si256(_mm256_srli_epi16(bytes, 4), low4), h2),
                _mm256_set1_ps(d2), _mm256_set1_ps(m2));
  }
}

// 16 signed bytes -> two groups of 8 int32, times `scale`.
inline void store16_i8(float* y, __m128i q, __m256 scale) {
  store8(y, _mm256_cvtepi8_epi32(q), scale);
  store8(y + 8, _mm256_cvtepi8_epi32(_mm_srli_si128(q, 8)), scale);
}

void block_q6_k_avx2(const std::uint8_t* b, float* y) {
  const float d = f16_at(b + 208);
  const __m256i low4 = _mm256_set1_epi8(0x0F), three = _mm256_set1_epi8(3),
                bias = _mm256_set1_epi8(32);
  for (int n = 0; n < 2; ++n, y += 128) {
    const std::uint8_t* ql = b + 64 * n;
    const __m256i qh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 128 + 32 * n));
    const std::int8_t* sc = reinterpret_cast<const std::int8_t*>(b + 192 + 8 * n);
    const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
    const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
    // Bytes shifted within 16-bit lanes, then masked: no bit crosses a byte.
    const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(qh, three), 4);
    const __m256i h1 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), three), 4);
    const __m256i h2 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), three), 4);
    const __m256i h3 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), three), 4);
    const __m256i q[4] = {
        _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(l0, low4), h0), bias),
        _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(l1, low4), h1), bias),
        _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low4), h2),
                        bias),
        _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low4), h3),
                        bias),
    };
    for (int k = 0; k < 4; ++k) {
      // ggml: d * sc[is + 2k] * q, i.e. (d * sc) * q; 16 lanes per scale.
      const __m256 s0 = _mm256_set1_ps(d * float(sc[2 * k]));
      const __m256 s1 = _mm256_set1_ps(d * float(sc[2 * k + 1]));
      store16_i8(y + 32 * k, _mm256_castsi256_si128(q[k]), s0);
      store16_i8(y + 32 * k + 16, _mm256_extracti128_si256(q[k], 1), s1);
    }
  }
}

void block_q8_0_avx2(const std::uint8_t* b, float* y) {
  const __m256 d = _mm256_set1_ps(f16_at(b));
  for (int j = 0; j < 32; j += 8) {
    const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + 2 + j));
    store8(y + j, _mm256_cvtepi8_epi32(q), d);
  }
}

void block_q4_0_avx2(const std::uint8_t* b, float* y) {
  const __m256 d = _mm256_set1_ps(f16_at(b));
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2));
  const __m128i low4 = _mm_set1_epi8(0x0F), eight = _mm_set1_epi8(8);
  const __m128i lo = _mm_sub_epi8(_mm_and_si128(bytes, low4), eight);
  const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), low4), eight);
  store16_i8(y, lo, d);
  store16_i8(y + 16, hi, d);
}

#endif  // __AVX2__

#if defined(__F16C__)
// VCVTPH2PS: exact, and a signaling NaN comes out quiet, as in fp16_to_fp32.
void rows_f16_f16c(const void* src, float* dst, std::size_t n) {
  const auto* b = static_cast<const std::uint8_t*>(src);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 2 * i))));
  for (; i < n; ++i) dst[i] = f16_at(b + 2 * i);
}
#endif

using RowFn = void (*)(const void*, float*, std::size_t);

RowFn scalar_fn(std::uint32_t type) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::f32:
      return rows_f32;
    case GgmlType::f16:
      return rows_f16;
    case GgmlType::bf16:
      return rows_bf16;
    case GgmlType::q4_0:
      return blocks<block_q4_0, 32, 18>;
    case GgmlType::q4_1:
      return blocks<block_q4_1, 32, 20>;
    case GgmlType::q5_0:
      return blocks<block_q5_0, 32, 22>;
    case GgmlType::q5_1:
      return blocks<block_q5_1, 32, 24>;
    case GgmlType::q8_0:
      return blocks<block_q8_0, 32, 34>;
    case GgmlType::q2_k:
      return blocks<block_q2_k, 256, 84>;
    case GgmlType::q3_k:
      return blocks<block_q3_k, 256, 110>;
    case GgmlType::q4_k:
      return blocks<block_q4_k, 256, 144>;
    case GgmlType::q5_k:
      return blocks<block_q5_k, 256, 176>;
    case GgmlType::q6_k:
      return blocks<block_q6_k, 256, 210>;
    case GgmlType::iq4_nl:
      return blocks<block_iq4_nl, 32, 18>;
    case GgmlType::iq4_xs:
      return blocks<block_iq4_xs, 256, 136>;
    case GgmlType::mxfp4:
      return blocks<block_mxfp4, 32, 17>;
    default:
      return nullptr;
  }
}

RowFn fast_fn(std::uint32_t type) {
#if defined(__F16C__)
  if (static_cast<GgmlType>(type) == GgmlType::f16) return rows_f16_f16c;
#endif
#if defined(__AVX2__)
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::q4_0:
      return blocks<block_q4_0_avx2, 32, 18>;
    case GgmlType::q8_0:
      return blocks<block_q8_0_avx2, 32, 34>;
    case GgmlType::q4_k:
      return blocks<block_q4_k_avx2, 256, 144>;
    case GgmlType::q5_k:
      return blocks<block_q5_k_avx2, 256, 176>;
    case GgmlType::q6_k:
      return blocks<block_q6_k_avx2, 256, 210>;
    default:
      break;
  }
#endif
  return scalar_fn(type);
}

bool valid_call(std::uint32_t type, std::size_t n) {
  const GgmlTypeTraits* t = ggml_type_traits(type);
  return t != nullptr && t->dequantized && n % t->block_size == 0;
}

}  // namespace

float fp16_to_fp32(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in binary32
    const float v = float(man) * 0x1p-24f;
    return sign ? -v : v;
  }
  if (exp == 0x1F)  // inf, or NaN made quiet (ggml's multiply by 2^-112 quiets it)
    return float_of(sign | 0x7F800000u | (man << 13) | (man != 0 ? 0x00400000u : 0u));
  return float_of(sign | ((exp + 112) << 23) | (man << 13));
}

void dequantize_row(std::uint32_t type, const void* src, float* dst, std::size_t n) {
  if (valid_call(type, n)) fast_fn(type)(src, dst, n);
}

void dequantize_row_scalar(std::uint32_t type, const void* src, float* dst, std::size_t n) {
  if (valid_call(type, n)) scalar_fn(type)(src, dst, n);
}

}  // namespace attn::kernels

// 8 x 8 float transposes through AVX registers, for the packing of panels
// (kernels/tile_gemm.cpp) and the transposed stores of the projections'
// blocks (kernels/linear.cpp).
#pragma once

#include <cstddef>
#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace attn::kernels {

#if defined(__AVX__)
// out[i][c] = in[c][i] for an 8 x 8 block: rows of in at stride ld_in, rows
// of out at stride ld_out (unpack pairs, shuffle quads, swap 128-bit halves).
inline void transpose_8x8(const float* in, std::size_t ld_in, float* out, std::size_t ld_out) {
  __m256 r[8], t[8], u[8];
  for (int c = 0; c < 8; ++c) r[c] = _mm256_loadu_ps(in + c * ld_in);
  for (int c = 0; c < 8; c += 2) {
    t[c] = _mm256_unpacklo_ps(r[c], r[c + 1]);      // c0 c'0 c1 c'1 | c4 c'4 c5 c'5
    t[c + 1] = _mm256_unpackhi_ps(r[c], r[c + 1]);  // c2 c'2 c3 c'3 | c6 c'6 c7 c'7
  }
  for (int q = 0; q < 8; q += 4)
    for (int h = 0; h < 2; ++h) {  // entries 0,1 (h = 0) or 2,3 (h = 1) of each half
      u[q + 2 * h] = _mm256_shuffle_ps(t[q + h], t[q + 2 + h], _MM_SHUFFLE(1, 0, 1, 0));
      u[q + 2 * h + 1] = _mm256_shuffle_ps(t[q + h], t[q + 2 + h], _MM_SHUFFLE(3, 2, 3, 2));
    }
  for (int i = 0; i < 4; ++i) {  // u[i]: entry i | i + 4 of in rows 0-3; u[i + 4]: of rows 4-7
    _mm256_storeu_ps(out + i * ld_out, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
    _mm256_storeu_ps(out + (i + 4) * ld_out, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
  }
}
#endif

// out[j][c] = in[c][j] for c < cols, j < rows: rows of in at stride ld_in,
// of out at stride ld_out. 8 x 8 blocks through registers where AVX has the
// shuffles and 8 columns are given; the rest one by one.
inline void transpose_block(const float* in, std::size_t ld_in, std::size_t cols, std::size_t rows,
                            float* out, std::size_t ld_out) {
  std::size_t j = 0;
#if defined(__AVX__)
  if (cols == 8)
    for (; j + 8 <= rows; j += 8) transpose_8x8(in + j, ld_in, out + j * ld_out, ld_out);
#endif
  for (; j < rows; ++j)
    for (std::size_t c = 0; c < cols; ++c) out[j * ld_out + c] = in[c * ld_in + j];
}

}  // namespace attn::kernels

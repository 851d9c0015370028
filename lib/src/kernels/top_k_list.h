// The streaming top-k's kept list of one query row (row_digest.cpp): the K
// largest raw scores seen so far, decreasing, equal scores by increasing key
// (keys arrive in increasing order, so a later equal score goes after).
//
// The list has `width` slots, K rounded up to whole vectors of 16, the free
// ones -inf: so slot K - 1 is the entry threshold from the start (-inf until
// K are kept), and on AVX-512 an insertion is two compares and a masked
// shift per 16 slots, with no branch on where the score lands. The sorted
// insertion it replaces spent 60% of its time in the shifting loop's
// mispredicted exits (perf, S = 8192, K = 32).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace attn::kernels {

constexpr std::size_t kTopKListLanes = 16;

inline std::size_t top_k_list_width(std::size_t K) {
  return (K + kTopKListLanes - 1) / kTopKListLanes * kTopKListLanes;
}

// Insert (v, key) after every kept score >= v; the last slot drops out.
// Precondition: v > values[K - 1] (so it lands in [0, K)), v not NaN.
inline void top_k_list_insert(float* values, std::int32_t* keys, std::size_t K, std::size_t width,
                              float v, std::int32_t key) {
#if defined(__AVX512F__)
  (void)K;
  const __m512 vv = _mm512_set1_ps(v);
  unsigned at = 0;  // the slot v takes: how many kept scores are >= v
  for (std::size_t c = 0; c < width; c += kTopKListLanes)
    at += unsigned(
        __builtin_popcount(_mm512_cmp_ps_mask(_mm512_loadu_ps(values + c), vv, _CMP_GE_OQ)));
  const __m512i at_v = _mm512_set1_epi32(int(at)), kv = _mm512_set1_epi32(key);
  __m512i slot = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i prev_v = _mm512_castps_si512(vv), prev_k = kv;  // slot -1's, for lane 0
  for (std::size_t c = 0; c < width; c += kTopKListLanes) {
    const __m512i x = _mm512_loadu_si512(values + c), xk = _mm512_loadu_si512(keys + c);
    const __mmask16 after = _mm512_cmpgt_epi32_mask(slot, at_v);  // slots that shift by one
    const __mmask16 here = _mm512_cmpeq_epi32_mask(slot, at_v);
    // [slot c - 1, slots c .. c + 14]
    __m512i out = _mm512_mask_blend_epi32(after, x, _mm512_alignr_epi32(x, prev_v, 15));
    __m512i out_k = _mm512_mask_blend_epi32(after, xk, _mm512_alignr_epi32(xk, prev_k, 15));
    out = _mm512_mask_mov_epi32(out, here, _mm512_castps_si512(vv));
    out_k = _mm512_mask_mov_epi32(out_k, here, kv);
    _mm512_storeu_si512(values + c, out);
    _mm512_storeu_si512(keys + c, out_k);
    prev_v = x, prev_k = xk;
    slot = _mm512_add_epi32(slot, _mm512_set1_epi32(int(kTopKListLanes)));
  }
#else
  (void)width;
  std::size_t at = K - 1;
  while (at > 0 && values[at - 1] < v) {
    values[at] = values[at - 1];
    keys[at] = keys[at - 1];
    --at;
  }
  values[at] = v;
  keys[at] = key;
#endif
}

}  // namespace attn::kernels

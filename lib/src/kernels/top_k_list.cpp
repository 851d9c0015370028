// The streaming top-k's kept list (top_k_list.h).
#include "kernels/top_k_list.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>

#include "kernels/row_scan.h"

namespace attn::kernels {

#if defined(__AVX512F__)
namespace {

// Insert (v, key) after every kept score >= v; the last slot drops out. v is
// not NaN; v at or below values[K - 1] lands beyond slot K - 1 and changes
// only slots the list does not use.
void insert(float* values, std::int32_t* keys, std::size_t width, float v, std::int32_t key) {
  const __m512 vv = _mm512_set1_ps(v);
  unsigned at = 0;  // the slot v takes: how many kept scores are >= v
  for (std::size_t c = 0; c < width; c += kTopKListLanes)
    at += unsigned(
        __builtin_popcount(_mm512_cmp_ps_mask(_mm512_load_ps(values + c), vv, _CMP_GE_OQ)));
  const __m512i at_v = _mm512_set1_epi32(int(at)), kv = _mm512_set1_epi32(key);
  __m512i slot = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i prev_v = _mm512_castps_si512(vv), prev_k = kv;  // slot -1's, for lane 0
  for (std::size_t c = 0; c < width; c += kTopKListLanes) {
    const __m512i x = _mm512_load_si512(values + c), xk = _mm512_load_si512(keys + c);
    const __mmask16 after = _mm512_cmpgt_epi32_mask(slot, at_v);  // slots that shift by one
    const __mmask16 here = _mm512_cmpeq_epi32_mask(slot, at_v);
    // [slot c - 1, slots c .. c + 14]
    __m512i out = _mm512_mask_alignr_epi32(x, after, x, prev_v, 15);
    __m512i out_k = _mm512_mask_alignr_epi32(xk, after, xk, prev_k, 15);
    out = _mm512_mask_mov_epi32(out, here, _mm512_castps_si512(vv));
    out_k = _mm512_mask_mov_epi32(out_k, here, kv);
    _mm512_store_si512(values + c, out);
    _mm512_store_si512(keys + c, out_k);
    prev_v = x, prev_k = xk;
    slot = _mm512_add_epi32(slot, _mm512_set1_epi32(int(kTopKListLanes)));
  }
}

}  // namespace
#endif

void top_k_list_add(const float* s, std::size_t n, std::int32_t key0, std::size_t K,
                    std::size_t width, float* values, std::int32_t* keys) {
#if defined(__AVX512F__)
  // The threshold is the K-th as of the last 16 scores' insertions: a row's
  // first tile, whose list starts empty (every score a candidate while the
  // K-th is -inf), then inserts about K (1 + ln(256 / K)) of its 256, not all.
  // While the list is short of K, a floor from the tile itself: each of the 16 lanes' two
  // largest of its n / 16 scores are >= the least lane's second largest, so 32 >= K scores
  // are, and no score below it can be among the K largest (the list's kept ones included).
  // (A NaN score can spoil the floor, but such a block's rows come from the maps path:
  // RowDigest::fallback.)
  float floor = -INFINITY;
  if (values[K - 1] == -INFINITY && K <= 2 * kTopKListLanes && n % 16 == 0 && n >= 32) {
    __m512 first = _mm512_set1_ps(-INFINITY), second = first;
    for (std::size_t j = 0; j < n; j += 16) {
      const __m512 v = _mm512_loadu_ps(s + j);
      second = _mm512_max_ps(second, _mm512_min_ps(first, v));
      first = _mm512_max_ps(first, v);
    }
    floor = std::nextafter(_mm512_reduce_min_ps(second), -INFINITY);  // s > floor: s >= the least
  }
  __m512 t = _mm512_set1_ps(std::max(values[K - 1], floor));
  for (std::size_t j = 0; j < n; j += 16) {
    const __mmask16 live = n - j >= 16 ? __mmask16(0xffff) : __mmask16((1u << (n - j)) - 1);
    unsigned bits =
        _mm512_mask_cmp_ps_mask(live, _mm512_maskz_loadu_ps(live, s + j), t, _CMP_GT_OQ);
    if (!bits) continue;
    for (; bits; bits &= bits - 1) {
      const unsigned b = unsigned(__builtin_ctz(bits));
      insert(values, keys, width, s[j + b], key0 + std::int32_t(j + b));
    }
    t = _mm512_set1_ps(std::max(values[K - 1], floor));
  }
#else
  (void)width;
  std::size_t kept = K;  // the free slots are -inf: a full list whose K-th is -inf
  top_k_update(s, n, key0, K, values, keys, kept);
#endif
}

}  // namespace attn::kernels

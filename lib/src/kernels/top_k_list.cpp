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

// The same list held in NV registers of values and NV of keys while a tile's
// candidates go in (lists of K <= 64), with no store and reload between one
// candidate and the next (each waited on the last one's stores). Slot i
// keeps its score where that is >= v (a prefix: the list decreases); past
// the prefix it takes v where slot i - 1 kept its score, else slot i - 1's
// (its left neighbour: the register shifted by one lane, slot -1 being v).
// The new scores are max(x, min(left, v)) (x the slot's, left its
// neighbour's, left >= x): two ops after the shift, so one insertion waits
// on the last only that long. The keys follow the two compares' masks, off
// that chain. (Where a kept 0 meets an inserted -0 the slot may take the
// other sign: equal to every compare and to exp, so the same output.)
// The K = 32 list alone (bench_topk, Zen 5): 1.09-1.11 -> 0.95-0.98 us a row
// against the compares' blends on the chain.
template <std::size_t NV>
struct ListInRegisters {
  __m512 v[NV];
  __m512i k[NV];

  ListInRegisters(const float* values, const std::int32_t* keys) {
    for (std::size_t c = 0; c < NV; ++c) {
      v[c] = _mm512_load_ps(values + c * kTopKListLanes);
      k[c] = _mm512_load_si512(keys + c * kTopKListLanes);
    }
  }
  void store(float* values, std::int32_t* keys) const {
    for (std::size_t c = 0; c < NV; ++c) {
      _mm512_store_ps(values + c * kTopKListLanes, v[c]);
      _mm512_store_si512(keys + c * kTopKListLanes, k[c]);
    }
  }
  // Slot K - 1's score in every lane. (maskz: GCC 12's unmasked forms pass
  // an undefined vector and warn.)
  __m512 kth(std::size_t K) const {
    const __m512i lane = _mm512_set1_epi32(int((K - 1) % kTopKListLanes));
    __m512 out = v[0];
    for (std::size_t c = 0; c < NV; ++c)
      if (c == (K - 1) / kTopKListLanes) out = _mm512_maskz_permutexvar_ps(0xffff, lane, v[c]);
    return out;
  }
  void insert(float score, std::int32_t key) {
    const __m512 vv = _mm512_set1_ps(score);
    const __m512i kv = _mm512_set1_epi32(key);
    __m512i prev_v = _mm512_castps_si512(vv), prev_k = kv;  // slot -1's, for lane 0
    for (std::size_t c = 0; c < NV; ++c) {
      const __m512 x = v[c];
      const __m512i xk = k[c];
      const __m512 left =
          _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(x), prev_v, 15));
      const __m512i left_k = _mm512_alignr_epi32(xk, prev_k, 15);  // slots 16c - 1 .. 16c + 14
      const __mmask16 kept = _mm512_cmp_ps_mask(x, vv, _CMP_GE_OQ);
      const __mmask16 left_kept = _mm512_cmp_ps_mask(left, vv, _CMP_GE_OQ);
      v[c] = _mm512_maskz_max_ps(0xffff, x, _mm512_maskz_min_ps(0xffff, left, vv));
      k[c] = _mm512_mask_mov_epi32(_mm512_mask_mov_epi32(left_k, left_kept, kv), kept, xk);
      prev_v = _mm512_castps_si512(x), prev_k = xk;
    }
  }
};

// The list in memory, for K past 64: slot K - 1 read back, one insertion at
// a time.
struct ListInMemory {
  float* values;
  std::int32_t* keys;
  std::size_t width;

  __m512 kth(std::size_t K) const { return _mm512_set1_ps(values[K - 1]); }
  void insert(float score, std::int32_t key) {
    attn::kernels::insert(values, keys, width, score, key);
  }
};

// A tile's scores s[0..n) of keys key0.. through a list, a chunk at a time:
// the chunk's candidates (scores above t, the list's K-th, at least `floor`,
// as of the last chunk's insertions) gathered as indices, 16 scores a
// compare and a compress, then inserted in one loop. Once the list holds K
// the chunk is the whole tile: no branch per group of scores, whose outcome
// (any candidate?) is a coin the predictor loses on a long row's tiles, and
// one loop exit a tile, for a few candidates the K-th has passed by their
// turn. While the list fills (a row's first tile, every score above the
// floor a candidate) chunks of 64, so the K-th rises between them.
// Measured against groups of 64 scores with a branch each (the Llama layer,
// stage clocks in turns): attention with `--top-k 32 --summary` 1.028x faster
// at S = 16384, 1.023x at S = 8192, 0.999x at S = 2048. (bench_topk, whose
// rows are random, not a layer's, calls cost less either way and favour the
// branches: 0.85 against 0.96 us a row.)
template <class List>
void add_tile(const float* s, std::size_t n, std::int32_t key0, std::size_t K, float floor,
              List& list) {
  constexpr std::size_t kChunk = 512, kFillingChunk = 64;
  const __m512 floor_v = _mm512_set1_ps(floor);
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  alignas(64) std::int32_t at[kChunk + 16];
  __m512 kth = list.kth(K);
  __m512 t = _mm512_maskz_max_ps(0xffff, kth, floor_v);
  for (std::size_t j = 0, end = 0; j < n; j = end) {
    const bool filling = _mm512_cvtss_f32(kth) == -INFINITY;
    end = std::min(n, j + (filling ? kFillingChunk : kChunk));
    std::size_t count = 0;
    for (std::size_t g = j; g < end; g += 16) {
      const __mmask16 live = end - g >= 16 ? __mmask16(0xffff) : __mmask16((1u << (end - g)) - 1);
      const __mmask16 above =
          _mm512_mask_cmp_ps_mask(live, _mm512_maskz_loadu_ps(live, s + g), t, _CMP_GT_OQ);
      const __m512i idx = _mm512_add_epi32(iota, _mm512_set1_epi32(int(g)));
      _mm512_storeu_si512(at + count, _mm512_maskz_compress_epi32(above, idx));
      count += unsigned(__builtin_popcount(above));
    }
    if (!count) continue;
    for (std::size_t c = 0; c < count; ++c) list.insert(s[at[c]], key0 + at[c]);
    kth = list.kth(K);
    t = _mm512_maskz_max_ps(0xffff, kth, floor_v);
  }
}

template <std::size_t NV>
void add_in_registers(const float* s, std::size_t n, std::int32_t key0, std::size_t K, float floor,
                      float* values, std::int32_t* keys) {
  ListInRegisters<NV> list(values, keys);
  add_tile(s, n, key0, K, floor, list);
  list.store(values, keys);
}

}  // namespace
#endif

void top_k_list_add(const float* s, std::size_t n, std::int32_t key0, std::size_t K,
                    std::size_t width, float* values, std::int32_t* keys) {
#if defined(__AVX512F__)
  // The threshold is the K-th as of the last chunk's insertions (add_tile): a
  // row's first tile, whose list starts empty (every score a candidate while
  // the K-th is -inf), then inserts about K (1 + ln(512 / K)) of its 512, not all.
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
  switch (width / kTopKListLanes) {
    case 1:
      return add_in_registers<1>(s, n, key0, K, floor, values, keys);
    case 2:
      return add_in_registers<2>(s, n, key0, K, floor, values, keys);
    case 3:
      return add_in_registers<3>(s, n, key0, K, floor, values, keys);
    case 4:
      return add_in_registers<4>(s, n, key0, K, floor, values, keys);
    default: {  // longer lists: one insertion at a time through memory
      ListInMemory list{values, keys, width};
      return add_tile(s, n, key0, K, floor, list);
    }
  }
#else
  (void)width;
  std::size_t kept = K;  // the free slots are -inf: a full list whose K-th is -inf
  top_k_update(s, n, key0, K, values, keys, kept);
#endif
}

}  // namespace attn::kernels

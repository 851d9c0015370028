// The streaming top-k's kept list of one query row (row_digest.cpp): the K
// largest raw scores seen so far, decreasing, equal scores by increasing key
// (keys arrive in increasing order, so a later equal score goes after).
//
// The list has `width` slots, K rounded up to whole vectors of 16, the free
// ones -inf: so slot K - 1 is the entry threshold from the start (-inf until
// K are kept). On AVX-512 a tile's candidates (scores above the threshold
// at its start) are gathered by compares and compresses, 16 scores at a
// time, and each is inserted without a branch; a candidate the threshold has
// since passed lands at slot >= K, beyond the list. Lists of K <= 64 stay in
// registers for the tile (an insertion: a min and a max per 16 slots, the
// keys blended by two compares);
// longer ones are inserted in memory (a compare and popcount give the slot,
// a masked shift per 16 slots makes room). The scan-and-insert loop it replaces
// restarted its scan and mispredicted its exits once per candidate (about
// K (1 + ln(T / K)) per row: 177 at S = 8192, K = 32): 14% of a run.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn::kernels {

constexpr std::size_t kTopKListLanes = 16;

inline std::size_t top_k_list_width(std::size_t K) {
  return (K + kTopKListLanes - 1) / kTopKListLanes * kTopKListLanes;
}

// Streams row scores s[0..n), of keys key0.., into the kept list values /
// keys (`width` slots each, top_k_list_width(K), 64-byte aligned): a score enters when it is
// above the list's K-th (slot K - 1), after every kept score >= it.
void top_k_list_add(const float* s, std::size_t n, std::int32_t key0, std::size_t K,
                    std::size_t width, float* values, std::int32_t* keys);

}  // namespace attn::kernels

// Private kernels of the map reductions (--summary, --top-k; lib/src/outputs):
// one vectorized pass over a row of attention weights. Weights are float32;
// sums are kept in double lanes, so they match a sequential double sum to
// rounding (about 1e-16 relative), and v * ln(v) uses a float polynomial log
// (as Cephes' logf: relative error about 1e-7 over normal floats).
//
// Letters: n weights of a row (keys), i the query's position.
#pragma once

#include <cstddef>
#include <cstdint>

namespace attn::kernels {

struct RowScan {
  double total = 0;        // sum of p
  double plogp = 0;        // sum of p ln p over p > 0
  double distance = 0;     // sum of p |i - j|
  std::size_t argmax = 0;  // the first index of the largest p (0 when n == 0)
};

// The sums over p[0..n) of a query at position i.
RowScan scan_row(const float* p, std::size_t n, std::size_t i);

// Sum of p[lo..hi) in double.
double sum_range(const float* p, std::size_t lo, std::size_t hi);

// The first j in [from, n) with p[j] > t, or n (top-k's filter: a row's
// weights rarely beat its K-th largest so far).
std::size_t first_above(const float* p, std::size_t from, std::size_t n, float t);

// Streams p[0..n), whose key indices are j0.., into the kept list
// values/indices[0..kept) (at most K, decreasing, equal values by increasing
// index; the keys come in increasing index, so a later equal value never
// displaces a kept one). A value enters when it is above -inf (masked scores
// never do, nor NaN) and, once K are kept, above the K-th: one vectorized
// compare per value skips the rest. Index: std::int64_t (the maps' rows) or
// std::int32_t (top_k_list's keys).
template <class Index>
void top_k_update(const float* p, std::size_t n, Index j0, std::size_t K, float* values,
                  Index* indices, std::size_t& kept);

// The K largest of p[0..n), decreasing, equal values by increasing index
// (values[K], indices[K]), for n >= kTopKGroups * K: the row is cut into
// kTopKGroups slices of m = n / kTopKGroups; the elementwise maximum of the
// slices (one vectorized pass) holds m maxima of disjoint sets, so its K-th
// largest t is at most the row's K-th largest, and only the positions whose
// maximum reaches t (at most K of them but for ties, times kTopKGroups) and
// the tail past the slices are candidates, sorted exactly. False (nothing
// written) when n is too short for that, or when t is 0 (most of the row is
// masked); the caller then scans the row.
constexpr std::size_t kTopKGroups = 16;
bool top_k_by_slices(const float* p, std::size_t n, std::size_t K, float* values,
                     std::int64_t* indices);

}  // namespace attn::kernels

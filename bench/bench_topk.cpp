// bench_topk: the streaming top-k's kept list alone (kernels/top_k_list.h),
// as --top-k 32 runs it: rows of raw scores in the streaming kernel's tiles
// of 512 keys, a tile whose max is not above the K-th skipped as
// RowDigest::scores skips it, causal lengths (1/16 .. 16/16 of T = 8192),
// K = 32. Prints the median of 7 reps of 2,000 rows and the time per row;
// compare builds side by side in one run. The scores are random (normal), not
// a layer's: the forward pass's calls cost about twice as much per candidate,
// so judge a change by the forward's stage clocks too.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/top_k_list.h"

int main() {
  using attn::kernels::top_k_list_add;
  const std::size_t T = 8192, K = 32, rows = 2000, width = attn::kernels::top_k_list_width(K);
  const std::size_t kTile = attn::kernels::kKeyBlock;  // the streaming kernel's key tile
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> scores(16 * T);  // 16 rows of T raw scores, reused
  for (float& v : scores) v = normal(rng);
  const std::size_t tiles = (T + kTile - 1) / kTile;
  std::vector<float> tile_max(16 * tiles, -INFINITY);
  for (std::size_t r = 0; r < 16; ++r)
    for (std::size_t j = 0; j < T; ++j)
      tile_max[r * tiles + j / kTile] =
          std::max(tile_max[r * tiles + j / kTile], scores[r * T + j]);
  alignas(64) float values[64];
  alignas(64) std::int32_t keys[64];
  std::vector<double> seconds;
  double check = 0.0;  // keeps the lists live
  for (int rep = 0; rep < 7; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t r = 0; r < rows; ++r) {
      const float* row = scores.data() + (r % 16) * T;
      std::fill(values, values + width, -INFINITY);
      std::fill(keys, keys + width, 0);
      const std::size_t n = T * (r % 16 + 1) / 16;
      for (std::size_t j = 0; j < n; j += kTile) {
        const std::size_t cols = std::min(kTile, n - j);
        // As RowDigest::scores: a tile whose max (which the softmax finds anyway, so not
        // timed here) is not above the K-th has no candidate.
        if (!(tile_max[(r % 16) * tiles + j / kTile] > values[K - 1])) continue;
        top_k_list_add(row + j, cols, std::int32_t(j), K, width, values, keys);
      }
      check += values[0] + keys[K - 1];
    }
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(seconds.begin(), seconds.end());
  const double med = seconds[seconds.size() / 2];
  std::printf(
      "top-k list, K = %zu, %zu rows of 512..8192 keys: median %.2f ms (%.2f us a row; "
      "check %.0f)\n",
      K, rows, med * 1e3, med * 1e6 / double(rows), check);
}

// bench_topk: the streaming top-k's kept list alone (kernels/top_k_list.h),
// as --top-k 32 runs it: rows of raw scores in tiles of 256 keys, causal
// lengths (1/16 .. 16/16 of T = 8192), K = 32. Prints the median of 7 reps of
// 2,000 rows and the time per row; compare builds side by side in one run.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "kernels/top_k_list.h"

int main() {
  using attn::kernels::top_k_list_add;
  const std::size_t T = 8192, K = 32, rows = 2000, width = attn::kernels::top_k_list_width(K);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> scores(16 * T);  // 16 rows of T raw scores, reused
  for (float& v : scores) v = normal(rng);
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
      for (std::size_t j = 0; j < n; j += 256)
        top_k_list_add(row + j, std::min<std::size_t>(256, n - j), std::int32_t(j), K, width,
                       values, keys);
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

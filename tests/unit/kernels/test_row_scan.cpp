// The map reductions' row scans (lib/src/kernels/row_scan.h) against plain
// double loops: rows of every tail length, zeros (masked keys), ties for the
// argmax, weights from 1e-37 to 1 for the polynomial log.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/row_scan.h"
#include "kernels/top_k_list.h"

using attn::kernels::first_above;
using attn::kernels::scan_row;
using attn::kernels::sum_range;
using attn::kernels::top_k_by_slices;

namespace {

// A softmax-like row: random weights, every 3rd zero (masked) when `masked`.
std::vector<float> row_of(std::size_t n, std::mt19937& rng, bool masked) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> p(n);
  double sum = 0;
  for (std::size_t j = 0; j < n; ++j) {
    p[j] = masked && j % 3 == 1 ? 0.0f : std::exp(8.0f * u(rng));
    sum += p[j];
  }
  for (float& v : p) v = float(v / sum);
  return p;
}

}  // namespace

TEST_CASE("row_scan: total, entropy, distance and argmax equal double loops") {
  std::mt19937 rng(5);
  for (std::size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 63, 100, 1000, 4099, 32768}) {
    for (bool masked : {false, true}) {
      const std::vector<float> p = row_of(n, rng, masked);
      for (std::size_t i : {std::size_t(0), n / 2, n ? n - 1 : 0, n + 5}) {
        CAPTURE(n);
        CAPTURE(masked);
        CAPTURE(i);
        double total = 0, plogp = 0, dist = 0, abs_terms = 0;
        std::size_t argmax = 0;
        for (std::size_t j = 0; j < n; ++j) {
          total += p[j];
          if (p[j] > 0) {
            const double t = double(p[j]) * std::log(double(p[j]));
            plogp += t;
            abs_terms += std::fabs(t);
          }
          dist += double(p[j]) * double(i > j ? i - j : j - i);
          if (p[j] > p[argmax]) argmax = j;
        }
        const auto s = scan_row(p.data(), n, i);
        CHECK(std::fabs(s.total - total) <= 1e-12 * std::max(1.0, total));
        CHECK(std::fabs(s.plogp - plogp) <= 3e-7 * abs_terms + 1e-30);
        CHECK(std::fabs(s.distance - dist) <= 2e-7 * std::max(1.0, dist));
        CHECK(s.argmax == argmax);
      }
    }
  }
}

TEST_CASE("row_scan: ties go to the lowest index, in any lane") {
  for (std::size_t n : {5, 8, 24, 37}) {
    for (std::size_t first = 0; first + 1 < n; first += 3) {
      std::vector<float> p(n, 0.01f);
      p[first] = 0.5f;
      for (std::size_t j = first + 1; j < n; j += 5) p[j] = 0.5f;  // later equal maxima
      CAPTURE(n);
      CAPTURE(first);
      CHECK(scan_row(p.data(), n, 0).argmax == first);
    }
    std::vector<float> zeros(n, 0.0f);  // a fully masked row
    const auto s = scan_row(zeros.data(), n, 3);
    CHECK(s.argmax == 0);
    CHECK(s.total == 0.0);
    CHECK(s.plogp == 0.0);
  }
}

TEST_CASE("row_scan: p ln p across the float range") {
  // One weight among zeros: the entropy term alone, at every magnitude.
  for (double e = -37.0; e <= 0.0; e += 0.37) {
    std::vector<float> p(16, 0.0f);
    p[9] = float(std::pow(10.0, e));
    const double want = double(p[9]) * std::log(double(p[9]));
    CAPTURE(p[9]);
    CHECK(std::fabs(scan_row(p.data(), 16, 0).plogp - want) <= 3e-7 * std::fabs(want) + 1e-44);
  }
}

TEST_CASE("row_scan: sum_range and first_above equal plain loops") {
  std::mt19937 rng(7);
  const std::vector<float> p = row_of(1000, rng, true);
  for (std::size_t lo : {0, 1, 7, 500}) {
    for (std::size_t hi : {lo, lo + 1, lo + 9, lo + 16, std::size_t(1000)}) {
      if (hi > 1000) continue;
      double want = 0;
      for (std::size_t j = lo; j < hi; ++j) want += p[j];
      CHECK(std::fabs(sum_range(p.data(), lo, hi) - want) <= 1e-15);
    }
  }
  for (float t : {-1.0f, 0.0f, 1e-4f, 1e-3f, 5e-3f, 1.0f}) {
    for (std::size_t from : {0, 3, 17, 990, 1000}) {
      std::size_t want = from;
      while (want < 1000 && !(p[want] > t)) ++want;
      CAPTURE(t);
      CAPTURE(from);
      CHECK(first_above(p.data(), from, 1000, t) == want);
    }
  }
}

TEST_CASE("row_scan: top_k_by_slices equals a stable sort, ties to the lower index") {
  std::mt19937 rng(11);
  std::size_t fast = 0;
  for (std::size_t n : {100, 128, 1000, 4096, 4099, 32768}) {
    for (std::size_t K : {1, 8, 32, 64}) {
      for (int kind = 0; kind < 3; ++kind) {
        std::vector<float> p = row_of(n, rng, kind == 1);
        if (kind == 2)  // few distinct values: ties everywhere
          for (float& v : p) v = std::round(v * 2e4f) / 2e4f;
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return p[a] > p[b]; });
        std::vector<float> values(K, -1.0f);
        std::vector<std::int64_t> indices(K, -1);
        CAPTURE(n);
        CAPTURE(K);
        CAPTURE(kind);
        if (!top_k_by_slices(p.data(), n, K, values.data(), indices.data())) {
          CHECK(n < attn::kernels::kTopKGroups * K + 8 * attn::kernels::kTopKGroups);
          continue;
        }
        ++fast;
        for (std::size_t k = 0; k < K; ++k) {
          CHECK(indices[k] == std::int64_t(order[k]));
          CHECK(values[k] == p[order[k]]);
        }
      }
    }
  }
  CHECK(fast >= 30);
  // A causal row's first queries: mostly zeros, left to the caller's scan.
  std::vector<float> early(4096, 0.0f);
  early[0] = 0.7f, early[1] = 0.3f;
  float v[8];
  std::int64_t at[8];
  CHECK(!top_k_by_slices(early.data(), early.size(), 8, v, at));
}

TEST_CASE("top_k_list: streamed tiles keep the K largest scores, ties to the lower key") {
  // Rows of raw scores streamed in tiles of 256 (the last one short), against a stable sort:
  // the first tile's floor (each lane's second largest, least over the 16 lanes) must never
  // drop a score that belongs, whatever K, ties or masked (-inf) keys. K up to 64 keeps the
  // list in 1..4 registers on AVX-512; 65 and 100 insert through memory.
  std::mt19937 rng(12);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (std::size_t n : {17, 256, 300, 1000, 4099}) {
    for (std::size_t K : {1, 5, 16, 32, 33, 64, 65, 100}) {
      for (int kind = 0; kind < 5; ++kind) {
        std::vector<float> s(n);
        for (std::size_t j = 0; j < n; ++j) s[j] = normal(rng);
        if (kind == 1)  // few distinct values: ties everywhere
          for (float& v : s) v = std::round(v);
        if (kind == 2)  // masked keys, most of the first tile
          for (std::size_t j = 0; j < n; ++j)
            if (j % 7 != 3) s[j] = -INFINITY;
        if (kind == 3)  // rising scores: later tiles beat the first
          for (std::size_t j = 0; j < n; ++j) s[j] += 0.05f * float(j);
        if (kind == 4)  // zeros of both signs, equal to every compare: ties by key
          for (std::size_t j = 0; j < n; ++j)
            if (j % 3 != 2) s[j] = j % 3 ? 0.0f : -0.0f;
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return s[a] > s[b]; });
        const std::size_t width = attn::kernels::top_k_list_width(K);
        // Tiles of 256 and of the streaming kernel's 512, and of 100 (a row's last, short).
        for (std::size_t tile : {100, 256, 512}) {
          alignas(64) float values[112];
          alignas(64) std::int32_t keys[112];
          std::fill(values, values + width, -INFINITY);
          std::fill(keys, keys + width, -1);
          for (std::size_t j = 0; j < n; j += tile)
            attn::kernels::top_k_list_add(s.data() + j, std::min(tile, n - j), std::int32_t(j), K,
                                          width, values, keys);
          CAPTURE(n);
          CAPTURE(K);
          CAPTURE(kind);
          CAPTURE(tile);
          for (std::size_t k = 0; k < std::min(K, n); ++k) {
            if (s[order[k]] == -INFINITY) break;  // masked keys never enter
            CHECK(keys[k] == std::int32_t(order[k]));
            CHECK(values[k] == s[order[k]]);
          }
        }
      }
    }
  }
}

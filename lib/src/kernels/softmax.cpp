// Softmax pieces on raw float rows, vectorized with xsimd: row max, a
// polynomial exp fused with the row sum, row scaling. exp dominates the
// non-GEMM time of attention (ARCHITECTURE.md), so it is one pass over the
// row, not a chain of lazy expressions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "attn/error.h"
#include "kernels/kernels.h"
#include "kernels/vec_exp.h"

namespace attn::kernels {

// The vector exp on one lane: the same bits as every softmax row by
// construction, where a scalar copy of its steps had to be kept in step (and
// agreed only where both were fused alike).
float exp_approx(float x) { return exp_batch(Batch(x)).get(0); }

namespace {

// The largest (kMax) or the least of a batch's lanes.
template <bool kMax>
inline float lanes_extreme(Batch b) {
#if defined(__AVX512F__)
  if constexpr (kLanes == 16) return kMax ? _mm512_reduce_max_ps(b) : _mm512_reduce_min_ps(b);
#endif
  alignas(64) float lanes[kLanes];
  b.store_aligned(lanes);
  float extreme = lanes[0];
  for (float v : lanes) extreme = kMax ? std::max(extreme, v) : std::min(extreme, v);
  return extreme;
}

// row_max's pass, and with kMin the row's min into *min in the same pass.
// Four running maxima (and minima), the last batch's lanes reduced as a tree
// (they had been one chain of maxima and the lanes one by one: the pass was
// 4.5% of the streaming kernel at D = 64 under perf; Zen 5, stage clocks in
// turns: the attention stage of a GPT-2 layer 0.980-0.984x the time, of the
// Llama layer at S = 2048 0.989x). Maxima and minima are exact in any order:
// the same values for every row without a NaN; a row with a NaN has a NaN
// sum (exp_shift_sum) whatever its max, and the same error.
template <bool kMin>
float max_and_min(const float* row, std::size_t n, float* min) {
  float best = -std::numeric_limits<float>::infinity();
  float least = std::numeric_limits<float>::infinity();
  std::size_t j = 0;
  if (n >= kLanes) {
    const Batch first = Batch::load_unaligned(row);
    Batch m[4] = {first, first, first, first}, lo[4] = {first, first, first, first};
    for (j = kLanes; j + 4 * kLanes <= n; j += 4 * kLanes)
      for (std::size_t a = 0; a < 4; ++a) {
        const Batch x = Batch::load_unaligned(row + j + a * kLanes);
        m[a] = xsimd::max(m[a], x);
        if constexpr (kMin) lo[a] = xsimd::min(lo[a], x);
      }
    for (; j + kLanes <= n; j += kLanes) {
      const Batch x = Batch::load_unaligned(row + j);
      m[0] = xsimd::max(m[0], x);
      if constexpr (kMin) lo[0] = xsimd::min(lo[0], x);
    }
    best = lanes_extreme<true>(xsimd::max(xsimd::max(m[0], m[1]), xsimd::max(m[2], m[3])));
    if constexpr (kMin)
      least = lanes_extreme<false>(xsimd::min(xsimd::min(lo[0], lo[1]), xsimd::min(lo[2], lo[3])));
  }
  for (; j < n; ++j) {
    best = std::max(best, row[j]);
    if constexpr (kMin) least = std::min(least, row[j]);
  }
  if constexpr (kMin) *min = least;
  return best;
}

}  // namespace

float row_max(const float* row, std::size_t n) { return max_and_min<false>(row, n, nullptr); }

float row_max(const float* row, std::size_t n, float& min) {
  return max_and_min<true>(row, n, &min);
}

bool any_nan(const float* row, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j)
    if (row[j] != row[j]) return true;
  return false;
}

float exp_shift_sum(float* row, std::size_t n, float shift) {
  const Batch s(shift);
  Batch sum(0.0f);
  // x - shift <= 0 or -inf for every finite or masked score; it is NaN only
  // for a NaN score or an infinite one (+inf - +inf), and exp_shifted carries
  // that NaN into the sum.
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    const Batch e = exp_shifted(Batch::load_unaligned(row + j) - s);
    e.store_unaligned(row + j);
    sum += e;
  }
  float total = xsimd::hadd(sum);
  if (j < n) {
    // Tail through a padded lane buffer so it uses the same vector exp.
    alignas(64) float tail[kLanes];
    const std::size_t left = n - j;
    for (std::size_t t = 0; t < kLanes; ++t)
      tail[t] = t < left ? row[j + t] : -std::numeric_limits<float>::infinity();
    const Batch e = exp_shifted(Batch::load_aligned(tail) - s);
    e.store_aligned(tail);
    for (std::size_t t = 0; t < left; ++t) {
      row[j + t] = tail[t];
      total += tail[t];
    }
  }
  return total;
}

void scale_row(float* row, std::size_t n, float s) {
  const Batch f(s);
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    (Batch::load_unaligned(row + j) * f).store_unaligned(row + j);
  for (; j < n; ++j) row[j] *= s;
}

void softcap_row(float* row, std::size_t n, float c) {
  // As modeling_gemma2: tanh(s / c) * c, the division kept (not a reciprocal).
  const Batch cb(c);
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    (xsimd::tanh(Batch::load_unaligned(row + j) / cb) * cb).store_unaligned(row + j);
  for (; j < n; ++j) row[j] = std::tanh(row[j] / c) * c;
}

namespace {

[[noreturn]] void overflow(const HeadView& hv, std::size_t row, const char* what) {
  throw Error(Exit::data, "input: " + std::string(what) + " overflow float32 at batch " +
                              std::to_string(hv.batch) + ", head " + std::to_string(hv.head) +
                              ", query row " + std::to_string(row) +
                              " (finite inputs too large for float32 attention)");
}

// Every value of v[0..n) finite: x * 0 is NaN exactly when x is inf or NaN,
// and one NaN poisons the sum (vectorized; the rows here are short, so no
// early exit is needed).
bool all_finite(const float* v, std::size_t n) {
  Batch acc(0.0f);
  std::size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) acc += Batch::load_unaligned(v + j) * Batch(0.0f);
  float tail = 0.0f;
  for (; j < n; ++j) tail += v[j] * 0.0f;
  const float total = xsimd::hadd(acc) + tail;
  return total == total;
}

}  // namespace

void check_scores(const HeadView& hv, std::size_t i0, std::size_t n, std::size_t j0,
                  const float* tile, std::size_t ldt, std::size_t mb) {
  if (!hv.check_overflow) return;
  for (std::size_t r = 0; r < n; ++r)
    if (!all_finite(tile + r * ldt, causal_prefix(hv, i0 + r, j0, mb)))
      overflow(hv, i0 + r, "attention scores");
}

void check_score_range(const HeadView& hv, std::size_t row, float max, float min) {
  if (!hv.check_overflow) return;
  if (std::isinf(max) || std::isinf(min)) overflow(hv, row, "attention scores");
}

void check_row_sum(const HeadView& hv, std::size_t row, float sum) {
  if (!hv.check_overflow) return;
  if (!(sum >= 0.0f) || std::isinf(sum)) overflow(hv, row, "attention scores");
}

void check_output_rows(const HeadView& hv, std::size_t i0, std::size_t n) {
  if (!hv.check_overflow) return;
  for (std::size_t r = 0; r < n; ++r)
    if (!all_finite(hv.y + (i0 + r) * hv.ld_y, hv.value_width()))
      overflow(hv, i0 + r, "attention outputs");
}

}  // namespace attn::kernels

// --top-k as the rows stream (attn/map_reduce.h).
//
// Letters: B batch, H heads, L query rows, T' keys of a row, K kept.
#include "attn/map_topk.h"

#include <vector>

#include "attn/error.h"
#include "kernels/row_scan.h"

namespace attn {

void top_k_row(const float* row, std::size_t n, std::size_t K, float* values,
               std::int64_t* indices) {
  // values[0..kept) sorted decreasing, equal values by increasing index: a
  // later key enters only when strictly larger than one kept, and goes
  // after every kept value it does not exceed.
  if (kernels::top_k_by_slices(row, n, K, values, indices)) return;
  std::size_t kept = 0;
  for (std::size_t j = 0; j < n; ++j) {
    // Once K are kept, skip (vectorized) to the next weight above the K-th.
    if (kept == K && (j = kernels::first_above(row, j, n, values[K - 1])) == n) break;
    const float v = row[j];
    std::size_t at = kept < K ? kept++ : K - 1;
    while (at > 0 && values[at - 1] < v) {
      values[at] = values[at - 1];
      indices[at] = indices[at - 1];
      --at;
    }
    values[at] = v;
    indices[at] = std::int64_t(j);
  }
}

TopKSink::TopKSink(std::size_t B, std::size_t H, std::size_t L, std::size_t T, std::size_t K)
    : values({B, H, L, K}), indices(B * H * L * K), H_(H), L_(L), T_(T), K_(K) {
  if (K == 0 || K > T) throw Error(Exit::software, "top-k: K out of range");
}

TopKSink::TopKSink(std::size_t H, std::size_t L, std::size_t T, std::size_t K, OutputDir& out,
                   int values_file, int indices_file)
    : H_(H),
      L_(L),
      T_(T),
      K_(K),
      out_(&out),
      values_file_(values_file),
      indices_file_(indices_file) {
  if (K == 0 || K > T) throw Error(Exit::software, "top-k: K out of range");
}

void TopKSink::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                          const float* rows /* (n, T') */) {
  const std::size_t first = ((b * H_ + h) * L_ + i0) * K_;  // element offset of the block
  if (!out_) {
    for (std::size_t r = 0; r < n; ++r)
      top_k_row(rows + r * T_, T_, K_, values.ptr() + first + r * K_,
                indices.data() + first + r * K_);
    return;
  }
  std::vector<float> v(n * K_);
  std::vector<std::int64_t> idx(n * K_);
  for (std::size_t r = 0; r < n; ++r)
    top_k_row(rows + r * T_, T_, K_, v.data() + r * K_, idx.data() + r * K_);
  out_->write_at(values_file_, first, v.data(), v.size());
  out_->write_bytes_at(indices_file_, first * sizeof(std::int64_t), idx.data(),
                       idx.size() * sizeof(std::int64_t));
}

}  // namespace attn

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
  if (kernels::top_k_by_slices(row, n, K, values, indices)) return;
  std::size_t kept = 0;  // weights are >= 0: every one enters while fewer than K are kept
  kernels::top_k_update(row, n, std::int64_t{0}, K, values, indices, kept);
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
  std::vector<float> v(n * K_);
  std::vector<std::int64_t> idx(n * K_);
  for (std::size_t r = 0; r < n; ++r)
    top_k_row(rows + r * T_, T_, K_, v.data() + r * K_, idx.data() + r * K_);
  store(b, h, i0, n, v.data(), idx.data(), K_);
}

DigestRequest TopKSink::digest_request() const {
  DigestRequest r;
  r.rows = false;
  r.top_k = K_;
  return r;
}

void TopKSink::write_digests(std::size_t b, std::size_t h, std::size_t i0, const RowDigests& d) {
  if (d.K < K_) throw Error(Exit::software, "top-k: digests keep fewer than K");
  store(b, h, i0, d.n, d.topk_values, d.topk_indices, d.K);
}

void TopKSink::store(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                     const float* v /* (n, stride) */, const std::int64_t* idx,
                     std::size_t stride) {
  const std::size_t first = ((b * H_ + h) * L_ + i0) * K_;  // element offset of the block
  // (n, K): the first K of each row's stride (a merged request may keep more).
  std::vector<float> vals;
  std::vector<std::int64_t> keys;
  if (stride != K_) {
    vals.resize(n * K_);
    keys.resize(n * K_);
    for (std::size_t r = 0; r < n; ++r) {
      std::copy(v + r * stride, v + r * stride + K_, vals.data() + r * K_);
      std::copy(idx + r * stride, idx + r * stride + K_, keys.data() + r * K_);
    }
    v = vals.data();
    idx = keys.data();
  }
  if (!out_) {
    std::copy(v, v + n * K_, values.ptr() + first);
    std::copy(idx, idx + n * K_, indices.data() + first);
    return;
  }
  out_->write_at(values_file_, first, v, n * K_);
  out_->write_bytes_at(indices_file_, first * sizeof(std::int64_t), idx,
                       n * K_ * sizeof(std::int64_t));
}

}  // namespace attn

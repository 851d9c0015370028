// Sinks of the front end (map_capture.h).
//
// Letters: B batch, H heads, S sequence, N cells per side of a drawn map.
#include "map_capture.h"

#include <algorithm>

#include "progress.h"

namespace app {

MapCapture::MapCapture(std::size_t b, std::vector<std::size_t> heads, std::size_t H, std::size_t S,
                       std::size_t max_cells)
    : b_(b),
      S_(S),
      n_(std::min(S, std::max<std::size_t>(1, max_cells))),
      heads_(std::move(heads)),
      slot_of_head_(H, -1),
      cell_of_(S),
      locks_(new std::mutex[heads_.size()]),
      cells_({heads_.size(), n_, n_}) {
  for (std::size_t k = 0; k < heads_.size(); ++k) slot_of_head_[heads_[k]] = int(k);
  // Token t goes to cell floor(t * N / S): blocks differ in size by at most one.
  for (std::size_t t = 0; t < S; ++t) cell_of_[t] = t * n_ / S;
}

void MapCapture::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                            const float* rows) {
  // rows: (n, S), queries i0 .. i0+n-1 of map (b, h)
  if (b != b_ || h >= slot_of_head_.size() || slot_of_head_[h] < 0) return;
  const std::size_t slot = std::size_t(slot_of_head_[h]);
  float* out = cells_.ptr() + slot * n_ * n_;
  if (n_ == S_) {  // full resolution: blocks own disjoint rows, no lock needed
    std::copy(rows, rows + n * S_, out + i0 * S_);
    return;
  }
  std::lock_guard<std::mutex> lock(locks_[slot]);
  for (std::size_t r = 0; r < n; ++r) {
    float* cell_row = out + cell_of_[i0 + r] * n_;
    const float* row = rows + r * S_;
    for (std::size_t j = 0; j < S_; ++j) {
      float& c = cell_row[cell_of_[j]];
      c = std::max(c, row[j]);
    }
  }
}

attn::Tensor reduce_block_max(const float* map, std::size_t S, std::size_t n) {
  // map: (S, S); result: (n, n)
  n = std::min(S, std::max<std::size_t>(1, n));
  attn::Tensor out({n, n});
  for (std::size_t i = 0; i < S; ++i)
    for (std::size_t j = 0; j < S; ++j) {
      float& c = out.data[(i * n / S) * n + j * n / S];
      c = std::max(c, map[i * S + j]);
    }
  return out;
}

void ProgressSink::write_rows(std::size_t, std::size_t, std::size_t, std::size_t n, const float*) {
  progress_.advance(n);
}

}  // namespace app

// Sinks of the front end (map_capture.h).
//
// Letters: B batch, H heads, L queries, T keys, Nq x Nk cells of a drawn map.
#include "pictures/map_capture.h"

#include <algorithm>

#include "cli/progress.h"

namespace app {

MapCapture::MapCapture(std::size_t b, std::vector<std::size_t> heads, std::size_t H, std::size_t L,
                       std::size_t T, std::size_t max_cells, std::optional<std::size_t> exact_query)
    : b_(b),
      L_(L),
      T_(T),
      nq_(std::min(L, std::max<std::size_t>(1, max_cells))),
      nk_(std::min(T, std::max<std::size_t>(1, max_cells))),
      heads_(std::move(heads)),
      slot_of_head_(H, -1),
      row_cell_(L),
      col_cell_(T),
      locks_(new std::mutex[heads_.size()]),
      cells_({heads_.size(), nq_, nk_}),
      exact_query_(std::min(exact_query.value_or(L == 0 ? 0 : L - 1), L == 0 ? 0 : L - 1)),
      exact_row_({heads_.size(), T}) {
  for (std::size_t k = 0; k < heads_.size(); ++k) slot_of_head_[heads_[k]] = int(k);
  // Query i goes to cell row floor(i * Nq / L), key j to column floor(j * Nk
  // / T): blocks along an axis differ in size by at most one.
  for (std::size_t i = 0; i < L; ++i) row_cell_[i] = i * nq_ / L;
  for (std::size_t j = 0; j < T; ++j) col_cell_[j] = j * nk_ / T;
  if (nk_ < T_) {
    top_keys_.assign(heads_.size() * nq_ * kTopKeys, -1);
    top_weights_.assign(heads_.size() * nq_ * kTopKeys, 0.0f);
  }
}

void MapCapture::add_top_keys(std::size_t slot, std::size_t cell, const float* row) {
  // row: (T). The row's kTopKeys strongest keys of positive weight, strongest
  // first (ties: the lower key), by insertion into a short sorted list.
  std::int32_t keys[kTopKeys];
  float weights[kTopKeys];
  std::size_t n = 0;
  for (std::size_t j = 0; j < T_; ++j) {
    const float w = row[j];
    if (!(w > 0.0f) || (n == kTopKeys && w <= weights[n - 1])) continue;
    std::size_t at = n < kTopKeys ? n++ : kTopKeys - 1;
    for (; at > 0 && weights[at - 1] < w; --at) {
      weights[at] = weights[at - 1];
      keys[at] = keys[at - 1];
    }
    weights[at] = w;
    keys[at] = std::int32_t(j);
  }
  // Into the cell's list: a key already there keeps its larger weight, a new
  // one enters when stronger than the weakest.
  std::int32_t* ck = top_keys_.data() + (slot * nq_ + cell) * kTopKeys;
  float* cw = top_weights_.data() + (slot * nq_ + cell) * kTopKeys;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t at = 0;
    while (at < kTopKeys && ck[at] != keys[i]) ++at;
    if (at == kTopKeys) {  // not listed: replace the weakest if weaker
      if (ck[kTopKeys - 1] >= 0 && cw[kTopKeys - 1] >= weights[i]) continue;
      at = kTopKeys - 1;
    } else if (cw[at] >= weights[i]) {
      continue;
    }
    for (; at > 0 && (ck[at - 1] < 0 || cw[at - 1] < weights[i] ||
                      (cw[at - 1] == weights[i] && ck[at - 1] > keys[i]));
         --at) {
      ck[at] = ck[at - 1];
      cw[at] = cw[at - 1];
    }
    ck[at] = keys[i];
    cw[at] = weights[i];
  }
}

void MapCapture::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                            const float* rows) {
  // rows: (n, T), queries i0 .. i0+n-1 of map (b, h)
  if (b != b_ || h >= slot_of_head_.size() || slot_of_head_[h] < 0) return;
  const std::size_t slot = std::size_t(slot_of_head_[h]);
  float* out = cells_.ptr() + slot * nq_ * nk_;
  if (exact_query_ >= i0 && exact_query_ < i0 + n)
    std::copy(rows + (exact_query_ - i0) * T_, rows + (exact_query_ - i0 + 1) * T_,
              exact_row_.ptr() + slot * T_);
  if (nq_ == L_ && nk_ == T_) {  // full resolution: blocks own disjoint rows, no lock needed
    std::copy(rows, rows + n * T_, out + i0 * T_);
    return;
  }
  std::lock_guard<std::mutex> lock(locks_[slot]);
  for (std::size_t r = 0; r < n; ++r) {
    float* cell_row = out + row_cell_[i0 + r] * nk_;
    const float* row = rows + r * T_;
    for (std::size_t j = 0; j < T_; ++j) {
      float& c = cell_row[col_cell_[j]];
      c = std::max(c, row[j]);
    }
    if (!top_keys_.empty()) add_top_keys(slot, row_cell_[i0 + r], row);
  }
}

attn::Tensor reduce_block_max(const float* map, std::size_t L, std::size_t T, std::size_t nq,
                              std::size_t nk) {
  // map: (L, T); result: (nq, nk)
  nq = std::min(L, std::max<std::size_t>(1, nq));
  nk = std::min(T, std::max<std::size_t>(1, nk));
  attn::Tensor out({nq, nk});
  for (std::size_t i = 0; i < L; ++i) {
    float* cell_row = out.ptr() + (i * nq / L) * nk;
    for (std::size_t j = 0; j < T; ++j) {
      float& c = cell_row[j * nk / T];
      c = std::max(c, map[i * T + j]);
    }
  }
  return out;
}

void ProgressSink::write_rows(std::size_t, std::size_t, std::size_t, std::size_t n, const float*) {
  progress_.advance(n);
}

void ProgressSink::write_digests(std::size_t, std::size_t, std::size_t, const attn::RowDigests& d) {
  progress_.advance(d.n);
}

}  // namespace app

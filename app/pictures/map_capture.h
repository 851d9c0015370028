// Sinks of the forward pass used by the front end: a capture of one batch
// entry's maps for pictures, and a row counter for the progress bar.
//
// Letters: B batch, H heads, L queries, T keys of a map row (T' in
// CONTRACT.md: the key positions plus torch MHA's bias_kv / zero_attn
// columns; T = L for self-attention), Nq x Nk cells of a drawn map.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "attn/attention.h"
#include "attn/tensor.h"

namespace app {

class Progress;

// Keeps batch entry `b` of the chosen heads only (so memory is bounded by
// the picture, not by B), reduced to at most max_cells cells a side per
// head: Nq = min(L, max_cells) query cells by Nk = min(T, max_cells) key
// cells, each the MAX over its block of (query, key) weights. Max rather
// than mean because attention is often sharp: one key taking most of a row
// must stay visible when 4 x 4 weights share a cell (a mean would dilute it
// 16-fold). Max of maxes is a max, so --show can reduce further.
class MapCapture : public attn::AttentionSink {
 public:
  // H: heads of the maps fed in (1 for --average-heads: the mean is head 0).
  // exact_query: the one query row (0..L-1; default the last) also kept
  // at full resolution, (heads().size(), T), for --show's head view: its top
  // keys named exactly when a cell holds a block of keys.
  MapCapture(std::size_t b, std::vector<std::size_t> heads, std::size_t H, std::size_t L,
             std::size_t T, std::size_t max_cells,
             std::optional<std::size_t> exact_query = std::nullopt);
  // rows: (n, T), queries i0 .. i0+n-1 of map (b, h)
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;

  std::size_t queries() const { return L_; }  // L
  std::size_t keys() const { return T_; }     // T
  std::size_t query_cells() const { return nq_; }
  std::size_t key_cells() const { return nk_; }
  const std::vector<std::size_t>& heads() const { return heads_; }
  // (heads().size(), Nq, Nk): the block maxima.
  const attn::Tensor& cells() const { return cells_; }
  std::size_t exact_query() const { return exact_query_; }
  // (heads().size(), T): query exact_query()'s weights, every key.
  const attn::Tensor& exact_row() const { return exact_row_; }

  // When a cell holds a block of keys (Nk < T), each query cell's strongest
  // keys named exactly (the HTML page's top-keys table past 1,024 tokens):
  // (heads().size(), Nq, kTopKeys) key numbers (0..T-1, -1 = none) and their
  // largest weight over the cell's query rows, strongest first. Exact: a key
  // among a block's kTopKeys strongest is among its row's kTopKeys strongest
  // in the row where it is largest. Empty when every key has its own column.
  static constexpr std::size_t kTopKeys = 10;
  const std::vector<std::int32_t>& top_keys() const { return top_keys_; }
  const std::vector<float>& top_weights() const { return top_weights_; }

 private:
  std::size_t b_, L_, T_, nq_, nk_;
  std::vector<std::size_t> heads_;
  std::vector<int> slot_of_head_;        // H entries, -1 = not drawn
  std::vector<std::size_t> row_cell_;    // L entries: query -> cell row
  std::vector<std::size_t> col_cell_;    // T entries: key -> cell column
  std::unique_ptr<std::mutex[]> locks_;  // one per drawn head (rows of a block share cells)
  attn::Tensor cells_;
  std::size_t exact_query_ = 0;
  attn::Tensor exact_row_;
  std::vector<std::int32_t> top_keys_;  // (heads, Nq, kTopKeys) or empty
  std::vector<float> top_weights_;      // the same shape
  // Merges row's strongest keys into query cell `cell` of head slot `slot`.
  void add_top_keys(std::size_t slot, std::size_t cell, const float* row);
};

// Block max of a (L, T) map into (nq, nk) cells, nq <= L and nk <= T (the
// same reduction as MapCapture, for pictures and --show's terminal width).
attn::Tensor reduce_block_max(const float* map, std::size_t L, std::size_t T, std::size_t nq,
                              std::size_t nk);

// Counts rows for the progress bar.
class ProgressSink : public attn::AttentionSink {
 public:
  explicit ProgressSink(Progress& p) : progress_(p) {}
  void write_rows(std::size_t, std::size_t, std::size_t, std::size_t n, const float*) override;
  // Counts digested rows as well: it never asks for rows itself.
  attn::DigestRequest digest_request() const override {
    attn::DigestRequest r;
    r.rows = false;
    return r;
  }
  void write_digests(std::size_t, std::size_t, std::size_t, const attn::RowDigests& d) override;

 private:
  Progress& progress_;
};

}  // namespace app

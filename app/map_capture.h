// Sinks of the forward pass used by the front end: a tee to several sinks, a
// capture of one batch entry's maps for pictures, and a row counter for the
// progress bar.
//
// Letters: B batch, H heads, S sequence, N cells per side of a drawn map.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "attn/attention.h"
#include "attn/tensor.h"

namespace app {

class Progress;

// Forwards every block to each sink in turn.
class TeeSink : public attn::AttentionSink {
 public:
  explicit TeeSink(std::vector<attn::AttentionSink*> sinks) : sinks_(std::move(sinks)) {}
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override {
    for (auto* s : sinks_) s->write_rows(b, h, i0, n, rows);
  }

 private:
  std::vector<attn::AttentionSink*> sinks_;
};

// Keeps batch entry `b` of the chosen heads only (so memory is bounded by
// the picture, not by B), reduced to at most max_cells x max_cells per head:
// each cell is the MAX over its block of (query, key) weights. Max rather
// than mean because attention is often sharp: one key taking most of a row
// must stay visible when 4 x 4 weights share a cell (a mean would dilute it
// 16-fold). Max of maxes is a max, so --show can reduce further.
class MapCapture : public attn::AttentionSink {
 public:
  MapCapture(std::size_t b, std::vector<std::size_t> heads, std::size_t H, std::size_t S,
             std::size_t max_cells);
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;

  std::size_t cells_per_side() const { return n_; }
  const std::vector<std::size_t>& heads() const { return heads_; }
  // (heads().size(), N, N): the block maxima, N = cells_per_side().
  const attn::Tensor& cells() const { return cells_; }

 private:
  std::size_t b_, S_, n_;
  std::vector<std::size_t> heads_;
  std::vector<int> slot_of_head_;        // H entries, -1 = not drawn
  std::vector<std::size_t> cell_of_;     // S entries: token -> cell
  std::unique_ptr<std::mutex[]> locks_;  // one per drawn head (rows of a block share cells)
  attn::Tensor cells_;
};

// Block max of a (S, S) map into (N, N) cells, with N <= S (the same
// reduction as MapCapture, for tests and for --show's terminal width).
attn::Tensor reduce_block_max(const float* map, std::size_t S, std::size_t n);

// Counts rows for the progress bar.
class ProgressSink : public attn::AttentionSink {
 public:
  explicit ProgressSink(Progress& p) : progress_(p) {}
  void write_rows(std::size_t, std::size_t, std::size_t, std::size_t n, const float*) override;

 private:
  Progress& progress_;
};

}  // namespace app

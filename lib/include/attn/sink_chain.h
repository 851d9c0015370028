// The listeners of one forward pass, chained from what the caller wants
// written (ARCHITECTURE.md "sinks of the streaming pass"): attention.npy, the
// maps in memory, the caller's own map sinks (pictures, --compare, a progress
// bar), --heads/--queries/--keys, --average-heads, --top-k, --summary,
// --head-stats, --key-stats, --stats, and --save's intermediates.
//
// The chain, from the forward pass outwards:
//   [--stats] -> [head mean] -> [selection] -> tee of the map listeners and
//   the reductions (with --keys and both kinds: the maps get the picked
//   columns, the reductions whole rows of the selected heads and queries).
//
// Letters: B batch, H heads, L queries, T keys (positions), T' keys of a map
// row (T plus torch MHA's bias_kv / zero_attn columns); H', L', S' the
// selected heads, queries and keys.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "attn/attention.h"
#include "attn/head_stats.h"
#include "attn/key_stats.h"
#include "attn/layer_weights.h"
#include "attn/map_select.h"
#include "attn/map_summary.h"
#include "attn/map_topk.h"
#include "attn/output.h"
#include "attn/saved_tensors.h"
#include "attn/stats.h"

namespace attn {

// Forwards every block to each sink in turn.
class TeeSink : public AttentionSink {
 public:
  explicit TeeSink(std::vector<AttentionSink*> sinks) : sinks_(std::move(sinks)) {}
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override {
    for (auto* s : sinks_) s->write_rows(b, h, i0, n, rows);
  }
  DigestRequest digest_request() const override {
    DigestRequest r;
    r.rows = false;
    for (auto* s : sinks_) r = merge(r, s->digest_request());
    return r;
  }
  void write_digests(std::size_t b, std::size_t h, std::size_t i0, const RowDigests& d) override {
    for (auto* s : sinks_) s->write_digests(b, h, i0, d);
  }
  void write_key_sums(std::size_t b, std::size_t h, const KeySums& k) override {
    for (auto* s : sinks_) s->write_key_sums(b, h, k);
  }

 private:
  std::vector<AttentionSink*> sinks_;
};

// What the caller wants written from one forward pass. The map listeners
// (attention.npy, the maps in memory, `listeners`) receive the selected
// maps, (B, H', L', S'); the reductions (top-k, summary, head and key
// statistics) whole rows (every key) of the selected heads and queries;
// --stats every head.
struct SinkRequest {
  std::size_t B = 0, H = 0, L = 0;
  std::size_t T = 0;           // T': keys of a map row (map_keys)
  std::size_t keys = 0;        // T: the real keys (for the reductions' recent and sink windows)
  bool average_heads = false;  // the maps are the mean over heads, one head
  MapSelection selection;      // of the maps as written (one head under average_heads)
  // Where files are streamed; nullptr = none (then no attention.npy, top-k or --save).
  OutputDir* out = nullptr;
  std::vector<std::size_t> maps_shape;  // non-empty: attention.npy streamed into out
  bool keep_all_maps = false;           // SinkChain::take_maps
  // The caller's own listeners of the selected maps, built for (B, H', L', S').
  std::vector<AttentionSink*> listeners;
  std::size_t top_k = 0;  // topk_values.npy and topk_indices.npy in topk_shape; 0 = none
  std::vector<std::size_t> topk_shape;
  bool summary = false;               // SinkChain::summary
  std::size_t recent = 64;            // --recent W
  bool head_stats = false;            // SinkChain::head_stats
  std::size_t sink_keys = 4;          // --sink N
  bool key_stats = false;             // SinkChain::key_stats
  std::size_t window = 32, pool = 7;  // --window W, --pool K
  bool stats = false;                 // SinkChain::stats
  // --save: the intermediates of `weights` streamed into out (names empty = none).
  SavePlan save;
  const Weights* weights = nullptr;
  int threads = 1;

  // Whether any map listener or reduction is asked for (a progress bar that
  // counts rows should listen only then: it never makes the forward pass
  // produce rows on its own).
  bool listens() const;
};

// The chain the request asks for, built once: hand head() and intermediates()
// to ForwardOptions, call finish() after the forward pass, then read the
// results. Holds pointers into the request's out and listeners.
class SinkChain {
 public:
  explicit SinkChain(const SinkRequest& r);
  ~SinkChain();
  SinkChain(const SinkChain&) = delete;
  SinkChain& operator=(const SinkChain&) = delete;

  AttentionSink* head() const { return head_; }  // nullptr: nothing listens
  IntermediateSink* intermediates() { return saved_ ? &*saved_ : nullptr; }  // --save
  // The streamed files' last blocks on the disk (attention.npy, --save).
  void finish();
  Tensor take_maps();                    // (B, H', L', S') when keep_all_maps
  std::vector<HeadStats> stats() const;  // (H) when stats

  // The reductions, when asked for (the caller may move them out).
  std::unique_ptr<SummarySink> summary;
  std::unique_ptr<HeadStatsSink> head_stats;
  std::unique_ptr<KeyStatsSink> key_stats;

 private:
  class FileSink;
  std::unique_ptr<FileSink> file_;
  std::optional<TensorSink> all_;
  std::optional<TopKSink> topk_;
  std::optional<TeeSink> tee_maps_, tee_reducers_, tee_both_;
  std::optional<SelectSink> select_maps_, select_reducers_;
  std::optional<HeadMeanSink> mean_;
  std::optional<StatsSink> stats_;
  std::optional<SavedTensorsSink> saved_;
  AttentionSink* head_ = nullptr;
};

}  // namespace attn

// The listeners of one forward pass, chained from a request (sink_chain.h).
//
// Letters: B batch, H heads, L queries, T' keys of a map row; H', L', S' the
// selected heads, queries and keys.
#include "attn/sink_chain.h"

#include <cstdint>

#include "outputs/map_file_sink.h"

namespace attn {

// attention.npy, streamed as its blocks are computed (map_file_sink.h).
class SinkChain::FileSink : public detail::MapFileSink {
  using MapFileSink::MapFileSink;
};

bool SinkRequest::listens() const {
  return (out && !maps_shape.empty()) || keep_all_maps || !listeners.empty() || stats || top_k ||
         summary || key_stats || head_stats;
}

SinkChain::SinkChain(const SinkRequest& r) {
  const std::size_t B = r.B, L = r.L, T = r.T;
  const std::size_t Hm = r.average_heads ? 1 : r.H;  // heads of the maps, all
  const MapSelection& sel = r.selection;
  const std::size_t Hs = sel.heads.empty() ? Hm : sel.heads.size();     // H'
  const std::size_t Ls = sel.queries.empty() ? L : sel.queries.size();  // L'
  const std::size_t Ts = sel.keys.empty() ? T : sel.keys.size();        // S'

  // The map listeners see the selected maps.
  std::vector<AttentionSink*> sinks;
  if (r.out && !r.maps_shape.empty()) {
    file_ = std::make_unique<FileSink>(
        *r.out, r.out->add_streamed_npy("attention.npy", r.maps_shape), Hs, Ls, Ts);
    sinks.push_back(file_.get());
  }
  if (r.keep_all_maps) sinks.push_back(&all_.emplace(B, Hs, Ls, Ts));
  sinks.insert(sinks.end(), r.listeners.begin(), r.listeners.end());

  // The reductions see whole rows (every key) of the selected heads and queries.
  std::vector<AttentionSink*> reducers;
  if (r.out && r.top_k) {
    const int values = r.out->add_streamed_npy("topk_values.npy", r.topk_shape);
    const int indices =
        r.out->add_streamed_npy("topk_indices.npy", r.topk_shape, "<i8", sizeof(std::int64_t));
    reducers.push_back(&topk_.emplace(Hs, Ls, T, r.top_k, *r.out, values, indices));
  }
  if (r.summary) {
    summary =
        std::make_unique<SummarySink>(B, Hs, r.keys, T, r.recent, selected_or_all(sel.queries, L));
    reducers.push_back(summary.get());
  }
  if (r.head_stats) {
    head_stats = std::make_unique<HeadStatsSink>(B, Hs, r.keys, T, r.sink_keys, r.recent,
                                                 selected_or_all(sel.queries, L));
    reducers.push_back(head_stats.get());
  }
  if (r.key_stats) {
    key_stats = std::make_unique<KeyStatsSink>(B, Hs, Ls, T, r.window, r.pool);
    reducers.push_back(key_stats.get());
  }

  // The selection feeds them; the mean over heads feeds the selection; the
  // statistics see every head.
  if (!sel.keys.empty() && !sinks.empty() && !reducers.empty()) {
    // --keys: the maps get the picked columns, the reductions whole rows.
    MapSelection rows_only = sel;
    rows_only.keys.clear();
    head_ = &tee_both_.emplace(std::vector<AttentionSink*>{
        &select_maps_.emplace(Hm, L, T, sel, tee_maps_.emplace(sinks)),
        &select_reducers_.emplace(Hm, L, T, rows_only, tee_reducers_.emplace(reducers))});
  } else {
    std::vector<AttentionSink*> all_sinks = sinks;
    all_sinks.insert(all_sinks.end(), reducers.begin(), reducers.end());
    if (all_sinks.size() == 1) head_ = all_sinks.front();
    if (all_sinks.size() > 1) head_ = &tee_both_.emplace(all_sinks);
    MapSelection picked = sel;
    if (sinks.empty()) picked.keys.clear();  // only reductions listen: whole rows
    if (!picked.all() && head_) head_ = &select_maps_.emplace(Hm, L, T, picked, *head_);
  }
  if (r.average_heads && head_) head_ = &mean_.emplace(r.H, T, *head_);
  if (r.stats) head_ = &stats_.emplace(r.H, T, head_);

  // --save: q, k, v, scores, z and result as the forward pass makes them.
  if (r.out && !r.save.names.empty() && r.weights)
    saved_.emplace(*r.weights, r.save, *r.out, r.threads);
}

SinkChain::~SinkChain() = default;

void SinkChain::finish() {
  if (file_) file_->finish();  // the maps' last blocks on the disk
  if (saved_) saved_->finish();
}

Tensor SinkChain::take_maps() { return all_ ? std::move(all_->maps) : Tensor{}; }

std::vector<HeadStats> SinkChain::stats() const {
  return stats_ ? stats_->result() : std::vector<HeadStats>{};
}

}  // namespace attn

// Selecting which parts of the attention maps a run keeps (CONTRACT.md "(v3)
// Selecting and reducing maps"): --heads, --queries, --keys. Applied to the
// rows as the forward pass streams them, so a selection never holds more
// than the block of rows it was handed.
//
// Letters: B batch, H heads, L queries, T' keys of a map row (T plus torch
// MHA's extra columns); H', L', S' the selected heads, queries and keys.
#pragma once

#include <cstddef>
#include <vector>

#include "attn/attention.h"

namespace attn {

// Indices kept along each axis, in the order they are written; empty = all.
// No index appears twice (the parsers drop repeats).
struct MapSelection {
  std::vector<std::size_t> heads;    // of H (the heads of the maps fed in)
  std::vector<std::size_t> queries;  // of L
  std::vector<std::size_t> keys;     // of T'
  bool all() const { return heads.empty() && queries.empty() && keys.empty(); }
};

// Forwards the selected part of every block to `next`, renumbered: head
// heads[h'] arrives as h', query queries[i'] as i', and each row holds
// S' = keys.size() weights (keys[0], keys[1], ...), or all T' when keys is
// empty. Consecutive selected queries go out as one block. Thread-safe when
// `next` is.
class SelectSink : public AttentionSink {
 public:
  SelectSink(std::size_t H, std::size_t L, std::size_t T, MapSelection sel, AttentionSink& next);
  void write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                  const float* rows) override;
  // `next`'s request; rows when keys are picked (reductions of picked keys).
  DigestRequest digest_request() const override;
  void write_digests(std::size_t b, std::size_t h, std::size_t i0, const RowDigests& d) override;
  // The sums of the selected rows (the request's key_rows say which), of a kept head.
  void write_key_sums(std::size_t b, std::size_t h, const KeySums& k) override;

  std::size_t heads() const { return H_out_; }    // H'
  std::size_t queries() const { return L_out_; }  // L'
  std::size_t keys() const { return T_out_; }     // S'

 private:
  std::size_t T_, H_out_, L_out_, T_out_;
  std::vector<std::ptrdiff_t> head_slot_, query_slot_;  // -1 = not kept
  // Calls fn(h', i', r, len) for each run of consecutive selected rows of the
  // block: rows [r, r + len) go out as h', queries i'.. (none when h is not kept).
  template <class Fn>
  void for_each_run(std::size_t h, std::size_t i0, std::size_t n, Fn fn) const;

  std::vector<std::size_t> keys_;
  AttentionSink& next_;
};

// The selection as (B, H', L', S') indices, for tests and run.json: `n`
// indices 0..n-1 when `picked` is empty, else `picked`.
std::vector<std::size_t> selected_or_all(const std::vector<std::size_t>& picked, std::size_t n);

}  // namespace attn

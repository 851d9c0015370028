// Row digests' block views, the merge of two requests and the distance bins
// (attn/digest.h).
//
// Letters: K kept per row.
#include "attn/digest.h"

#include <algorithm>

namespace attn {

std::size_t distance_bin_lo(std::size_t k) { return k == 0 ? 0 : std::size_t(1) << (k - 1); }
std::size_t distance_bin_hi(std::size_t k) { return k == 0 ? 1 : std::size_t(1) << k; }

std::size_t distance_bins(std::size_t max_distance) {
  std::size_t k = 1;  // bin 0 holds distance 0
  while (max_distance >= distance_bin_hi(k - 1)) ++k;
  return k;
}

RowDigests RowDigests::rows(std::size_t r, std::size_t len) const {
  RowDigests d = *this;
  d.n = len;
  d.topk_values += r * K;
  d.topk_indices += r * K;
  d.summary += r * columns;
  d.histogram += r * bins;
  if (d.head) d.head += r * kHeadColumns;
  return d;
}

DigestRequest merge(const DigestRequest& a, const DigestRequest& b) {
  DigestRequest m;
  m.rows = a.rows || b.rows;
  m.top_k = std::max(a.top_k, b.top_k);
  m.summary = a.summary || b.summary;
  m.argmax = (a.summary && a.argmax) || (b.summary && b.argmax);
  m.recent = a.summary ? a.recent : b.recent;
  m.head = a.head || b.head;
  m.sink_keys = a.head ? a.sink_keys : b.sink_keys;
  // A row counts when either counts it; it votes when either has it vote.
  const bool a_longer = a.key_rows.size() >= b.key_rows.size();
  m.key_rows = a_longer ? a.key_rows : b.key_rows;
  const std::vector<std::uint8_t>& other = a_longer ? b.key_rows : a.key_rows;
  for (std::size_t i = 0; i < other.size() && i < m.key_rows.size(); ++i)
    m.key_rows[i] = std::max(m.key_rows[i], other[i]);
  return m;
}

}  // namespace attn

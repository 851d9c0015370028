// Row digests' block views and the merge of two requests (attn/digest.h).
//
// Letters: K kept per row.
#include "attn/digest.h"

#include <algorithm>

namespace attn {

RowDigests RowDigests::rows(std::size_t r, std::size_t len) const {
  RowDigests d = *this;
  d.n = len;
  d.topk_values += r * K;
  d.topk_indices += r * K;
  d.summary += r * columns;
  d.histogram += r * bins;
  return d;
}

DigestRequest merge(const DigestRequest& a, const DigestRequest& b) {
  DigestRequest m;
  m.rows = a.rows || b.rows;
  m.top_k = std::max(a.top_k, b.top_k);
  m.summary = a.summary || b.summary;
  m.recent = a.summary ? a.recent : b.recent;
  return m;
}

}  // namespace attn

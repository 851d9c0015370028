// --heads / --queries / --keys applied to streamed rows (attn/map_select.h).
//
// Letters: H heads, L queries, T' keys of a row; H', L', S' the selection.
#include "attn/map_select.h"

#include <numeric>
#include <utility>

#include "attn/error.h"

namespace attn {
namespace {

// slot[i] = position of i in `picked` (or i itself when picked is empty), -1 when absent.
std::vector<std::ptrdiff_t> slots_of(const std::vector<std::size_t>& picked, std::size_t n,
                                     const char* what) {
  std::vector<std::ptrdiff_t> slot(n, picked.empty() ? 0 : -1);
  if (picked.empty()) {
    std::iota(slot.begin(), slot.end(), std::ptrdiff_t(0));
    return slot;
  }
  for (std::size_t k = 0; k < picked.size(); ++k) {
    if (picked[k] >= n || slot[picked[k]] >= 0)
      throw Error(Exit::software, std::string("map selection: bad or repeated ") + what +
                                      " index " + std::to_string(picked[k]));
    slot[picked[k]] = std::ptrdiff_t(k);
  }
  return slot;
}

}  // namespace

std::vector<std::size_t> selected_or_all(const std::vector<std::size_t>& picked, std::size_t n) {
  if (!picked.empty()) return picked;
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t(0));
  return all;
}

SelectSink::SelectSink(std::size_t H, std::size_t L, std::size_t T, MapSelection sel,
                       AttentionSink& next)
    : T_(T),
      H_out_(sel.heads.empty() ? H : sel.heads.size()),
      L_out_(sel.queries.empty() ? L : sel.queries.size()),
      T_out_(sel.keys.empty() ? T : sel.keys.size()),
      head_slot_(slots_of(sel.heads, H, "head")),
      query_slot_(slots_of(sel.queries, L, "query")),
      keys_(std::move(sel.keys)),
      next_(next) {
  for (std::size_t j : keys_)
    if (j >= T) throw Error(Exit::software, "map selection: key index " + std::to_string(j));
}

template <class Fn>
void SelectSink::for_each_run(std::size_t h, std::size_t i0, std::size_t n, Fn fn) const {
  const std::ptrdiff_t hs = head_slot_.at(h);
  if (hs < 0) return;
  std::size_t r = 0;
  while (r < n) {
    const std::ptrdiff_t first = query_slot_[i0 + r];
    if (first < 0) {
      ++r;
      continue;
    }
    // A run of rows whose slots follow each other goes out as one block.
    std::size_t len = 1;
    while (r + len < n && query_slot_[i0 + r + len] == first + std::ptrdiff_t(len)) ++len;
    fn(std::size_t(hs), std::size_t(first), r, len);
    r += len;
  }
}

void SelectSink::write_rows(std::size_t b, std::size_t h, std::size_t i0, std::size_t n,
                            const float* rows /* (n, T') */) {
  std::vector<float> gathered;  // (run, S') when keys are picked
  for_each_run(h, i0, n, [&](std::size_t hs, std::size_t first, std::size_t r, std::size_t len) {
    const float* src = rows + r * T_;
    if (keys_.empty()) {
      next_.write_rows(b, hs, first, len, src);
      return;
    }
    gathered.resize(len * T_out_);
    for (std::size_t k = 0; k < len; ++k)
      for (std::size_t c = 0; c < T_out_; ++c) gathered[k * T_out_ + c] = src[k * T_ + keys_[c]];
    next_.write_rows(b, hs, first, len, gathered.data());
  });
}

DigestRequest SelectSink::digest_request() const {
  if (!keys_.empty()) return DigestRequest{};
  DigestRequest req = next_.digest_request();
  // key_rows counts the selected rows (i' of L'): as rows i of L here.
  if (!req.key_rows.empty()) {
    std::vector<std::uint8_t> rows(query_slot_.size(), 0);
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (query_slot_[i] >= 0 && std::size_t(query_slot_[i]) < req.key_rows.size())
        rows[i] = req.key_rows[std::size_t(query_slot_[i])];
    req.key_rows = std::move(rows);
  }
  return req;
}

void SelectSink::write_key_sums(std::size_t b, std::size_t h, const KeySums& k) {
  const std::ptrdiff_t hs = head_slot_.at(h);
  if (hs >= 0) next_.write_key_sums(b, std::size_t(hs), k);
}

void SelectSink::write_digests(std::size_t b, std::size_t h, std::size_t i0, const RowDigests& d) {
  for_each_run(h, i0, d.n, [&](std::size_t hs, std::size_t first, std::size_t r, std::size_t len) {
    next_.write_digests(b, hs, first, d.rows(r, len));
  });
}

}  // namespace attn

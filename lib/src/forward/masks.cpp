// attn_mask shapes and attention_mask conversion (masks.h).
//
// Letters: B batch, H heads, L queries, T keys.
#include "attn/masks.h"

#include <cmath>

#include "attn/error.h"

namespace attn {

namespace {

// Strides of a mask of shape `s` in the (B, H, L, T) score space; Exit::data
// listing the accepted shapes otherwise.
void resolve_shape(const std::vector<std::size_t>& s, std::size_t B, std::size_t H, std::size_t L,
                   std::size_t T, const std::string& name, ScoreMask& out) {
  out.L = L;
  out.T = T;
  const std::size_t LT = L * T;
  const auto tail = [&](std::size_t n) {
    return s.size() >= 2 && s[s.size() - 2] == L && s[s.size() - 1] == T && s.size() == n;
  };
  if (tail(2)) return;  // (L, T): one mask for every batch row and head
  if (tail(3) && s[0] == B * H && H > 1 && B * H != B) {  // torch MHA: (B*H, L, T), b-major
    out.stride_b = H * LT;
    out.stride_h = LT;
    return;
  }
  if (tail(3) && s[0] == B) {  // (B, L, T)
    out.stride_b = LT;
    return;
  }
  if (tail(4) && s[0] == B && s[1] == 1) {  // (B, 1, L, T): Hugging Face's 4-D masks
    out.stride_b = LT;
    return;
  }
  if (tail(4) && s[0] == B && s[1] == H) {  // (B, H, L, T)
    out.stride_b = H * LT;
    out.stride_h = LT;
    return;
  }
  const std::string b = std::to_string(B), h = std::to_string(H), l = std::to_string(L),
                    t = std::to_string(T), bh = std::to_string(B * H);
  throw Error(Exit::data, name + ": expected an attn_mask of shape (" + l + ", " + t + "), (" + b +
                              ", " + l + ", " + t + "), (" + bh + ", " + l + ", " + t + "), (" + b +
                              ", 1, " + l + ", " + t + ") or (" + b + ", " + h + ", " + l + ", " +
                              t + "), found " + shape_str(s));
}

// "(1, 2, 3)" index of flat element i of shape s.
std::string index_of(std::size_t i, const std::vector<std::size_t>& s) {
  std::vector<std::size_t> idx(s.size());
  for (std::size_t d = s.size(); d-- > 0;) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return shape_str(idx);
}

}  // namespace

ScoreMask score_mask(const Mask& m, std::size_t B, std::size_t H, std::size_t L, std::size_t T,
                     const std::string& name) {
  ScoreMask out;
  resolve_shape(m.shape, B, H, L, T, name, out);
  out.blocked = m.data;
  return out;
}

ScoreMask score_mask(const Tensor& m, std::size_t B, std::size_t H, std::size_t L, std::size_t T,
                     const std::string& name) {
  ScoreMask out;
  resolve_shape(m.shape, B, H, L, T, name, out);
  for (std::size_t i = 0; i < m.data.size(); ++i) {
    const float v = m.data[i];
    if (std::isnan(v) || v == INFINITY)
      throw Error(Exit::data,
                  name + ": " + (std::isnan(v) ? "NaN" : "+inf") + " at index " +
                      index_of(i, m.shape) +
                      " (a float attn_mask adds to the scores: use -inf to block a key)");
  }
  out.additive = true;
  out.add.assign(m.data.begin(), m.data.end());
  return out;
}

ScoreMask score_mask(const AttnMask& m, std::size_t B, std::size_t H, std::size_t L, std::size_t T,
                     const std::string& name) {
  return m.additive ? score_mask(m.add, B, H, L, T, name) : score_mask(m.blocked, B, H, L, T, name);
}

Mask padding_from_attention_mask(const Mask& attention_mask) {
  Mask padded = attention_mask;
  for (std::uint8_t& v : padded.data) v = v ? 0 : 1;
  return padded;
}

double padded_share(const Mask& padding) {
  if (padding.data.empty()) return 0.0;
  std::size_t n = 0;
  for (std::uint8_t v : padding.data) n += v != 0;
  return double(n) / double(padding.data.size());
}

}  // namespace attn

#include "reference.h"

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

namespace attn::ref {
namespace {

using Matrix = xt::xtensor<double, 2>;  // (rows, cols), double
using Vector = xt::xtensor<double, 1>;

// An N-dimensional view over a row-major buffer (no copy).
template <std::size_t N, class T>
auto as_xt(T* data, const std::vector<std::size_t>& shape) {
  std::array<std::size_t, N> s{};
  std::copy_n(shape.begin(), N, s.begin());
  // A prvalue pointer: an lvalue would be held by reference (xtl::closure_type).
  return xt::adapt(static_cast<T*>(data), Tensor::count(shape), xt::no_ownership(), s);
}

Vector bias_or_zeros(const Tensor& b, std::size_t n) {
  if (b.empty()) return xt::zeros<double>({n});
  return as_xt<1>(b.ptr(), b.shape);
}

// Same as torch.nn.Linear: y = a W^T + b.   a: (n, in); W: (out, in); b: (out).
Matrix linear(const Matrix& a, const Matrix& W, const Vector& b) {
  const Matrix w_t = xt::transpose(W);  // dot() takes row-major operands only
  return xt::linalg::dot(a, w_t) + b;
}

// torch: scores.masked_fill(~allowed, -inf).softmax(dim=-1), except that a
// row with no allowed key gets zeros (CONTRACT.md) where torch gives NaN.
// scores, allowed: (n, S). Counts the rows with no allowed key.
Matrix masked_softmax(const Matrix& scores, const xt::xtensor<bool, 2>& allowed,
                      long* fully_masked_rows) {
  const double inf = std::numeric_limits<double>::infinity();
  const Matrix s = xt::where(allowed, scores, -inf);
  const Matrix row_max = xt::view(xt::amax(s, {1}), xt::all(), xt::newaxis());  // (n, 1)
  const Matrix e = xt::where(allowed, xt::exp(s - row_max), 0.0);
  const Matrix row_sum = xt::view(xt::sum(e, {1}), xt::all(), xt::newaxis());  // (n, 1)
  for (double total : row_sum)
    if (total == 0.0) ++*fully_masked_rows;
  return xt::where(row_sum > 0.0, e / row_sum, 0.0);
}

}  // namespace

RefLayer from_weights(const Weights& w) {
  RefLayer l;
  l.H = std::size_t(w.H);
  l.Hkv = w.geometry().Hkv;  // query head h reads KV head h / (H / Hkv)
  l.D = std::size_t(w.D);
  l.w_qkv = as_xt<2>(w.w_qkv.ptr(), w.w_qkv.shape);
  l.b_qkv = bias_or_zeros(w.b_qkv, l.w_qkv.shape(0));
  l.has_out_proj = w.has_out_proj;
  if (w.has_out_proj) {
    l.w_out = as_xt<2>(w.w_out.ptr(), w.w_out.shape);
    l.b_out = bias_or_zeros(w.b_out, l.w_out.shape(0));
  }
  if (!w.w_k.empty()) l.w_k = as_xt<2>(w.w_k.ptr(), w.w_k.shape);
  if (!w.w_v.empty()) l.w_v = as_xt<2>(w.w_v.ptr(), w.w_v.shape);
  const auto vec = [](const Tensor& t, Vector& out) {
    if (!t.empty()) out = as_xt<1>(t.ptr(), {t.size()});
  };
  vec(w.bias_k, l.bias_k);
  vec(w.bias_v, l.bias_v);
  vec(w.q_norm, l.q_norm);
  vec(w.k_norm, l.k_norm);
  vec(w.sinks, l.sinks);
  return l;
}

// The whole map: every query row of every batch row through attention_rows,
// in blocks of rows so that the (rows, S) temporaries stay small at long S.
Result attention(const RefLayer& layer, const Tensor& x, const Mask* key_padding, double scale,
                 bool causal) {
  constexpr std::size_t kBlock = 64;
  const std::size_t B = x.shape[0], S = x.shape[1], H = layer.H;
  const std::size_t O = layer.has_out_proj ? layer.w_out.shape(0) : H * layer.D;
  Result r;
  r.context = Tensor({B, S, O});
  r.attention = Tensor({B, H, S, S});
  auto context = as_xt<3>(r.context.ptr(), r.context.shape);
  auto maps = as_xt<4>(r.attention.ptr(), r.attention.shape);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i0 = 0; i0 < S; i0 += kBlock) {
      std::vector<std::size_t> rows(std::min(kBlock, S - i0));
      std::iota(rows.begin(), rows.end(), i0);
      const Result rb = attention_rows(layer, x, key_padding, scale, causal, b, rows);
      auto block = xt::range(i0, i0 + rows.size());  // (not const: xt::view takes it as is)
      xt::view(context, b, block, xt::all()) = as_xt<2>(rb.context.ptr(), rb.context.shape);
      xt::view(maps, b, xt::all(), block, xt::all()) =
          as_xt<3>(rb.attention.ptr(), rb.attention.shape);
      r.fully_masked_rows += rb.fully_masked_rows;
    }
  return r;
}

Result attention_rows(const RefLayer& layer, const Tensor& x, const Mask* key_padding, double scale,
                      bool causal, std::size_t b, const std::vector<std::size_t>& rows) {
  const std::size_t S = x.shape[1], H = layer.H, Hkv = layer.Hkv, D = layer.D, n = rows.size();
  const std::size_t group = H / Hkv;  // query heads per KV head (repeat_kv's n_rep)

  // The fused projection's rows: q of H heads, then k and v of Hkv heads each.
  auto q_part = xt::range(0, H * D);
  auto k_part = xt::range(H * D, (H + Hkv) * D);
  auto v_part = xt::range((H + Hkv) * D, (H + 2 * Hkv) * D);
  const Matrix xb = xt::view(as_xt<3>(x.ptr(), x.shape), b);  // (S, C)
  const Matrix q =
      linear(xt::view(xb, xt::keep(rows), xt::all()), xt::view(layer.w_qkv, q_part, xt::all()),
             xt::view(layer.b_qkv, q_part));  // (n, H*D)
  const Matrix k = linear(xb, xt::view(layer.w_qkv, k_part, xt::all()),
                          xt::view(layer.b_qkv, k_part));  // (S, Hkv*D)
  const Matrix v = linear(xb, xt::view(layer.w_qkv, v_part, xt::all()),
                          xt::view(layer.b_qkv, v_part));  // (S, Hkv*D)

  // allowed[t, j]: query rows[t] may attend key j (causal: j <= rows[t];
  // key_padding: key j of batch b not padded).
  const auto key_pos = xt::view(xt::arange<std::size_t>(S), xt::newaxis(), xt::all());    // (1, S)
  const auto query_pos = xt::view(as_xt<1>(rows.data(), {n}), xt::all(), xt::newaxis());  // (n, 1)
  xt::xtensor<bool, 2> allowed = xt::ones<bool>({n, S});
  if (causal) allowed = allowed && (key_pos <= query_pos);
  if (key_padding) {
    const auto padded = xt::view(as_xt<2>(key_padding->data.data(), key_padding->shape), b);
    allowed = allowed && xt::view(xt::equal(padded, std::uint8_t(0)), xt::newaxis(), xt::all());
  }

  Result r;
  r.attention = Tensor({H, n, S});
  auto maps = as_xt<3>(r.attention.ptr(), r.attention.shape);
  Matrix y = xt::zeros<double>({n, H * D});  // heads concatenated
  for (std::size_t h = 0; h < H; ++h) {
    const std::size_t g = h / group;  // the KV head query head h reads
    auto head = xt::range(h * D, (h + 1) * D), kv_head = xt::range(g * D, (g + 1) * D);
    // att = softmax(q k^T * scale + mask);  y_h = att v
    const Matrix q_h = xt::view(q, xt::all(), head);                    // (n, D)
    const Matrix k_t = xt::transpose(xt::view(k, xt::all(), kv_head));  // (D, S)
    const Matrix v_h = xt::view(v, xt::all(), kv_head);                 // (S, D)
    const Matrix scores = xt::linalg::dot(q_h, k_t) * scale;            // (n, S)
    const Matrix att = masked_softmax(scores, allowed, &r.fully_masked_rows);
    xt::view(maps, h) = att;
    xt::view(y, xt::all(), head) = xt::linalg::dot(att, v_h);
  }

  const Matrix out = layer.has_out_proj ? linear(y, layer.w_out, layer.b_out) : y;  // (n, O)
  r.context = Tensor({n, out.shape(1)});
  as_xt<2>(r.context.ptr(), r.context.shape) = out;
  return r;
}

}  // namespace attn::ref

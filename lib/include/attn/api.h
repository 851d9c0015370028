// attn-run's library for C++ users, NumPy-style: arrays in and out are
// xtensor containers (views, broadcasting, xt::linalg, printing all apply).
//
//   attn::Example ex = attn::load_example("configs/raschka_mha_causal.json");
//   attn::RunSpec spec;
//   spec.maps = true;
//   auto [context, maps, masked] = attn::run_attention(ex.layer, ex.x, spec);
//   std::cout << xt::view(context, 0) << "\n";  // (S, O) of the first sequence
//
// The kernels keep raw pointers and leading dimensions. At the boundary the
// weights are viewed in place and the context and maps are handed over with
// their buffers (no copies); the input, which may be any expression or view,
// is written once into the kernels' row-major float32 buffer.
//
// Letters: B batch, S sequence, C hidden, H heads, Hkv key/value heads (= H
// without num_kv_heads), D head size, O out size.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <xtensor/xadapt.hpp>
#include <xtensor/xtensor.hpp>

#include "attn/config.h"
#include "attn/error.h"
#include "attn/layout.h"
#include "attn/tensor.h"
#include "attn/weights.h"

namespace attn {

// A row-major float32 array that owns its buffer (the library's FloatBuffer,
// a std::vector on huge pages when large, so results move into it without a
// copy). It is an xtensor container: index it, view it, compute with it, or
// assign it to an xt::xtensor<float, N>.
template <std::size_t N>
using Array = xt::xtensor_adaptor<FloatBuffer, N>;

// A view of float32 memory owned elsewhere (e.g. a Layer's weights).
template <std::size_t N>
using ArrayView = decltype(xt::adapt(std::declval<float*>(), std::size_t(), xt::no_ownership(),
                                     std::declval<std::array<std::size_t, N>>()));
template <std::size_t N>
using ConstArrayView =
    decltype(xt::adapt(std::declval<const float*>(), std::size_t(), xt::no_ownership(),
                       std::declval<std::array<std::size_t, N>>()));

// One attention layer: its resolved config and its weights in canonical form.
struct Layer {
  Config config;
  Weights weights;
  Layout layout = Layout::fused;  // the naming scheme the weights came in
  std::string source;             // weights path, or "init(seed=N)"

  // The canonical weights (torch.nn.Linear convention, W is (out, in)),
  // viewed in place: reading is free, writing changes the layer. A missing
  // bias or output projection is a view of shape (0) or (0, 0).
  ConstArrayView<2> w_qkv() const;  // ((H + 2*Hkv)*D, C): q of H heads, then k, v of Hkv each
  ConstArrayView<1> b_qkv() const;  // ((H + 2*Hkv)*D)
  ConstArrayView<2> w_out() const;  // (O, H*D)
  ConstArrayView<1> b_out() const;  // (O)
  ArrayView<2> w_qkv();
  ArrayView<1> b_qkv();
  ArrayView<2> w_out();
  ArrayView<1> b_out();
};

// A layer from a config file (its weights file or its seeded init), checked
// as the executable checks it. Errors: attn::Error with the exit code and the
// message attn-run would print (naming the file or key).
Layer load_layer(const std::string& config_path);
Layer load_layer(const Config& config);

// A config's layer together with its own input and padding mask.
struct Example {
  Layer layer;
  Array<3> x;                                       // (B, S, C); an (S, C) input gets B = 1
  std::optional<xt::xtensor<bool, 2>> key_padding;  // (B, S), true = padded key
};
Example load_example(const std::string& config_path);

// Token embeddings from a .npy or JSON file, checked against the layer:
// (S, C) becomes (1, S, C).
Array<3> load_input(const Layer& layer, const std::string& path);

struct RunSpec {
  std::optional<xt::xtensor<bool, 2>> key_padding;  // (B, S), true = padded key (torch's)
  bool maps = false;                                // also return the softmax weights (B, H, S, S)
  int threads = 0;                                  // 0 = the CPUs this process may use
};

// What the forward pass returns, in the order torch.nn.MultiheadAttention
// returns (attn_output, attn_weights); unpack with auto [context, maps, n] = ...
struct Output {
  Array<3> context;                    // (B, S, O)
  std::optional<Array<4>> maps;        // (B, H, S, S) when RunSpec::maps
  std::int64_t fully_masked_rows = 0;  // (b, h, query) rows with every key masked: zero weights
};

namespace detail {
// x: (B, S, C) or (S, C) row-major; the non-template core of run_attention.
Output run_attention(const Layer& layer, Tensor&& x, const RunSpec& spec);
}  // namespace detail

// The layer's forward pass (scale and causal from its config), as
// torch.nn.MultiheadAttention / the tutorial modules compute it.
// x: any float expression of shape (B, S, C) or (S, C), evaluated once into
// the kernels' buffer. Without RunSpec::maps the streaming path runs and never
// holds S x S weights. Errors: attn::Error (Exit::data naming `input` when the
// shape does not fit the layer, or the mask not the input).
template <class E>
Output run_attention(const Layer& layer, const xt::xexpression<E>& x, const RunSpec& spec = {}) {
  const auto& e = x.derived_cast();
  Tensor t(std::vector<std::size_t>(e.shape().begin(), e.shape().end()));
  auto into = xt::adapt(t.ptr(), t.size(), xt::no_ownership(), t.shape);
  into = e;  // converts and lays out row-major in one pass
  return detail::run_attention(layer, std::move(t), spec);
}

}  // namespace attn

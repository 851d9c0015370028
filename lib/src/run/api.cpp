// The xtensor boundary of the library (attn/api.h): loading through run.h's
// rules, forward() on raw buffers, results handed over without copies.
//
// Letters: B batch, S sequence, C hidden, H heads, O out size.
#include "attn/api.h"

#include <algorithm>

#include "attn/attention.h"
#include "attn/run.h"

namespace attn {
namespace {

// A view of a Tensor's buffer; a tensor that is absent (no bias, no output
// projection) is a view of shape (0) or (0, 0).
template <std::size_t N, class T>
auto view_of(T* data, const std::vector<std::size_t>& shape) {
  std::array<std::size_t, N> s{};
  if (shape.size() == N) std::copy(shape.begin(), shape.end(), s.begin());
  const std::size_t n = shape.size() == N ? Tensor::count(shape) : 0;
  return xt::adapt(static_cast<T*>(data), n, xt::no_ownership(), s);  // a prvalue: held by value
}

// The Tensor's buffer moves into the array: no copy.
template <std::size_t N>
Array<N> to_array(Tensor&& t) {
  std::array<std::size_t, N> s{};
  std::copy(t.shape.begin(), t.shape.end(), s.begin());
  return Array<N>(std::move(t.data), s);
}

Mask to_mask(const xt::xtensor<bool, 2>& m) {
  Mask k;
  k.shape = {m.shape(0), m.shape(1)};
  k.data.assign(m.begin(), m.end());
  return k;
}

xt::xtensor<bool, 2> from_mask(const Mask& m) {  // m: (B, S)
  return xt::not_equal(view_of<2>(m.data.data(), m.shape), std::uint8_t(0));
}

}  // namespace

ConstArrayView<2> Layer::w_qkv() const {
  return view_of<2>(weights.w_qkv.ptr(), weights.w_qkv.shape);
}
ConstArrayView<1> Layer::b_qkv() const {
  return view_of<1>(weights.b_qkv.ptr(), weights.b_qkv.shape);
}
ConstArrayView<2> Layer::w_out() const {
  return view_of<2>(weights.w_out.ptr(), weights.w_out.shape);
}
ConstArrayView<1> Layer::b_out() const {
  return view_of<1>(weights.b_out.ptr(), weights.b_out.shape);
}
ArrayView<2> Layer::w_qkv() { return view_of<2>(weights.w_qkv.ptr(), weights.w_qkv.shape); }
ArrayView<1> Layer::b_qkv() { return view_of<1>(weights.b_qkv.ptr(), weights.b_qkv.shape); }
ArrayView<2> Layer::w_out() { return view_of<2>(weights.w_out.ptr(), weights.w_out.shape); }
ArrayView<1> Layer::b_out() { return view_of<1>(weights.b_out.ptr(), weights.b_out.shape); }

Layer load_layer(const Config& config) {
  Layer l;
  l.config = config;
  bool detected = false;
  l.weights = load_model_weights(config, false, &l.layout, &detected, &l.source);
  return l;
}

Layer load_layer(const std::string& config_path) { return load_layer(load_config(config_path)); }

Example load_example(const std::string& config_path) {
  const Config cfg = load_config(config_path);
  LoadedRun run = load_run(cfg, LoadOptions{});
  Example ex{Layer{cfg, std::move(run.weights), run.layout, run.weights_source},
             to_array<3>(std::move(run.x)), std::nullopt};
  if (run.padding) ex.key_padding = from_mask(*run.padding);
  return ex;
}

Array<3> load_input(const Layer& layer, const std::string& path) {
  bool batched = true;
  return to_array<3>(batch_input(read_input_file(path, false), layer.config, path, &batched));
}

Output detail::run_attention(const Layer& layer, Tensor&& x_in, const RunSpec& spec) {
  bool batched = true;
  const Tensor x = batch_input(std::move(x_in), layer.config, "input", &batched);  // (B, S, C)
  const std::size_t B = x.shape[0], S = x.shape[1], H = std::size_t(layer.weights.H);
  std::optional<Mask> mask;
  if (spec.key_padding) mask = batch_mask(to_mask(*spec.key_padding), B, S, "key_padding", "input");

  ForwardOptions opt;
  opt.threads = spec.threads;
  std::optional<TensorSink> sink;
  if (spec.maps) opt.attention = &sink.emplace(B, H, S);
  Tensor context;
  const ForwardStats st =
      forward(layer.weights, layer.config.spec, x, mask ? &*mask : nullptr, context, opt);
  Output out{to_array<3>(std::move(context)), std::nullopt, st.fully_masked_rows};
  if (sink) out.maps.emplace(to_array<4>(std::move(sink->maps)));
  return out;
}

}  // namespace attn

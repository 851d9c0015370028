// The key/shape table of every layout (CONTRACT.md "Weight layouts") and the
// block copies between a layout's tensors and the canonical form.
//
// Canonical (weights.h, Warner's fused Wqkv): w_qkv (3*H*D, C) rows are q of
// all heads, then k, then v, head-major inside; w_out (O, H*D).
// Letters: C hidden (in), H heads, D head size, O out features.
#include "weights_layouts.h"

#include <algorithm>
#include <cctype>

#include "attn/error.h"

namespace attn::detail {

Dims dims_of(const Config& cfg) {
  Dims d;
  d.C = static_cast<std::size_t>(cfg.hidden_size);
  d.H = static_cast<std::size_t>(cfg.num_heads);
  d.D = static_cast<std::size_t>(cfg.head_size);
  d.out_proj = cfg.out_proj;
  d.O = static_cast<std::size_t>(cfg.out_features());
  d.qkv_bias = cfg.qkv_bias;
  d.out_bias = cfg.out_proj && cfg.out_bias;
  return d;
}

Dims dims_of(const Weights& w) {
  Dims d;
  d.C = static_cast<std::size_t>(w.C);
  d.H = static_cast<std::size_t>(w.H);
  d.D = static_cast<std::size_t>(w.D);
  d.O = static_cast<std::size_t>(w.O);
  d.out_proj = w.has_out_proj;
  d.qkv_bias = !w.b_qkv.data.empty();
  d.out_bias = w.has_out_proj && !w.b_out.data.empty();
  return d;
}

namespace {

// A Linear-shaped slot (out rows of `part`, in columns) and its bias.
void add_linear(std::vector<Slot>& out, const std::string& name, Part weight, std::size_t row0,
                std::size_t rows, std::size_t in, bool bias, const std::string& wsuffix = ".weight",
                const std::string& bsuffix = ".bias") {
  out.push_back({name + wsuffix, weight, row0, rows, false, {rows, in}});
  if (bias) {
    const Part b = weight == Part::qkv_weight ? Part::qkv_bias : Part::out_bias;
    out.push_back({name + bsuffix, b, row0, rows, false, {rows}});
  }
}

}  // namespace

std::vector<Slot> layout_slots(const Dims& d, Layout layout) {
  const std::size_t C = d.C, HD = d.HD(), O = d.O;
  std::vector<Slot> s;
  switch (layout) {
    case Layout::fused:  // Warner: Wqkv = Linear(C, 3*H*D), Wo = Linear(H*D, O)
      add_linear(s, "Wqkv", Part::qkv_weight, 0, 3 * HD, C, d.qkv_bias);
      if (d.out_proj) add_linear(s, "Wo", Part::out_weight, 0, O, HD, d.out_bias);
      break;
    case Layout::separate:  // Raschka's MultiHeadAttention / CausalAttention
      add_linear(s, "W_query", Part::qkv_weight, 0, HD, C, d.qkv_bias);
      add_linear(s, "W_key", Part::qkv_weight, HD, HD, C, d.qkv_bias);
      add_linear(s, "W_value", Part::qkv_weight, 2 * HD, HD, C, d.qkv_bias);
      if (d.out_proj) add_linear(s, "out_proj", Part::out_weight, 0, O, HD, d.out_bias);
      break;
    case Layout::per_head:  // MultiHeadAttentionWrapper: heads.i = CausalAttention(C, D)
      for (std::size_t h = 0; h < d.H; ++h) {
        const std::string p = "heads." + std::to_string(h) + ".";
        add_linear(s, p + "W_query", Part::qkv_weight, h * d.D, d.D, C, d.qkv_bias);
        add_linear(s, p + "W_key", Part::qkv_weight, HD + h * d.D, d.D, C, d.qkv_bias);
        add_linear(s, p + "W_value", Part::qkv_weight, 2 * HD + h * d.D, d.D, C, d.qkv_bias);
      }
      break;
    case Layout::kqv:  // the single-head tutorial: key, query, value in that order
      add_linear(s, "key", Part::qkv_weight, HD, HD, C, d.qkv_bias);
      add_linear(s, "query", Part::qkv_weight, 0, HD, C, d.qkv_bias);
      add_linear(s, "value", Part::qkv_weight, 2 * HD, HD, C, d.qkv_bias);
      break;
    case Layout::torch_mha:  // nn.MultiheadAttention: in_proj (q|k|v rows), out_proj
      add_linear(s, "in_proj", Part::qkv_weight, 0, 3 * HD, C, d.qkv_bias, "_weight", "_bias");
      add_linear(s, "out_proj", Part::out_weight, 0, O, HD, d.out_bias);
      break;
    case Layout::gpt2:  // HF GPT-2 Conv1D: weight stored (in, out), q|k|v column blocks
      s.push_back({"c_attn.weight", Part::qkv_weight, 0, 3 * HD, true, {C, 3 * HD}});
      if (d.qkv_bias) s.push_back({"c_attn.bias", Part::qkv_bias, 0, 3 * HD, false, {3 * HD}});
      s.push_back({"c_proj.weight", Part::out_weight, 0, O, true, {HD, O}});
      if (d.out_bias) s.push_back({"c_proj.bias", Part::out_bias, 0, O, false, {O}});
      break;
  }
  return s;
}

std::string layout_fit_problem(const Dims& d, Layout layout) {
  const std::string name = layout_name(layout);
  if (!layout_has_out_proj(layout) && d.out_proj)
    return "layout " + name + " has no output projection";
  if (layout == Layout::torch_mha || layout == Layout::gpt2) {
    const std::string what =
        layout == Layout::torch_mha ? "torch.nn.MultiheadAttention's embed_dim" : "GPT-2's n_embd";
    if (!d.out_proj) return "layout " + name + " always has an output projection";
    if (d.C != d.HD() || d.O != d.C)
      return "layout " + name + " needs hidden_size == num_heads*head_size == out_size (" + what +
             "), found " + std::to_string(d.C) + ", " + std::to_string(d.HD()) + ", " +
             std::to_string(d.O);
  }
  if (layout == Layout::torch_mha && d.qkv_bias != d.out_bias)
    return "layout torch_mha has one bias flag for in_proj and out_proj "
           "(nn.MultiheadAttention(bias=...)), found qkv_bias " +
           std::string(d.qkv_bias ? "true" : "false") + " and out_bias " +
           (d.out_bias ? "true" : "false");
  return "";
}

bool is_buffer_key(const std::string& key) {
  if (key == "mask" || key == "causal_mask" || key == "bias" || key == "masked_bias") return true;
  // heads.{i}.mask: MultiHeadAttentionWrapper's per-head CausalAttention buffer
  const std::string head = "heads.", tail = ".mask";
  if (key.size() <= head.size() + tail.size() || key.compare(0, head.size(), head) != 0 ||
      key.compare(key.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  for (std::size_t i = head.size(); i < key.size() - tail.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(key[i]))) return false;
  return true;
}

namespace {

Tensor* part_of(Weights& w, Part p) {
  switch (p) {
    case Part::qkv_weight:
      return &w.w_qkv;
    case Part::qkv_bias:
      return &w.b_qkv;
    case Part::out_weight:
      return &w.w_out;
    case Part::out_bias:
      return &w.b_out;
  }
  return nullptr;
}

const Tensor* part_of(const Weights& w, Part p) { return part_of(const_cast<Weights&>(w), p); }

// Columns of one canonical row of `p` (1 for biases).
std::size_t part_cols(const Dims& d, Part p) {
  if (p == Part::qkv_weight) return d.C;
  if (p == Part::out_weight) return d.HD();
  return 1;
}

}  // namespace

Weights assemble(const Dims& d, Layout layout, const TensorMap& m) {
  Weights w;
  w.C = static_cast<std::int64_t>(d.C);
  w.H = static_cast<std::int64_t>(d.H);
  w.D = static_cast<std::int64_t>(d.D);
  w.O = static_cast<std::int64_t>(d.O);
  w.has_out_proj = d.out_proj;
  w.w_qkv = Tensor({3 * d.HD(), d.C});
  if (d.qkv_bias) w.b_qkv = Tensor({3 * d.HD()});
  if (d.out_proj) w.w_out = Tensor({d.O, d.HD()});
  if (d.out_bias) w.b_out = Tensor({d.O});

  for (const Slot& s : layout_slots(d, layout)) {
    const Tensor& src = m.at(s.key);
    Tensor& dst = *part_of(w, s.part);
    const std::size_t cols = part_cols(d, s.part);
    float* out = dst.ptr() + s.row0 * cols;
    if (!s.transposed) {
      std::copy(src.data.begin(), src.data.end(), out);
    } else {
      // src is (cols, rows): Conv1D (in, out); canonical is (out, in).
      for (std::size_t r = 0; r < s.rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) out[r * cols + c] = src.data[c * s.rows + r];
    }
  }
  return w;
}

TensorMap disassemble(const Weights& w, Layout layout) {
  const Dims d = dims_of(w);
  TensorMap m;
  for (const Slot& s : layout_slots(d, layout)) {
    const Tensor& src = *part_of(w, s.part);
    const std::size_t cols = part_cols(d, s.part);
    const float* in = src.ptr() + s.row0 * cols;
    Tensor t(s.shape);
    if (!s.transposed) {
      std::copy(in, in + s.rows * cols, t.ptr());
    } else {
      for (std::size_t r = 0; r < s.rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) t.data[c * s.rows + r] = in[r * cols + c];
    }
    m.emplace(s.key, std::move(t));
  }
  return m;
}

}  // namespace attn::detail

namespace attn {

std::vector<ParamSpec> expected_params(const Config& cfg, Layout layout) {
  const detail::Dims d = detail::dims_of(cfg);
  const std::string problem = detail::layout_fit_problem(d, layout);
  if (!problem.empty()) throw Error(Exit::config, "layout: " + problem);
  std::vector<ParamSpec> out;
  for (const auto& s : detail::layout_slots(d, layout)) out.push_back({s.key, s.shape});
  return out;
}

}  // namespace attn

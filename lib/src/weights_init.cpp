// Torch-exact seeded init (issue 4 item 4): the weights torch.manual_seed(N)
// followed by the tutorial module's constructor produce, bit for bit, on
// PyTorch's CPU generator (1.13).
//
// - CPUGeneratorImpl holds one at::mt19937, seeded with init_genrand on the low
//   32 bits of the seed (torch.manual_seed(2**32 + 123) equals seed 123). Its
//   output is the standard MT19937 sequence, which std::mt19937 is specified
//   to produce exactly.
// - tensor.uniform_(from, to) on float draws one 32-bit number per element,
//   serially in row-major order (ATen's uniform_real_distribution /
//   transformation::uniform_real).
// - nn.Linear.reset_parameters: kaiming_uniform_(weight, a=sqrt(5)), then the
//   bias uniform in +-1/sqrt(in).
// - nn.MultiheadAttention: out_proj is a Linear built (and so drawn) in the
//   constructor, then _reset_parameters draws xavier_uniform_(in_proj_weight)
//   and sets both biases to zero.
//
// Letters: C hidden (in), H heads, D head size, O out features.
#include <cmath>
#include <random>

#include "attn/error.h"
#include "attn/weights.h"
#include "weights_layouts.h"

namespace attn {

namespace {

// tensor.uniform_(-bound, bound) for float32: from/to are cast to float first,
// their difference is taken in float; the 24 low bits of each draw give x in
// [0, 1), and the value is formed in double and rounded once to float.
void fill_uniform(float* out, std::size_t n, double bound, std::mt19937& gen) {
  const float from = static_cast<float>(-bound);
  const float to = static_cast<float>(bound);
  const double span = static_cast<double>(to - from);
  constexpr double kDivisor = 1.0 / 16777216.0;  // 2^-24: float's 24-bit mantissa
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t r = static_cast<std::uint32_t>(gen());
    const double x = static_cast<double>(r & 0xFFFFFFu) * kDivisor;
    out[i] = static_cast<float>(x * span + static_cast<double>(from));
  }
}

// torch.nn.init.kaiming_uniform_(w, a=math.sqrt(5)) with fan_in = in:
// gain = sqrt(2 / (1 + a**2)) (a**2 is 5.000000000000001 in double, as in
// Python), std = gain / sqrt(fan), bound = sqrt(3) * std.
double linear_weight_bound(std::size_t in) {
  const double a = std::sqrt(5.0);
  const double gain = std::sqrt(2.0 / (1.0 + a * a));
  const double std_dev = gain / std::sqrt(static_cast<double>(in));
  return std::sqrt(3.0) * std_dev;
}

// nn.Linear.reset_parameters: bound = 1 / math.sqrt(fan_in).
double linear_bias_bound(std::size_t in) { return 1.0 / std::sqrt(static_cast<double>(in)); }

// torch.nn.init.xavier_uniform_(w (fan_out, fan_in), gain=1):
// std = gain * sqrt(2.0 / float(fan_in + fan_out)), a = sqrt(3.0) * std.
double xavier_bound(std::size_t fan_in, std::size_t fan_out) {
  const double std_dev = 1.0 * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
  return std::sqrt(3.0) * std_dev;
}

// nn.MultiheadAttention(E, H, bias): out_proj Linear(E, E) first (weight,
// then bias), then xavier_uniform_(in_proj_weight (3E, E)), biases zeroed.
void init_torch_mha(const detail::Dims& d, std::mt19937& gen, StateDict& m) {
  const std::size_t E = d.C, QKV = d.qkv_rows();  // QKV = 3E (torch MHA has no GQA)
  Tensor out_w({E, E});
  fill_uniform(out_w.ptr(), out_w.size(), linear_weight_bound(E), gen);
  if (d.out_bias) {
    Tensor out_b({E});
    fill_uniform(out_b.ptr(), out_b.size(), linear_bias_bound(E), gen);
    m.add("out_proj.bias", Tensor({E}, 0.0f));  // constant_(out_proj.bias, 0.) after the draw
  }
  Tensor in_w({QKV, E});
  fill_uniform(in_w.ptr(), in_w.size(), xavier_bound(E, QKV), gen);
  if (d.qkv_bias) m.add("in_proj_bias", Tensor({QKV}, 0.0f));
  m.add("in_proj_weight", std::move(in_w));
  m.add("out_proj.weight", std::move(out_w));
}

}  // namespace

Weights init_weights(const Config& cfg, Layout layout, std::uint64_t seed) {
  const detail::Dims d = detail::dims_of(cfg);
  const std::string init_problem = layout_init_problem(d, layout);
  if (!init_problem.empty()) throw Error(Exit::config, "init: " + init_problem);
  const std::string problem = detail::fit_problem(d, layout);
  if (!problem.empty()) {
    if (!layout_has_out_proj(layout) && d.out_proj)
      throw Error(Exit::config, "out_proj: " + problem + "; set \"out_proj\": false");
    throw Error(Exit::config, "layout: " + problem);
  }

  // CPUGeneratorImpl::set_current_seed: mt19937(seed) keeps the low 32 bits.
  std::mt19937 gen(static_cast<std::uint32_t>(seed & 0xFFFFFFFFu));
  StateDict m("init");
  const std::vector<detail::Slot> slots = detail::layout_slots(d, layout);
  if (layout == Layout::torch_mha) {
    init_torch_mha(d, gen, m);
  } else {
    // Each nn.Linear in constructor order: weight (out*in values, row-major),
    // then its bias; the slot table lists them in exactly that order.
    std::size_t in = 0;
    for (const detail::Slot& s : slots) {
      Tensor t(s.shape);
      if (!s.is_bias()) {
        in = s.shape[1];  // nn.Linear weight (out, in)
        fill_uniform(t.ptr(), t.size(), linear_weight_bound(in), gen);
      } else {
        fill_uniform(t.ptr(), t.size(), linear_bias_bound(in), gen);
      }
      m.add(s.key, std::move(t));
    }
  }
  // The drawn tensors go into the canonical form the way a file's would.
  Weights w = detail::empty_weights(d, d.qkv_bias, d.out_bias);
  for (const detail::Slot& s : slots) detail::read_slot(m, s.key, s, w, false);
  return w;
}

}  // namespace attn

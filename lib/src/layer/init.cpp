// Torch-exact seeded init: the weights torch.manual_seed(N)
// followed by the tutorial module's constructor produce, bit for bit, on
// PyTorch's CPU generator (1.13; the sampling kernels are in torch_rng.cpp).
//
// - CPUGeneratorImpl holds one at::mt19937, seeded with init_genrand on the low
//   32 bits of the seed (torch.manual_seed(2**32 + 123) equals seed 123).
// - tensor.uniform_(from, to) on float draws one 32-bit number per element,
//   serially in row-major order (ATen's uniform_real_distribution /
//   transformation::uniform_real).
// - nn.Linear.reset_parameters: kaiming_uniform_(weight, a=sqrt(5)), then the
//   bias uniform in +-1/sqrt(in).
// - nn.MultiheadAttention (torch/nn/modules/activation.py): out_proj is a
//   Linear built (and so drawn) in the constructor, then _reset_parameters
//   draws xavier_uniform_ in_proj_weight, or q_proj_weight, k_proj_weight,
//   v_proj_weight in that order when kdim or vdim differs from embed_dim; sets
//   both biases to zero; then xavier_normal_ bias_k and bias_v (add_bias_kv).
//
// Letters: C hidden (in), H heads, D head size, O out features, E = C (torch MHA).
#include <cmath>

#include "attn/error.h"
#include "attn/weights.h"
#include "layer/layouts.h"
#include "layer/torch_rng.h"

namespace attn {

namespace {

using detail::TorchGenerator;

// tensor.uniform_(-bound, bound) on float32.
void fill_uniform(float* out, std::size_t n, double bound, TorchGenerator& gen) {
  gen.uniform(out, n, -bound, bound);
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

// torch.nn.init.xavier_normal_(w (1, 1, E), gain=1): the fans of a 3-D
// tensor are size(1) * E and size(0) * E, so std = sqrt(2.0 / float(E + E)).
double xavier_normal_std(std::size_t fan_in, std::size_t fan_out) {
  return 1.0 * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
}

// xavier_uniform_ of a (rows, cols) weight, added to m under `key`.
void add_xavier_uniform(StateDict& m, const std::string& key, std::size_t rows, std::size_t cols,
                        TorchGenerator& gen) {
  Tensor t({rows, cols});
  fill_uniform(t.ptr(), t.size(), xavier_bound(cols, rows), gen);
  m.add(key, std::move(t));
}

// nn.MultiheadAttention(E, H, bias, add_bias_kv, kdim=Ck, vdim=Cv):
// out_proj Linear(E, E) first (weight, then bias), then _reset_parameters:
// xavier_uniform_ in_proj_weight (3E, E), or q_proj_weight (E, E),
// k_proj_weight (E, Ck), v_proj_weight (E, Cv); biases zeroed; xavier_normal_
// bias_k, then bias_v (1, 1, E).
void init_torch_mha(const detail::Dims& d, TorchGenerator& gen, StateDict& m) {
  const std::size_t E = d.C, QKV = d.qkv_rows();  // QKV = 3E (torch MHA has no GQA)
  Tensor out_w({E, E});
  fill_uniform(out_w.ptr(), out_w.size(), linear_weight_bound(E), gen);
  if (d.out_bias) {
    Tensor out_b({E});
    fill_uniform(out_b.ptr(), out_b.size(), linear_bias_bound(E), gen);
    m.add("out_proj.bias", Tensor({E}, 0.0f));  // constant_(out_proj.bias, 0.) after the draw
  }
  if (!d.split_kv) {
    add_xavier_uniform(m, "in_proj_weight", QKV, E, gen);
  } else {
    add_xavier_uniform(m, "q_proj_weight", E, E, gen);
    add_xavier_uniform(m, "k_proj_weight", E, d.key_width(), gen);
    add_xavier_uniform(m, "v_proj_weight", E, d.value_width(), gen);
  }
  if (d.qkv_bias) m.add("in_proj_bias", Tensor({QKV}, 0.0f));
  if (d.bias_kv) {
    for (const char* key : {"bias_k", "bias_v"}) {
      Tensor t({1, 1, E});
      gen.normal(t.ptr(), t.size(), xavier_normal_std(E, E));
      m.add(key, std::move(t));
    }
  }
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

  TorchGenerator gen(seed);  // torch.manual_seed(seed)
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
  std::vector<std::pair<const detail::Slot*, std::string>> drawn;
  for (const detail::Slot& s : slots) drawn.emplace_back(&s, s.key);
  Weights w = detail::read_weights(d, d.qkv_bias, d.out_bias, m, drawn, false);
  w.k_eq_v = d.k_eq_v;  // no v_proj drawn: the v rows are k_proj's
  return w;
}

}  // namespace attn

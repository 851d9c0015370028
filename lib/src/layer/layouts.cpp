// The key/shape table of every layout (CONTRACT.md "Weight layouts") and the
// block copies between a layout's tensors and the canonical form.
//
// Canonical (weights.h, geometry.h): w_qkv ((H+2*Hkv)*D, C) rows are q of all
// heads, then k, then v, head-major inside; w_out (O, H*D). torch MHA with
// kdim/vdim: w_qkv (H*D, C), w_k (Hkv*D, Ck), w_v (Hkv*D, Cv).
// Letters: C hidden (in), H heads, Hkv key/value heads, D head size, O out features.
#include "layer/layouts.h"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "attn/error.h"

namespace attn::detail {

Dims dims_of(const Config& cfg) {
  Dims d;
  static_cast<Geometry&>(d) = geometry_of(cfg);
  d.qkv_bias = cfg.qkv_bias;
  d.out_bias = cfg.out_proj && cfg.out_bias;
  d.split_kv = d.Ck != d.C || d.Cv != d.C;
  d.bias_kv = cfg.add_bias_kv;
  if (cfg.spec.qk_norm && cfg.spec.qk_norm->has_weight()) {
    d.qk_norm = cfg.spec.qk_norm->scope_all ? QkNorm::all : QkNorm::head;
    d.qk_per_head = cfg.spec.qk_norm->per_head;
    d.qk_bias = cfg.spec.qk_norm->bias;
  }
  d.sinks = cfg.spec.sinks;
  d.gate = cfg.spec.gate;
  d.k_eq_v = cfg.k_eq_v;
  return d;
}

Dims dims_of(const Weights& w) {
  Dims d;
  static_cast<Geometry&>(d) = w.geometry();
  d.qkv_bias = !w.b_qkv.data.empty();
  d.out_bias = w.has_out_proj && !w.b_out.data.empty();
  d.split_kv = !w.fused_qkv();
  d.bias_kv = !w.bias_k.data.empty();
  // (D) is "head"; (H*D) "all" (the same shapes when H == 1).
  if (!w.q_norm.data.empty()) {
    d.qk_per_head = w.q_norm.ndim() == 2;  // (H, D)
    d.qk_norm = w.q_norm.size() == d.D || d.qk_per_head ? QkNorm::head : QkNorm::all;
    d.qk_bias = !w.q_norm_bias.data.empty();
  }
  d.sinks = !w.sinks.data.empty();
  d.gate = !w.w_gate.data.empty();
  d.k_eq_v = w.k_eq_v;
  return d;
}

namespace {

Part bias_of(Part weight) { return weight == Part::qkv_weight ? Part::qkv_bias : Part::out_bias; }

// A Linear-shaped slot filling rows [row0, row0 + rows) of `part` (in
// columns), and its bias.
void add_linear(std::vector<Slot>& out, const std::string& name, Part weight, std::size_t row0,
                std::size_t rows, std::size_t in, bool bias,
                const std::vector<std::string>& aliases = {},
                const std::string& wsuffix = ".weight", const std::string& bsuffix = ".bias") {
  std::vector<std::string> wa, ba;
  for (const auto& a : aliases) wa.push_back(a + wsuffix), ba.push_back(a + bsuffix);
  out.push_back({name + wsuffix, wa, {{weight, 0, row0, rows}}, false, {rows, in}});
  if (bias) out.push_back({name + bsuffix, ba, {{bias_of(weight), 0, row0, rows}}, false, {rows}});
}

// q, k and v of one projection, each a Linear of its own (separate, kqv, proj, bert).
struct QkvNames {
  std::string q, k, v;
};

// Gemma 4's attention_k_eq_v: one k_proj (Hkv*D, C) read into the k rows and
// again into the v rows (modeling_gemma4: value_states = key_states when
// v_proj is None, taken before k_norm and rope).
void add_k_as_v(std::vector<Slot>& s, const Dims& d) {
  const std::size_t KV = d.kv_rows();
  s.push_back({"k_proj.weight",
               {},
               {{Part::qkv_weight, 0, d.k_row0(), KV}, {Part::qkv_weight, 0, d.v_row0(), KV}},
               false,
               {KV, d.C}});
  if (d.qkv_bias)
    s.push_back({"k_proj.bias",
                 {},
                 {{Part::qkv_bias, 0, d.k_row0(), KV}, {Part::qkv_bias, 0, d.v_row0(), KV}},
                 false,
                 {KV}});
}

void add_qkv(std::vector<Slot>& s, const Dims& d, const QkvNames& n, bool kqv_order) {
  const std::size_t C = d.C;
  if (kqv_order) add_linear(s, n.k, Part::qkv_weight, d.k_row0(), d.kv_rows(), C, d.qkv_bias);
  add_linear(s, n.q, Part::qkv_weight, d.q_row0(), d.q_rows(), C, d.qkv_bias);
  if (!kqv_order) add_linear(s, n.k, Part::qkv_weight, d.k_row0(), d.kv_rows(), C, d.qkv_bias);
  add_linear(s, n.v, Part::qkv_weight, d.v_row0(), d.kv_rows(), C, d.qkv_bias);
}

// q_norm / k_norm [+ .bias] after the projections: StableLM's per-head modules
// (q_norm.norms.{h}.weight), else one tensor each: (D) shared by the heads (Qwen3, Gemma 3,
// Persimmon), (H*D) / (Hkv*D) over all heads (OLMo 2), (H, D) / (Hkv, D) per head (Cohere).
void add_qk_norms(std::vector<Slot>& s, const Dims& d) {
  if (d.qk_norm != QkNorm::none && d.qk_norm_list) {
    // StableLM: q_norm.norms.{h}.weight (D), one module per head: the rows of (H, D)
    for (const auto& [name, part, bias_part, heads] :
         {std::tuple<const char*, Part, Part, std::size_t>{"q_norm", Part::q_norm,
                                                           Part::q_norm_bias, d.H},
          {"k_norm", Part::k_norm, Part::k_norm_bias, d.Hkv}})
      for (std::size_t h = 0; h < heads; ++h) {
        const std::string at = std::string(name) + ".norms." + std::to_string(h) + ".";
        s.push_back({at + "weight", {}, {{part, 0, h, d.D}}, false, {d.D}});
        if (d.qk_bias) s.push_back({at + "bias", {}, {{bias_part, 0, h, d.D}}, false, {d.D}});
      }
  } else if (d.qk_norm != QkNorm::none) {  // Qwen3, Gemma 3 (D); OLMo 2 (H*D), (Hkv*D)
    // per head (Cohere): (H, D) and (Hkv, D), read as rows of D
    const std::vector<std::size_t> sq = d.q_norm_shape(), sk = d.k_norm_shape();
    s.push_back({"q_norm.weight", {}, {{Part::q_norm, 0, 0, sq[0]}}, false, sq});
    if (d.qk_bias) s.push_back({"q_norm.bias", {}, {{Part::q_norm_bias, 0, 0, sq[0]}}, false, sq});
    s.push_back({"k_norm.weight", {}, {{Part::k_norm, 0, 0, sk[0]}}, false, sk});
    if (d.qk_bias) s.push_back({"k_norm.bias", {}, {{Part::k_norm_bias, 0, 0, sk[0]}}, false, sk});
  }
}

// The interleaved fused projections, as pieces of the canonical q|k|v rows.
// neox (GPT-NeoX, Pythia, BLOOM): viewed (H, 3, D), per head [q, k, v].
// falcon: viewed (Hkv, H/Hkv + 2, D), per KV group [q of its heads..., k, v]
// (modeling_falcon's _split_heads; multi_query is the one-group case).
std::vector<Piece> interleaved(const Dims& d, Layout layout, Part part) {
  std::vector<Piece> p;
  const std::size_t D = d.D;
  std::size_t src = 0;
  if (layout == Layout::neox) {
    for (std::size_t h = 0; h < d.H; ++h) {
      p.push_back({part, src, d.q_row0() + h * D, D}), src += D;
      p.push_back({part, src, d.k_row0() + h * D, D}), src += D;
      p.push_back({part, src, d.v_row0() + h * D, D}), src += D;
    }
  } else {
    const std::size_t g = d.group();
    for (std::size_t j = 0; j < d.Hkv; ++j) {
      p.push_back({part, src, d.q_row0() + j * g * D, g * D}), src += g * D;
      p.push_back({part, src, d.k_row0() + j * D, D}), src += D;
      p.push_back({part, src, d.v_row0() + j * D, D}), src += D;
    }
  }
  return p;
}

// codegen (modeling_codegen.CodeGenAttention): qkv_proj's rows in mp_num = 4
// groups, each [q | v | k] of a quarter of the heads (H/4 heads of D rows);
// head h is group h / (H/4)'s head h % (H/4).
std::vector<Piece> codegen_groups(const Dims& d, Part part) {
  std::vector<Piece> p;
  const std::size_t quarter = d.H / 4 * d.D;  // rows of q (or v, or k) in a group
  for (std::size_t g = 0; g < 4; ++g) {
    const std::size_t src = 3 * g * quarter;
    p.push_back({part, src, d.q_row0() + g * quarter, quarter});
    p.push_back({part, src + quarter, d.v_row0() + g * quarter, quarter});
    p.push_back({part, src + 2 * quarter, d.k_row0() + g * quarter, quarter});
  }
  return p;
}

// A gated q_proj (modeling_qwen3_next.Qwen3NextAttention): its rows viewed
// (H, 2D) hold per head [query (D) | gate (D)], torch.chunk(..., 2, dim=-1).
std::vector<Piece> gated_q(const Dims& d, Part q_part, Part gate_part) {
  std::vector<Piece> p;
  for (std::size_t h = 0; h < d.H; ++h) {
    p.push_back({q_part, 2 * h * d.D, d.q_row0() + h * d.D, d.D});
    p.push_back({gate_part, 2 * h * d.D + d.D, h * d.D, d.D});
  }
  return p;
}

}  // namespace

std::vector<Slot> layout_slots(const Dims& d, Layout layout) {
  const std::size_t C = d.C, HD = d.q_rows(), KV = d.kv_rows(), QKV = d.qkv_rows(), O = d.O;
  std::vector<Slot> s;
  switch (layout) {
    case Layout::fused:  // Warner: Wqkv, Wo; Phi-3: qkv_proj, o_proj; MPT: Wqkv, out_proj
      add_linear(s, "Wqkv", Part::qkv_weight, 0, QKV, C, d.qkv_bias, {"qkv_proj"});
      if (d.out_proj)
        add_linear(s, "Wo", Part::out_weight, 0, O, HD, d.out_bias, {"out_proj", "o_proj"});
      break;
    case Layout::separate:  // Raschka's MultiHeadAttention / CausalAttention
      add_qkv(s, d, {"W_query", "W_key", "W_value"}, false);
      if (d.out_proj) add_linear(s, "out_proj", Part::out_weight, 0, O, HD, d.out_bias);
      break;
    case Layout::per_head:  // MultiHeadAttentionWrapper: heads.i = CausalAttention(C, D)
      for (std::size_t h = 0; h < d.H; ++h) {
        const std::string p = "heads." + std::to_string(h) + ".";
        add_linear(s, p + "W_query", Part::qkv_weight, d.q_row0() + h * d.D, d.D, C, d.qkv_bias);
        add_linear(s, p + "W_key", Part::qkv_weight, d.k_row0() + h * d.D, d.D, C, d.qkv_bias);
        add_linear(s, p + "W_value", Part::qkv_weight, d.v_row0() + h * d.D, d.D, C, d.qkv_bias);
      }
      break;
    case Layout::kqv:  // the single-head tutorial: key, query, value in that order
      add_qkv(s, d, {"query", "key", "value"}, true);
      break;
    case Layout::torch_mha:  // nn.MultiheadAttention, its state_dict order
      if (!d.split_kv) {     // in_proj_weight (3E, E): q|k|v rows
        add_linear(s, "in_proj", Part::qkv_weight, 0, QKV, C, d.qkv_bias, {}, "_weight", "_bias");
      } else {  // kdim/vdim: q_proj_weight (E, E), k_proj_weight (E, kdim), v_proj_weight (E, vdim)
        s.push_back({"q_proj_weight", {}, {{Part::qkv_weight, 0, 0, HD}}, false, {HD, C}});
        s.push_back(
            {"k_proj_weight", {}, {{Part::k_weight, 0, 0, KV}}, false, {KV, d.key_width()}});
        s.push_back(
            {"v_proj_weight", {}, {{Part::v_weight, 0, 0, KV}}, false, {KV, d.value_width()}});
        if (d.qkv_bias)  // in_proj_bias stays one (3E) tensor
          s.push_back({"in_proj_bias", {}, {{Part::qkv_bias, 0, 0, QKV}}, false, {QKV}});
      }
      if (d.bias_kv) {  // add_bias_kv: (1, 1, E) each
        s.push_back({"bias_k", {}, {{Part::bias_k, 0, 0, 1}}, false, {1, 1, KV}});
        s.push_back({"bias_v", {}, {{Part::bias_v, 0, 0, 1}}, false, {1, 1, KV}});
      }
      if (d.out_proj) add_linear(s, "out_proj", Part::out_weight, 0, O, HD, d.out_bias);
      break;
    case Layout::gpt2:  // HF GPT-2 Conv1D: weight stored (in, out), q|k|v column blocks
      s.push_back({"c_attn.weight", {}, {{Part::qkv_weight, 0, 0, QKV}}, true, {C, QKV}});
      if (d.qkv_bias) s.push_back({"c_attn.bias", {}, {{Part::qkv_bias, 0, 0, QKV}}, false, {QKV}});
      if (d.out_proj)
        s.push_back({"c_proj.weight", {}, {{Part::out_weight, 0, 0, O}}, true, {HD, O}});
      if (d.out_bias) s.push_back({"c_proj.bias", {}, {{Part::out_bias, 0, 0, O}}, false, {O}});
      break;
    case Layout::proj:  // Llama, Mistral, Qwen2, OPT, BART, Whisper: q|k|v_proj, o_proj or out_proj
      if (d.gate) {     // Qwen3-Next: q_proj (2*H*D, C) holds the gate too
        s.push_back({"q_proj.weight",
                     {},
                     gated_q(d, Part::qkv_weight, Part::gate_weight),
                     false,
                     {2 * HD, C}});
        if (d.qkv_bias)
          s.push_back(
              {"q_proj.bias", {}, gated_q(d, Part::qkv_bias, Part::gate_bias), false, {2 * HD}});
        add_linear(s, "k_proj", Part::qkv_weight, d.k_row0(), KV, C, d.qkv_bias);
        add_linear(s, "v_proj", Part::qkv_weight, d.v_row0(), KV, C, d.qkv_bias);
      } else if (d.k_eq_v) {  // Gemma 4's global layers: q_proj, k_proj (also v)
        add_linear(s, "q_proj", Part::qkv_weight, d.q_row0(), HD, C, d.qkv_bias);
        add_k_as_v(s, d);
      } else {
        add_qkv(s, d, {"q_proj", "k_proj", "v_proj"}, false);
      }
      if (d.out_proj) add_linear(s, "o_proj", Part::out_weight, 0, O, HD, d.out_bias, {"out_proj"});
      add_qk_norms(s, d);
      if (d.sinks) s.push_back({"sinks", {}, {{Part::sinks, 0, 0, d.H}}, false, {d.H}});  // gpt-oss
      break;
    case Layout::bert:  // BertSelfAttention (self.*) and BertSelfOutput's dense
      add_qkv(s, d, {"self.query", "self.key", "self.value"}, false);
      if (d.out_proj) add_linear(s, "output.dense", Part::out_weight, 0, O, HD, d.out_bias);
      break;
    case Layout::neox:
    case Layout::falcon:
      s.push_back({"query_key_value.weight",
                   {},
                   interleaved(d, layout, Part::qkv_weight),
                   false,
                   {QKV, C}});
      if (d.qkv_bias)
        s.push_back(
            {"query_key_value.bias", {}, interleaved(d, layout, Part::qkv_bias), false, {QKV}});
      if (d.out_proj) add_linear(s, "dense", Part::out_weight, 0, O, HD, d.out_bias);
      if (layout == Layout::neox) add_qk_norms(s, d);  // Persimmon's q/k LayerNorms
      break;
    case Layout::codegen:  // CodeGen: qkv_proj in 4 groups of [q | v | k], out_proj; no biases
      s.push_back({"qkv_proj.weight", {}, codegen_groups(d, Part::qkv_weight), false, {QKV, C}});
      if (d.qkv_bias)
        s.push_back({"qkv_proj.bias", {}, codegen_groups(d, Part::qkv_bias), false, {QKV}});
      if (d.out_proj) add_linear(s, "out_proj", Part::out_weight, 0, O, HD, d.out_bias);
      break;
  }
  return s;
}

std::string fit_problem(const Dims& d, Layout layout) {
  const std::string problem = layout_fit_problem(d, layout);
  if (!problem.empty()) return problem;
  const std::string name = layout_name(layout);
  if (d.split_kv && layout != Layout::torch_mha)  // weights with w_k, w_v (kdim = vdim = C)
    return "layout " + name +
           " cannot hold separate k and v weights (w_k, w_v): use layout "
           "torch_mha";
  if (d.bias_kv && layout != Layout::torch_mha)
    return "layout " + name +
           " has no bias_k/bias_v (add_bias_kv is "
           "torch.nn.MultiheadAttention's): use layout torch_mha";
  if (d.qk_norm != QkNorm::none && layout != Layout::proj && layout != Layout::neox)
    return "layout " + name +
           " has no q_norm.weight/k_norm.weight (qk_norm): use layout proj "
           "(Qwen3, Gemma 3, OLMo 2) or neox (Persimmon)";
  if (d.sinks && layout != Layout::proj)
    return "layout " + name + " has no sinks: use layout proj (gpt-oss)";
  if (d.gate && layout != Layout::proj)
    return "layout " + name +
           " has no gated q_proj (gate: q_proj rows (H, 2D)): use layout proj (Qwen3-Next)";
  if (d.gate && d.split_kv)
    return "gate reads the gate from q_proj with the query: not with torch MHA's kdim/vdim";
  if (d.k_eq_v && (layout != Layout::proj || d.gate || d.split_kv))
    return "k_eq_v reads v from k_proj (Gemma 4): it needs layout proj without gate, kdim or vdim";
  if (layout == Layout::torch_mha && d.qkv_bias != d.out_bias)
    return "layout torch_mha has one bias flag for in_proj and out_proj "
           "(nn.MultiheadAttention(bias=...)), found qkv_bias " +
           std::string(d.qkv_bias ? "true" : "false") + " and out_bias " +
           (d.out_bias ? "true" : "false");
  return "";
}

namespace {

bool starts_with(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}
bool ends_with(const std::string& s, const std::string& t) {
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

}  // namespace

bool is_buffer_key(const std::string& key) {
  if (key == "mask" || key == "causal_mask" || key == "bias" || key == "masked_bias") return true;
  // Rotary tables ride along as buffers in older checkpoints (rotary_emb.inv_freq).
  if (ends_with(key, "inv_freq")) return true;
  // heads.{i}.mask: MultiHeadAttentionWrapper's per-head CausalAttention buffer
  const std::string head = "heads.", tail = ".mask";
  if (key.size() <= head.size() + tail.size() || !starts_with(key, head) || !ends_with(key, tail))
    return false;
  for (std::size_t i = head.size(); i < key.size() - tail.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(key[i]))) return false;
  return true;
}

bool is_neighbour_key(const std::string& key) {
  // The first module name of a block's other parts, as the families name them.
  static const std::vector<std::string> modules = {"mlp.",
                                                   "input_layernorm.",
                                                   "post_attention_layernorm.",
                                                   "pre_feedforward_layernorm.",
                                                   "post_feedforward_layernorm.",
                                                   "ln_1.",
                                                   "ln_2.",
                                                   "ln_attn.",
                                                   "ln_mlp.",
                                                   "self_attn_layer_norm.",
                                                   "final_layer_norm.",
                                                   "encoder_attn_layer_norm.",
                                                   "fc1.",
                                                   "fc2.",
                                                   "norm_1.",
                                                   "norm_2.",
                                                   "ffn.",
                                                   "intermediate.",
                                                   "LayerNorm.",
                                                   "layer_norm.",
                                                   "output.LayerNorm.",
                                                   "rotary_emb.",
                                                   "input_layer_norm.",
                                                   "post_attention_layer_norm.",
                                                   "attn_norm."};
  for (const auto& m : modules)
    if (starts_with(key, m)) return true;
  return false;
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
    case Part::k_weight:
      return &w.w_k;
    case Part::v_weight:
      return &w.w_v;
    case Part::bias_k:
      return &w.bias_k;
    case Part::bias_v:
      return &w.bias_v;
    case Part::q_norm:
      return &w.q_norm;
    case Part::k_norm:
      return &w.k_norm;
    case Part::q_norm_bias:
      return &w.q_norm_bias;
    case Part::k_norm_bias:
      return &w.k_norm_bias;
    case Part::sinks:
      return &w.sinks;
    case Part::gate_weight:
      return &w.w_gate;
    case Part::gate_bias:
      return &w.b_gate;
  }
  return nullptr;
}

// Columns of one canonical row of `p`: the input width of a weight, Hkv*D
// for bias_k/bias_v (one stored row of (1, 1, E)), 1 for the other 1-D parts.
std::size_t part_cols(const Weights& w, Part p) {
  switch (p) {
    case Part::qkv_weight:
    case Part::gate_weight:
      return static_cast<std::size_t>(w.C);
    case Part::k_weight:
      return w.key_width();
    case Part::v_weight:
      return w.value_width();
    case Part::out_weight:
      return w.geometry().q_rows();
    case Part::bias_k:
    case Part::bias_v:
      return w.geometry().kv_rows();
    case Part::q_norm:  // per head (H, D): rows of D; else rows of one value
    case Part::k_norm:
    case Part::q_norm_bias:
    case Part::k_norm_bias: {
      const Tensor& t = *part_of(const_cast<Weights&>(w), p);
      return t.ndim() == 2 ? t.shape[1] : 1;
    }
    default:
      return 1;
  }
}

// A (rows, cols) weight matrix left unset: its slots write it, and
// zero_unread sets what they do not (zero-filling it first cost a
// Llama-3-8B-shaped layer's load 164 MB of stores, 6% of its samples).
Tensor unset_matrix(std::size_t rows, std::size_t cols) {
  Tensor t;
  t.shape = {rows, cols};
  t.data.resize(rows * cols);
  return t;
}

// Canonical weights of these dims: the matrices unset, the rest zero.
Weights empty_weights(const Dims& d, bool qkv_bias, bool out_bias) {
  Weights w;
  w.C = static_cast<std::int64_t>(d.C);
  w.H = static_cast<std::int64_t>(d.H);
  w.Hkv = static_cast<std::int64_t>(d.Hkv);
  w.D = static_cast<std::int64_t>(d.D);
  w.O = static_cast<std::int64_t>(d.O);
  w.has_out_proj = d.out_proj;
  w.Ck = static_cast<std::int64_t>(d.key_width());
  w.Cv = static_cast<std::int64_t>(d.value_width());
  w.w_qkv = unset_matrix(d.w_qkv_rows(), d.C);
  if (d.split_kv) {
    w.w_k = unset_matrix(d.kv_rows(), d.key_width());
    w.w_v = unset_matrix(d.kv_rows(), d.value_width());
  }
  if (qkv_bias) w.b_qkv = Tensor({d.qkv_rows()});  // a part missing from the file stays zero
  if (d.out_proj) w.w_out = unset_matrix(d.O, d.q_rows());
  if (d.out_proj && out_bias) w.b_out = Tensor({d.O});
  if (d.bias_kv) w.bias_k = Tensor({d.kv_rows()}), w.bias_v = Tensor({d.kv_rows()});
  if (d.qk_norm != QkNorm::none) {
    w.q_norm = Tensor(d.q_norm_shape()), w.k_norm = Tensor(d.k_norm_shape());
    if (d.qk_bias)
      w.q_norm_bias = Tensor(d.q_norm_shape()), w.k_norm_bias = Tensor(d.k_norm_shape());
  }
  if (d.sinks) w.sinks = Tensor({d.H});
  if (d.gate) {
    w.w_gate = unset_matrix(d.q_rows(), d.C);
    if (qkv_bias) w.b_gate = Tensor({d.q_rows()});
  }
  return w;
}

// The rows of w's matrices that no piece of `slots` writes, set to zero.
void zero_unread(Weights& w, const std::vector<std::pair<const Slot*, std::string>>& slots) {
  for (Part part :
       {Part::qkv_weight, Part::out_weight, Part::k_weight, Part::v_weight, Part::gate_weight}) {
    Tensor& t = *part_of(w, part);
    const std::size_t cols = part_cols(w, part);
    if (t.empty() || cols == 0) continue;
    std::vector<char> read(t.size() / cols, 0);
    for (const auto& slot : slots)
      for (const Piece& p : slot.first->pieces)
        if (p.part == part && p.dst_row0 < read.size())
          std::fill(read.begin() + p.dst_row0,
                    read.begin() + std::min(read.size(), p.dst_row0 + p.rows), 1);
    for (std::size_t r = 0; r < read.size(); ++r)
      if (!read[r]) std::fill(t.ptr() + r * cols, t.ptr() + (r + 1) * cols, 0.0f);
  }
}

// Reads the stored tensor `key` into the canonical blocks of `s`.
void read_slot(const StateDict& sd, const std::string& key, const Slot& s, Weights& w,
               bool allow_nonfinite) {
  for (const Piece& p : s.pieces) {
    Tensor& dst = *part_of(w, p.part);
    sd.read_rows(key, p.src_row0, p.rows, s.transposed,
                 dst.ptr() + p.dst_row0 * part_cols(w, p.part), allow_nonfinite);
  }
}

}  // namespace

Weights read_weights(const Dims& d, bool qkv_bias, bool out_bias, const StateDict& sd,
                     const std::vector<std::pair<const Slot*, std::string>>& slots,
                     bool allow_nonfinite) {
  Weights w = empty_weights(d, qkv_bias, out_bias);
  zero_unread(w, slots);  // first: a slot that fails leaves no unset row behind
  for (const auto& [slot, key] : slots) read_slot(sd, key, *slot, w, allow_nonfinite);
  return w;
}

Tensor slot_tensor(const Weights& w, const Slot& s) {
  Tensor t(s.shape);
  for (const Piece& p : s.pieces) {
    const std::size_t cols = part_cols(w, p.part);
    const float* in = part_of(const_cast<Weights&>(w), p.part)->ptr() + p.dst_row0 * cols;
    if (!s.transposed) {
      std::copy(in, in + p.rows * cols, t.ptr() + p.src_row0 * cols);
    } else {  // stored (cols, R): canonical row r is stored column src_row0 + r
      const std::size_t R = s.shape[1];
      for (std::size_t r = 0; r < p.rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) t.data[c * R + p.src_row0 + r] = in[r * cols + c];
    }
  }
  return t;
}

}  // namespace attn::detail

namespace attn {

std::vector<ParamSpec> expected_params(const Config& cfg, Layout layout) {
  const detail::Dims d = detail::dims_of(cfg);
  const std::string problem = detail::fit_problem(d, layout);
  if (!problem.empty()) throw Error(Exit::config, "layout: " + problem);
  std::vector<ParamSpec> out;
  for (const auto& s : detail::layout_slots(d, layout)) out.push_back({s.key, s.shape});
  return out;
}

}  // namespace attn

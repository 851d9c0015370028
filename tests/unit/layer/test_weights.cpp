// Weights in every layout (CONTRACT.md "Weight layouts"): detection, prefix
// and buffer handling, every load error, export to every layout and reload
// bit-identically, GPT-2's transposed Conv1D, and that the canonical form
// computes what each layout's own module computes.
//
// Letters: S sequence, C hidden, H heads, Hkv key/value heads, D head size, O out size.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>

#include "attn/error.h"
#include "attn/npy.h"
#include "attn/state_dict.h"
#include "attn/weights.h"
#include "reference.h"
#include "test_util.h"

using namespace attn;

namespace {

const std::vector<Layout> kAll = {Layout::fused, Layout::separate,  Layout::per_head,
                                  Layout::kqv,   Layout::torch_mha, Layout::gpt2};

Config make_cfg(std::int64_t C, std::int64_t H, std::int64_t D, std::int64_t O, bool out_proj,
                bool qkv_bias, bool out_bias) {
  Config c;
  c.hidden_size = C, c.num_heads = H, c.head_size = D;
  c.out_proj = out_proj;
  c.out_size = out_proj ? O : H * D;
  c.qkv_bias = qkv_bias, c.out_bias = out_bias;
  c.kind = H == 1 ? Kind::single : Kind::multi;
  c.spec.scale = 1.0 / std::sqrt(double(D));
  return c;
}

// Canonical weights filled with distinct pseudo-random values.
Weights random_weights(const Config& c, unsigned seed) {
  Weights w;
  const std::size_t C = c.hidden_size, HD = c.inner_size(), O = c.out_features();
  w.C = c.hidden_size, w.H = c.num_heads, w.D = c.head_size, w.O = c.out_features();
  w.Hkv = c.kv_heads();
  const std::size_t QKV = geometry_of(c).qkv_rows();  // (H + 2*Hkv)*D
  w.w_qkv = test::random_tensor({QKV, C}, seed);
  if (c.qkv_bias) w.b_qkv = test::random_tensor({QKV}, seed + 1);
  w.has_out_proj = c.out_proj;
  if (c.out_proj) w.w_out = test::random_tensor({O, HD}, seed + 2);
  if (c.out_proj && c.out_bias) w.b_out = test::random_tensor({O}, seed + 3);
  return w;
}

bool can_hold(const Config& c, Layout l) {
  const bool square = c.hidden_size == c.inner_size() && c.out_features() == c.hidden_size;
  switch (l) {
    case Layout::fused:
    case Layout::separate:
      return true;
    case Layout::per_head:
    case Layout::kqv:
      return !c.out_proj;
    case Layout::torch_mha:
      return c.out_proj && square && c.qkv_bias == c.out_bias;
    case Layout::gpt2:
      return c.out_proj && square;
    case Layout::proj:  // the model families' layouts: test_weights_families
    case Layout::bert:
    case Layout::neox:
    case Layout::falcon:
    case Layout::codegen:
      return false;
  }
  return false;
}

RawArray array_of(const Tensor& t) {
  RawArray a;
  a.dtype = DType::f4;
  a.shape = t.shape;
  a.bytes.resize(t.size() * 4);
  if (t.size()) std::memcpy(a.bytes.data(), t.ptr(), a.bytes.size());
  return a;
}

Tensor tensor_of(const RawArray& a) { return to_float32(a, "test", false); }

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape == b.shape && a.data.size() == b.data.size() &&
         (a.data.empty() || std::memcmp(a.ptr(), b.ptr(), a.data.size() * 4) == 0);
}

void check_same(const Weights& a, const Weights& b) {
  CHECK(a.C == b.C);
  CHECK(a.H == b.H);
  CHECK(a.geometry().Hkv == b.geometry().Hkv);
  CHECK(a.D == b.D);
  CHECK(a.O == b.O);
  CHECK(a.has_out_proj == b.has_out_proj);
  CHECK(same_bits(a.w_qkv, b.w_qkv));
  CHECK(same_bits(a.b_qkv, b.b_qkv));
  CHECK(same_bits(a.w_out, b.w_out));
  CHECK(same_bits(a.b_out, b.b_out));
  CHECK(a.key_width() == b.key_width());
  CHECK(a.value_width() == b.value_width());
  CHECK(same_bits(a.w_k, b.w_k));
  CHECK(same_bits(a.w_v, b.w_v));
  CHECK(same_bits(a.bias_k, b.bias_k));
  CHECK(same_bits(a.bias_v, b.bias_v));
  CHECK(same_bits(a.q_norm, b.q_norm));
  CHECK(same_bits(a.k_norm, b.k_norm));
  CHECK(same_bits(a.sinks, b.sinks));
}

// The error a call throws: code and message.
struct Caught {
  Exit code = Exit::ok;
  std::string msg;
};
Caught catch_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {};
}

// Configs covering bias on/off per layer, with and without out_proj, square
// (C == H*D == O) and not.
std::vector<Config> configs() {
  return {make_cfg(8, 2, 4, 8, true, true, true),      // square, all biases
          make_cfg(8, 2, 4, 8, true, false, false),    // square, no bias
          make_cfg(8, 2, 4, 8, true, false, true),     // Raschka: out bias only
          make_cfg(6, 3, 2, 5, true, true, true),      // C != H*D != O
          make_cfg(5, 2, 3, 0, false, true, false),    // no out_proj
          make_cfg(4, 1, 3, 0, false, false, false)};  // single head, no bias, no out_proj
}

}  // namespace

TEST_CASE("weights: expected_params lists keys and shapes in constructor order") {
  const Config c = make_cfg(6, 2, 3, 5, true, true, true);
  auto keys = [&](Layout l) {
    std::vector<std::string> k;
    for (const auto& p : expected_params(c, l)) k.push_back(p.key + " " + shape_str(p.shape));
    return k;
  };
  CHECK(keys(Layout::fused) == std::vector<std::string>{"Wqkv.weight (18, 6)", "Wqkv.bias (18,)",
                                                        "Wo.weight (5, 6)", "Wo.bias (5,)"});
  CHECK(keys(Layout::separate) ==
        std::vector<std::string>{"W_query.weight (6, 6)", "W_query.bias (6,)",
                                 "W_key.weight (6, 6)", "W_key.bias (6,)", "W_value.weight (6, 6)",
                                 "W_value.bias (6,)", "out_proj.weight (5, 6)",
                                 "out_proj.bias (5,)"});
  const Config np = make_cfg(6, 2, 3, 0, false, false, false);
  std::vector<std::string> ph;
  for (const auto& p : expected_params(np, Layout::per_head)) ph.push_back(p.key);
  CHECK(ph == std::vector<std::string>{"heads.0.W_query.weight", "heads.0.W_key.weight",
                                       "heads.0.W_value.weight", "heads.1.W_query.weight",
                                       "heads.1.W_key.weight", "heads.1.W_value.weight"});
  CHECK(expected_params(np, Layout::per_head)[0].shape == std::vector<std::size_t>{3, 6});
  std::vector<std::string> kqv;
  for (const auto& p : expected_params(np, Layout::kqv)) kqv.push_back(p.key);
  CHECK(kqv == std::vector<std::string>{"key.weight", "query.weight", "value.weight"});
  const Config sq = make_cfg(8, 2, 4, 8, true, true, true);
  std::vector<std::string> g;
  for (const auto& p : expected_params(sq, Layout::gpt2))
    g.push_back(p.key + " " + shape_str(p.shape));
  CHECK(g == std::vector<std::string>{"c_attn.weight (8, 24)", "c_attn.bias (24,)",
                                      "c_proj.weight (8, 8)", "c_proj.bias (8,)"});
  std::vector<std::string> t;
  for (const auto& p : expected_params(sq, Layout::torch_mha))
    t.push_back(p.key + " " + shape_str(p.shape));
  CHECK(t == std::vector<std::string>{"in_proj_weight (24, 8)", "in_proj_bias (24,)",
                                      "out_proj.weight (8, 8)", "out_proj.bias (8,)"});
  CHECK(catch_error([&] { expected_params(c, Layout::kqv); }).code == Exit::config);
}

TEST_CASE("weights: detect_layout names every layout from its keys, buffers or not") {
  for (const Config& c : configs())
    for (Layout l : kAll) {
      if (!can_hold(c, l)) continue;
      CAPTURE(layout_name(l));
      StateDict sd = export_weights(random_weights(c, 1), l);
      CHECK(detect_layout(sd, "w") == l);
      // Buffers that ride along never decide or break detection.
      sd.add("mask", array_of(Tensor({3, 3})));
      sd.add("causal_mask", array_of(Tensor({1, 1, 3, 3})));
      sd.add("heads.0.mask", array_of(Tensor({3, 3})));
      sd.add("bias", array_of(Tensor({1, 1, 3, 3})));
      sd.add("masked_bias", array_of(Tensor(std::vector<std::size_t>{})));
      CHECK(detect_layout(sd, "w") == l);
    }
}

TEST_CASE("weights: detect_layout errors name the key") {
  StateDict sd;
  sd.add("foo.weight", array_of(Tensor({2, 2})));
  auto e = catch_error([&] { detect_layout(sd, "w.npz"); });
  CHECK(e.code == Exit::data);
  CHECK(e.msg.rfind("w.npz: key \"foo.weight\" fits no layout", 0) == 0);
  CHECK(e.msg.find("weights_prefix") != std::string::npos);

  sd = StateDict();
  sd.add("Wqkv.weight", array_of(Tensor({6, 2})));
  sd.add("W_query.weight", array_of(Tensor({2, 2})));
  e = catch_error([&] { detect_layout(sd, "w"); });
  CHECK(e.code == Exit::data);
  CHECK(e.msg.find("\"W_query.weight\" (separate)") != std::string::npos);
  CHECK(e.msg.find("\"Wqkv.weight\" (fused)") != std::string::npos);

  sd = StateDict();
  sd.add("mask", array_of(Tensor({2, 2})));
  e = catch_error([&] { detect_layout(sd, "w"); });
  CHECK(e.code == Exit::data);
  CHECK(e.msg.rfind("w: no parameters found", 0) == 0);
}

TEST_CASE("weights: select_keys keeps one layer under a prefix and drops buffers") {
  StateDict sd;
  for (const char* layer : {"transformer.h.0.attn.", "transformer.h.1.attn."}) {
    const std::string p = layer;
    sd.add(p + "c_attn.weight",
           array_of(Tensor({4, 12}, p == "transformer.h.1.attn." ? 1.f : 0.f)));
    sd.add(p + "bias", array_of(Tensor({1, 1, 3, 3})));
    sd.add(p + "masked_bias", array_of(Tensor(std::vector<std::size_t>{})));
  }
  sd.add("transformer.wte.weight", array_of(Tensor({10, 4})));
  const StateDict one = select_keys(sd, "transformer.h.1.attn.");
  REQUIRE(one.size() == 1);
  REQUIRE(one.contains("c_attn.weight") == 1);
  CHECK(tensor_of(one.read_raw("c_attn.weight")).data[0] == 1.0f);  // layer 1, not 0

  StateDict tut;
  tut.add("W_query.weight", array_of(Tensor({2, 3})));
  tut.add("mask", array_of(Tensor({6, 6})));
  tut.add("heads.12.mask", array_of(Tensor({6, 6})));
  tut.add("heads.x.mask", array_of(Tensor({6, 6})));  // not a buffer name: kept
  const StateDict kept = select_keys(tut, "");
  CHECK(kept.size() == 2);
  CHECK(kept.contains("W_query.weight") == 1);
  CHECK(kept.contains("heads.x.mask") == 1);
}

TEST_CASE("weights: every load error names the key, the layout and what was found") {
  const Config c = make_cfg(3, 2, 2, 4, true, true, true);  // separate: W_* (4, 3)
  const StateDict good = export_weights(random_weights(c, 7), Layout::separate);
  auto load = [&](const StateDict& sd, const Config& cfg, Layout l) {
    return catch_error([&] { load_weights(sd, cfg, l, "w", false); });
  };
  REQUIRE(load(good, c, Layout::separate).code == Exit::ok);

  StateDict sd = good;
  sd.erase("W_key.weight");
  auto e = load(sd, c, Layout::separate);
  CHECK(e.code == Exit::data);
  CHECK(e.msg == "w: missing key \"W_key.weight\" (layout separate, shape (4, 3))");

  sd = good;
  sd.add("W_query.weight", array_of(Tensor({2, 3})));
  e = load(sd, c, Layout::separate);
  CHECK(e.code == Exit::data);
  CHECK(e.msg == "w: key \"W_query.weight\": expected shape (4, 3), found (2, 3)");

  sd = good;
  sd.add("W_query.bias", array_of(Tensor({5})));
  e = load(sd, c, Layout::separate);
  CHECK(e.msg == "w: key \"W_query.bias\": expected shape (4,), found (5,)");

  sd = good;
  sd.add("extra.weight", array_of(Tensor({4, 3})));
  e = load(sd, c, Layout::separate);
  CHECK(e.code == Exit::data);
  CHECK(e.msg.rfind("w: unexpected key \"extra.weight\" for layout separate (expected "
                    "W_query.weight, W_query.bias,",
                    0) == 0);

  // Bias present while the config says none: names the config key.
  Config nob = c;
  nob.qkv_bias = false;
  e = load(good, nob, Layout::separate);
  CHECK(e.code == Exit::data);
  CHECK(e.msg ==
        "w: key \"W_query.bias\" found but config \"qkv_bias\" is false (layout "
        "separate); set \"qkv_bias\": true to use it");
  Config noob = c;
  noob.out_bias = false;
  e = load(good, noob, Layout::separate);
  CHECK(e.msg.find("\"out_proj.bias\" found but config \"out_bias\" is false") !=
        std::string::npos);

  // A missing bias is zero (CONTRACT.md v2) unless the config asked for it
  // explicitly; then it is an error naming the config key.
  sd = good;
  sd.erase("out_proj.bias");
  REQUIRE(load(sd, c, Layout::separate).code == Exit::ok);
  CHECK(load_weights(sd, c, Layout::separate, "w", false).b_out.data.empty());
  Config asked = c;
  asked.out_bias_given = true;
  e = load(sd, asked, Layout::separate);
  CHECK(e.code == Exit::data);
  CHECK(e.msg ==
        "w: missing key \"out_proj.bias\" (layout separate, shape (4,)): config "
        "\"out_bias\" is true; set \"out_bias\": false or leave it out for weights without "
        "this bias");

  // An output projection the config does not want.
  Config noproj = make_cfg(3, 2, 2, 0, false, true, false);
  e = load(good, noproj, Layout::separate);
  CHECK(e.code == Exit::data);
  CHECK(e.msg.find("\"out_proj.weight\" found but config \"out_proj\" is false") !=
        std::string::npos);

  // Layouts without an output projection under a config that has one.
  const StateDict ph = export_weights(random_weights(noproj, 3), Layout::per_head);
  e = load(ph, c, Layout::per_head);
  CHECK(e.code == Exit::config);
  CHECK(e.msg == "out_proj: layout per_head has no output projection; set \"out_proj\": false");
  e = load(export_weights(random_weights(noproj, 3), Layout::kqv), c, Layout::kqv);
  CHECK(e.code == Exit::config);
  CHECK(e.msg == "out_proj: layout kqv has no output projection; set \"out_proj\": false");

  // gpt2/torch_mha need C == H*D == O.
  e = load(good, c, Layout::gpt2);
  CHECK(e.code == Exit::config);
  CHECK(e.msg.find("hidden_size == num_heads*head_size == out_size") != std::string::npos);

  // Not float values; non-finite values (to_float32 names source:key).
  sd = good;
  RawArray nan = sd.read_raw("W_value.weight");
  nan.bytes.assign(nan.bytes.size(), 0xFF);  // NaNs
  sd.add("W_value.weight", nan);
  e = load(sd, c, Layout::separate);
  CHECK(e.code == Exit::data);
  CHECK(e.msg.rfind(sd.source() + ":W_value.weight: non-finite", 0) == 0);
  CHECK(catch_error([&] { load_weights(sd, c, Layout::separate, "w", true); }).code == Exit::ok);
}

TEST_CASE("weights: export refuses layouts that cannot hold the model") {
  auto e = catch_error([&] {
    export_weights(random_weights(make_cfg(8, 2, 4, 8, true, true, true), 1), Layout::per_head);
  });
  CHECK(e.code == Exit::usage);
  CHECK(e.msg ==
        "--layout per_head: cannot hold this model: layout per_head has no output "
        "projection; give --layout with one that can: fused, separate, torch_mha, gpt2, proj, "
        "bert, neox, falcon");
  e = catch_error([&] {
    export_weights(random_weights(make_cfg(8, 2, 4, 8, true, true, true), 1), Layout::kqv);
  });
  CHECK(e.code == Exit::usage);
  e = catch_error([&] {
    export_weights(random_weights(make_cfg(6, 3, 2, 5, true, true, true), 1), Layout::gpt2);
  });
  CHECK(e.code == Exit::usage);
  CHECK(e.msg.find("found 6, 6, 5") != std::string::npos);
  e = catch_error([&] {
    export_weights(random_weights(make_cfg(8, 2, 4, 8, true, false, true), 1), Layout::torch_mha);
  });
  CHECK(e.code == Exit::usage);
  CHECK(e.msg.find("one bias flag") != std::string::npos);
  e = catch_error([&] {
    export_weights(random_weights(make_cfg(5, 2, 3, 0, false, true, false), 1), Layout::torch_mha);
  });
  CHECK(e.code == Exit::usage);
  CHECK(e.msg.find("always has an output projection") != std::string::npos);
}

TEST_CASE("weights: every layout exported and reloaded as every other, bit-identical") {
  std::size_t pairs = 0;
  for (const Config& c : configs()) {
    const Weights w = random_weights(c, 11);
    for (Layout from : kAll) {
      if (!can_hold(c, from)) {
        CHECK(catch_error([&] { export_weights(w, from); }).code == Exit::usage);
        continue;
      }
      CAPTURE(layout_name(from));
      const StateDict a = export_weights(w, from);
      // Every exported array is float32 with the expected key and shape.
      const auto specs = expected_params(c, from);
      REQUIRE(a.size() == specs.size());
      for (const auto& s : specs) {
        REQUIRE(a.contains(s.key) == 1);
        CHECK(a.read_raw(s.key).dtype == DType::f4);
        CHECK(a.read_raw(s.key).shape == s.shape);
      }
      const Weights wa = load_weights(a, c, detect_layout(a, "a"), "a", false);
      check_same(wa, w);
      for (Layout to : kAll) {
        if (!can_hold(c, to)) continue;
        CAPTURE(layout_name(to));
        const StateDict b = export_weights(wa, to);
        check_same(load_weights(b, c, to, "b", false), w);
        ++pairs;
      }
    }
  }
  CHECK(pairs >= 40);
}

TEST_CASE("weights: gpt2 Conv1D weights are nn.Linear weights transposed") {
  const Config c = make_cfg(6, 2, 3, 6, true, true, true);
  const Weights w = random_weights(c, 5);
  const StateDict sd = export_weights(w, Layout::gpt2);
  const Tensor ca = tensor_of(sd.read_raw("c_attn.weight"));  // (C, 3C)
  const Tensor cp = tensor_of(sd.read_raw("c_proj.weight"));  // (C, C)
  REQUIRE(ca.shape == std::vector<std::size_t>{6, 18});
  for (std::size_t j = 0; j < 18; ++j)
    for (std::size_t i = 0; i < 6; ++i) CHECK(ca.data[i * 18 + j] == w.w_qkv.data[j * 6 + i]);
  for (std::size_t o = 0; o < 6; ++o)
    for (std::size_t i = 0; i < 6; ++i) CHECK(cp.data[i * 6 + o] == w.w_out.data[o * 6 + i]);
  CHECK(tensor_of(sd.read_raw("c_attn.bias")).data == w.b_qkv.data);
}

namespace {

// Each layout's own forward math, written from its tutorial module, in double.
using Mat = std::vector<double>;  // row-major

// nn.Linear: y = x W^T + b, W (out, in). x: (S, in).
Mat linear(const Mat& x, std::size_t S, const Tensor& W, const Tensor* b) {
  const std::size_t out = W.shape[0], in = W.shape[1];
  Mat y(S * out);
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t o = 0; o < out; ++o) {
      double acc = b ? b->data[o] : 0.0;
      for (std::size_t i = 0; i < in; ++i) acc += x[s * in + i] * W.data[o * in + i];
      y[s * out + o] = acc;
    }
  return y;
}

// HF Conv1D: y = x W + b, W (in, out).
Mat conv1d(const Mat& x, std::size_t S, const Tensor& W, const Tensor* b) {
  const std::size_t in = W.shape[0], out = W.shape[1];
  Mat y(S * out);
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t o = 0; o < out; ++o) {
      double acc = b ? b->data[o] : 0.0;
      for (std::size_t i = 0; i < in; ++i) acc += x[s * in + i] * W.data[i * out + o];
      y[s * out + o] = acc;
    }
  return y;
}

// Columns [c0, c0 + n) of x (S, width).
Mat cols(const Mat& x, std::size_t S, std::size_t width, std::size_t c0, std::size_t n) {
  Mat y(S * n);
  for (std::size_t s = 0; s < S; ++s)
    for (std::size_t j = 0; j < n; ++j) y[s * n + j] = x[s * width + c0 + j];
  return y;
}

// softmax(q k^T * scale [causal]) v per head; q, k, v: (S, H*D), heads
// side by side (view(S, H, D)). Returns (S, H*D).
Mat heads_attention(const Mat& q, const Mat& k, const Mat& v, std::size_t S, std::size_t H,
                    std::size_t D, double scale, bool causal) {
  const std::size_t HD = H * D;
  Mat y(S * HD, 0.0);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < S; ++i) {
      std::vector<double> p(S, 0.0);
      double mx = -1e300, sum = 0.0;
      const std::size_t last = causal ? i + 1 : S;
      for (std::size_t j = 0; j < last; ++j) {
        double dot = 0.0;
        for (std::size_t d = 0; d < D; ++d) dot += q[i * HD + h * D + d] * k[j * HD + h * D + d];
        p[j] = dot * scale;
        mx = std::max(mx, p[j]);
      }
      for (std::size_t j = 0; j < last; ++j) sum += (p[j] = std::exp(p[j] - mx));
      for (std::size_t j = 0; j < last; ++j)
        for (std::size_t d = 0; d < D; ++d)
          y[i * HD + h * D + d] += p[j] / sum * v[j * HD + h * D + d];
    }
  return y;
}

// The layout's module forward on its own state dict. x: (S, C) -> (S, O).
Mat layout_forward(const StateDict& sd, Layout l, const Config& c, const Mat& x, std::size_t S,
                   bool causal) {
  std::map<std::string, Tensor> t;
  for (const auto& k : sd.keys()) t[k] = sd.read_f32(k, true);
  auto opt = [&](const std::string& k) { return t.count(k) ? &t.at(k) : nullptr; };
  const std::size_t H = c.num_heads, D = c.head_size, HD = H * D;
  const double scale = c.spec.scale;
  switch (l) {
    case Layout::fused: {  // Warner: Wqkv(x).reshape(B, S, 3, nh, hd)
      const Mat qkv = linear(x, S, t.at("Wqkv.weight"), opt("Wqkv.bias"));
      Mat y = heads_attention(cols(qkv, S, 3 * HD, 0, HD), cols(qkv, S, 3 * HD, HD, HD),
                              cols(qkv, S, 3 * HD, 2 * HD, HD), S, H, D, scale, causal);
      return t.count("Wo.weight") ? linear(y, S, t.at("Wo.weight"), opt("Wo.bias")) : y;
    }
    case Layout::separate: {  // Raschka: W_query(x).view(b, n, heads, head_dim)
      Mat y = heads_attention(linear(x, S, t.at("W_query.weight"), opt("W_query.bias")),
                              linear(x, S, t.at("W_key.weight"), opt("W_key.bias")),
                              linear(x, S, t.at("W_value.weight"), opt("W_value.bias")), S, H, D,
                              scale, causal);
      return t.count("out_proj.weight")
                 ? linear(y, S, t.at("out_proj.weight"), opt("out_proj.bias"))
                 : y;
    }
    case Layout::per_head: {  // torch.cat([head(x) for head in self.heads], dim=-1)
      Mat y(S * HD);
      for (std::size_t h = 0; h < H; ++h) {
        const std::string p = "heads." + std::to_string(h) + ".";
        const Mat yh =
            heads_attention(linear(x, S, t.at(p + "W_query.weight"), opt(p + "W_query.bias")),
                            linear(x, S, t.at(p + "W_key.weight"), opt(p + "W_key.bias")),
                            linear(x, S, t.at(p + "W_value.weight"), opt(p + "W_value.bias")), S, 1,
                            D, scale, causal);
        for (std::size_t s = 0; s < S; ++s)
          for (std::size_t d = 0; d < D; ++d) y[s * HD + h * D + d] = yh[s * D + d];
      }
      return y;
    }
    case Layout::kqv:  // query @ key.transpose(-2, -1), then @ value
      return heads_attention(linear(x, S, t.at("query.weight"), opt("query.bias")),
                             linear(x, S, t.at("key.weight"), opt("key.bias")),
                             linear(x, S, t.at("value.weight"), opt("value.bias")), S, H, D, scale,
                             causal);
    case Layout::torch_mha: {  // F._in_projection_packed: linear(x, in_proj).chunk(3)
      const Mat qkv = linear(x, S, t.at("in_proj_weight"), opt("in_proj_bias"));
      const Mat y = heads_attention(cols(qkv, S, 3 * HD, 0, HD), cols(qkv, S, 3 * HD, HD, HD),
                                    cols(qkv, S, 3 * HD, 2 * HD, HD), S, H, D, scale, causal);
      return linear(y, S, t.at("out_proj.weight"), opt("out_proj.bias"));
    }
    case Layout::gpt2: {  // c_attn(x).split(n_embd, dim=2), _split_heads, c_proj
      const Mat qkv = conv1d(x, S, t.at("c_attn.weight"), opt("c_attn.bias"));
      const Mat y = heads_attention(cols(qkv, S, 3 * HD, 0, HD), cols(qkv, S, 3 * HD, HD, HD),
                                    cols(qkv, S, 3 * HD, 2 * HD, HD), S, H, D, scale, causal);
      return conv1d(y, S, t.at("c_proj.weight"), opt("c_proj.bias"));
    }
    case Layout::proj:  // not in kAll: test_weights_families runs these
    case Layout::bert:
    case Layout::neox:
    case Layout::falcon:
    case Layout::codegen:
      break;
  }
  FAIL("layout_forward: no module for layout " << layout_name(l));
  return {};
}

}  // namespace

TEST_CASE("weights: canonical weights compute what each layout's own module computes") {
  const std::size_t S = 5;
  std::size_t runs = 0;
  for (const Config& c : configs())
    for (Layout l : kAll) {
      if (!can_hold(c, l)) continue;
      CAPTURE(layout_name(l));
      CAPTURE(c.hidden_size);
      const StateDict sd = export_weights(random_weights(c, 21), l);
      const Weights w = load_weights(sd, c, l, "w", false);
      const Tensor x = test::random_tensor({1, S, std::size_t(c.hidden_size)}, 4);
      const Mat xd(x.data.begin(), x.data.end());
      for (bool causal : {false, true}) {
        const Mat want = layout_forward(sd, l, c, xd, S, causal);
        const Tensor got =
            ref::attention(ref::from_weights(w), x, nullptr, c.spec.scale, causal).context;
        Tensor expected({1, S, std::size_t(c.out_features())});
        REQUIRE(want.size() == expected.size());
        for (std::size_t i = 0; i < want.size(); ++i) expected.data[i] = float(want[i]);
        const auto d = test::compare(got, expected);
        INFO(test::describe(d));
        CHECK(d.shape_ok);
        CHECK(d.relative() < 1e-6);
        ++runs;
      }
    }
  CHECK(runs >= 40);
}

TEST_CASE("weights: a GPT-2 layer picked by prefix out of a two-layer state dict") {
  const StateDict sd = open_state_dict(test::source_path("tests/golden/init/gpt2_layers"));
  // Without a prefix the whole model's keys fit no layout, and the message says why.
  const auto e = catch_error([&] { detect_layout(select_keys(sd, ""), "gpt2_layers"); });
  CHECK(e.code == Exit::data);
  CHECK(e.msg.find("weights_prefix") != std::string::npos);

  const Config c = make_cfg(8, 2, 4, 8, true, true, true);
  const StateDict one = select_keys(sd, "transformer.h.1.attn.");
  CHECK(one.size() == 4);  // attn.bias and attn.masked_bias dropped
  REQUIRE(detect_layout(one, "gpt2_layers") == Layout::gpt2);
  const Weights w = load_weights(one, c, Layout::gpt2, "gpt2_layers", false);

  // Canonical = the Conv1D weight transposed, by hand.
  const Tensor ca = tensor_of(sd.read_raw("transformer.h.1.attn.c_attn.weight"));  // (C, 3C)
  REQUIRE(ca.shape == std::vector<std::size_t>{8, 24});
  bool transposed = true;
  for (std::size_t j = 0; j < 24; ++j)
    for (std::size_t i = 0; i < 8; ++i)
      transposed &= w.w_qkv.data[j * 8 + i] == ca.data[i * 24 + j];
  CHECK(transposed);

  // The forward pass equals Hugging Face's GPT2Attention (computed by torch).
  const std::string dir = test::source_path("tests/golden/init/gpt2_expected/");
  Tensor x = to_float32(read_npy(dir + "x.npy"), "x", false);  // (S, C)
  const Tensor want = to_float32(read_npy(dir + "context_h1.npy"), "context", false);
  x.shape.insert(x.shape.begin(), 1);
  Tensor got =
      ref::attention(ref::from_weights(w), x, nullptr, 0.5, true).context;  // scale 1/sqrt(4)
  got.shape.erase(got.shape.begin());
  const auto d = test::compare(got, want);
  INFO(test::describe(d));
  CHECK(d.shape_ok);
  CHECK(d.relative() < 1e-5);

  // And layer 0 differs (the prefix really chose a layer).
  const Weights w0 =
      load_weights(select_keys(sd, "transformer.h.0.attn."), c, Layout::gpt2, "g", false);
  CHECK(w0.w_qkv.data != w.w_qkv.data);
}

namespace {

// nn.MultiheadAttention(E, H, bias, add_bias_kv, kdim, vdim) as a config
// (kdim/vdim 0: not given, = E).
Config mha_cfg(std::int64_t E, std::int64_t H, bool bias, bool bias_kv, std::int64_t kdim,
               std::int64_t vdim) {
  Config c = make_cfg(E, H, E / H, E, true, bias, bias);
  c.kdim = kdim, c.vdim = vdim;
  c.add_bias_kv = bias_kv;
  return c;
}

// random_weights plus w_k/w_v (when kdim or vdim differs from E) and bias_k/bias_v.
Weights random_mha_weights(const Config& c, unsigned seed) {
  Weights w = random_weights(c, seed);
  const Geometry g = geometry_of(c);
  if (g.Ck != g.C || g.Cv != g.C) {
    w.Ck = c.kdim, w.Cv = c.vdim;
    w.w_qkv = test::random_tensor({g.q_rows(), g.C}, seed + 4);
    w.w_k = test::random_tensor({g.kv_rows(), g.Ck}, seed + 5);
    w.w_v = test::random_tensor({g.kv_rows(), g.Cv}, seed + 6);
  }
  if (c.add_bias_kv) {
    w.bias_k = test::random_tensor({g.kv_rows()}, seed + 7);
    w.bias_v = test::random_tensor({g.kv_rows()}, seed + 8);
  }
  return w;
}

std::vector<std::string> keys_and_shapes(const Config& c, Layout l) {
  std::vector<std::string> k;
  for (const auto& p : expected_params(c, l)) k.push_back(p.key + " " + shape_str(p.shape));
  return k;
}

}  // namespace

TEST_CASE("weights: torch_mha with kdim/vdim and add_bias_kv lists torch's state_dict keys") {
  // nn.MultiheadAttention(8, 2, kdim=6, vdim=5, add_bias_kv=True).state_dict()
  CHECK(keys_and_shapes(mha_cfg(8, 2, true, true, 6, 5), Layout::torch_mha) ==
        std::vector<std::string>{"q_proj_weight (8, 8)", "k_proj_weight (8, 6)",
                                 "v_proj_weight (8, 5)", "in_proj_bias (24,)", "bias_k (1, 1, 8)",
                                 "bias_v (1, 1, 8)", "out_proj.weight (8, 8)",
                                 "out_proj.bias (8,)"});
  // One of kdim, vdim other than E is enough (torch's _qkv_same_embed_dim).
  CHECK(keys_and_shapes(mha_cfg(8, 2, false, false, 8, 3), Layout::torch_mha) ==
        std::vector<std::string>{"q_proj_weight (8, 8)", "k_proj_weight (8, 8)",
                                 "v_proj_weight (8, 3)", "out_proj.weight (8, 8)"});
  // kdim = vdim = E given explicitly: in_proj_weight, as torch keeps it.
  CHECK(keys_and_shapes(mha_cfg(8, 2, false, true, 8, 8), Layout::torch_mha) ==
        std::vector<std::string>{"in_proj_weight (24, 8)", "bias_k (1, 1, 8)", "bias_v (1, 1, 8)",
                                 "out_proj.weight (8, 8)"});
}

TEST_CASE("weights: torch_mha's q/k/v_proj_weight and bias_k/bias_v load into their own tensors") {
  const Config c = mha_cfg(8, 2, true, true, 6, 5);
  StateDict sd("mha");
  const Tensor q = test::random_tensor({8, 8}, 1), k = test::random_tensor({8, 6}, 2),
               v = test::random_tensor({8, 5}, 3), b = test::random_tensor({24}, 4),
               bk = test::random_tensor({1, 1, 8}, 5), bv = test::random_tensor({1, 1, 8}, 6),
               ow = test::random_tensor({8, 8}, 7), ob = test::random_tensor({8}, 8);
  for (const auto& [key, t] : std::vector<std::pair<std::string, Tensor>>{{"q_proj_weight", q},
                                                                          {"k_proj_weight", k},
                                                                          {"v_proj_weight", v},
                                                                          {"in_proj_bias", b},
                                                                          {"bias_k", bk},
                                                                          {"bias_v", bv},
                                                                          {"out_proj.weight", ow},
                                                                          {"out_proj.bias", ob}})
    sd.add(key, t);
  REQUIRE(detect_layout(sd, "mha") == Layout::torch_mha);
  const Weights w = load_weights(sd, c, Layout::torch_mha, "mha", false);
  CHECK(same_bits(w.w_qkv, q));  // only the q rows (H*D, C)
  CHECK(same_bits(w.w_k, k));
  CHECK(same_bits(w.w_v, v));
  CHECK_FALSE(w.fused_qkv());
  CHECK(w.key_width() == 6);
  CHECK(w.value_width() == 5);
  CHECK(same_bits(w.b_qkv, b));
  CHECK(w.bias_k.shape == std::vector<std::size_t>{8});  // canonical (Hkv*D)
  CHECK(w.bias_k.data == bk.data);
  CHECK(w.bias_v.data == bv.data);
  CHECK(same_bits(w.w_out, ow));
  // The views the forward pass uses.
  CHECK(w.k_weight().data == w.w_k.ptr());
  CHECK(w.k_weight().cols == 6);
  CHECK(w.v_weight().cols == 5);
  CHECK(w.q_weight().rows == 8);
}

TEST_CASE("weights: torch_mha with kdim/vdim and add_bias_kv exports and reloads bit-identically") {
  std::size_t runs = 0;
  for (bool bias : {true, false})
    for (bool bias_kv : {false, true})
      for (auto [kdim, vdim] : std::vector<std::pair<int, int>>{{8, 8}, {6, 5}, {12, 8}, {8, 3}}) {
        CAPTURE(bias);
        CAPTURE(bias_kv);
        CAPTURE(kdim);
        CAPTURE(vdim);
        const Config c = mha_cfg(8, 2, bias, bias_kv, kdim, vdim);
        const Weights w = random_mha_weights(c, 31);
        const StateDict sd = export_weights(w, Layout::torch_mha);
        const auto specs = expected_params(c, Layout::torch_mha);
        REQUIRE(sd.size() == specs.size());
        for (const auto& p : specs) {
          REQUIRE(sd.contains(p.key) == 1);
          CHECK(sd.read_raw(p.key).dtype == DType::f4);
          CHECK(sd.read_raw(p.key).shape == p.shape);
        }
        if (bias_kv) CHECK(tensor_of(sd.read_raw("bias_k")).data == w.bias_k.data);
        CHECK(detect_layout(sd, "w") == Layout::torch_mha);
        const Weights back = load_weights(sd, c, Layout::torch_mha, "w", false);
        check_same(back, w);
        const StateDict again = export_weights(back, Layout::torch_mha);
        REQUIRE(again.keys() == sd.keys());
        for (const std::string& k : sd.keys())
          CHECK(same_bits(tensor_of(again.read_raw(k)), tensor_of(sd.read_raw(k))));
        ++runs;
      }
  CHECK(runs == 16);
  // Without kdim/vdim or bias_kv the weights convert to the other layouts as before.
  const Config plain = mha_cfg(8, 2, true, false, 8, 8);
  check_same(load_weights(export_weights(random_mha_weights(plain, 3), Layout::fused), plain,
                          Layout::fused, "w", false),
             random_mha_weights(plain, 3));
}

TEST_CASE("weights: torch_mha kdim/vdim and bias_k/bias_v errors say what to set") {
  const Config split = mha_cfg(8, 2, true, true, 6, 5);
  const Config same_dims = mha_cfg(8, 2, true, true, 0, 0);
  const StateDict good = export_weights(random_mha_weights(split, 1), Layout::torch_mha);
  const StateDict fused = export_weights(random_mha_weights(same_dims, 1), Layout::torch_mha);
  auto load = [](const StateDict& sd, const Config& cfg, Layout l) {
    return catch_error([&] { load_weights(sd, cfg, l, "w", false); });
  };
  REQUIRE(load(good, split, Layout::torch_mha).code == Exit::ok);

  // The file's form of q, k, v and the config's kdim/vdim disagree: the message
  // says which kdim/vdim the file has.
  auto e = load(good, same_dims, Layout::torch_mha);
  CHECK(e.code == Exit::data);
  CHECK(e.msg ==
        "w: missing key \"in_proj_weight\" (layout torch_mha, shape (24, 8)): the weights hold "
        "q_proj_weight, k_proj_weight (8, 6) and v_proj_weight (8, 5) (nn.MultiheadAttention "
        "with kdim/vdim): set \"kdim\": 6 and \"vdim\": 5");
  e = load(fused, split, Layout::torch_mha);
  CHECK(e.msg ==
        "w: missing key \"q_proj_weight\" (layout torch_mha, shape (8, 8)): the weights hold "
        "in_proj_weight (nn.MultiheadAttention with kdim = vdim = embed_dim): leave out "
        "\"kdim\" and \"vdim\" (found 6, 5)");
  e = load(good, mha_cfg(8, 2, true, true, 7, 5), Layout::torch_mha);
  CHECK(e.msg == "w: key \"k_proj_weight\": expected shape (8, 7), found (8, 6); set \"kdim\": 6");
  e = load(good, mha_cfg(8, 2, true, true, 6, 4), Layout::torch_mha);
  CHECK(e.msg == "w: key \"v_proj_weight\": expected shape (8, 4), found (8, 5); set \"vdim\": 5");
  StateDict sd = good;
  sd.erase("k_proj_weight");
  e = load(sd, split, Layout::torch_mha);
  CHECK(e.msg == "w: missing key \"k_proj_weight\" (layout torch_mha, shape (8, 6))");

  // bias_k/bias_v without add_bias_kv, and the other way round.
  Config no_bias_kv = split;
  no_bias_kv.add_bias_kv = false;
  e = load(good, no_bias_kv, Layout::torch_mha);
  CHECK(e.code == Exit::data);
  CHECK(e.msg ==
        "w: key \"bias_k\" found but config \"add_bias_kv\" is false (layout torch_mha); set "
        "\"add_bias_kv\": true to use it");
  sd = good;
  sd.erase("bias_k");
  sd.erase("bias_v");
  e = load(sd, split, Layout::torch_mha);
  CHECK(e.msg ==
        "w: missing key \"bias_k\" (layout torch_mha, shape (1, 1, 8)): config \"add_bias_kv\" "
        "is true; set \"add_bias_kv\": false for weights without bias_k and bias_v");
  sd = good;
  sd.add("bias_v", Tensor({8}));  // flattened: not torch's (1, 1, E)
  e = load(sd, split, Layout::torch_mha);
  CHECK(e.msg == "w: key \"bias_v\": expected shape (1, 1, 8), found (8,)");
  sd = good;
  RawArray nan = sd.read_raw("bias_v");
  nan.bytes.assign(nan.bytes.size(), 0xFF);
  sd.add("bias_v", nan);
  e = load(sd, split, Layout::torch_mha);
  CHECK(e.code == Exit::data);
  CHECK(e.msg.rfind(sd.source() + ":bias_v: non-finite", 0) == 0);
  CHECK(catch_error([&] { load_weights(sd, split, Layout::torch_mha, "w", true); }).code ==
        Exit::ok);

  // Only torch_mha holds them.
  Config sep = make_cfg(8, 2, 4, 8, true, true, true);
  sep.add_bias_kv = true;
  e = load(fused, sep, Layout::separate);
  CHECK(e.code == Exit::config);
  CHECK(e.msg ==
        "layout: layout separate has no bias_k/bias_v (add_bias_kv is "
        "torch.nn.MultiheadAttention's): use layout torch_mha");
  e = catch_error([&] { export_weights(random_mha_weights(split, 1), Layout::fused); });
  CHECK(e.code == Exit::usage);
  CHECK(e.msg.find("need layout torch_mha (q_proj_weight, k_proj_weight, v_proj_weight)") !=
        std::string::npos);
  // Weights built by hand with w_k, w_v of width C: torch_mha writes them as
  // q_proj_weight, k_proj_weight, v_proj_weight; a fused layout cannot.
  Weights square = random_weights(make_cfg(8, 2, 4, 8, true, true, true), 1);
  square.w_qkv = test::random_tensor({8, 8}, 2);
  square.w_k = test::random_tensor({8, 8}, 3);
  square.w_v = test::random_tensor({8, 8}, 4);
  CHECK(export_weights(square, Layout::torch_mha).contains("k_proj_weight") == 1);
  e = catch_error([&] { export_weights(square, Layout::fused); });
  CHECK(e.code == Exit::usage);
  CHECK(e.msg ==
        "--layout fused: cannot hold this model: layout fused cannot hold separate k and v "
        "weights (w_k, w_v): use layout torch_mha");

  sd = export_weights(random_weights(make_cfg(8, 2, 4, 8, true, true, true), 1), Layout::separate);
  sd.add("bias_k", Tensor({1, 1, 8}));
  e = load(sd, make_cfg(8, 2, 4, 8, true, true, true), Layout::separate);
  CHECK(e.msg == "w: key \"bias_k\" fits layout torch_mha, not layout separate");
}

TEST_CASE("weights: the torch MHA golden layer (kdim 12, vdim 10, add_bias_kv) loads as stored") {
  // tests/golden/variants/mha_cross_bool_mask: nn.MultiheadAttention(16, 4,
  // kdim=12, vdim=10, add_bias_kv=True, add_zero_attn=True).
  const std::string dir = test::source_path("tests/golden/variants/mha_cross_bool_mask/weights");
  const StateDict sd = select_keys(open_state_dict(dir), "");
  REQUIRE(detect_layout(sd, dir) == Layout::torch_mha);
  const Weights w =
      load_weights(sd, mha_cfg(16, 4, true, true, 12, 10), Layout::torch_mha, dir, false);
  const auto file = [&](const std::string& key) {
    return to_float32(read_npy(dir + "/" + key + ".npy"), key, false);
  };
  CHECK(same_bits(w.w_qkv, file("q_proj_weight")));
  CHECK(same_bits(w.w_k, file("k_proj_weight")));
  CHECK(same_bits(w.w_v, file("v_proj_weight")));
  CHECK(same_bits(w.b_qkv, file("in_proj_bias")));
  CHECK(w.bias_k.data == file("bias_k").data);  // (1, 1, 16) stored, (16) canonical
  CHECK(w.bias_v.data == file("bias_v").data);
  CHECK(same_bits(w.w_out, file("out_proj.weight")));
  CHECK(same_bits(w.b_out, file("out_proj.bias")));
  CHECK(w.geometry().Ck == 12);
  CHECK(w.geometry().Cv == 10);
}

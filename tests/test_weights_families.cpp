// The layouts of CONTRACT.md v2 ("Weight layouts"): proj, bert, neox, falcon
// and fused's qkv_proj / out_proj / o_proj names, with grouped-query heads.
// Where each stored row lands in the canonical q|k|v rows (geometry.h),
// per-part biases, detection, neighbour keys and the errors that name keys.
//
// Letters: C hidden, H heads, Hkv key/value heads, D head size, O out size.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/geometry.h"
#include "attn/state_dict.h"
#include "attn/weights.h"
#include "expect_error.h"
#include "test_util.h"

using namespace attn;
using test::expect_error;

namespace {

Config cfg_of(std::int64_t C, std::int64_t H, std::int64_t Hkv, std::int64_t D) {
  Config c;
  c.kind = Kind::multi;
  c.hidden_size = C, c.num_heads = H, c.num_kv_heads = Hkv, c.head_size = D;
  c.out_size = C;
  c.scale = 1.0 / std::sqrt(double(D));
  return c;
}

// Canonical weights whose every w_qkv row holds its own row number (and
// b_qkv the same), so a stored tensor's rows say where they came from.
Weights numbered(const Config& c, bool qkv_bias = true, bool out_bias = true) {
  const Geometry g = geometry_of(c);
  Weights w;
  w.C = c.hidden_size, w.H = c.num_heads, w.Hkv = c.kv_heads(), w.D = c.head_size, w.O = c.out_size;
  w.w_qkv = Tensor({g.qkv_rows(), g.C});
  for (std::size_t r = 0; r < g.qkv_rows(); ++r)
    for (std::size_t k = 0; k < g.C; ++k) w.w_qkv.data[r * g.C + k] = float(r) + 0.001f * float(k);
  if (qkv_bias) {
    w.b_qkv = Tensor({g.qkv_rows()});
    for (std::size_t r = 0; r < g.qkv_rows(); ++r) w.b_qkv.data[r] = float(r);
  }
  w.w_out = test::random_tensor({g.O, g.q_rows()}, 3);
  if (out_bias) w.b_out = test::random_tensor({g.O}, 4);
  return w;
}

bool same(const Tensor& a, const Tensor& b) { return a.shape == b.shape && a.data == b.data; }

}  // namespace

TEST_CASE("families: neox stores per head [q, k, v] (GPT-NeoX's view (H, 3, D))") {
  const Config c = cfg_of(6, 3, 3, 2);
  const Geometry g = geometry_of(c);
  const StateDict sd = export_weights(numbered(c), Layout::neox);
  const Tensor qkv = sd.read_f32("query_key_value.weight", false);  // (3*H*D, C)
  REQUIRE(qkv.shape == std::vector<std::size_t>{18, 6});
  for (std::size_t h = 0; h < 3; ++h)
    for (std::size_t part = 0; part < 3; ++part)
      for (std::size_t d = 0; d < 2; ++d) {
        const std::size_t stored = (h * 3 + part) * 2 + d;
        const std::size_t canon = (part == 0 ? g.q_row0() : part == 1 ? g.k_row0() : g.v_row0()) + h * 2 + d;
        CHECK(qkv.data[stored * 6] == float(canon));
      }
  const Tensor bias = sd.read_f32("query_key_value.bias", false);
  CHECK(bias.data[2] == float(g.k_row0()));  // head 0's k comes right after its q
}

TEST_CASE("families: falcon stores per KV group [q..., k, v] (Falcon's view (Hkv, H/Hkv + 2, D))") {
  for (std::int64_t Hkv : {1, 2, 4}) {
    CAPTURE(Hkv);
    const Config c = cfg_of(8, 4, Hkv, 2);
    const Geometry g = geometry_of(c);
    const StateDict sd = export_weights(numbered(c), Layout::falcon);
    const Tensor qkv = sd.read_f32("query_key_value.weight", false);
    REQUIRE(qkv.shape == std::vector<std::size_t>{g.qkv_rows(), 8});
    const std::size_t grp = g.group();
    std::size_t stored = 0;
    for (std::size_t j = 0; j < g.Hkv; ++j)
      for (std::size_t i = 0; i < grp + 2; ++i)
        for (std::size_t d = 0; d < 2; ++d, ++stored) {
          const std::size_t canon = i < grp   ? g.q_row0() + (j * grp + i) * 2 + d
                                    : i == grp ? g.k_row0() + j * 2 + d
                                               : g.v_row0() + j * 2 + d;
          CHECK(qkv.data[stored * 8] == float(canon));
        }
  }
}

TEST_CASE("families: every v2 layout exports and reloads bit-identically, GQA where it has it") {
  struct Case {
    Layout layout;
    std::int64_t Hkv;
  };
  for (const Case& k : {Case{Layout::proj, 4}, Case{Layout::proj, 2}, Case{Layout::proj, 1},
                        Case{Layout::bert, 4}, Case{Layout::neox, 4}, Case{Layout::falcon, 4},
                        Case{Layout::falcon, 2}, Case{Layout::falcon, 1}, Case{Layout::fused, 2},
                        Case{Layout::separate, 1}}) {
    CAPTURE(layout_name(k.layout));
    CAPTURE(k.Hkv);
    const Config c = cfg_of(8, 4, k.Hkv, 3);
    const Weights w = numbered(c);
    const StateDict sd = export_weights(w, k.layout);
    const Weights back = load_weights(sd, c, k.layout, "w", false);
    CHECK(back.geometry().Hkv == std::size_t(k.Hkv));
    CHECK(same(back.w_qkv, w.w_qkv));
    CHECK(same(back.b_qkv, w.b_qkv));
    CHECK(same(back.w_out, w.w_out));
    CHECK(same(back.b_out, w.b_out));
    if (k.layout != Layout::neox && k.layout != Layout::falcon)
      CHECK(detect_layout(sd, "w") == k.layout);
  }
}

TEST_CASE("families: each bias on its own; a missing one is zero rows unless asked for") {
  const Config c = cfg_of(8, 4, 2, 2);
  const Geometry g = geometry_of(c);
  StateDict sd = export_weights(numbered(c), Layout::proj);
  sd.erase("k_proj.bias");  // Whisper: k_proj has no bias
  sd.erase("o_proj.bias");  // Qwen2: o_proj has none
  const Weights w = load_weights(sd, c, Layout::proj, "w", false);
  REQUIRE(w.b_qkv.size() == g.qkv_rows());
  for (std::size_t r = 0; r < g.qkv_rows(); ++r) {
    const bool k = r >= g.k_row0() && r < g.v_row0();
    CHECK(w.b_qkv.data[r] == (k ? 0.0f : float(r)));
  }
  CHECK(w.b_out.data.empty());

  // No bias at all (Llama): no bias tensors.
  for (const char* b : {"q_proj.bias", "v_proj.bias"}) sd.erase(b);
  CHECK(load_weights(sd, c, Layout::proj, "w", false).b_qkv.data.empty());

  // A config that says "qkv_bias": true explicitly wants every part.
  Config asked = c;
  asked.qkv_bias_given = true;
  expect_error([&] { load_weights(sd, asked, Layout::proj, "w", false); }, Exit::data,
               "w: missing key \"q_proj.bias\" (layout proj, shape (8,)): config \"qkv_bias\" is true");
}

TEST_CASE("families: fused takes Phi-3's qkv_proj and MPT's out_proj / o_proj") {
  const Config c = cfg_of(8, 4, 2, 2);
  const Weights w = numbered(c, false, false);
  const StateDict fused = export_weights(w, Layout::fused);
  for (const auto& [qkv, out] : std::vector<std::pair<std::string, std::string>>{
           {"qkv_proj", "o_proj"}, {"Wqkv", "out_proj"}, {"Wqkv", "Wo"}}) {
    CAPTURE(qkv);
    CAPTURE(out);
    StateDict sd("w");
    sd.add(qkv + ".weight", fused.read_f32("Wqkv.weight", false));
    sd.add(out + ".weight", fused.read_f32("Wo.weight", false));
    CHECK(detect_layout(sd, "w") == Layout::fused);
    const Weights back = load_weights(sd, c, Layout::fused, "w", false);
    CHECK(same(back.w_qkv, w.w_qkv));
    CHECK(same(back.w_out, w.w_out));
  }
}

TEST_CASE("families: detection, ambiguity and neighbour keys") {
  const Config c = cfg_of(8, 4, 4, 2);
  const Weights w = numbered(c);

  // query_key_value without a layout names both candidates.
  expect_error([&] { detect_layout(export_weights(w, Layout::neox), "m.safetensors"); }, Exit::data,
               "m.safetensors: key \"query_key_value.weight\" is ambiguous: set \"layout\" to neox",
               "or falcon");

  // A block's neighbours under the prefix are dropped by select_keys and never named.
  StateDict file("m");
  const StateDict bert = export_weights(w, Layout::bert);
  for (const std::string& k : bert.keys())
    file.add("bert.encoder.layer.0.attention." + k, bert.read_f32(k, false));
  file.add("bert.encoder.layer.0.attention.output.LayerNorm.weight", Tensor({8}, 1.0f));
  file.add("bert.encoder.layer.0.attention.output.LayerNorm.bias", Tensor({8}));
  file.add("bert.encoder.layer.0.intermediate.dense.weight", Tensor({16, 8}));
  const StateDict layer = select_keys(file, "bert.encoder.layer.0.attention.");
  CHECK_FALSE(layer.contains("output.LayerNorm.weight"));
  CHECK(detect_layout(layer, "m") == Layout::bert);
  CHECK(same(load_weights(layer, c, Layout::bert, "m", false).w_qkv, w.w_qkv));

  StateDict llama("m");
  llama.add("self_attn.o_proj.weight", Tensor({8, 8}));
  llama.add("input_layernorm.weight", Tensor({8}));
  llama.add("mlp.up_proj.weight", Tensor({16, 8}));
  llama.add("self_attn.rotary_emb.inv_freq", Tensor({1}));
  // Only the shared o_proj: says which layouts it looks like and what is missing.
  expect_error([&] { detect_layout(select_keys(llama, "self_attn."), "m"); }, Exit::data,
               "m: key \"o_proj.weight\" looks like layout proj or fused",
               "expected \"q_proj.weight\" (proj) or \"Wqkv.weight\" (fused)");
  // A whole block's prefix: the error says which module to add.
  expect_error([&] { detect_layout(select_keys(llama, ""), "m"); }, Exit::data,
               "m: key \"self_attn.o_proj.weight\" is one module deeper than a layer's keys: add "
               "\"self_attn.\" to weights_prefix");
  llama.erase("self_attn.o_proj.weight");
  // Nothing but neighbours: no parameters, no neighbour named.
  try {
    detect_layout(select_keys(llama, ""), "m");
    FAIL("no error");
  } catch (const Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("layernorm") == std::string::npos);
    CHECK(msg.find("mlp") == std::string::npos);
  }

  // A proj layer with a key missing names it, with its shape.
  StateDict proj = export_weights(w, Layout::proj);
  proj.erase("v_proj.weight");
  CHECK(detect_layout(proj, "m") == Layout::proj);
  expect_error([&] { load_weights(proj, c, Layout::proj, "m", false); }, Exit::data,
               "m: missing key \"v_proj.weight\" (layout proj, shape (8, 8))");
}

TEST_CASE("families: q_norm, k_norm and sinks are recognized and refused for now") {
  const Config c = cfg_of(8, 4, 2, 2);
  for (const char* k : {"q_norm.weight", "k_norm.weight", "sinks"}) {
    CAPTURE(k);
    StateDict sd = export_weights(numbered(c), Layout::proj);
    sd.add(k, Tensor({2}));
    CHECK(detect_layout(sd, "w") == Layout::proj);
    expect_error([&] { load_weights(sd, c, Layout::proj, "w", false); }, Exit::data,
                 std::string("w: key \"") + k + "\": q_norm, k_norm and sinks are not supported yet");
  }
}

TEST_CASE("families: a layout that cannot hold the geometry is a config error") {
  const Config gqa = cfg_of(8, 4, 2, 2);
  const StateDict sd = export_weights(numbered(gqa), Layout::falcon);
  expect_error([&] { load_weights(sd, gqa, Layout::neox, "w", false); }, Exit::config,
               "layout: layout neox holds one key and value head per query head");
  expect_error([&] { export_weights(numbered(gqa), Layout::bert); }, Exit::usage,
               "--layout bert: cannot hold this model");
  // The shape check names the key: falcon's fused rows for Hkv = 2 are not neox's.
  const Config mha = cfg_of(8, 4, 4, 2);
  expect_error([&] { load_weights(sd, mha, Layout::falcon, "w", false); }, Exit::data,
               "w: key \"query_key_value.weight\": expected shape (24, 8), found (16, 8)");
}

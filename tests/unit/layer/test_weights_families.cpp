// The layouts of CONTRACT.md v2 ("Weight layouts"): proj, bert, neox, falcon
// and fused's qkv_proj / out_proj / o_proj names, with grouped-query heads.
// Where each stored row lands in the canonical q|k|v rows (geometry.h),
// per-part biases, detection, neighbour keys and the errors that name keys;
// proj's q_norm, k_norm and sinks (Qwen3, Gemma 3, OLMo 2, gpt-oss).
//
// Letters: C hidden, H heads, Hkv key/value heads, D head size, O out size.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attn/error.h"
#include "attn/geometry.h"
#include "attn/npy.h"
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
  c.spec.scale = 1.0 / std::sqrt(double(D));
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
        const std::size_t canon = (part == 0   ? g.q_row0()
                                   : part == 1 ? g.k_row0()
                                               : g.v_row0()) +
                                  h * 2 + d;
        CHECK(qkv.data[stored * 6] == float(canon));
      }
  const Tensor bias = sd.read_f32("query_key_value.bias", false);
  CHECK(bias.data[2] == float(g.k_row0()));  // head 0's k comes right after its q
}

TEST_CASE("families: codegen stores qkv_proj in 4 groups of [q | v | k] (CodeGen's mp_num)") {
  // modeling_codegen: qkv.reshape(..., 4, -1), each group split q, v, k of H/4 heads, then
  // _split_heads: head h is group h / (H/4)'s head h % (H/4).
  const Config c = cfg_of(16, 8, 8, 2);
  const Geometry g = geometry_of(c);
  const StateDict sd = export_weights(numbered(c, false, false), Layout::codegen);
  const Tensor qkv = sd.read_f32("qkv_proj.weight", false);  // (3*H*D, C)
  REQUIRE(qkv.shape == std::vector<std::size_t>{48, 16});
  CHECK_FALSE(sd.contains("qkv_proj.bias"));
  std::size_t stored = 0;
  for (std::size_t grp = 0; grp < 4; ++grp)
    for (std::size_t part = 0; part < 3; ++part)       // q, v, k
      for (std::size_t r = 0; r < 4; ++r, ++stored) {  // 2 heads of D = 2 rows
        const std::size_t row0 = part == 0 ? g.q_row0() : part == 1 ? g.v_row0() : g.k_row0();
        CHECK(qkv.data[stored * 16] == float(row0 + grp * 4 + r));
      }
  // read back: the same canonical rows
  const Weights back = load_weights(sd, c, Layout::codegen, "w", false);
  CHECK(same(back.w_qkv, numbered(c, false, false).w_qkv));
  // heads that do not split into 4 groups: refused, naming the layout
  expect_error([&] { load_weights(sd, cfg_of(12, 6, 6, 2), Layout::codegen, "w", false); },
               Exit::config, "layout: layout codegen splits the heads into 4 groups");
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
          const std::size_t canon = i < grp    ? g.q_row0() + (j * grp + i) * 2 + d
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
  for (const Case& k :
       {Case{Layout::proj, 4}, Case{Layout::proj, 2}, Case{Layout::proj, 1}, Case{Layout::bert, 4},
        Case{Layout::neox, 4}, Case{Layout::falcon, 4}, Case{Layout::falcon, 2},
        Case{Layout::falcon, 1}, Case{Layout::fused, 2}, Case{Layout::separate, 1}}) {
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
  expect_error(
      [&] { load_weights(sd, asked, Layout::proj, "w", false); }, Exit::data,
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

namespace {

// cfg with qk_norm (scope "head" or "all") and sinks as Qwen3 / OLMo 2 / gpt-oss set them.
Config with_extras(Config c, bool qk_norm, bool scope_all, bool sinks) {
  if (qk_norm) {
    c.spec.qk_norm = QkNormSpec{};
    c.spec.qk_norm->scope_all = scope_all;
  }
  c.spec.sinks = sinks;
  return c;
}

// numbered(c) plus distinct values in every extra the config asks for.
Weights numbered_extras(const Config& c) {
  Weights w = numbered(c);
  const Geometry g = geometry_of(c);
  if (c.spec.qk_norm) {
    const bool all = c.spec.qk_norm->scope_all;
    w.q_norm = test::random_tensor({all ? g.q_rows() : g.D}, 11);
    w.k_norm = test::random_tensor({all ? g.kv_rows() : g.D}, 12);
  }
  if (c.spec.sinks) w.sinks = test::random_tensor({g.H}, 13);
  return w;
}

std::vector<std::string> keys_and_shapes(const Config& c, Layout l) {
  std::vector<std::string> k;
  for (const auto& p : expected_params(c, l)) k.push_back(p.key + " " + shape_str(p.shape));
  return k;
}

RawArray f16_of(const std::vector<std::uint16_t>& halves) {
  RawArray a;
  a.dtype = DType::f2;
  a.shape = {halves.size()};
  a.bytes.resize(halves.size() * 2);
  std::memcpy(a.bytes.data(), halves.data(), a.bytes.size());
  return a;
}

}  // namespace

TEST_CASE("families: proj lists q_norm, k_norm (scope head and all) and sinks after o_proj") {
  const Config base = cfg_of(8, 4, 2, 2);  // H*D = 8, Hkv*D = 4, D = 2
  const std::vector<std::string> proj = {
      "q_proj.weight (8, 8)", "q_proj.bias (8,)", "k_proj.weight (4, 8)", "k_proj.bias (4,)",
      "v_proj.weight (4, 8)", "v_proj.bias (4,)", "o_proj.weight (8, 8)", "o_proj.bias (8,)"};
  auto plus = [&](std::vector<std::string> extra) {
    std::vector<std::string> k = proj;
    k.insert(k.end(), extra.begin(), extra.end());
    return k;
  };
  CHECK(keys_and_shapes(with_extras(base, true, false, false), Layout::proj) ==
        plus({"q_norm.weight (2,)", "k_norm.weight (2,)"}));  // Qwen3, Gemma 3
  CHECK(keys_and_shapes(with_extras(base, true, true, false), Layout::proj) ==
        plus({"q_norm.weight (8,)", "k_norm.weight (4,)"}));  // OLMo 2
  CHECK(keys_and_shapes(with_extras(base, false, false, true), Layout::proj) ==
        plus({"sinks (4,)"}));  // gpt-oss
  CHECK(keys_and_shapes(with_extras(base, true, false, true), Layout::proj) ==
        plus({"q_norm.weight (2,)", "k_norm.weight (2,)", "sinks (4,)"}));
}

TEST_CASE("families: q_norm, k_norm and sinks load from a state dict into their own tensors") {
  const Config c = with_extras(cfg_of(8, 4, 2, 2), true, false, true);
  StateDict sd = export_weights(numbered(c), Layout::proj);  // the projections only
  const Tensor qn({2}, 0.5f), kn = test::random_tensor({2}, 7), sinks = test::random_tensor({4}, 8);
  sd.add("q_norm.weight", qn);
  sd.add("k_norm.weight", kn);
  sd.add("sinks", sinks);
  CHECK(detect_layout(sd, "w") == Layout::proj);
  const Weights w = load_weights(sd, c, Layout::proj, "w", false);
  CHECK(same(w.q_norm, qn));
  CHECK(same(w.k_norm, kn));
  CHECK(same(w.sinks, sinks));
  CHECK(same(w.w_qkv, numbered(c).w_qkv));
  CHECK(w.bias_k.empty());

  // Stored as float16 (a bf16/f16 checkpoint): converted on load like every weight.
  sd.add("sinks", f16_of({0x3C00, 0xC000, 0x3800, 0x0000}));  // 1, -2, 0.5, 0
  CHECK(load_weights(sd, c, Layout::proj, "w", false).sinks.data ==
        std::vector<float>{1.0f, -2.0f, 0.5f, 0.0f});
  // Non-finite values are refused, naming the key, unless allowed.
  sd.add("k_norm.weight", f16_of({0x7C00, 0x3C00}));  // +inf, 1
  expect_error([&] { load_weights(sd, c, Layout::proj, "w", false); }, Exit::data,
               sd.source() + ":k_norm.weight: non-finite");
  CHECK(std::isinf(load_weights(sd, c, Layout::proj, "w", true).k_norm.data[0]));
}

TEST_CASE("families: proj with q_norm, k_norm and sinks exports and reloads bit-identically") {
  for (bool scope_all : {false, true})
    for (bool sinks : {false, true})
      for (std::int64_t Hkv : {4, 2, 1}) {
        CAPTURE(scope_all);
        CAPTURE(sinks);
        CAPTURE(Hkv);
        const Config c = with_extras(cfg_of(8, 4, Hkv, 3), true, scope_all, sinks);
        const Weights w = numbered_extras(c);
        const StateDict sd = export_weights(w, Layout::proj);
        CHECK(same(sd.read_f32("q_norm.weight", false), w.q_norm));
        CHECK(same(sd.read_f32("k_norm.weight", false), w.k_norm));
        CHECK(sd.contains("sinks") == sinks);
        CHECK(detect_layout(sd, "w") == Layout::proj);
        const Weights back = load_weights(sd, c, Layout::proj, "w", false);
        CHECK(same(back.w_qkv, w.w_qkv));
        CHECK(same(back.q_norm, w.q_norm));
        CHECK(same(back.k_norm, w.k_norm));
        CHECK(same(back.sinks, w.sinks));
        // And once more from what was loaded: the same state dict.
        const StateDict again = export_weights(back, Layout::proj);
        REQUIRE(again.keys() == sd.keys());
        for (const std::string& k : sd.keys())
          CHECK(same(again.read_f32(k, false), sd.read_f32(k, false)));
      }
}

TEST_CASE("families: q_norm, k_norm and sinks errors name the key and the config key to set") {
  const Config plain = cfg_of(8, 4, 2, 2);
  const Config head = with_extras(plain, true, false, false);
  const Config all = with_extras(plain, true, true, false);
  const Config sinks = with_extras(plain, false, false, true);

  // In the file, not asked for by the config: the message says what to set.
  StateDict sd =
      export_weights(numbered_extras(with_extras(plain, true, false, true)), Layout::proj);
  expect_error([&] { load_weights(sd, plain, Layout::proj, "w", false); }, Exit::data,
               "w: key \"q_norm.weight\" (2,) found but config \"qk_norm\" is not set (layout "
               "proj); set \"qk_norm\": {\"scope\": \"head\"} to use it");
  expect_error([&] { load_weights(sd, head, Layout::proj, "w", false); }, Exit::data,
               "w: key \"sinks\" found but config \"sinks\" is false (layout proj); set "
               "\"sinks\": true to use it");
  const StateDict olmo = export_weights(numbered_extras(all), Layout::proj);
  expect_error([&] { load_weights(olmo, plain, Layout::proj, "w", false); }, Exit::data,
               "w: key \"q_norm.weight\" (8,) found but config \"qk_norm\" is not set",
               "set \"qk_norm\": {\"scope\": \"all\"} to use it");

  // Asked for by the config, missing from the file.
  const StateDict bare = export_weights(numbered(plain), Layout::proj);
  expect_error([&] { load_weights(bare, head, Layout::proj, "w", false); }, Exit::data,
               "w: missing key \"q_norm.weight\" (layout proj, shape (2,)): config \"qk_norm\" "
               "is set; leave \"qk_norm\" out for weights without q_norm and k_norm");
  expect_error([&] { load_weights(bare, sinks, Layout::proj, "w", false); }, Exit::data,
               "w: missing key \"sinks\" (layout proj, shape (4,)): config \"sinks\" is true");

  // The other scope's shapes: expected and found, and which scope fits.
  expect_error([&] { load_weights(olmo, head, Layout::proj, "w", false); }, Exit::data,
               "w: key \"q_norm.weight\": expected shape (2,), found (8,); the weights norm the "
               "whole q and k rows: set qk_norm \"scope\": \"all\" (OLMo 2)");
  const StateDict qwen3 = export_weights(numbered_extras(head), Layout::proj);
  expect_error([&] { load_weights(qwen3, all, Layout::proj, "w", false); }, Exit::data,
               "w: key \"q_norm.weight\": expected shape (8,), found (2,); the weights norm each "
               "head: set qk_norm \"scope\": \"head\"");
  StateDict bad = export_weights(numbered_extras(sinks), Layout::proj);
  bad.add("sinks", Tensor({2, 2}));
  expect_error([&] { load_weights(bad, sinks, Layout::proj, "w", false); }, Exit::data,
               "w: key \"sinks\": expected shape (4,), found (2, 2)");

  // Only proj holds them: other layouts are refused for the config or the export.
  expect_error(
      [&] { load_weights(qwen3, head, Layout::fused, "w", false); }, Exit::config,
      "layout: layout fused has no q_norm.weight/k_norm.weight (qk_norm): use layout proj");
  expect_error([&] { export_weights(numbered_extras(sinks), Layout::fused); }, Exit::usage,
               "--layout fused: cannot hold this model: layout fused has no sinks: use layout "
               "proj (gpt-oss)");
  StateDict fused = export_weights(numbered(plain), Layout::fused);
  fused.add("sinks", Tensor({4}));
  expect_error([&] { load_weights(fused, plain, Layout::fused, "w", false); }, Exit::data,
               "w: key \"sinks\" fits layout proj, not layout fused");
}

namespace {

// Tensor `name` of a golden variant's folder, read with the .npy reader directly.
Tensor npy(const std::string& dir, const std::string& name) {
  return to_float32(read_npy(dir + "/" + name + ".npy"), name, false);
}

// Rows [r0, r0 + rows.shape[0]) of m (rows, cols) equal `rows`.
bool same_rows(const Tensor& m, std::size_t r0, const Tensor& rows) {
  const std::size_t cols = m.shape[1];
  return rows.shape.size() == 2 && rows.shape[1] == cols &&
         std::equal(rows.data.begin(), rows.data.end(), m.data.begin() + r0 * cols);
}

}  // namespace

TEST_CASE(
    "families: the Qwen3 and gpt-oss golden layers load through a prefix into canonical form") {
  struct Case {
    const char* name;
    std::int64_t Hkv;
    bool qkv_bias, qk_norm, sinks;
  };
  for (const Case& k : {Case{"qwen3_qknorm", 2, false, true, false},
                        Case{"gptoss_sinks_window", 2, true, false, true},
                        Case{"gemma3_qknorm_offset", 1, false, true, false}}) {
    CAPTURE(k.name);
    // tests/golden/variants/<name>/config.json: C 32, H 4, D 8.
    Config c = with_extras(cfg_of(32, 4, k.Hkv, 8), k.qk_norm, false, k.sinks);
    c.qkv_bias = c.out_bias = k.qkv_bias;
    const std::string dir = test::source_path("tests/golden/variants/") + k.name + "/weights";
    const std::string prefix = "model.layers.3.self_attn.";
    const StateDict layer = select_keys(open_state_dict(dir), prefix);
    REQUIRE(detect_layout(layer, dir) == Layout::proj);
    const Weights w = load_weights(layer, c, Layout::proj, dir, false);
    const auto file = [&](const std::string& key) {
      return npy(dir, "model.layers.3.self_attn." + key);
    };
    const Geometry g = geometry_of(c);
    CHECK(same_rows(w.w_qkv, g.q_row0(), file("q_proj.weight")));
    CHECK(same_rows(w.w_qkv, g.k_row0(), file("k_proj.weight")));
    CHECK(same_rows(w.w_qkv, g.v_row0(), file("v_proj.weight")));
    CHECK(same(w.w_out, file("o_proj.weight")));
    if (k.qk_norm) {
      CHECK(same(w.q_norm, file("q_norm.weight")));
      CHECK(same(w.k_norm, file("k_norm.weight")));
      CHECK(w.q_norm.shape == std::vector<std::size_t>{8});
    }
    if (k.sinks) {
      CHECK(same(w.sinks, file("sinks")));
      CHECK(w.sinks.shape == std::vector<std::size_t>{4});
      const Tensor kb = file("k_proj.bias");
      CHECK(std::equal(kb.data.begin(), kb.data.end(), w.b_qkv.data.begin() + g.k_row0()));
      CHECK(same(w.b_out, file("o_proj.bias")));
    }
    CHECK(w.q_norm.empty() == !k.qk_norm);
    CHECK(w.sinks.empty() == !k.sinks);
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

TEST_CASE("families v3: a gated q_proj (H, 2D) per head [query | gate], round trip and hints") {
  Config c = cfg_of(8, 2, 1, 4);  // H*D = 8
  c.spec.gate = true;
  Weights w = numbered(c);
  w.w_gate = Tensor({8, 8});
  w.b_gate = Tensor({8});
  for (std::size_t r = 0; r < 8; ++r) {
    for (std::size_t k = 0; k < 8; ++k) w.w_gate.data[r * 8 + k] = 100.0f + float(r);
    w.b_gate.data[r] = 100.0f + float(r);
  }
  const StateDict sd = export_weights(w, Layout::proj);
  const Tensor q = sd.read_f32("q_proj.weight", false);
  REQUIRE(q.shape == std::vector<std::size_t>{16, 8});
  // Row blocks of 4: head 0's query (rows 0..3), its gate (100..), head 1's query (4..7), gate.
  CHECK(q.data[0 * 8] == 0.0f);
  CHECK(q.data[4 * 8] == 100.0f);
  CHECK(q.data[8 * 8] == 4.0f);
  CHECK(q.data[12 * 8] == 104.0f);
  CHECK(sd.read_f32("q_proj.bias", false).data[13] == 105.0f);
  const Weights back = load_weights(sd, c, Layout::proj, "w", false);
  CHECK(same(back.w_qkv, w.w_qkv));
  CHECK(same(back.w_gate, w.w_gate));
  CHECK(same(back.b_gate, w.b_gate));
  // The config without gate: the doubled rows say what to set.
  Config plain = c;
  plain.spec.gate = false;
  test::expect_error([&] { load_weights(sd, plain, Layout::proj, "w", false); }, Exit::data,
                     "w: key \"q_proj.weight\": expected shape (8, 8), found (16, 8)",
                     "set \"gate\": true");
  test::expect_error([&] { expected_params(c, Layout::fused); }, Exit::config,
                     "layout: ", "use layout proj (Qwen3-Next)");
}

TEST_CASE("families v3: per-head q/k norms (H, D) with biases, and StableLM's norms.{h} list") {
  Config c = cfg_of(12, 3, 1, 4);
  QkNormSpec n;
  n.kind = QkNormKind::layer;
  n.per_head = true;
  n.bias = true;
  c.spec.qk_norm = n;
  Weights w = numbered(c);
  w.q_norm = test::random_tensor({3, 4}, 21);
  w.k_norm = test::random_tensor({1, 4}, 22);
  w.q_norm_bias = test::random_tensor({3, 4}, 23);
  w.k_norm_bias = test::random_tensor({1, 4}, 24);
  const StateDict sd = export_weights(w, Layout::proj);
  CHECK(sd.read_f32("q_norm.weight", false).shape == std::vector<std::size_t>{3, 4});
  CHECK(sd.read_f32("k_norm.bias", false).shape == std::vector<std::size_t>{1, 4});
  const Weights back = load_weights(sd, c, Layout::proj, "w", false);
  CHECK(same(back.q_norm, w.q_norm));
  CHECK(same(back.k_norm_bias, w.k_norm_bias));

  // One module per head (StableLmLayerNormPerHead's norms.{h}): the same weights.
  StateDict list("list");
  for (const std::string& k : sd.keys())
    if (k.rfind("q_norm.", 0) != 0 && k.rfind("k_norm.", 0) != 0)
      list.add(k, sd.read_f32(k, false));
  for (std::size_t h = 0; h < 3; ++h) {
    Tensor row({4}), bias({4});
    std::copy(w.q_norm.data.begin() + h * 4, w.q_norm.data.begin() + h * 4 + 4, row.data.begin());
    std::copy(w.q_norm_bias.data.begin() + h * 4, w.q_norm_bias.data.begin() + h * 4 + 4,
              bias.data.begin());
    list.add("q_norm.norms." + std::to_string(h) + ".weight", row);
    list.add("q_norm.norms." + std::to_string(h) + ".bias", bias);
  }
  Tensor k_row({4}), k_bias({4});
  k_row.data = w.k_norm.data;
  k_bias.data = w.k_norm_bias.data;
  list.add("k_norm.norms.0.weight", k_row);
  list.add("k_norm.norms.0.bias", k_bias);
  const Weights from_list = load_weights(list, c, Layout::proj, "list", false);
  CHECK(same(from_list.q_norm, w.q_norm));
  CHECK(same(from_list.q_norm_bias, w.q_norm_bias));
  CHECK(same(from_list.k_norm, w.k_norm));

  // Shared (D) weights where the config says per head, and the other way round.
  Config shared = c;
  shared.spec.qk_norm->per_head = false;
  test::expect_error([&] { load_weights(sd, shared, Layout::proj, "w", false); }, Exit::data,
                     "w: key \"q_norm.weight\": expected shape (4,), found (3, 4)",
                     "set qk_norm \"per_head\": true");
  // kind l2 has no weights: none expected.
  Config l2 = cfg_of(12, 3, 1, 4);
  QkNormSpec two;
  two.kind = QkNormKind::l2;
  l2.spec.qk_norm = two;
  for (const auto& p : expected_params(l2, Layout::proj))
    CHECK(p.key.find("norm") == std::string::npos);
}

TEST_CASE("families v3: k_eq_v reads k_proj into the k and the v rows (Gemma 4), no v_proj") {
  Config c = cfg_of(8, 4, 2, 2);  // KV rows 4
  c.k_eq_v = true;
  const std::vector<ParamSpec> params = expected_params(c, Layout::proj);
  for (const ParamSpec& p : params) CHECK(p.key.rfind("v_proj", 0) == std::string::npos);
  Weights w = numbered(c);
  const Geometry g = geometry_of(c);
  const StateDict full = export_weights(w, Layout::proj);  // v_proj: k's rows again
  StateDict sd = export_weights(w, Layout::proj);
  sd.erase("v_proj.weight");
  sd.erase("v_proj.bias");
  const Weights back = load_weights(sd, c, Layout::proj, "w", false);
  for (std::size_t r = 0; r < g.kv_rows(); ++r) {
    CHECK(back.w_qkv.data[(g.v_row0() + r) * g.C] == float(g.k_row0() + r));
    CHECK(back.b_qkv.data[g.v_row0() + r] == float(g.k_row0() + r));
  }
  CHECK(back.w_qkv.data[g.q_row0() * g.C + 1] == w.w_qkv.data[1]);
  // Loaded so, the layer exports as it came: k_proj, no v_proj (a --dump-weights round trip).
  CHECK(back.k_eq_v);
  const StateDict again = export_weights(back, Layout::proj);
  CHECK_FALSE(again.contains("v_proj.weight"));
  CHECK(same(load_weights(again, c, Layout::proj, "w", false).w_qkv, back.w_qkv));
  // Without k_eq_v the missing v_proj says what to set; with it a v_proj is unexpected.
  Config plain = c;
  plain.k_eq_v = false;
  expect_error([&] { load_weights(sd, plain, Layout::proj, "w", false); }, Exit::data,
               "w: missing key \"v_proj.weight\"", "set \"k_eq_v\": true");
  expect_error([&] { load_weights(full, c, Layout::proj, "w", false); }, Exit::data,
               "w: key \"v_proj.", "set \"k_eq_v\": false");
  expect_error([&] { expected_params(c, Layout::fused); }, Exit::config,
               "layout: ", "k_eq_v reads v from k_proj");
}

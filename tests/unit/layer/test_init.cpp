// The torch-exact seeded init against PyTorch itself: tests/golden/init/
// manifest.json holds, for each tutorial module and nn.MultiheadAttention
// (kdim/vdim, add_bias_kv, bias or not) at several seeds and sizes,
// the SHA-256 of every parameter's float32 bytes as torch.manual_seed(seed)
// plus the constructor produced them (tests/golden/gen/sets/init.py).
// A hash match is a bit-for-bit match of every element.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include "attn/error.h"
#include "attn/sha256.h"
#include "attn/weights.h"
#include "reference.h"
#include "test_util.h"

using namespace attn;

namespace {

nlohmann::json manifest() {
  return nlohmann::json::parse(
      test::read_text(test::source_path("tests/golden/init/manifest.json")));
}

Config config_of(const nlohmann::json& c) {
  Config cfg;
  cfg.hidden_size = c.at("hidden_size").get<std::int64_t>();
  cfg.num_heads = c.at("num_heads").get<std::int64_t>();
  cfg.head_size = c.at("head_size").get<std::int64_t>();
  cfg.out_size = c.at("out_size").get<std::int64_t>();
  cfg.out_proj = c.at("out_proj").get<bool>();
  cfg.qkv_bias = c.at("qkv_bias").get<bool>();
  cfg.out_bias = c.at("out_bias").get<bool>();
  cfg.kind = cfg.num_heads == 1 ? Kind::single : Kind::multi;
  // nn.MultiheadAttention's kdim, vdim (absent: embed_dim) and add_bias_kv.
  cfg.kdim = c.value("kdim", cfg.hidden_size);
  cfg.vdim = c.value("vdim", cfg.hidden_size);
  cfg.add_bias_kv = c.value("add_bias_kv", false);
  return cfg;
}

float float_at(const RawArray& a, std::size_t i) {
  float v;
  std::memcpy(&v, a.bytes.data() + 4 * i, 4);
  return v;
}

}  // namespace

TEST_CASE("init: nn.Linear(3, 2, bias=False) after manual_seed(123), the issue's example") {
  // kqv's first module is key = Linear(C, D): with C=3, D=2 it draws exactly
  // what a lone nn.Linear(3, 2, bias=False) draws.
  Config cfg;
  cfg.hidden_size = 3, cfg.num_heads = 1, cfg.head_size = 2, cfg.out_size = 2;
  cfg.out_proj = false, cfg.qkv_bias = false, cfg.out_bias = false;
  const Weights w = init_weights(cfg, Layout::kqv, 123);
  const StateDict sd = export_weights(w, Layout::kqv);
  const RawArray key = sd.read_raw("key.weight");
  REQUIRE(key.shape == std::vector<std::size_t>{2, 3});
  const auto expected = manifest().at("linear_3_2_seed_123").at("weight");
  const double issue[2][3] = {{-0.23542964, 0.01912448, -0.28674594},
                              {0.21772662, -0.4919342, 0.42322308}};
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t c = 0; c < 3; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      CHECK(float_at(key, r * 3 + c) == static_cast<float>(expected[r][c].get<double>()));
      CHECK(float_at(key, r * 3 + c) == doctest::Approx(issue[r][c]).epsilon(1e-7));
    }
}

TEST_CASE("init: every golden module at every seed, bit for bit") {
  const auto m = manifest();
  std::size_t checked = 0, big = 0, split = 0, bias_kv = 0;
  for (const auto& c : m.at("cases")) {
    const std::string name = c.at("name").get<std::string>();
    const std::uint64_t seed = c.at("seed").get<std::uint64_t>();
    const Layout layout = *parse_layout(c.at("layout").get<std::string>());
    CAPTURE(name);
    CAPTURE(seed);
    const Config cfg = config_of(c.at("config"));
    split += cfg.kdim != cfg.hidden_size || cfg.vdim != cfg.hidden_size;
    bias_kv += cfg.add_bias_kv;

    // expected_params lists the module's state_dict keys in constructor order.
    const auto params = expected_params(cfg, layout);
    std::vector<std::string> keys;
    for (const auto& p : params) keys.push_back(p.key);
    CHECK(keys == c.at("keys").get<std::vector<std::string>>());

    const StateDict sd = export_weights(init_weights(cfg, layout, seed), layout);
    CHECK(sd.size() == c.at("params").size());
    for (const auto& [key, want] : c.at("params").items()) {
      CAPTURE(key);
      REQUIRE(sd.contains(key) == 1);
      const RawArray a = sd.read_raw(key);
      CHECK(a.shape == want.at("shape").get<std::vector<std::size_t>>());
      // First values: a readable diagnosis when the hash fails.
      const auto first = want.at("first");
      for (std::size_t i = 0; i < first.size(); ++i)
        CHECK(float_at(a, i) == static_cast<float>(first[i].get<double>()));
      CHECK(sha256_hex(a.bytes.data(), a.bytes.size()) == want.at("sha256").get<std::string>());
      if (a.count() >= 768 * 2304) ++big;
      ++checked;
    }
  }
  CHECK(checked >= 100);
  CHECK(big == 2);  // the (2304, 768) Wqkv and in_proj_weight
  // nn.MultiheadAttention with kdim/vdim (q_proj_weight, k_proj_weight,
  // v_proj_weight) and with add_bias_kv (xavier_normal_: both of torch's
  // normal_ kernels, E < 16 and E >= 16), with and without bias.
  CHECK(split >= 4 * 4 + 1);
  CHECK(bias_kv >= 4 * 4 + 1);
}

TEST_CASE("init: only the low 32 bits of the seed count, as in torch's CPU generator") {
  Config cfg;
  cfg.hidden_size = 4, cfg.num_heads = 2, cfg.head_size = 2, cfg.out_size = 4;
  const Weights a = init_weights(cfg, Layout::fused, 123);
  const Weights b = init_weights(cfg, Layout::fused, (std::uint64_t(1) << 32) + 123);
  const Weights c = init_weights(cfg, Layout::fused, 124);
  CHECK(a.w_qkv.data == b.w_qkv.data);
  CHECK(a.b_out.data == b.b_out.data);
  CHECK(a.w_qkv.data != c.w_qkv.data);
}

TEST_CASE("init: layouts without a tutorial constructor or that cannot hold the config") {
  Config cfg;
  cfg.hidden_size = 4, cfg.num_heads = 2, cfg.head_size = 2, cfg.out_size = 4;
  auto code_of = [&](Layout l, std::string* msg) {
    try {
      init_weights(cfg, l, 1);
    } catch (const Error& e) {
      *msg = e.what();
      return e.code();
    }
    return Exit::ok;
  };
  std::string msg;
  CHECK(code_of(Layout::gpt2, &msg) == Exit::config);
  CHECK(msg.find("gpt2") != std::string::npos);
  CHECK(msg.find("normal(0, 0.02)") != std::string::npos);
  CHECK(code_of(Layout::per_head, &msg) == Exit::config);
  CHECK(msg == "out_proj: layout per_head has no output projection; set \"out_proj\": false");
  cfg.out_bias = false;  // nn.MultiheadAttention has one bias flag
  CHECK(code_of(Layout::torch_mha, &msg) == Exit::config);
  CHECK(msg.find("one bias flag") != std::string::npos);
  cfg.out_bias = true;
  cfg.out_size = 6;  // embed_dim must be the same everywhere
  CHECK(code_of(Layout::torch_mha, &msg) == Exit::config);
  CHECK(msg.find("hidden_size == num_heads*head_size == out_size") != std::string::npos);

  // The model families' layouts have no tutorial constructor, and no tutorial
  // module has grouped KV heads.
  cfg.out_size = 4;
  for (Layout l : {Layout::proj, Layout::bert, Layout::neox, Layout::falcon}) {
    CAPTURE(layout_name(l));
    CHECK(code_of(l, &msg) == Exit::config);
    CHECK(msg.find("init: layout " + layout_name(l) + " names a Hugging Face model family") == 0);
  }
  cfg.num_kv_heads = 1;
  for (Layout l : {Layout::fused, Layout::separate, Layout::torch_mha}) {
    CAPTURE(layout_name(l));
    CHECK(code_of(l, &msg) == Exit::config);
    CHECK(msg ==
          "init: the tutorial modules have no grouped-query attention: init needs "
          "num_kv_heads = num_heads (2), found num_kv_heads 1");
  }
}

namespace {

// Raschka's printed tables (tutorial 004 and the book's notebook): the
// two-copy batch of "Your journey starts with one step" through a module built
// right after torch.manual_seed(123). Printed to 4 decimals.
Tensor sentence_batch() {
  const float e[6][3] = {{0.43f, 0.15f, 0.89f}, {0.55f, 0.87f, 0.66f}, {0.57f, 0.85f, 0.64f},
                         {0.22f, 0.58f, 0.33f}, {0.77f, 0.25f, 0.10f}, {0.05f, 0.80f, 0.55f}};
  Tensor x({2, 6, 3});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t s = 0; s < 6; ++s)
      for (std::size_t c = 0; c < 3; ++c) x.data[(b * 6 + s) * 3 + c] = e[s][c];
  return x;
}

void check_rows(const Tensor& context, const std::vector<std::vector<double>>& rows) {
  const std::size_t O = context.shape.back();
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::size_t o = 0; o < O; ++o) {
        CAPTURE(b);
        CAPTURE(r);
        CAPTURE(o);
        CHECK(context.data[(b * 6 + r) * O + o] == doctest::Approx(rows[r][o]).epsilon(6e-5));
      }
}

}  // namespace

TEST_CASE("init: seed 123 reproduces Raschka's printed MultiHeadAttention tables") {
  // MultiHeadAttention(d_in=3, d_out=2, num_heads=2): head_dim 1, scale 1/sqrt(1).
  Config cfg;
  cfg.hidden_size = 3, cfg.num_heads = 2, cfg.head_size = 1, cfg.out_size = 2;
  cfg.qkv_bias = false, cfg.out_bias = true;
  const Weights w = init_weights(cfg, Layout::separate, 123);
  const Tensor x = sentence_batch();
  // 004 as printed: its masked_fill was not in place, so no mask took effect.
  check_rows(ref::attention(ref::from_weights(w), x, nullptr, 1.0, false).context,
             {{0.2595, 0.4014},
              {0.2583, 0.4014},
              {0.2583, 0.4014},
              {0.2575, 0.4031},
              {0.2582, 0.4026},
              {0.2575, 0.4028}});
  // The book's notebook masks in place.
  check_rows(ref::attention(ref::from_weights(w), x, nullptr, 1.0, true).context,
             {{0.3190, 0.4858}, {0.2943, 0.3897}, {0.2856, 0.3593}});
}

TEST_CASE("init: seed 123 reproduces Raschka's printed MultiHeadAttentionWrapper tables") {
  // Two CausalAttention(3, 2) heads, no output projection, scale 1/sqrt(2).
  Config cfg;
  cfg.hidden_size = 3, cfg.num_heads = 2, cfg.head_size = 2, cfg.out_size = 4;
  cfg.out_proj = false, cfg.qkv_bias = false, cfg.out_bias = false;
  const Weights w = init_weights(cfg, Layout::per_head, 123);
  const Tensor x = sentence_batch();
  const double scale = 1.0 / std::sqrt(2.0);
  check_rows(ref::attention(ref::from_weights(w), x, nullptr, scale, false).context,
             {{-0.5337, -0.1051, 0.5085, 0.3508},
              {-0.5323, -0.1080, 0.5084, 0.3508},
              {-0.5323, -0.1079, 0.5084, 0.3506},
              {-0.5297, -0.1076, 0.5074, 0.3471},
              {-0.5311, -0.1066, 0.5076, 0.3446},
              {-0.5299, -0.1081, 0.5077, 0.3493}});
  check_rows(ref::attention(ref::from_weights(w), x, nullptr, scale, true).context,
             {{-0.4519, 0.2216, 0.4772, 0.1063}});
}

// The rows of families_clipped.cpp (OLMo, OLMoE, Hunyuan) on config.json as the hub ships it and
// on the spellings their configuration classes accept: clip_qkv, the q/k norms' order and
// scope, Hunyuan's NTK-alpha base, and what each refuses by name.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "attn/error.h"
#include "attn/model_folder.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A folder of this config.json (and an empty weights file): layer n's attn-run config, with
// the block's input norm when `input_norm`.
json layer_of(const json& hf, std::int64_t n, bool input_norm = false) {
  static int count = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("attn-fc-" + std::to_string(::getpid()) + "-" + std::to_string(count++));
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << hf.dump();
  std::ofstream(dir / "model.safetensors") << "";
  json out;
  try {
    out = attn::layer_config(attn::open_model_folder(dir.string()), n, {}, false,
                             attn::Module::layer, input_norm);
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);
  return out;
}

json small(const char* type) {
  return {{"model_type", type},
          {"hidden_size", 32},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 2},
          {"num_hidden_layers", 2}};
}

}  // namespace

TEST_CASE("families clipped: OLMo clamps q, k and v when clip_qkv is set") {
  json hf = small("olmo");
  hf["clip_qkv"] = 8.0;  // OLMo-7B-0424-hf
  const json l = layer_of(hf, 1);
  CHECK(l["clip_qkv"] == 8.0);
  CHECK(l["rope"]["theta"] == 10000.0);
  CHECK(!l.contains("qk_norm"));
  CHECK(l["qkv_bias"] == false);
  hf["clip_qkv"] = nullptr;  // OLMo-1B-hf: no clamp
  CHECK(!layer_of(hf, 0).contains("clip_qkv"));
  hf["clip_qkv"] = -1.0;
  CHECK_THROWS_WITH(layer_of(hf, 0), doctest::Contains("\"clip_qkv\""));
  // OlmoLayerNorm has no weight: --residual is refused, naming why, not run on a wrong input.
  CHECK_THROWS_WITH(layer_of(small("olmo"), 0, true),
                    doctest::Contains("--residual: not available for model_type olmo"));
}

TEST_CASE("families clipped: OLMoE's norms over all heads; its clip after them is refused") {
  json hf = small("olmoe");
  const json l = layer_of(hf, 1, true);
  CHECK(l["qk_norm"]["scope"] == "all");
  CHECK(l["qk_norm"]["eps"] == 1e-5);  // OlmoeConfig's rms_norm_eps
  CHECK(!l["qk_norm"].contains("order"));
  CHECK(l["input_norm"]["weight"] == "model.layers.1.input_layernorm.weight");
  hf["clip_qkv"] = nullptr;  // OLMoE-1B-7B-0924
  CHECK(!layer_of(hf, 0).contains("clip_qkv"));
  hf["clip_qkv"] = 4.0;
  CHECK_THROWS_WITH(layer_of(hf, 0), doctest::Contains("\"clip_qkv\": is 4.0: OLMoE clamps"));
}

TEST_CASE("families clipped: Hunyuan's q/k norms after rope and its NTK-alpha base") {
  json hf = small("hunyuan_v1_dense");
  hf["head_dim"] = 16;
  hf["rope_theta"] = 10000.0;
  hf["rope_scaling"] = {{"alpha", 50.0},    {"beta_fast", 32}, {"beta_slow", 1},
                        {"factor", 1.0},    {"mscale", 1.0},   {"mscale_all_dim", 1.0},
                        {"type", "dynamic"}};
  hf["use_qk_norm"] = true;
  hf["use_cla"] = false;
  const json l = layer_of(hf, 0);
  CHECK(l["head_size"] == 16);
  CHECK(l["qk_norm"]["order"] == "after_rope");
  CHECK(l["qk_norm"]["scope"] == "head");
  CHECK(l["weights_rename"]["query_layernorm."] == "q_norm.");
  CHECK(l["weights_rename"]["key_layernorm."] == "k_norm.");
  CHECK(l["rope"]["theta"].get<double>() ==
        doctest::Approx(10000.0 * std::pow(50.0, 16.0 / 14.0)).epsilon(1e-12));
  CHECK(!l["rope"].contains("scaling"));
  // transformers v5's rope_parameters, and the MoE model's row
  json v5 = small("hunyuan_v1_moe");
  v5["rope_parameters"] = {{"rope_type", "dynamic"}, {"alpha", 1000.0}, {"rope_theta", 1e4}};
  CHECK(layer_of(v5, 1)["rope"]["theta"].get<double>() ==
        doctest::Approx(1e4 * std::pow(1000.0, 8.0 / 6.0)).epsilon(1e-12));
  // "dynamic" without an alpha is transformers' dynamic NTK scaling
  hf["rope_scaling"] = {{"type", "dynamic"}, {"factor", 2.0}};
  CHECK(layer_of(hf, 0)["rope"]["scaling"]["factor"] == 2.0);
  hf["use_cla"] = true;
  CHECK_THROWS_WITH(layer_of(hf, 0), doctest::Contains("\"use_cla\": is true: cross-layer"));
}

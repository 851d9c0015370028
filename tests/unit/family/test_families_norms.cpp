// The families whose q, k and v are clamped or normalized their own way (OLMo, OLMoE, Hunyuan, DBRX
// in families_clipped.cpp, Gemma 3n in families_features.cpp) on config.json as the hub ships it
// and on the spellings their configuration classes accept: clip_qkv, the q/k norms' order,
// scope and offset, v_norm, Hunyuan's NTK-alpha base, and what each refuses by name.
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
                       ("attn-fn-" + std::to_string(::getpid()) + "-" + std::to_string(count++));
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

TEST_CASE("families norms: OLMo clamps q, k and v when clip_qkv is set") {
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

TEST_CASE("families norms: OLMoE's norms over all heads; its clip after them is refused") {
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

TEST_CASE("families norms: Hunyuan's q/k norms after rope and its NTK-alpha base") {
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

TEST_CASE("families norms: Gemma 3n's norms without +1, v_norm, windows and shared K/V") {
  json text = {{"model_type", "gemma3n_text"},
               {"hidden_size", 32},
               {"num_attention_heads", 4},
               {"num_key_value_heads", 2},
               {"head_dim", 8},
               {"num_hidden_layers", 10},
               {"num_kv_shared_layers", 4},
               {"sliding_window", 3},
               {"rope_theta", 1e6},
               {"rope_local_base_freq", 1e4},
               {"rope_scaling", {{"rope_type", "linear"}, {"factor", 2.0}}}};
  const json hf = {{"model_type", "gemma3n"}, {"text_config", text}};
  const json sliding = layer_of(hf, 0, true);
  CHECK(sliding["weights_prefix"] == "model.language_model.layers.0.self_attn.");
  CHECK(sliding["qk_norm"]["weight_offset"] == 0);
  CHECK(sliding["v_norm"]["kind"] == "rms");
  CHECK(sliding["v_norm"]["eps"] == 1e-6);
  CHECK(sliding["scale"] == 1.0);
  CHECK(sliding["sliding_window"] == 3);
  CHECK(sliding["rope"]["theta"] == 1e4);  // rope_local_base_freq, no scaling
  CHECK(!sliding["rope"].contains("scaling"));
  CHECK(sliding["input_norm"]["offset"] == 0);
  const json full = layer_of(hf, 4);  // every 5th layer full (no layer_types)
  CHECK(!full.contains("sliding_window"));
  CHECK(full["rope"]["theta"] == 1e6);
  CHECK(full["rope"]["scaling"]["factor"] == 2.0);
  CHECK(layer_of(hf, 5).contains("sliding_window"));
  // layers 6..9 reuse layer 4's (full) or layer 5's (sliding) keys and values: refused
  CHECK_THROWS_WITH(layer_of(hf, 9), doctest::Contains("reuses the keys and values of layer 4"));
  CHECK_THROWS_WITH(layer_of(hf, 6), doctest::Contains("reuses the keys and values of layer 5"));
  // layer_types, when given, decides
  text["layer_types"] = json::array();
  for (int i = 0; i < 10; ++i)
    text["layer_types"].push_back(i == 0 ? "full_attention" : "sliding_attention");
  CHECK(!layer_of(text, 0).contains("sliding_window"));
  CHECK(layer_of(text, 4)["sliding_window"] == 3);
}

TEST_CASE("families norms: DBRX's attn_config: KV heads, rope base and the clamp") {
  json hf = {{"model_type", "dbrx"},
             {"d_model", 6144},
             {"n_heads", 48},
             {"n_layers", 40},
             {"attn_config", {{"clip_qkv", 8}, {"kv_n_heads", 8}, {"rope_theta", 500000}}}};
  const json l = layer_of(hf, 39, true);
  CHECK(l["weights_prefix"] == "transformer.blocks.39.norm_attn_norm.attn.");
  CHECK(l["layout"] == "fused");
  CHECK(l["num_kv_heads"] == 8);
  CHECK(l["head_size"] == 128);
  CHECK(l["clip_qkv"] == 8.0);
  CHECK(l["rope"]["theta"] == 500000.0);
  CHECK(l["qkv_bias"] == false);
  CHECK(l["out_bias"] == false);
  CHECK(l["input_norm"]["weight"] == "transformer.blocks.39.norm_attn_norm.norm_1.weight");
  CHECK(!l["input_norm"].contains("bias"));
  // DbrxAttentionConfig's defaults: one KV head, base 10000, no clamp
  hf.erase("attn_config");
  const json d = layer_of(hf, 0);
  CHECK(d["num_kv_heads"] == 1);
  CHECK(d["rope"]["theta"] == 10000.0);
  CHECK(!d.contains("clip_qkv"));
  hf["attn_config"] = {{"kv_n_heads", 5}};
  CHECK_THROWS_WITH(layer_of(hf, 0), doctest::Contains("\"attn_config.kv_n_heads\""));
}

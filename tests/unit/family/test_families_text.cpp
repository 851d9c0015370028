// The rows of families_text.cpp and families_towers.cpp on config.json as the hub ships it
// (tests/fixtures/model_configs/) and on the spellings their configuration classes accept
// (class defaults, older keys, the rules they share: a rope that only some layers or settings
// have, windows that an enable key or a per-layer list turns on, a wrapper whose nested
// model_type decides).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "attn/error.h"
#include "attn/model_folder.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json fixture(const std::string& name) {
  std::ifstream in(std::string(ATTN_SOURCE_DIR) + "/tests/fixtures/model_configs/" + name +
                   ".json");
  return json::parse(in);
}

// A folder of this config.json (and an empty weights file): layer n's attn-run config, or
// with `model_type` the one asked for.
json layer_of(const json& hf, std::int64_t n, const std::vector<std::string>& keys = {},
              const std::string& model_type = "") {
  static int count = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("attn-ft-" + std::to_string(::getpid()) + "-" + std::to_string(count++));
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << hf.dump();
  std::ofstream(dir / "model.safetensors") << "";
  json out;
  try {
    out = attn::layer_config(attn::open_model_folder(dir.string(), model_type), n, keys);
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);
  return out;
}

std::string type_of(const json& hf) {
  const fs::path dir = fs::temp_directory_path() / ("attn-ft-type-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << hf.dump();
  std::ofstream(dir / "model.safetensors") << "";
  std::string t;
  try {
    t = attn::open_model_folder(dir.string()).model_type;
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);
  return t;
}

}  // namespace

TEST_CASE("families text: GLM-4 ropes pairs on half the head, GLM-4.5 halves with q/k norms") {
  const json g = layer_of(fixture("glm4"), 39);
  CHECK(g["head_size"] == 128);
  CHECK(g["num_kv_heads"] == 2);
  CHECK(g["rope"]["rotary_dim"] == 64);
  CHECK(g["rope"]["style"] == "interleaved");
  CHECK(g["qkv_bias"] == true);
  CHECK(g["out_bias"] == false);
  CHECK(!g.contains("qk_norm"));
  // Glm4Config's defaults: head_dim 128 whatever hidden_size says, biases on, factor 0.5.
  const json d = layer_of({{"model_type", "glm4"},
                           {"hidden_size", 32},
                           {"num_attention_heads", 2},
                           {"num_hidden_layers", 1}},
                          0);
  CHECK(d["head_size"] == 128);
  CHECK(d["rope"]["rotary_dim"] == 64);
  CHECK(d["qkv_bias"] == true);

  const json m = layer_of(fixture("glm4_moe"), 91);
  CHECK(m["num_heads"] == 96);
  CHECK(m["num_kv_heads"] == 8);
  CHECK(m["head_size"] == 128);  // not 5120 / 96
  CHECK(m["rope"]["rotary_dim"] == 64);
  CHECK(m["rope"]["style"] == "half");
  CHECK(m["rope"]["theta"] == 1000000.0);
  CHECK(m["qk_norm"]["scope"] == "head");
  CHECK(m["qk_norm"]["eps"] == 1e-5);
  CHECK(m["qkv_bias"] == true);
  CHECK(m["out_bias"] == false);
  // GLM-4.5-Air: use_qk_norm false; no head_dim: C / H.
  const json air = layer_of({{"model_type", "glm4_moe"},
                             {"hidden_size", 64},
                             {"num_attention_heads", 4},
                             {"num_key_value_heads", 2},
                             {"num_hidden_layers", 1},
                             {"use_qk_norm", false}},
                            0);
  CHECK(!air.contains("qk_norm"));
  CHECK(air["head_size"] == 16);
  CHECK(air["qkv_bias"] == false);
}

TEST_CASE("families text: EXAONE 4's sliding layers rope, its global ones are NoPE") {
  const json hf = fixture("exaone4");
  const json s = layer_of(hf, 62);
  CHECK(s["sliding_window"] == 4096);
  CHECK(s["rope"]["theta"] == 1000000.0);
  CHECK(s["rope"]["scaling"]["rope_type"] == "llama3");
  CHECK(s["qk_norm"]["scope"] == "head");
  const json f = layer_of(hf, 63);
  CHECK(!f.contains("sliding_window"));
  CHECK(!f.contains("rope"));
  CHECK(f["qk_norm"]["eps"] == 1e-5);
  // No layer_types: sliding_window_pattern's period.
  json p = {{"model_type", "exaone4"},    {"hidden_size", 32},      {"num_attention_heads", 4},
            {"num_key_value_heads", 4},   {"num_hidden_layers", 4}, {"sliding_window", 8},
            {"sliding_window_pattern", 2}};
  // Exaone4Config's 32 KV heads when config.json leaves them out.
  CHECK_THROWS_WITH(layer_of({{"model_type", "exaone4"},
                              {"hidden_size", 32},
                              {"num_attention_heads", 4},
                              {"num_hidden_layers", 1}},
                             0),
                    doctest::Contains("found 32"));
  CHECK(layer_of(p, 0)["sliding_window"] == 8);
  CHECK(!layer_of(p, 1).contains("rope"));
  // EXAONE-4.0-1.2B's kind: no window, every layer full with rope.
  p["sliding_window"] = nullptr;
  CHECK(!layer_of(p, 0).contains("sliding_window"));
  CHECK(layer_of(p, 1).contains("rope"));
  // A string pattern needs layer_types (Exaone4Config's own rule takes an integer).
  p["sliding_window"] = 8;
  p["sliding_window_pattern"] = "LG";
  CHECK_THROWS_WITH(layer_of(p, 0), doctest::Contains("\"sliding_window_pattern\": expected an "
                                                      "integer"));
}

TEST_CASE("families text: ERNIE 4.5, Seed-OSS and Apertus") {
  const json e = layer_of(fixture("ernie4_5"), 17);
  CHECK(e["head_size"] == 128);  // not 1024 / 16
  CHECK(e["rope"]["style"] == "interleaved");
  CHECK(e["rope"]["theta"] == 500000.0);
  CHECK(e["qkv_bias"] == false);
  CHECK(e["out_bias"] == false);
  // Ernie4_5_MoeConfig has no head_dim: C / H; use_bias on all four projections.
  const json moe = layer_of({{"model_type", "ernie4_5_moe"},
                             {"hidden_size", 2560},
                             {"num_hidden_layers", 2},
                             {"use_bias", true}},
                            1);
  CHECK(moe["head_size"] == 128);
  CHECK(moe["num_heads"] == 20);
  CHECK(moe["num_kv_heads"] == 4);
  CHECK(moe["out_bias"] == true);

  const json s = layer_of(fixture("seed_oss"), 63);
  CHECK(s["num_heads"] == 80);
  CHECK(s["num_kv_heads"] == 8);
  CHECK(s["head_size"] == 128);
  CHECK(s["qkv_bias"] == true);
  CHECK(s["out_bias"] == false);
  CHECK(s["rope"]["theta"] == 10000000.0);
  CHECK(!s["rope"].contains("scaling"));  // rope_type "default"

  const json a = layer_of(fixture("apertus"), 31);
  CHECK(a["qk_norm"]["scope"] == "head");
  CHECK(a["rope"]["theta"] == 12000000.0);
  CHECK(a["rope"]["scaling"]["rope_type"] == "llama3");
  // ApertusConfig's llama3 rope when config.json has none; null is no scaling.
  json bare = {{"model_type", "apertus"},
               {"hidden_size", 32},
               {"num_attention_heads", 4},
               {"num_hidden_layers", 1}};
  CHECK(layer_of(bare, 0)["rope"]["scaling"]["original_max_position_embeddings"] == 8192);
  CHECK(layer_of(bare, 0)["rope"]["theta"] == 12000000.0);
  bare["rope_scaling"] = nullptr;
  CHECK(!layer_of(bare, 0)["rope"].contains("scaling"));
}

TEST_CASE("families text: Qwen2-MoE's and Qwen3-MoE's windows and biases") {
  json q2 = fixture("qwen2_moe");
  CHECK(layer_of(q2, 0)["qkv_bias"] == true);
  CHECK(layer_of(q2, 0)["out_bias"] == false);
  CHECK(!layer_of(q2, 0).contains("sliding_window"));  // use_sliding_window false
  q2["use_sliding_window"] = true;
  CHECK(layer_of(q2, 0)["sliding_window"] == 32768);   // even, below max_window_layers 21
  CHECK(!layer_of(q2, 1).contains("sliding_window"));  // odd
  CHECK(layer_of(q2, 20)["sliding_window"] == 32768);
  CHECK(!layer_of(q2, 22).contains("sliding_window"));  // from max_window_layers on
  q2["qkv_bias"] = false;
  CHECK(layer_of(q2, 0)["qkv_bias"] == false);

  json q3 = fixture("qwen3_moe");
  const json l = layer_of(q3, 47);
  CHECK(l["head_size"] == 128);  // not 2048 / 32
  CHECK(l["num_kv_heads"] == 4);
  CHECK(l["qk_norm"]["scope"] == "head");
  CHECK(!l.contains("sliding_window"));
  q3["use_sliding_window"] = true;
  q3["sliding_window"] = 4096;
  CHECK(layer_of(q3, 0)["sliding_window"] == 4096);  // every layer
  CHECK(layer_of(q3, 47)["sliding_window"] == 4096);
}

TEST_CASE("families text: OLMo 3's sliding layers rope without the full layers' scaling") {
  const json hf = fixture("olmo3");
  const json s = layer_of(hf, 0);
  CHECK(s["sliding_window"] == 4096);
  CHECK(s["rope"]["theta"] == 500000.0);
  CHECK(!s["rope"].contains("scaling"));
  CHECK(s["qk_norm"]["scope"] == "all");
  const json f = layer_of(hf, 3);
  CHECK(!f.contains("sliding_window"));
  CHECK(f["rope"]["scaling"]["rope_type"] == "yarn");
  // Without layer_types: every 4th layer full.
  json bare = {{"model_type", "olmo3"},
               {"hidden_size", 32},
               {"num_attention_heads", 4},
               {"num_hidden_layers", 8}};
  CHECK(layer_of(bare, 6)["sliding_window"] == 4096);
  CHECK(!layer_of(bare, 7).contains("sliding_window"));
}

TEST_CASE("families text: GPT-Neo's global and local layers, no 1/sqrt(D)") {
  json hf = fixture("gpt_neo");
  const json g = layer_of(hf, 10);
  CHECK(g["weights_prefix"] == "transformer.h.10.attn.attention.");
  CHECK(g["scale"] == 1.0);
  CHECK(g["qkv_bias"] == false);
  CHECK(g["out_bias"] == true);
  CHECK(!g.contains("sliding_window"));
  CHECK(!g.contains("rope"));
  CHECK(layer_of(hf, 11)["sliding_window"] == 256);
  // attention_types' runs alone.
  hf.erase("attention_layers");
  hf["attention_types"] = {{{"local"}, 2}, {{"global", "local"}, 5}};
  CHECK(layer_of(hf, 1)["sliding_window"] == 256);
  CHECK(!layer_of(hf, 2).contains("sliding_window"));
  CHECK(layer_of(hf, 11)["sliding_window"] == 256);
  // Both present must agree; runs must cover the layers; names are global or local.
  json bad = hf;
  bad["attention_layers"] = json::array();
  for (int i = 0; i < 12; ++i) bad["attention_layers"].push_back("global");
  CHECK_THROWS_WITH(layer_of(bad, 0),
                    doctest::Contains("\"attention_layers\": disagrees with attention_types"));
  bad = hf;
  bad["attention_types"] = {{{"global", "local"}, 5}};
  CHECK_THROWS_WITH(layer_of(bad, 0),
                    doctest::Contains("\"attention_types\": expands to 10 layers, "
                                      "expected one per layer (12)"));
  bad["attention_types"] = {{{"global", "sparse"}, 6}};
  CHECK_THROWS_WITH(
      layer_of(bad, 0),
      doctest::Contains("\"attention_layers[1]\": unknown attention type \"sparse\""));
  bad["attention_types"] = {{"local", 12}};
  CHECK_THROWS_WITH(layer_of(bad, 0), doctest::Contains("\"attention_types\": expected a list of "
                                                        "runs [[names...], count]"));
}

TEST_CASE("families towers: ESM-2's rotary encoder, DINOv2 and SigLIP's towers") {
  json esm = fixture("esm2");
  const json e = layer_of(esm, 5);
  CHECK(e["layout"] == "bert");
  CHECK(e["attention"] == "multi");
  CHECK(e["weights_prefix"] == "esm.encoder.layer.5.attention.");
  CHECK(e["rope"]["theta"] == 10000.0);
  CHECK(e["rope"]["rotary_dim"] == 16);
  CHECK(e["rope"]["style"] == "half");
  CHECK(e["qkv_bias"] == true);
  esm["position_embedding_type"] = "absolute";  // ESM-1b: positions outside the attention
  CHECK(!layer_of(esm, 0).contains("rope"));
  esm["position_embedding_type"] = "relative_key";
  CHECK_THROWS_WITH(layer_of(esm, 0), doctest::Contains("\"position_embedding_type\": "
                                                        "\"relative_key\" is not supported"));
  esm.erase("position_embedding_type");  // EsmConfig's default: absolute
  CHECK(!layer_of(esm, 0).contains("rope"));
  esm["is_decoder"] = true;
  CHECK(layer_of(esm, 0)["attention"] == "causal");

  const json d = layer_of(fixture("dinov2"), 11);
  CHECK(d["layout"] == "bert");
  CHECK(d["weights_rename"]["attention."] == "self.");
  CHECK(d["attention"] == "multi");
  CHECK(d["num_heads"] == 6);
  CHECK(d["weights_prefix"] == "dinov2.encoder.layer.11.attention.");
  CHECK(layer_of(fixture("dinov2"), 0,
                 {"encoder.layer.0.attention.attention.query.weight"})["weights_prefix"] ==
        "encoder.layer.0.attention.");

  const json sig = fixture("siglip");
  CHECK(type_of(sig) == "siglip_text_model");
  const json t = layer_of(sig, 11);
  CHECK(t["attention"] == "multi");  // bidirectional text tower
  CHECK(t["weights_prefix"] == "text_model.encoder.layers.11.self_attn.");
  const json v = layer_of(sig, 3, {}, "siglip_vision_model");
  CHECK(v["weights_prefix"] == "vision_model.encoder.layers.3.self_attn.");
  CHECK(v["out_bias"] == true);
}

TEST_CASE("families text: Mistral 3 nests a mistral text model; another text model is refused") {
  json hf = fixture("mistral3");
  CHECK(type_of(hf) == "mistral");
  const json l = layer_of(hf, 39, {"model.language_model.layers.39.self_attn.q_proj.weight"});
  CHECK(l["weights_prefix"] == "model.language_model.layers.39.self_attn.");
  CHECK(l["head_size"] == 128);
  CHECK(l["num_kv_heads"] == 8);
  CHECK(l["rope"]["theta"] == 1000000000.0);
  CHECK(!l.contains("sliding_window"));
  CHECK(layer_of(hf, 0,
                 {"language_model.model.layers.0.self_attn.q_proj.weight"})["weights_prefix"] ==
        "language_model.model.layers.0.self_attn.");
  hf["text_config"].erase("model_type");  // Mistral3Config's default text model: mistral
  CHECK(type_of(hf) == "mistral");
  hf["text_config"]["model_type"] = "llama";  // not the mistral row's: no row holds it
  CHECK_THROWS_WITH(type_of(hf), doctest::Contains("model_type \"mistral3\" is not supported"));
}

TEST_CASE("families text: Persimmon's per-head query_key_value and q/k LayerNorms with biases") {
  const json p = layer_of(fixture("persimmon"), 35);
  CHECK(p["layout"] == "neox");
  CHECK(p["weights_prefix"] == "model.layers.35.self_attn.");
  CHECK(p["head_size"] == 64);
  CHECK(p["qkv_bias"] == true);
  CHECK(p["out_bias"] == true);
  CHECK(p["rope"]["theta"] == 25000.0);
  CHECK(p["rope"]["rotary_dim"] == 32);
  CHECK(p["qk_norm"]["kind"] == "layer");
  CHECK(p["qk_norm"]["bias"] == true);
  CHECK(p["qk_norm"]["eps"] == 1e-5);
  // PersimmonConfig's defaults: qk_layernorm on, rope_theta 25000, half the head rotated.
  json bare = {{"model_type", "persimmon"},
               {"hidden_size", 32},
               {"num_attention_heads", 4},
               {"num_hidden_layers", 1}};
  CHECK(layer_of(bare, 0)["qk_norm"]["kind"] == "layer");
  CHECK(layer_of(bare, 0)["rope"]["theta"] == 25000.0);
  CHECK(layer_of(bare, 0)["rope"]["rotary_dim"] == 4);
  bare["qk_layernorm"] = false;
  CHECK(!layer_of(bare, 0).contains("qk_norm"));
}

TEST_CASE("families text: Phi-MoE's longrope takes its mscale as the attention factor") {
  // Phi-3.5-MoE's config.json (its factor lists shortened to the head's 64 pairs).
  json hf = fixture("phimoe");
  const json l = layer_of(hf, 31);
  CHECK(l["head_size"] == 128);
  CHECK(l["num_kv_heads"] == 8);
  CHECK(l["qkv_bias"] == true);
  CHECK(l["out_bias"] == true);
  CHECK(l["sliding_window"] == 131072);
  CHECK(l["rope"]["scaling"]["attention_factor"] == 1.243163121016122);
  CHECK(!l["rope"]["scaling"].contains("short_mscale"));
  hf["rope_scaling"]["long_mscale"] = 1.5;
  CHECK_THROWS_WITH(layer_of(hf, 0), doctest::Contains("\"rope_scaling\": short_mscale and "
                                                       "long_mscale differ"));
  hf["rope_scaling"].erase("long_mscale");
  CHECK_THROWS_WITH(layer_of(hf, 0), doctest::Contains("expected long_mscale"));
  // No rope_scaling: PhimoeConfig's rope_theta 1e6, no factor; no window.
  const json bare = layer_of({{"model_type", "phimoe"},
                              {"hidden_size", 32},
                              {"num_attention_heads", 4},
                              {"num_key_value_heads", 2},
                              {"num_hidden_layers", 1}},
                             0);
  CHECK(bare["rope"]["theta"] == 1000000.0);
  CHECK(!bare["rope"].contains("scaling"));
  CHECK(!bare.contains("sliding_window"));
}

TEST_CASE(
    "deberta-v2: DeBERTa-v3's config.json as disentangled, the table under the model's root") {
  const json v3 = {{"model_type", "deberta-v2"},    {"hidden_size", 32},
                   {"num_attention_heads", 4},      {"num_hidden_layers", 2},
                   {"max_position_embeddings", 64}, {"relative_attention", true},
                   {"position_buckets", 8},         {"max_relative_positions", -1},
                   {"norm_rel_ebd", "layer_norm"},  {"share_att_key", true},
                   {"pos_att_type", "p2c|c2p"},     {"layer_norm_eps", 1e-7}};
  const json l = layer_of(v3, 1);
  CHECK(l["attention"] == "multi");
  CHECK(l["weights_prefix"] == "deberta.encoder.layer.1.attention.");
  CHECK(l["weights_rename"]["self.query_proj."] == "q_proj.");
  CHECK(l["mask_padded_queries"] == true);  // get_attention_mask: mask[i] * mask[j]
  const json& d = l["disentangled"];
  CHECK(d["pos_att_type"] == "p2c|c2p");
  CHECK(d["position_buckets"] == 8);
  CHECK(d["max_relative_positions"] == 64);  // -1: max_position_embeddings
  CHECK(d["share_att_key"] == true);
  CHECK(d["table"] == "deberta.encoder.rel_embeddings.weight");
  CHECK(d["norm_weight"] == "deberta.encoder.LayerNorm.weight");
  CHECK(d["norm_bias"] == "deberta.encoder.LayerNorm.bias");
  CHECK(d["eps"] == 1e-7);
  // A DebertaV2Model saved alone: its keys have no "deberta." root.
  const json bare = layer_of(v3, 0, {"encoder.layer.0.attention.self.query_proj.weight"});
  CHECK(bare["disentangled"]["table"] == "encoder.rel_embeddings.weight");
  // Without relative_attention (DebertaV2Config's default) or with no term: content scores only.
  json plain = v3;
  plain.erase("relative_attention");
  CHECK_FALSE(layer_of(plain, 0).contains("disentangled"));
  plain = v3;
  plain["pos_att_type"] = json::array();
  CHECK_FALSE(layer_of(plain, 0).contains("disentangled"));
  // DeBERTa-v2's kind: no buckets, own projections, a list of terms, no table norm.
  json v2 = v3;
  v2["norm_rel_ebd"] = "none";
  v2["max_relative_positions"] = 128;
  v2["position_buckets"] = -1;
  v2["share_att_key"] = false;
  v2["pos_att_type"] = {"c2p", "p2c"};
  const json d2 = layer_of(v2, 0)["disentangled"];
  CHECK_FALSE(d2.contains("norm_weight"));
  CHECK(d2["max_relative_positions"] == 128);
  CHECK(d2["share_att_key"] == false);
  CHECK(d2["pos_att_type"] == json{"c2p", "p2c"});
}

TEST_CASE("families vl: Qwen2.5-VL's and Qwen3-VL's text towers, flat or nested, mrope sections") {
  // Qwen2.5-VL-7B-Instruct as released: the text keys at the top, layers under model.layers.
  json flat = {{"model_type", "qwen2_5_vl"},
               {"hidden_size", 3584},
               {"num_attention_heads", 28},
               {"num_key_value_heads", 4},
               {"num_hidden_layers", 28},
               {"rope_theta", 1000000.0},
               {"rope_scaling", {{"type", "mrope"}, {"mrope_section", {16, 24, 24}}}},
               {"vision_config", {{"depth", 32}}}};
  CHECK(type_of(flat) == "qwen2_5_vl");
  const json l = layer_of(flat, 3, {"model.layers.3.self_attn.q_proj.weight"});
  CHECK(l["weights_prefix"] == "model.layers.3.self_attn.");
  CHECK(l["qkv_bias"] == true);
  CHECK(l["out_bias"] == false);
  CHECK(l["rope"]["theta"] == 1000000.0);
  CHECK(!l["rope"].contains("scaling"));  // "mrope" is no rope_scaling type: its sections are
  CHECK(l["rope"]["mrope_section"] == json{16, 24, 24});
  CHECK(l["rope"]["mrope_interleaved"] == false);  // apply_multimodal_rotary_pos_emb's chunks
  CHECK(!l.contains("sliding_window"));
  // saved by transformers 4.52 on: text_config nested, model.language_model.layers
  json nested = {{"model_type", "qwen2_5_vl"}, {"text_config", flat}};
  nested["text_config"]["model_type"] = "qwen2_5_vl_text";
  nested["text_config"].erase("vision_config");
  CHECK(type_of(nested) == "qwen2_5_vl_text");
  CHECK(layer_of(nested, 3)["weights_prefix"] == "model.language_model.layers.3.self_attn.");
  nested["text_config"]["use_sliding_window"] = true;
  nested["text_config"]["sliding_window"] = 4;
  nested["text_config"]["max_window_layers"] = 2;
  CHECK(!layer_of(nested, 1).contains("sliding_window"));
  CHECK(layer_of(nested, 2)["sliding_window"] == 4);
  // Qwen3-VL-8B-Instruct: nested, q/k norms per head, interleaved mrope
  const json qwen3 = {{"model_type", "qwen3_vl"},
                      {"text_config",
                       {{"model_type", "qwen3_vl_text"},
                        {"hidden_size", 4096},
                        {"num_attention_heads", 32},
                        {"num_key_value_heads", 8},
                        {"head_dim", 128},
                        {"num_hidden_layers", 36},
                        {"rope_theta", 5000000},
                        {"rope_scaling",
                         {{"mrope_interleaved", true},
                          {"mrope_section", {24, 20, 20}},
                          {"rope_type", "default"}}}}}};
  CHECK(type_of(qwen3) == "qwen3_vl_text");
  const json q = layer_of(qwen3, 35);
  CHECK(q["weights_prefix"] == "model.language_model.layers.35.self_attn.");
  CHECK(q["qk_norm"]["scope"] == "head");
  CHECK(q["qkv_bias"] == false);
  CHECK(q["rope"]["theta"] == 5000000.0);
  CHECK(!q["rope"].contains("scaling"));
  CHECK(q["rope"]["mrope_section"] == json{24, 20, 20});
  CHECK(q["rope"]["mrope_interleaved"] == true);
  // Qwen3VLTextRotaryEmbedding: interleaved whatever mrope_interleaved says, [24, 20, 20] when
  // the file gives no sections; v5's rope_parameters carry them too.
  json q3 = qwen3;
  q3["text_config"]["rope_scaling"] = {{"rope_type", "default"}};
  CHECK(layer_of(q3, 0)["rope"]["mrope_section"] == json{24, 20, 20});
  CHECK(layer_of(q3, 0)["rope"]["mrope_interleaved"] == true);
  q3["text_config"].erase("rope_scaling");
  q3["text_config"]["rope_parameters"] = {
      {"rope_type", "default"}, {"rope_theta", 1e6}, {"mrope_section", {32, 16, 16}}};
  CHECK(layer_of(q3, 0)["rope"]["mrope_section"] == json{32, 16, 16});
  // Qwen2.5-VL's code reads the file's sections: none given, no mrope (1-D positions only).
  json bare = flat;
  bare.erase("rope_scaling");
  CHECK(!layer_of(bare, 0)["rope"].contains("mrope_section"));
  bare["rope_scaling"] = {{"type", "mrope"}, {"mrope_section", {16, 24}}};
  try {
    layer_of(bare, 0);
    FAIL("no error thrown");
  } catch (const attn::Error& e) {
    CHECK(e.code() == attn::Exit::config);
    CHECK(std::string(e.what()).find("rope_scaling.mrope_section") != std::string::npos);
  }
}

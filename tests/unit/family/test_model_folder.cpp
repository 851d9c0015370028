// Model folders: config.json as the hub publishes it (tests/fixtures/
// model_configs/, each family's real field spellings) mapped to attn-run config
// keys per layer, and the folder's weights found beside it.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "attn/error.h"
#include "attn/model_folder.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A model folder in a temporary directory: fixture config.json + an (empty)
// weights file of the given name.
struct Folder {
  fs::path dir;
  Folder(const std::string& config, const std::string& weights = "model.safetensors") {
    dir = fs::temp_directory_path() / ("attn-mf-" + config + "-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fs::copy_file(
        std::string(ATTN_SOURCE_DIR) + "/tests/fixtures/model_configs/" + config + ".json",
        dir / "config.json", fs::copy_options::overwrite_existing);
    if (!weights.empty()) std::ofstream(dir / weights) << "";
  }
  ~Folder() { fs::remove_all(dir); }
  json layer(std::int64_t n, const std::vector<std::string>& keys = {}) const {
    return attn::layer_config(attn::open_model_folder(dir.string()), n, keys);
  }
};

}  // namespace

TEST_CASE("model folder: Llama 3 (GQA, llama3 rope scaling) and transformers v5 rope_parameters") {
  const json c = Folder("llama3").layer(5);
  CHECK(c["attention"] == "causal");
  CHECK(c["layout"] == "proj");
  CHECK(c["hidden_size"] == 4096);
  CHECK(c["num_heads"] == 32);
  CHECK(c["num_kv_heads"] == 8);
  CHECK(c["head_size"] == 128);
  CHECK(c["qkv_bias"] == false);
  CHECK(c["weights_prefix"] == "model.layers.5.self_attn.");
  CHECK(c["rope"]["theta"] == 500000.0);
  CHECK(c["rope"]["rotary_dim"] == 128);
  CHECK(c["rope"]["scaling"]["rope_type"] == "llama3");
  CHECK(c["rope"]["scaling"]["original_max_position_embeddings"] == 8192);
  CHECK(!c.contains("sliding_window"));

  const json v5 = Folder("llama3_v5").layer(0);
  CHECK(v5["rope"]["theta"] == 500000.0);
  CHECK(v5["rope"]["scaling"]["factor"] == 32.0);
  CHECK(!v5["rope"]["scaling"].contains("rope_theta"));
  CHECK(v5["head_size"] == 64);
}

TEST_CASE("model folder: sliding windows per family pattern") {
  CHECK(Folder("mistral").layer(3)["sliding_window"] == 4096);
  // Qwen2: use_sliding_window false means no window on any layer.
  CHECK(!Folder("qwen2").layer(27).contains("sliding_window"));
  // ... and true slides from max_window_layers on.
  const Folder qw("qwen2_window");
  CHECK(!qw.layer(20).contains("sliding_window"));
  CHECK(qw.layer(21)["sliding_window"] == 4096);
  CHECK(qw.layer(5)["out_bias"] == false);
  CHECK(qw.layer(5)["qkv_bias"] == true);
  // Gemma 2: even layers slide, odd ones are global; softcap and query_pre_attn_scalar.
  const Folder g2("gemma2");
  CHECK(g2.layer(0)["sliding_window"] == 4096);
  CHECK(!g2.layer(1).contains("sliding_window"));
  CHECK(g2.layer(1)["softcap"] == 50.0);
  CHECK(g2.layer(1)["scale"].get<double>() == doctest::Approx(1.0 / 16.0));
  // gpt-oss: layer_types says which; sinks and yarn.
  const Folder oss("gpt_oss");
  CHECK(oss.layer(0)["sliding_window"] == 128);
  CHECK(!oss.layer(1).contains("sliding_window"));
  CHECK(oss.layer(1)["sinks"] == true);
  CHECK(oss.layer(1)["qkv_bias"] == true);
  CHECK(oss.layer(1)["rope"]["scaling"]["rope_type"] == "yarn");
  CHECK(oss.layer(1)["rope"]["scaling"]["truncate"] == false);
}

TEST_CASE("model folder: Gemma 3's local layers use rope_local_base_freq and no scaling") {
  const Folder g3("gemma3");
  const json local = g3.layer(0), global = g3.layer(5);
  CHECK(local["sliding_window"] == 1024);
  CHECK(local["rope"]["theta"] == 10000.0);
  CHECK(!local["rope"].contains("scaling"));
  CHECK(!global.contains("sliding_window"));
  CHECK(global["rope"]["theta"] == 1000000.0);
  CHECK(global["rope"]["scaling"]["rope_type"] == "linear");
  CHECK(global["qk_norm"]["weight_offset"] == 1);
  CHECK(global["qk_norm"]["scope"] == "head");
  CHECK(global["num_kv_heads"] == 4);
  CHECK(!global.contains("softcap"));  // attn_logit_softcapping: null
  CHECK(g3.layer(11).contains("sliding_window") == false);
  CHECK(g3.layer(12)["sliding_window"] == 1024);
}

TEST_CASE(
    "model folder: Qwen3 and OLMo 2 qk_norm scopes, Phi-3 longrope, GPT-NeoX partial rotary") {
  const json q3 = Folder("qwen3").layer(2);
  CHECK(q3["qk_norm"]["scope"] == "head");
  CHECK(q3["qk_norm"]["eps"] == 1e-6);
  CHECK(q3["head_size"] == 128);
  CHECK(!q3["rope"].contains("scaling"));
  CHECK(Folder("olmo2").layer(0)["qk_norm"]["scope"] == "all");
  const json phi = Folder("phi3").layer(0);
  CHECK(phi["layout"] == "fused");
  CHECK(phi["rope"]["scaling"]["type"] == "longrope");
  CHECK(phi["rope"]["scaling"]["original_max_position_embeddings"] == 4096);
  CHECK(phi["rope"]["max_position_embeddings"] == 131072);
  CHECK(phi["rope"]["scaling"]["long_factor"].size() == 48);
  const json neox = Folder("pythia").layer(1);
  CHECK(neox["layout"] == "neox");
  CHECK(neox["rope"]["rotary_dim"] == 16);  // 64 * 0.25
  CHECK(neox["qkv_bias"] == true);
  CHECK(neox["weights_prefix"] == "gpt_neox.layers.1.attention.");
}

TEST_CASE("model folder: Falcon's three architectures, BLOOM and MPT ALiBi") {
  const json f7 = Folder("falcon7b").layer(0);
  CHECK(f7["layout"] == "falcon");
  CHECK(f7["num_kv_heads"] == 1);
  CHECK(f7["head_size"] == 64);
  CHECK(f7.contains("rope"));
  const json f40 = Folder("falcon40b").layer(59);
  CHECK(f40["layout"] == "falcon");
  CHECK(f40["num_kv_heads"] == 8);
  CHECK(f40["num_heads"] == 128);
  const json rw = Folder("falcon_rw").layer(0);
  CHECK(rw["layout"] == "neox");
  CHECK(rw["alibi"] == true);
  CHECK(!rw.contains("rope"));
  CHECK(rw["qkv_bias"] == true);
  const json bloom = Folder("bloom").layer(23);
  CHECK(bloom["alibi"] == true);
  CHECK(bloom["num_heads"] == 16);
  CHECK(bloom["weights_prefix"] == "transformer.h.23.self_attention.");
  const json mpt = Folder("mpt").layer(0);
  CHECK(mpt["alibi"]["max_bias"] == 8.0);
  CHECK(mpt["qkv_bias"] == false);
  CHECK(mpt["layout"] == "fused");
  CHECK(mpt["weights_prefix"] == "transformer.blocks.0.attn.");
}

TEST_CASE("model folder: GPT-2, BERT, RoBERTa, OPT and the prefix the weights really use") {
  const Folder gpt2("gpt2");
  CHECK(gpt2.layer(3)["weights_prefix"] == "h.3.attn.");
  CHECK(gpt2.layer(3, {"transformer.h.3.attn.c_attn.weight"})["weights_prefix"] ==
        "transformer.h.3.attn.");
  CHECK(gpt2.layer(3)["scale"].get<double>() == doctest::Approx(0.125));
  const json bert = Folder("bert").layer(0, {"encoder.layer.0.attention.self.query.weight"});
  CHECK(bert["attention"] == "multi");
  CHECK(bert["layout"] == "bert");
  CHECK(bert["weights_prefix"] == "encoder.layer.0.attention.");
  CHECK(Folder("roberta").layer(1)["weights_prefix"] == "roberta.encoder.layer.1.attention.");
  const json opt = Folder("opt").layer(11);
  CHECK(opt["weights_prefix"] == "model.decoder.layers.11.self_attn.");
  CHECK(!opt.contains("rope"));
}

TEST_CASE("model folder: unknown model_type, missing pieces and a layer out of range") {
  try {
    Folder("unknown").layer(0);
    FAIL("no error");
  } catch (const attn::Error& e) {
    CHECK(e.code() == attn::Exit::config);
    const std::string m = e.what();
    CHECK(m.find("\"mamba\"") != std::string::npos);
    CHECK(m.find("llama") != std::string::npos);
    CHECK(m.find("gpt_oss") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(Folder("mistral", "").layer(0), doctest::Contains("no weights"),
                       attn::Error);
  CHECK(Folder("mistral", "model.safetensors.index.json")
            .layer(0)["weights"]
            .get<std::string>()
            .find("model.safetensors.index.json") != std::string::npos);
  try {
    Folder("mistral").layer(32);
    FAIL("no error");
  } catch (const attn::Error& e) {
    CHECK(e.code() == attn::Exit::usage);
    CHECK(std::string(e.what()).find("0..31") != std::string::npos);
  }
  CHECK_THROWS_AS(attn::open_model_folder("/nonexistent-folder"), attn::Error);
  CHECK(attn::is_hf_config(json{{"model_type", "llama"}}));
  CHECK(!attn::is_hf_config(json{{"attention", "causal"}}));
  // The list is the family table's: every row of CONTRACT.md's v2 list is there.
  for (const char* t : {"gpt2", "bert", "roberta", "llama", "mistral", "mixtral", "qwen2", "qwen3",
                        "gemma", "gemma2", "gemma3_text", "phi3", "gpt_neox", "falcon", "bloom",
                        "mpt", "opt", "olmo2", "gpt_oss"}) {
    CAPTURE(t);
    const auto& types = attn::supported_model_types();
    CHECK(std::find(types.begin(), types.end(), t) != types.end());
  }
}

namespace {

// A model folder whose config.json is `hf` (inline), with an empty weights file.
json layer_of(const json& hf, std::int64_t n, const std::vector<std::string>& keys = {}) {
  static int count = 0;
  const fs::path dir = fs::temp_directory_path() / ("attn-mf-inline-" + std::to_string(::getpid()) +
                                                    "-" + std::to_string(count++));
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << hf.dump();
  std::ofstream(dir / "model.safetensors") << "";
  json out;
  try {
    out = attn::layer_config(attn::open_model_folder(dir.string()), n, keys);
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
          {"num_hidden_layers", 4}};
}

}  // namespace

TEST_CASE("model folder: Llama reads no sliding_window; Mistral and Mixtral slide on every layer") {
  json llama = small("llama");
  llama["sliding_window"] = 3;  // LlamaAttention never reads it
  CHECK(!layer_of(llama, 1).contains("sliding_window"));
  json mistral = small("mistral");
  CHECK(layer_of(mistral, 2)["sliding_window"] == 4096);  // MistralConfig's default
  mistral["sliding_window"] = nullptr;                    // Mistral 7B v0.2 on: no window
  CHECK(!layer_of(mistral, 2).contains("sliding_window"));
  json mixtral = small("mixtral");
  mixtral["sliding_window"] = 5;
  CHECK(layer_of(mixtral, 3)["sliding_window"] == 5);
  CHECK(layer_of(mixtral, 3)["rope"]["theta"] == 1e6);  // MixtralConfig's rope_theta
}

TEST_CASE("model folder: keys a config.json leaves out take the configuration class's defaults") {
  // Gemma: head_dim 256, not hidden_size / heads.
  CHECK(layer_of(small("gemma"), 0)["head_size"] == 256);
  // Gemma 2: attn_logit_softcapping 50, query_pre_attn_scalar 256, window 4096 on even layers.
  json g2 = small("gemma2");
  g2["head_dim"] = 8;
  const json l0 = layer_of(g2, 0);
  CHECK(l0["softcap"] == 50.0);
  CHECK(l0["scale"].get<double>() == doctest::Approx(1.0 / 16.0));
  CHECK(l0["sliding_window"] == 4096);
  g2["attn_logit_softcapping"] = nullptr;  // null: no softcap
  CHECK(!layer_of(g2, 0).contains("softcap"));
  // Qwen3: head_dim 128; OLMo 2: rms_norm_eps 1e-5 for its qk_norm.
  CHECK(layer_of(small("qwen3"), 0)["head_size"] == 128);
  CHECK(layer_of(small("olmo2"), 0)["qk_norm"]["eps"] == 1e-5);
  // gpt-oss: GptOssConfig's yarn rope_scaling, 8 KV heads, head_dim 64, window 128.
  json oss_cfg = small("gpt_oss");
  oss_cfg["num_attention_heads"] = 16;  // GptOssConfig's 8 KV heads must divide them
  const json oss = layer_of(oss_cfg, 0);
  CHECK(oss["rope"]["scaling"]["rope_type"] == "yarn");
  CHECK(oss["rope"]["scaling"]["factor"] == 32.0);
  CHECK(oss["num_kv_heads"] == 8);
  CHECK(oss["head_size"] == 64);
  CHECK(oss["sliding_window"] == 128);
  json oss_plain = oss_cfg;
  oss_plain["rope_scaling"] = nullptr;
  CHECK(!layer_of(oss_plain, 1)["rope"].contains("scaling"));
}

TEST_CASE("model folder: MPT's ALiBi is on unless attn_config says false; multi-query attention") {
  json mpt = {{"model_type", "mpt"}, {"d_model", 32}, {"n_heads", 4}, {"n_layers", 2}};
  CHECK(layer_of(mpt, 0)["alibi"]["max_bias"] == 8.0);  // no attn_config: MptAttentionConfig()
  mpt["attn_config"] = {{"alibi_bias_max", 16}, {"softmax_scale", 0.25}};
  CHECK(layer_of(mpt, 1)["alibi"]["max_bias"] == 16.0);
  CHECK(layer_of(mpt, 1)["scale"] == 0.25);
  mpt["attn_config"]["alibi"] = false;
  CHECK(!layer_of(mpt, 1).contains("alibi"));
  mpt["attn_config"]["attn_type"] = "multiquery_attention";
  CHECK(layer_of(mpt, 1)["num_kv_heads"] == 1);
}

TEST_CASE("model folder: Gemma 3 multimodal text_config with only its non-default keys") {
  // As google/gemma-3-4b-it's config.json: the text model's sizes that equal
  // Gemma3TextConfig's defaults are left out.
  const json hf = {{"model_type", "gemma3"},
                   {"architectures", {"Gemma3ForConditionalGeneration"}},
                   {"text_config",
                    {{"hidden_size", 2560},
                     {"model_type", "gemma3_text"},
                     {"num_hidden_layers", 34},
                     {"rope_scaling", {{"factor", 8.0}, {"rope_type", "linear"}}},
                     {"sliding_window", 1024}}},
                   {"vision_config", {{"model_type", "siglip_vision_model"}}}};
  const json local = layer_of(hf, 4, {"language_model.model.layers.4.self_attn.q_proj.weight"});
  CHECK(local["num_heads"] == 8);
  CHECK(local["num_kv_heads"] == 4);
  CHECK(local["head_size"] == 256);
  CHECK(local["scale"].get<double>() == doctest::Approx(1.0 / 16.0));  // query_pre_attn_scalar
  CHECK(local["sliding_window"] == 1024);
  CHECK(local["rope"]["theta"] == 10000.0);
  CHECK(local["weights_prefix"] == "language_model.model.layers.4.self_attn.");
  const json global = layer_of(hf, 5, {"model.language_model.layers.5.self_attn.q_proj.weight"});
  CHECK(!global.contains("sliding_window"));
  CHECK(global["rope"]["theta"] == 1e6);
  CHECK(global["rope"]["scaling"]["factor"] == 8.0);
  CHECK(global["weights_prefix"] == "model.language_model.layers.5.self_attn.");
}

TEST_CASE("model folder: Gemma 3 with transformers v5 rope_parameters per layer type") {
  json hf = small("gemma3_text");
  hf["head_dim"] = 8;
  hf["layer_types"] = {"sliding_attention", "full_attention", "sliding_attention",
                       "full_attention"};
  hf["rope_parameters"] = {
      {"full_attention", {{"rope_type", "linear"}, {"factor", 4.0}, {"rope_theta", 1e6}}},
      {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 20000.0}}}};
  const json local = layer_of(hf, 2), global = layer_of(hf, 3);
  CHECK(local["rope"]["theta"] == 20000.0);  // not rope_local_base_freq's default
  CHECK(!local["rope"].contains("scaling"));
  CHECK(local["sliding_window"] == 4096);
  CHECK(global["rope"]["theta"] == 1e6);
  CHECK(global["rope"]["scaling"]["rope_type"] == "linear");
  CHECK(!global.contains("sliding_window"));
}

TEST_CASE("model folder: Phi-3's early rope_scaling type \"su\" is longrope") {
  // microsoft/Phi-3-mini-128k-instruct's first config.json; Phi3Config renames it.
  json phi = small("phi3");
  phi["max_position_embeddings"] = 131072;
  phi["original_max_position_embeddings"] = 4096;
  phi["rope_scaling"] = {{"type", "su"}, {"long_factor", {1.0, 2.0}}, {"short_factor", {1.0, 1.0}}};
  const json l = layer_of(phi, 0);
  CHECK(l["rope"]["scaling"]["type"] == "longrope");
  CHECK(l["rope"]["scaling"]["original_max_position_embeddings"] == 4096);
}

namespace {

// The error layer_config (or opening the folder) gives for `hf`: its code and line.
attn::Error error_of(const json& hf, std::int64_t n = 0) {
  try {
    layer_of(hf, n);
  } catch (const attn::Error& e) {
    return e;
  }
  FAIL("no error for " << hf.dump());
  return attn::Error(attn::Exit::software, "");
}

void check_refused(json hf, const char* field, const char* found) {
  CAPTURE(hf.dump());
  const attn::Error e = error_of(hf);
  CHECK(e.code() == attn::Exit::config);
  const std::string m = e.what();
  CHECK(m.find("config.json: \"" + std::string(field) + "\"") != std::string::npos);
  CHECK(m.find(found) != std::string::npos);
  CHECK(m.find('\n') == std::string::npos);
}

}  // namespace

TEST_CASE(
    "model folder: values a config.json lies with are refused, naming the field and the file") {
  json l = small("llama");
  l["num_hidden_layers"] = -2;
  check_refused(l, "num_hidden_layers", "expected an integer in 1..16777216, found -2");
  l = small("llama");
  l["rope_theta"] = "10000";
  check_refused(l, "rope_theta", "\"10000\" (a string)");
  l = small("llama");
  l["rope_scaling"] = "linear";
  check_refused(l, "rope_scaling", "expected an object, found \"linear\" (a string)");
  l = small("llama");
  l["rope_scaling"] = {{"rope_type", "banana"}, {"factor", 2.0}};
  check_refused(l, "rope_scaling.rope_type", "unknown rope_scaling type \"banana\"");
  l = small("llama");
  l["num_attention_heads"] = 4.5;
  check_refused(l, "num_attention_heads", "found 4.5");
  l = small("llama");
  l["num_key_value_heads"] = 3;
  check_refused(l, "num_key_value_heads", "a divisor of the 4 attention heads, found 3");
  l = small("llama");
  l["attention_bias"] = "yes";
  check_refused(l, "attention_bias", "expected true or false");
  l = small("mistral");
  l["sliding_window"] = 0;
  check_refused(l, "sliding_window", "expected an integer >= 1, found 0");
  // layer_types: one known entry per layer.
  json g = small("gpt_oss");
  g["num_attention_heads"] = 16;
  g["layer_types"] = {"sliding_attention", "full_attention"};  // 4 layers
  check_refused(g, "layer_types", "one entry per layer (4), found 2");
  g["layer_types"] = {"sliding_attention", "banana_attention", "full_attention", "full_attention"};
  check_refused(g, "layer_types[1]", "unknown layer type \"banana_attention\"");
  // MPT's nested attn_config is checked as well.
  json mpt = {{"model_type", "mpt"},
              {"d_model", 32},
              {"n_heads", 4},
              {"n_layers", 2},
              {"attn_config", {{"alibi_bias_max", "8"}}}};
  check_refused(mpt, "attn_config.alibi_bias_max", "\"8\" (a string)");
}

TEST_CASE("model folder: a config.json that is a device or a folder is named as what it is") {
  const fs::path dir = fs::temp_directory_path() / ("attn-mf-dev-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "model.safetensors") << "";
  fs::create_symlink("/dev/zero", dir / "config.json");
  try {
    attn::open_model_folder(dir.string());
    FAIL("no error");
  } catch (const attn::Error& e) {
    CHECK(e.code() == attn::Exit::no_input);
    CHECK(std::string(e.what()).find("not a regular file (a device") != std::string::npos);
  }
  fs::remove(dir / "config.json");
  fs::create_directories(dir / "config.json");
  CHECK_THROWS_WITH(attn::open_model_folder(dir.string()), doctest::Contains("is a folder"));
  fs::remove_all(dir);
  // --model given a weights file instead of its folder.
  Folder f("llama3");
  CHECK_THROWS_WITH(attn::open_model_folder((f.dir / "model.safetensors").string()),
                    doctest::Contains("not a folder (--model takes a Hugging Face model folder"));
}

TEST_CASE("model folder: the README lists exactly the family table's model_types, in its order") {
  std::ifstream in(std::string(ATTN_SOURCE_DIR) + "/README.md");
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string start = "list equal to it): ", end = "; any other is an error";
  const std::size_t a = readme.find(start), b = readme.find(end, a);
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  std::vector<std::string> listed;
  std::string name;
  for (char ch : readme.substr(a + start.size(), b - a - start.size()) + ",") {
    if (ch == ',') {
      listed.push_back(name);
      name.clear();
    } else if (ch != ' ' && ch != '\n') {
      name += ch;
    }
  }
  CHECK(listed == attn::supported_model_types());
}

// ---- CONTRACT.md v3's decoders (tests/golden/gen/families has their golden folders) ----------

TEST_CASE("model folder: StarCoder (gpt_bigcode) multi_query, and without it the neox layout") {
  const json c = Folder("starcoder").layer(39);
  CHECK(c["layout"] == "fused");
  CHECK(c["num_heads"] == 48);
  CHECK(c["num_kv_heads"] == 1);
  CHECK(c["head_size"] == 128);
  CHECK(c["weights_rename"] == json{{"c_attn.", "Wqkv."}, {"c_proj.", "Wo."}});
  CHECK(c["weights_prefix"] == "transformer.h.39.attn.");
  CHECK(c["qkv_bias"] == true);
  CHECK(c["scale"].get<double>() == doctest::Approx(1.0 / std::sqrt(128.0)));
  CHECK(!c.contains("rope"));  // learned positions (wpe), outside the layer
  json mha = small("gpt_bigcode");
  mha["multi_query"] = false;
  mha["scale_attn_weights"] = false;
  const json m = layer_of(mha, 0);
  CHECK(m["layout"] == "neox");
  CHECK(!m.contains("num_kv_heads"));
  CHECK(m["weights_rename"] == json{{"c_attn.", "query_key_value."}, {"c_proj.", "dense."}});
  CHECK(m["scale"] == 1.0);
}

TEST_CASE("model folder: StarCoder2's use_bias and window on every layer") {
  const json s = Folder("starcoder2").layer(0);
  CHECK(s["num_kv_heads"] == 2);
  CHECK(s["qkv_bias"] == true);  // use_bias
  CHECK(s["out_bias"] == true);
  CHECK(s["sliding_window"] == 4096);
  CHECK(s["rope"]["theta"].get<double>() == doctest::Approx(999999.4420358813));
  json s_small = small("starcoder2");  // Starcoder2Config: num_key_value_heads 2, no window
  CHECK(layer_of(s_small, 0)["num_kv_heads"] == 2);
  CHECK(!layer_of(s_small, 0).contains("sliding_window"));
}

TEST_CASE("model folder: Granite's attention_multiplier is the scale") {
  const json g = Folder("granite3").layer(3);
  CHECK(g["scale"] == 0.015625);  // attention_multiplier, not 1/sqrt(64)
  CHECK(g["num_kv_heads"] == 8);
  CHECK(g["qkv_bias"] == false);
  CHECK(layer_of(small("granite"), 0)["scale"] == 1.0);  // GraniteConfig: 1.0
}

TEST_CASE("model folder: phi-2's partial rotary and dense; qk_layernorm as qk_norm kind layer") {
  const json p = Folder("phi2").layer(31);
  CHECK(p["rope"]["rotary_dim"] == 32);  // partial_rotary_factor 0.4 of 80
  CHECK(p["weights_rename"] ==
        json{{"dense.", "o_proj."}, {"q_layernorm.", "q_norm."}, {"k_layernorm.", "k_norm."}});
  CHECK(!p.contains("qk_norm"));  // qk_layernorm false
  CHECK(p["qkv_bias"] == true);
  CHECK(p["out_bias"] == true);
  CHECK(layer_of(small("phi"), 0)["rope"]["rotary_dim"] == 4);  // PhiConfig: 0.5
  // qk_layernorm: nn.LayerNorm(head_dim) with a bias on q and k, eps layer_norm_eps.
  json qk = small("phi");
  qk["qk_layernorm"] = true;
  qk["layer_norm_eps"] = 1e-6;
  const json n = layer_of(qk, 0)["qk_norm"];
  CHECK(n["kind"] == "layer");
  CHECK(n["bias"] == true);
  CHECK(n["scope"] == "head");
  CHECK(n["eps"] == 1e-6);
  qk["qk_layernorm"] = "yes";
  CHECK_THROWS_WITH_AS(layer_of(qk, 0), doctest::Contains("\"qk_layernorm\""), attn::Error);
}

TEST_CASE("model folder: GPT-J's rotary_dim, interleaved") {
  const json j = Folder("gptj").layer(27);
  CHECK(j["rope"]["rotary_dim"] == 64);
  CHECK(j["rope"]["style"] == "interleaved");
  CHECK(j["head_size"] == 256);
  CHECK(j["qkv_bias"] == false);
  CHECK(j["weights_prefix"] == "transformer.h.27.attn.");
  json jn = {{"model_type", "gptj"},
             {"n_embd", 32},
             {"n_head", 2},
             {"n_layer", 1},
             {"rotary_dim", nullptr}};
  CHECK(layer_of(jn, 0)["rope"]["rotary_dim"] == 16);  // null: the whole head
}

TEST_CASE("model folder: InternLM2's wqkv per KV group and dynamic rope") {
  const json i = Folder("internlm2").layer(1);
  CHECK(i["layout"] == "falcon");  // wqkv per KV group [q..., k, v]
  CHECK(i["weights_rename"] == json{{"wqkv.", "query_key_value."}, {"wo.", "dense."}});
  CHECK(i["weights_prefix"] == "model.layers.1.attention.");
  CHECK(i["num_kv_heads"] == 8);
  CHECK(i["qkv_bias"] == false);
  CHECK(i["rope"]["scaling"]["type"] == "dynamic");
  CHECK(i["rope"]["max_position_embeddings"] == 32768);
  CHECK(layer_of(small("internlm2"), 0)["qkv_bias"] == true);  // InternLM2Config: bias True
}

TEST_CASE("model folder: SmolLM3's no-rope layers, and its windows on them") {
  const Folder f("smollm3");
  CHECK(f.layer(0)["rope"]["theta"] == 5000000.0);
  CHECK(!f.layer(3).contains("rope"));  // no_rope_layers[3] == 0
  CHECK(f.layer(34).contains("rope"));
  CHECK(!f.layer(35).contains("rope"));
  CHECK(f.layer(0)["num_kv_heads"] == 4);
  json s = small("smollm3");  // no no_rope_layers: every 4th layer (no_rope_layer_interval)
  s["no_rope_layer_interval"] = 2;
  s["use_sliding_window"] = true;
  s["sliding_window"] = 16;
  CHECK(layer_of(s, 0).contains("rope"));
  CHECK(!layer_of(s, 0).contains("sliding_window"));
  CHECK(!layer_of(s, 1).contains("rope"));
  CHECK(layer_of(s, 1)["sliding_window"] == 16);  // the no-rope layers slide
  json eight = small("smollm3");
  eight["num_attention_heads"] = 8;
  CHECK(layer_of(eight, 0)["num_kv_heads"] == 4);  // SmolLM3Config: 4
  CHECK(!layer_of(small("smollm3"), 3).contains("rope"));
  json bad = small("smollm3");
  bad["no_rope_layers"] = {1, 1};
  CHECK_THROWS_WITH_AS(layer_of(bad, 0), doctest::Contains("\"no_rope_layers\""), attn::Error);
}

// ---- CONTRACT.md v3's encoders: the hub's config.json spellings -------------------

TEST_CASE("model folder: XLM-RoBERTa and ELECTRA are BERT's attention under their own prefixes") {
  const json x = Folder("xlm_roberta").layer(11);
  CHECK(x["attention"] == "multi");
  CHECK(x["layout"] == "bert");
  CHECK(x["hidden_size"] == 768);
  CHECK(x["num_heads"] == 12);
  CHECK(x["qkv_bias"] == true);
  CHECK(x["out_bias"] == true);
  CHECK(x["weights_prefix"] == "roberta.encoder.layer.11.attention.");
  // XLMRobertaModel saved bare: the prefix the weights use.
  CHECK(Folder("xlm_roberta")
            .layer(2, {"encoder.layer.2.attention.self.query.weight"})["weights_prefix"] ==
        "encoder.layer.2.attention.");
  const json e = Folder("electra").layer(3);
  CHECK(e["hidden_size"] == 256);  // not embedding_size
  CHECK(e["num_heads"] == 4);
  CHECK(e["head_size"] == 64);
  CHECK(e["weights_prefix"] == "electra.encoder.layer.3.attention.");
  // A decoder (XLMRobertaForCausalLM) is causal; relative positions are refused by name.
  json dec = small("xlm-roberta");
  dec["is_decoder"] = true;
  CHECK(layer_of(dec, 0)["attention"] == "causal");
  json rel = small("electra");
  rel["position_embedding_type"] = "relative_key";
  CHECK_THROWS_WITH(layer_of(rel, 0), doctest::Contains("position_embedding_type"));
}

TEST_CASE("model folder: DistilBERT's q_lin..out_lin and ViT's attention.attention.*") {
  const json d = Folder("distilbert").layer(5);
  CHECK(d["attention"] == "multi");
  CHECK(d["layout"] == "proj");
  CHECK(d["hidden_size"] == 768);  // dim
  CHECK(d["num_heads"] == 12);     // n_heads
  CHECK(d["weights_prefix"] == "distilbert.transformer.layer.5.attention.");
  CHECK(d["weights_rename"] == json{{"q_lin.", "q_proj."},
                                    {"k_lin.", "k_proj."},
                                    {"v_lin.", "v_proj."},
                                    {"out_lin.", "o_proj."}});
  CHECK_THROWS_WITH(Folder("distilbert").layer(6), doctest::Contains("0..5"));  // n_layers
  const json v = Folder("vit").layer(0);
  CHECK(v["attention"] == "multi");
  CHECK(v["layout"] == "bert");
  CHECK(v["weights_prefix"] == "vit.encoder.layer.0.attention.");
  CHECK(v["weights_rename"] == json{{"attention.", "self."}});
  CHECK(v["qkv_bias"] == true);
  json nobias = small("vit");
  nobias["qkv_bias"] = false;
  CHECK(layer_of(nobias, 0)["qkv_bias"] == false);
  CHECK(layer_of(nobias, 0)["out_bias"] == true);  // ViTSelfOutput.dense always has one
}

TEST_CASE("model folder: CLIP's towers, standalone and as a CLIPModel's text_config") {
  const json t = Folder("clip").layer(11);
  CHECK(t["attention"] == "causal");
  CHECK(t["hidden_size"] == 512);
  CHECK(t["num_heads"] == 8);
  CHECK(t["weights_prefix"] == "text_model.encoder.layers.11.self_attn.");
  CHECK(attn::open_model_folder(Folder("clip").dir.string()).model_type == "clip_text_model");
  // An older save's text_config_dict updates text_config (CLIPConfig.__init__).
  const json big = Folder("clip_text_dict").layer(0);
  CHECK(big["hidden_size"] == 768);
  CHECK(big["num_heads"] == 12);
  const json v = Folder("clip_vision").layer(31);
  CHECK(v["attention"] == "multi");
  CHECK(v["hidden_size"] == 1280);
  CHECK(v["num_heads"] == 16);
  CHECK(v["qkv_bias"] == true);
  CHECK(v["weights_prefix"] == "vision_model.encoder.layers.31.self_attn.");
}

TEST_CASE("model folder: ModernBERT's global and local layers") {
  const Folder f("modernbert");
  const json g = f.layer(0), l = f.layer(1), g3 = f.layer(3);
  CHECK(g["attention"] == "multi");
  CHECK(g["layout"] == "fused");
  CHECK(g["qkv_bias"] == false);
  CHECK(g["weights_prefix"] == "model.layers.0.attn.");
  CHECK(g["rope"]["theta"] == 160000.0);
  CHECK(g["rope"]["rotary_dim"] == 64);
  CHECK(!g.contains("sliding_window"));
  CHECK(l["rope"]["theta"] == 10000.0);
  CHECK(l["sliding_window"] == 65);  // |i - j| <= 128 // 2
  CHECK(f.layer(2)["sliding_window"] == 65);
  CHECK(g3["rope"]["theta"] == 160000.0);
  CHECK(!g3.contains("sliding_window"));
  // transformers v5: layer_types and rope_parameters per layer type.
  json v5 = small("modernbert");
  v5["local_attention"] = 7;
  v5["layer_types"] = {"full_attention", "sliding_attention", "sliding_attention",
                       "full_attention"};
  v5["rope_parameters"] = {{"full_attention", {{"rope_type", "default"}, {"rope_theta", 8e4}}},
                           {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 5e3}}}};
  CHECK(layer_of(v5, 2)["sliding_window"] == 4);  // 7 // 2 = 3 each side
  CHECK(layer_of(v5, 2)["rope"]["theta"] == 5000.0);
  CHECK(layer_of(v5, 3)["rope"]["theta"] == 80000.0);
  CHECK(!layer_of(v5, 3).contains("sliding_window"));
  // A layer_types that disagrees with global_attn_every_n_layers (3: layer 2 is local) is
  // refused: ModernBertAttention's window follows the period, its rope the layer type.
  v5["layer_types"][2] = "full_attention";
  CHECK_THROWS_WITH(layer_of(v5, 2), doctest::Contains("layer_types[2]"));
  CHECK(layer_of(v5, 1)["sliding_window"] == 4);  // the other layers still run
}

TEST_CASE("model folder: a CLIPModel folder's vision tower by model_type") {
  const Folder clip("clip");
  const attn::ModelFolder v = attn::open_model_folder(clip.dir.string(), "clip_vision_model");
  CHECK(v.model_type == "clip_vision_model");
  CHECK(v.num_layers == 12);
  const json l = attn::layer_config(v, 11);
  CHECK(l["attention"] == "multi");
  CHECK(l["hidden_size"] == 768);
  CHECK(l["num_heads"] == 12);
  CHECK(l["weights_prefix"] == "vision_model.encoder.layers.11.self_attn.");
  // The default is the text tower; asking for it by name is the same.
  CHECK(attn::open_model_folder(clip.dir.string(), "clip_text_model").num_layers == 12);
  // vision_config_dict updates vision_config as text_config_dict does text_config.
  const attn::ModelFolder big =
      attn::open_model_folder(Folder("clip_text_dict").dir.string(), "clip_vision_model");
  CHECK(big.num_layers == 24);
  // A model_type the folder does not hold names what it holds.
  CHECK_THROWS_WITH(attn::open_model_folder(clip.dir.string(), "vit"),
                    doctest::Contains("holds clip_text_model, clip_vision_model"));
  CHECK_THROWS_WITH(attn::open_model_folder(Folder("vit").dir.string(), "clip_vision_model"),
                    doctest::Contains("holds vit"));
}

TEST_CASE("model folder: Gemma 4 as the hub ships it (gemma4 with text_config, per-layer sizes)") {
  // google/gemma-4-31B-it's config.json, its text_config trimmed to the keys the attention
  // reads: 60 layers, 5 sliding of 6, the full ones with global_head_dim 512, k_eq_v and 4 KV
  // heads instead of 16, proportional rope (a quarter of the pairs turn).
  json layer_types = json::array();
  for (int i = 0; i < 60; ++i)
    layer_types.push_back((i + 1) % 6 ? "sliding_attention" : "full_attention");
  const json hf = {{"architectures", {"Gemma4ForConditionalGeneration"}},
                   {"model_type", "gemma4"},
                   {"text_config",
                    {{"model_type", "gemma4_text"},
                     {"hidden_size", 5376},
                     {"num_hidden_layers", 60},
                     {"num_attention_heads", 32},
                     {"num_key_value_heads", 16},
                     {"num_global_key_value_heads", 4},
                     {"head_dim", 256},
                     {"global_head_dim", 512},
                     {"attention_k_eq_v", true},
                     {"num_kv_shared_layers", 0},
                     {"sliding_window", 1024},
                     {"layer_types", layer_types},
                     {"rope_parameters",
                      {{"full_attention",
                        {{"partial_rotary_factor", 0.25},
                         {"rope_theta", 1000000.0},
                         {"rope_type", "proportional"}}},
                       {"sliding_attention", {{"rope_theta", 10000.0}, {"rope_type", "default"}}}}},
                     {"rms_norm_eps", 1e-6},
                     {"attention_bias", false},
                     {"use_bidirectional_attention", "vision"},
                     {"final_logit_softcapping", 30.0}}},
                   {"vision_config", {{"model_type", "gemma4_vision"}}}};
  const json local = layer_of(hf, 4, {"model.language_model.layers.4.self_attn.q_proj.weight"});
  CHECK(local["attention"] == "causal");
  CHECK(local["num_heads"] == 32);
  CHECK(local["num_kv_heads"] == 16);
  CHECK(local["head_size"] == 256);
  CHECK(local["scale"] == 1.0);
  CHECK(local["sliding_window"] == 1024);
  CHECK(local["rope"]["theta"] == 10000.0);
  CHECK(local["rope"]["rotary_dim"] == 256);
  CHECK(!local["rope"].contains("scaling"));
  CHECK(local["qk_norm"]["weight_offset"] == 0);
  CHECK(local["v_norm"] == json{{"kind", "rms"}, {"eps", 1e-6}});
  CHECK(!local.contains("k_eq_v"));
  CHECK(local["weights_prefix"] == "model.language_model.layers.4.self_attn.");
  const json global = layer_of(hf, 5, {"model.language_model.layers.5.self_attn.q_proj.weight"});
  CHECK(global["num_kv_heads"] == 4);
  CHECK(global["head_size"] == 512);
  CHECK(global["k_eq_v"] == true);
  CHECK(!global.contains("sliding_window"));
  CHECK(global["rope"]["rotary_dim"] == 512);
  CHECK(global["rope"]["theta"] == 1e6);
  CHECK(global["rope"]["scaling"] ==
        json{{"rope_type", "proportional"}, {"partial_rotary_factor", 0.25}});
  // google/gemma-4-E2B's kind: no k_eq_v (the full layers keep num_key_value_heads), the last
  // layers sharing K/V; a text-only gemma4_text folder, class defaults for the rest.
  json e2b = {{"model_type", "gemma4_text"},       {"hidden_size", 1536},
              {"num_hidden_layers", 35},           {"num_attention_heads", 8},
              {"num_key_value_heads", 1},          {"num_kv_shared_layers", 20},
              {"hidden_size_per_layer_input", 256}};
  const json full = layer_of(e2b, 5);
  CHECK(full["head_size"] == 512);  // global_head_dim's default
  CHECK(full["num_kv_heads"] == 1);
  CHECK(!full.contains("k_eq_v"));
  CHECK(full["rope"]["scaling"]["rope_type"] == "proportional");  // the default rope_parameters
  CHECK(layer_of(e2b, 4)["sliding_window"] == 512);
  // 35 layers: by the pattern layer 34 would slide; Gemma4TextConfig makes the last one full.
  json unshared = e2b;
  unshared.erase("num_kv_shared_layers");
  CHECK(layer_of(unshared, 33)["sliding_window"] == 512);
  CHECK(!layer_of(unshared, 34).contains("sliding_window"));
  CHECK(layer_of(unshared, 34)["head_size"] == 512);
  CHECK(layer_of(e2b, 4)["head_size"] == 256);
  try {
    layer_of(e2b, 20);
    FAIL("no error");
  } catch (const attn::Error& e) {
    CHECK(e.code() == attn::Exit::usage);
    // The last sliding layer before the first shared one (15): 14 (5 and 11 are full).
    CHECK(std::string(e.what()).find("reuses the keys and values of layer 14") !=
          std::string::npos);
  }
  try {  // the last layer, full, shares the last full layer's before 15: 11
    layer_of(e2b, 34);
    FAIL("no error");
  } catch (const attn::Error& e) {
    CHECK(std::string(e.what()).find("reuses the keys and values of layer 11") !=
          std::string::npos);
  }
  // use_bidirectional_attention "vision" is causal for text; "all" is refused by name.
  e2b["use_bidirectional_attention"] = "vision";
  CHECK(layer_of(e2b, 4)["attention"] == "causal");
  e2b["use_bidirectional_attention"] = "all";
  try {
    layer_of(e2b, 4);
    FAIL("no error");
  } catch (const attn::Error& e) {
    CHECK(e.code() == attn::Exit::config);
    CHECK(std::string(e.what()).find("\"use_bidirectional_attention\": \"all\"") !=
          std::string::npos);
  }
}

TEST_CASE("model folder: the rules several families share (refusals, scale keys, relative bias)") {
  // MPT's attn_config: qk_ln and rope run only unset (null) or false, else refused naming the
  // nested key; clip_qkv clamps the fused qkv when set and not 0 (MptAttention's `if
  // self.clip_qkv`).
  json mpt = {{"model_type", "mpt"}, {"d_model", 32}, {"n_heads", 4}, {"n_layers", 2}};
  mpt["attn_config"] = {{"clip_qkv", nullptr}, {"qk_ln", false}, {"rope", false}};
  CHECK(layer_of(mpt, 0)["alibi"]["max_bias"] == 8.0);
  CHECK_FALSE(layer_of(mpt, 0).contains("clip_qkv"));
  mpt["attn_config"]["clip_qkv"] = 0;
  CHECK_FALSE(layer_of(mpt, 0).contains("clip_qkv"));
  mpt["attn_config"]["clip_qkv"] = 8;
  CHECK(layer_of(mpt, 0)["clip_qkv"] == 8.0);
  mpt["attn_config"]["clip_qkv"] = -1;
  CHECK_THROWS_WITH(layer_of(mpt, 0), doctest::Contains("attn_config.clip_qkv"));
  mpt["attn_config"]["clip_qkv"] = nullptr;
  for (const char* key : {"qk_ln", "rope"}) {
    CAPTURE(key);
    json bad = mpt;
    bad["attn_config"][key] = json(true);
    const std::string message = "\"attn_config." + std::string(key) + "\": is not supported";
    CHECK_THROWS_WITH(layer_of(bad, 0), doctest::Contains(message.c_str()));
  }
  // BERT's position_embedding_type, for every row derived from BERT's: "absolute" (or unset)
  // runs, anything else is refused naming the value; not a string is the wrong type.
  for (const char* type : {"bert", "roberta", "xlm-roberta", "electra"}) {
    CAPTURE(type);
    json b = small(type);
    CHECK(layer_of(b, 0)["layout"] == "bert");
    b["position_embedding_type"] = "absolute";
    CHECK(layer_of(b, 0)["attention"] == "multi");
    b["position_embedding_type"] = "relative_key_query";
    CHECK_THROWS_WITH(layer_of(b, 0),
                      doctest::Contains("\"position_embedding_type\": \"relative_key_query\" is "
                                        "not supported (only \"absolute\""));
    b["position_embedding_type"] = 3;
    CHECK_THROWS_WITH(layer_of(b, 0), doctest::Contains("expected a string, found 3"));
  }
  // GPT-2: 1/sqrt(D) unless scale_attn_weights is false, divided by layer + 1 with
  // scale_attn_by_inverse_layer_idx; written into every layer's config.
  json gpt2 = {{"model_type", "gpt2"}, {"n_embd", 32}, {"n_head", 2}, {"n_layer", 4}};
  CHECK(layer_of(gpt2, 2)["scale"] == 0.25);
  gpt2["scale_attn_by_inverse_layer_idx"] = true;
  CHECK(layer_of(gpt2, 2)["scale"].get<double>() == doctest::Approx(0.25 / 3));
  gpt2["scale_attn_weights"] = false;
  CHECK(layer_of(gpt2, 3)["scale"] == 0.25);              // 1 / (3 + 1)
  CHECK(!layer_of(small("llama"), 0).contains("scale"));  // attn-run's default
  // T5 and mT5 read block 0's relative bias table in every layer; UMT5 each layer's own.
  json t5 = {{"model_type", "t5"}, {"d_model", 32},   {"d_kv", 8},
             {"num_heads", 4},     {"num_layers", 3}, {"relative_attention_num_buckets", 16}};
  for (const char* type : {"t5", "mt5"}) {
    t5["model_type"] = type;
    const json r = layer_of(t5, 2)["relative_bias"];
    CHECK(r["num_buckets"] == 16);
    CHECK(r["max_distance"] == 128);
    CHECK(r["table"] == "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  }
  t5["model_type"] = "umt5";
  CHECK(!layer_of(t5, 2)["relative_bias"].contains("table"));
  CHECK(layer_of(t5, 2)["scale"] == 1.0);
  // Derived rows keep their base's defaults and override their own: mT5's 6 heads, Kimi-K2's
  // DeepSeek-V3 ranks.
  CHECK(layer_of({{"model_type", "mt5"}, {"d_model", 48}}, 0)["num_heads"] == 6);
  const json kimi =
      layer_of({{"model_type", "kimi_k2"}, {"num_hidden_layers", 1}, {"q_lora_rank", 64}}, 0);
  CHECK(kimi["hidden_size"] == 7168);
  CHECK(kimi["num_heads"] == 128);
  CHECK(kimi["mla"]["q_lora_rank"] == 64);
  CHECK(kimi["mla"]["kv_lora_rank"] == 512);
  CHECK(kimi["mla"]["qk_rope_head_dim"] == 64);
  CHECK(kimi["rope"]["style"] == "interleaved");
}

// cli_model_summary: `attn-run --model DIR` without --layer through the built
// binary: one row per layer (heads, KV heads, head size, positions, window,
// weights dtype and bytes), the same as JSON with --format json, on the
// shipped data/tiny-llama and on folders the test writes from the hub-spelled
// configs of tests/fixtures/model_configs (Gemma 2's alternating windows,
// BLOOM's ALiBi from a pytorch_model.bin, Llama 3's rope scaling from a
// sharded index, GPT-2's mask buffer not counted as weights).
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_checks.h"
#include "json_files.h"
#include "safetensors_builder.h"
#include "test_util.h"
#include "torch_save_builder.h"

namespace fs = std::filesystem;
using attn::test::q;
using attn::test::run;
using attn::test::RunResult;
using attn::test::StTensor;
using attn::test::TempDir;
using nlohmann::json;

namespace {

std::string bin() { return attn::test::quoted_binary(); }

RunResult summary(const std::string& dir, const std::string& more = "") {
  return run(bin() + " --model " + q(dir) + more);
}

json summary_json(const std::string& dir) {
  const RunResult r = summary(dir, " --format json");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.empty());
  return json::parse(r.out);
}

// A model folder: the fixture config.json with `layers` layers, and nothing else yet.
std::string folder(const TempDir& t, const std::string& config, int layers) {
  const std::string dir = t / config;
  fs::create_directories(dir);
  json c = attn::test::read_json(
      attn::test::source_path("tests/fixtures/model_configs/" + config + ".json"));
  for (const char* k : {"num_hidden_layers", "n_layer"})
    if (c.contains(k)) c[k] = layers;
  attn::test::write_text(dir + "/config.json", c.dump(1));
  return dir;
}

std::string bf16(std::size_t n) { return std::string(2 * n, '\0'); }

}  // namespace

TEST_CASE("cli_model_summary: data/tiny-llama as a table and as JSON") {
  const std::string dir = attn::test::source_path("data/tiny-llama");
  const RunResult r = summary(dir);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.empty());
  CHECK(attn::test::count_of(r.out, "\n") == 4);  // model line, header, two layers
  CHECK(r.out.find("(llama, 2 layers)") != std::string::npos);
  CHECK(r.out.find("layer  type  heads  kv_heads  head_size  positions") != std::string::npos);
  CHECK(r.out.find("    1  full      4         2         16  rope theta=10000  -       bfloat16  "
                   "24.0 KiB\n") != std::string::npos);
  const json j = summary_json(dir);
  CHECK(j["model_type"] == "llama");
  CHECK(j["num_layers"] == 2);
  REQUIRE(j["layers"].size() == 2);
  const json& l = j["layers"][1];
  CHECK(l["num_heads"] == 4);
  CHECK(l["num_kv_heads"] == 2);
  CHECK(l["head_size"] == 16);
  CHECK(l["rope"]["theta"] == 10000.0);
  CHECK(l["sliding_window"].is_null());
  CHECK(l["dtype"] == "bfloat16");
  CHECK(l["bytes"] == 24576);  // q, o (64, 64) and k, v (32, 64), bf16
  CHECK(l["tensors"] == 4);
  CHECK(l["weights_prefix"] == "model.layers.1.self_attn.");
}

TEST_CASE("cli_model_summary: folders of other families, containers and position schemes") {
  TempDir t;
  // Gemma 2: sliding window on even layers, softcapping; a .safetensors.
  const std::string gemma = folder(t, "gemma2", 3);
  std::vector<StTensor> st;
  for (int l = 0; l < 3; ++l)
    for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"})
      st.push_back({"model.layers." + std::to_string(l) + ".self_attn." + p + ".weight",
                    "BF16",
                    {4, 4},
                    bf16(16)});
  attn::test::write_text(gemma + "/model.safetensors", attn::test::safetensors_image(st));
  const json g = summary_json(gemma);
  REQUIRE(g["layers"].size() == 3);
  CHECK(g["layers"][0]["sliding_window"] == 4096);
  CHECK(g["layers"][1]["sliding_window"].is_null());
  CHECK(g["layers"][0]["softcap"] == 50.0);
  CHECK(g["layers"][2]["bytes"] == 4 * 32);
  const RunResult gt = summary(gemma);
  CHECK(gt.out.find("rope theta=10000, softcap") != std::string::npos);
  CHECK(gt.out.find(" 4096 ") != std::string::npos);

  // BLOOM: ALiBi, from a torch.save pytorch_model.bin with f16 storages.
  const std::string bloom = folder(t, "bloom", 2);
  std::vector<attn::test::pt::PtTensor> ts;
  std::vector<attn::test::pt::PtStorage> ss;
  for (int l = 0; l < 2; ++l)
    for (const char* p : {"query_key_value", "dense"}) {
      const std::string key = std::to_string(ts.size());
      ts.push_back({"transformer.h." + std::to_string(l) + ".self_attention." + p + ".weight",
                    key,
                    "HalfStorage",
                    6,
                    0,
                    {2, 3},
                    {3, 1}});
      ss.push_back({key, std::string(12, '\0')});
    }
  attn::test::write_text(bloom + "/pytorch_model.bin",
                         attn::test::pt::checkpoint(attn::test::pt::state_dict_pickle(ts), ss));
  const json b = summary_json(bloom);
  CHECK(b["layers"][1]["alibi"] == true);
  CHECK(b["layers"][1]["rope"].is_null());
  CHECK(b["layers"][1]["dtype"] == "float16");
  CHECK(b["layers"][1]["bytes"] == 24);
  CHECK(b["layers"][1]["weights_prefix"] == "transformer.h.1.self_attention.");
  CHECK(summary(bloom).out.find("alibi") != std::string::npos);

  // Llama 3: rope scaling, from a sharded safetensors index (one shard per layer).
  const std::string llama = folder(t, "llama3", 2);
  json index = {{"weight_map", json::object()}};
  for (int l = 0; l < 2; ++l) {
    const std::string shard = "model-0000" + std::to_string(l + 1) + "-of-00002.safetensors";
    std::vector<StTensor> part;
    for (const char* p : {"q_proj", "k_proj", "v_proj", "o_proj"}) {
      const std::string key = "model.layers." + std::to_string(l) + ".self_attn." + p + ".weight";
      part.push_back({key, "F32", {2, 2}, std::string(16, '\0')});
      index["weight_map"][key] = shard;
    }
    attn::test::write_text(llama + "/" + shard, attn::test::safetensors_image(part));
  }
  attn::test::write_text(llama + "/model.safetensors.index.json", index.dump());
  const json l3 = summary_json(llama);
  CHECK(l3["layers"][0]["num_kv_heads"] == 8);
  CHECK(l3["layers"][0]["rope"]["scaling"]["rope_type"] == "llama3");
  CHECK(l3["layers"][1]["bytes"] == 64);
  CHECK(summary(llama).out.find("rope theta=500000 llama3 x8") != std::string::npos);

  // GPT-2: learned positions; the causal mask buffer "attn.bias" is not a weight.
  const std::string gpt2 = folder(t, "gpt2", 1);
  attn::test::write_text(gpt2 + "/model.safetensors",
                         attn::test::safetensors_image(
                             {{"h.0.attn.bias", "F32", {1, 1, 4, 4}, std::string(64, '\0')},
                              {"h.0.attn.c_attn.weight", "F32", {4, 12}, std::string(192, '\0')},
                              {"h.0.attn.c_proj.weight", "F32", {4, 4}, std::string(64, '\0')}}));
  const json g2 = summary_json(gpt2);
  CHECK(g2["layers"][0]["tensors"] == 2);
  CHECK(g2["layers"][0]["bytes"] == 256);
  CHECK(summary(gpt2).out.find("  -  ") != std::string::npos);
}

TEST_CASE("cli_model_summary: errors keep the contract's exit codes") {
  TempDir t;
  attn::test::check_cli_failure(summary(t / "missing"), 66, {"missing"});
  const std::string dir = attn::test::source_path("data/tiny-llama");
  attn::test::check_cli_failure(summary(dir, " --format npy"), 64, {"--format npy"});
  attn::test::check_cli_failure(summary(dir, " --dump-weights"), 64, {"--model", "--dump-weights"});
  const std::string unknown = folder(t, "unknown", 2);
  attn::test::write_text(unknown + "/model.safetensors", attn::test::safetensors_image({}));
  attn::test::check_cli_failure(summary(unknown), 78, {"model_type"});
}

TEST_CASE("cli_model_summary: CONTRACT.md v3's decoders (their golden folders)") {
  const auto golden = [](const std::string& name) {
    return attn::test::source_path("tests/golden/folders/" + name + "/model");
  };
  // GPT-J: interleaved partial rotary; its attn.bias / attn.masked_bias buffers are not weights.
  const json j = summary_json(golden("gptj"));
  CHECK(j["model_type"] == "gptj");
  CHECK(j["layers"][2]["rope"]["style"] == "interleaved");
  CHECK(j["layers"][2]["rope"]["rotary_dim"] == 8);
  CHECK(j["layers"][2]["tensors"] == 4);
  CHECK(summary(golden("gptj")).out.find("rotary 8/12 interleaved") != std::string::npos);
  // GPT-BigCode multi_query: one KV head, learned positions (none in the layer).
  const json b = summary_json(golden("gpt_bigcode"));
  CHECK(b["layers"][0]["num_kv_heads"] == 1);
  CHECK(b["layers"][0]["rope"].is_null());
  // SmolLM3: the no-rope layer has no positions; with use_sliding_window it slides.
  const json s = summary_json(golden("smollm3"));
  CHECK(s["layers"][2]["rope"]["theta"] == 5000000.0);
  CHECK(s["layers"][3]["rope"].is_null());
  const json w = summary_json(golden("smollm3_swa"));
  CHECK(w["layers"][0]["type"] == "full_attention");
  CHECK(w["layers"][1]["type"] == "sliding_attention");
  CHECK(w["layers"][1]["sliding_window"] == 3);
  CHECK(w["layers"][1]["rope"].is_null());
}

TEST_CASE("cli_model_summary: T5's encoder layers show the relative bias of block 0's table") {
  const std::string t5 = attn::test::source_path("tests/golden/folders/t5/model");
  const json j = summary_json(t5);
  // 3 encoder layers, then each decoder layer's self- and cross-attention
  REQUIRE(j["layers"].size() == 9);
  CHECK(j["layers"][3]["relative_bias"]["table"] ==
        "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  CHECK_FALSE(j["layers"][4].contains("relative_bias"));  // EncDecAttention has none
  for (int i = 0; i < 3; ++i) {
    const json& l = j["layers"][i];
    CHECK(l["stack"] == "encoder");
    CHECK(l["rope"].is_null());
    CHECK(l["relative_bias"]["num_buckets"] == 8);
    CHECK(l["relative_bias"]["table"] ==
          "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  }
  CHECK(j["layers"][1]["weights_prefix"] == "encoder.block.1.layer.0.SelfAttention.");
  const std::string table = summary(t5).out;
  CHECK(table.find("relative_bias") != std::string::npos);
  // No positions then a feature: "relative_bias", not "-, relative_bias".
  CHECK_MESSAGE(table.find("-, ") == std::string::npos, table);
  // UMT5: each layer's own table (no table key).
  const json u = summary_json(attn::test::source_path("tests/golden/folders/umt5/model"));
  CHECK_FALSE(u["layers"][2]["relative_bias"].contains("table"));
  CHECK_FALSE(u["layers"][3]["relative_bias"].contains("table"));  // decoder layer 0's own
}

TEST_CASE("cli_model_summary: DeepSeek's mla layers show their latent ranks") {
  // The golden folders of gen/families/deepseek.py: V2-Lite (q_lora_rank null) and V3.
  const std::string lite = attn::test::source_path("tests/golden/folders/deepseek_v2_lite/model");
  const json j = summary_json(lite);
  REQUIRE(j["layers"].size() == 3);
  CHECK(j["model_type"] == "deepseek_v2");
  CHECK(j["layers"][1]["head_size"] == 12);  // max(qk_nope 8 + qk_rope 4, v 8)
  CHECK(j["layers"][1]["rope"]["rotary_dim"] == 4);
  CHECK(j["layers"][1]["mla"]["q_lora_rank"].is_null());
  CHECK(j["layers"][1]["mla"]["kv_lora_rank"] == 16);
  CHECK(summary(lite).out.find("rotary 4/12 interleaved, mla q_lora=- kv_lora=16 v=8") !=
        std::string::npos);
  const RunResult v3 = summary(attn::test::source_path("tests/golden/folders/deepseek_v3/model"));
  CHECK(v3.out.find("mla q_lora=24 kv_lora=16 v=6") != std::string::npos);
}

TEST_CASE("cli_model_summary: Gemma 4's layers list their own sizes; shared K/V is not run") {
  // gen/families/gemma4.py's folders: full layers with global_head_dim 16 and (k_eq_v)
  // one KV head beside sliding layers of head_dim 8 and 2 KV heads.
  const std::string g4 = attn::test::source_path("tests/golden/folders/gemma4/model");
  const json j = summary_json(g4);
  REQUIRE(j["layers"].size() == 4);
  CHECK(j["model_type"] == "gemma4_text");
  CHECK(j["layers"][0]["num_kv_heads"] == 2);
  CHECK(j["layers"][0]["head_size"] == 8);
  CHECK(j["layers"][0]["v_norm"]["kind"] == "rms");
  CHECK(j["layers"][1]["num_heads"] == 4);
  CHECK(j["layers"][1]["num_kv_heads"] == 1);
  CHECK(j["layers"][1]["head_size"] == 16);
  CHECK(j["layers"][1]["k_eq_v"] == true);
  CHECK(j["layers"][1]["rope"]["scaling"]["rope_type"] == "proportional");
  CHECK(j["layers"][1]["tensors"] == 5);  // q_proj, k_proj, o_proj, q_norm, k_norm: no v_proj
  CHECK(summary(g4).out.find("rope theta=1e+06 proportional 0.25, qk_norm, v_norm, k_eq_v") !=
        std::string::npos);
  // gemma4_text: the last two layers reuse layers 1 and 2's keys and values.
  const std::string text = attn::test::source_path("tests/golden/folders/gemma4_text/model");
  const json t = summary_json(text);
  CHECK(t["layers"][2]["head_size"] == 16);
  CHECK(t["layers"][3]["runs"] == false);
  CHECK(t["layers"][3]["kv_shared_from"] == 1);
  CHECK(t["layers"][4]["kv_shared_from"] == 2);
  CHECK(summary(text).out.find("full (K/V of layer 2, not run)") != std::string::npos);
}

TEST_CASE("cli_model_summary: the layers of families_text.cpp and families_towers.cpp") {
  const auto golden = [](const std::string& name) {
    return attn::test::source_path("tests/golden/folders/" + name + "/model");
  };
  // EXAONE 4: sliding layers with rope and their window, the full layer NoPE.
  const json e = summary_json(golden("exaone4"));
  CHECK(e["model_type"] == "exaone4");
  CHECK(e["layers"][0]["type"] == "sliding_attention");
  CHECK(e["layers"][0]["sliding_window"] == 3);
  CHECK(e["layers"][0]["rope"]["scaling"]["rope_type"] == "llama3");
  CHECK(e["layers"][3]["type"] == "full_attention");
  CHECK(e["layers"][3]["rope"].is_null());
  CHECK(e["layers"][3]["sliding_window"].is_null());
  // GLM-4: rope in pairs on half the head.
  CHECK(summary(golden("glm4")).out.find("rope theta=10000 rotary 6/12 interleaved") !=
        std::string::npos);
  // GPT-Neo: global and local layers from attention_layers, no positions in the layer.
  const json n = summary_json(golden("gpt_neo"));
  CHECK(n["layers"][0]["type"] == "full_attention");
  CHECK(n["layers"][1]["type"] == "sliding_attention");
  CHECK(n["layers"][1]["sliding_window"] == 3);
  CHECK(n["layers"][1]["rope"].is_null());
  CHECK(n["layers"][1]["tensors"] == 5);  // q, k, v, out_proj and its bias: not the buffers
  // OLMo 3: the sliding layers' rope unscaled, the full layer's yarn.
  const json o = summary_json(golden("olmo3"));
  CHECK_FALSE(o["layers"][2]["rope"].contains("scaling"));
  CHECK(o["layers"][3]["rope"]["scaling"]["rope_type"] == "yarn");
  // ESM-2: rotary in a bidirectional encoder.
  const json s = summary_json(golden("esm2"));
  CHECK(s["model_type"] == "esm");
  CHECK(s["layers"][1]["rope"]["theta"] == 10000.0);
  // Mistral 3 lists its text model's layers, under model.language_model.
  const json m = summary_json(golden("mistral3"));
  CHECK(m["model_type"] == "mistral");
  CHECK(m["layers"][1]["weights_prefix"] == "model.language_model.layers.1.self_attn.");
}

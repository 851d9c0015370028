// attn-run --model FILE.gguf end to end (CONTRACT.md "(v3) GGUF", issues 25
// and 27 item 5): a run, its run.json's gguf_types, the layer listing, the
// weights dump, and files that lie: truncated, an unknown architecture,
// hostile sizes, a ggml type attn-run does not dequantize. Each failure is one
// line on stderr with the documented exit code.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "attn/config.h"
#include "attn/model_folder.h"
#include "attn/npy.h"
#include "attn/state_dict.h"
#include "check_close.h"
#include "cli_checks.h"
#include "test_util.h"

using namespace attn;
using nlohmann::json;

namespace {

const std::string kLlama = "tests/golden/gguf/llama";

std::string golden(const std::string& rel) { return test::source_path(kLlama + "/" + rel); }

// A GGUF image, little-endian, field by field (ggml docs/gguf.md).
struct Image {
  std::string b;
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(char(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(char(v >> (8 * i)));
  }
  void str(const std::string& s) { u64(s.size()), b += s; }
  void kv_u32(const std::string& k, std::uint32_t v) { str(k), u32(4), u32(v); }
  void kv_str(const std::string& k, const std::string& v) { str(k), u32(8), str(v); }
  void tensor(const std::string& name, std::vector<std::uint64_t> ne, std::uint32_t type,
              std::uint64_t offset) {
    str(name), u32(std::uint32_t(ne.size()));
    for (auto n : ne) u64(n);
    u32(type), u64(offset);
  }
  void pad() {
    while (b.size() % 32) b.push_back('\0');
  }
  void save(const std::string& path) const {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
  }
};

// A llama layer 0 of C = 256, 4 heads of 64: attn_q of type `q_type` (its
// bytes per 256-element row `q_row_bytes`), k, v and output F16 (zeros);
// head_count an array of i32 (one per layer, as gguf-py writes a list) when
// `head_array` is given; `extra` more metadata keys (each its key, type and value).
Image llama_file(const std::string& arch, std::uint32_t heads, std::uint32_t layers,
                 std::uint32_t q_type, std::uint64_t q_row_bytes,
                 const std::vector<std::uint32_t>& head_array = {},
                 const std::vector<Image>& extra = {}) {
  Image g;
  g.b = "GGUF";
  g.u32(3), g.u64(4), g.u64(4 + extra.size());
  g.kv_str("general.architecture", arch);
  g.kv_u32(arch + ".block_count", layers);
  g.kv_u32(arch + ".embedding_length", 256);
  if (head_array.empty()) {
    g.kv_u32(arch + ".attention.head_count", heads);
  } else {
    g.str(arch + ".attention.head_count"), g.u32(9), g.u32(5), g.u64(head_array.size());
    for (std::uint32_t h : head_array) g.u32(h);
  }
  for (const Image& kv : extra) g.b += kv.b;
  const std::uint64_t f16 = 256 * 256 * 2, q = 256 * q_row_bytes;
  g.tensor("blk.0.attn_q.weight", {256, 256}, q_type, 0);
  std::uint64_t at = (q + 31) / 32 * 32;
  for (const char* t : {"blk.0.attn_k.weight", "blk.0.attn_v.weight", "blk.0.attn_output.weight"}) {
    g.tensor(t, {256, 256}, 1, at);
    at += f16;
  }
  g.pad();
  g.b += std::string(std::size_t(at), '\0');
  return g;
}

// A 2-layer gemma4 file (C 32, 2 heads; layer 0 sliding, D 8; layer 1 full, D 16, k_eq_v when
// `v1` is false), F32 zeros but rope_freqs.weight (`factors`), as Gemma4Model writes it;
// `skip` leaves one metadata key out, `rope_dims` is rope.dimension_count; with `kv_full` > 1,
// head_count_kv is one per layer [1, kv_full] and layer 1's attn_k / attn_v hold kv_full heads.
Image gemma4_file(const std::vector<float>& factors, const std::string& skip = "",
                  std::uint32_t rope_dims = 16, bool v1 = true, std::uint32_t kv_full = 1) {
  std::vector<std::pair<std::string, std::function<void(Image&)>>> kv = {
      {"general.architecture", [](Image& g) { g.u32(8), g.str("gemma4"); }},
      {"gemma4.block_count", [](Image& g) { g.u32(4), g.u32(2); }},
      {"gemma4.embedding_length", [](Image& g) { g.u32(4), g.u32(32); }},
      {"gemma4.attention.head_count", [](Image& g) { g.u32(4), g.u32(2); }},
      {"gemma4.attention.head_count_kv",
       [kv_full](Image& g) {
         if (kv_full == 1)
           g.u32(4), g.u32(1);  // a u32 for every layer
         else
           g.u32(9), g.u32(4), g.u64(2), g.u32(1), g.u32(kv_full);  // an array of 2 u32
       }},
      {"gemma4.attention.key_length", [](Image& g) { g.u32(4), g.u32(16); }},
      {"gemma4.attention.key_length_swa", [](Image& g) { g.u32(4), g.u32(8); }},
      {"gemma4.attention.sliding_window", [](Image& g) { g.u32(4), g.u32(4); }},
      {"gemma4.attention.sliding_window_pattern",
       [](Image& g) { g.u32(9), g.u32(7), g.u64(2), g.b.push_back(1), g.b.push_back(0); }},
      {"gemma4.rope.dimension_count", [rope_dims](Image& g) { g.u32(4), g.u32(rope_dims); }},
  };
  std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> tensors = {
      {"rope_freqs.weight", factors.size(), 1},
      {"blk.0.attn_q.weight", 32, 16},
      {"blk.0.attn_k.weight", 32, 8},
      {"blk.0.attn_v.weight", 32, 8},
      {"blk.0.attn_q_norm.weight", 8, 1},
      {"blk.0.attn_k_norm.weight", 8, 1},
      {"blk.0.attn_output.weight", 16, 32},
      {"blk.1.attn_q.weight", 32, 32},
      {"blk.1.attn_k.weight", 32, 16 * kv_full},
      {"blk.1.attn_q_norm.weight", 16, 1},
      {"blk.1.attn_k_norm.weight", 16, 1},
      {"blk.1.attn_output.weight", 32, 32}};
  if (v1) tensors.push_back({"blk.1.attn_v.weight", 32, 16 * kv_full});
  Image g;
  g.b = "GGUF";
  g.u32(3), g.u64(tensors.size()), g.u64(kv.size() - (skip.empty() ? 0 : 1));
  for (const auto& [key, write] : kv)
    if (key != skip) g.str(key), write(g);
  std::uint64_t at = 0;
  for (const auto& [name, ne0, ne1] : tensors) {
    g.tensor(name,
             ne1 == 1 ? std::vector<std::uint64_t>{ne0} : std::vector<std::uint64_t>{ne0, ne1}, 0,
             at);
    at += (ne0 * ne1 * 4 + 31) / 32 * 32;
  }
  g.pad();
  for (float x : factors) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    g.u32(u);
  }
  g.pad();
  g.b += std::string(std::size_t(at - (factors.size() * 4 + 31) / 32 * 32), '\0');
  return g;
}

test::RunResult attn_run(const std::string& args) {
  return test::run(test::quoted_binary() + " " + args);
}

void check_one_line(const test::RunResult& r, int code, const std::string& text) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == code);
  CHECK(r.out.empty());
  CHECK(r.err.find(text) != std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);
}

}  // namespace

TEST_CASE("cli gguf: --model FILE.gguf --layer N runs, run.json names each tensor's ggml type") {
  test::TempDir t;
  const test::RunResult r =
      attn_run("--model " + test::q(golden("model.gguf")) + " --layer 1 --input " +
               test::q(golden("layer1/input.npy")) + " -o " + test::q(t / "o"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  test::check_close(to_float32(read_npy(t / "o/context.npy"), "context.npy", false),
                    to_float32(read_npy(golden("layer1/expected/context.npy")), "expected", false),
                    "context.npy");
  const json run = json::parse(test::read_text(t / "o/run.json"));
  CHECK(run["gguf_types"]["blk.1.attn_q.weight"] == "Q8_0");
  CHECK(run["gguf_types"]["blk.1.attn_k.weight"] == "Q4_0");
  CHECK(run["gguf_types"]["blk.1.attn_output.weight"] == "IQ4_NL");
  CHECK(run["config"]["weights_prefix"] == "blk.1.");
}

TEST_CASE("cli gguf: a missing --input is usage (64), as for a model folder") {
  // Was exit 78 "input: no input given; set \"input\" in the config": a
  // --model FILE.gguf run has no config to set it in.
  test::check_cli_failure(attn_run("--model " + test::q(golden("model.gguf")) + " --layer 1"), 64,
                          {"--input", "needed with --model", "hidden_size = 32"});
}

TEST_CASE("cli gguf: the layer listing and the weights dump") {
  const test::RunResult list =
      attn_run("--model " + test::q(golden("model.gguf")) + " --format json");
  REQUIRE_MESSAGE(list.exit_code == 0, list.err);
  const json j = json::parse(list.out);
  CHECK(j["model_type"] == "llama");
  CHECK(j["layers"].size() == 2);
  CHECK(j["layers"][0]["tensors"] == 4);
  CHECK(j["layers"][0]["dtype"] == json({"IQ4_NL", "Q4_0", "Q5_1", "Q8_0"}));
  // The bytes in the file (block types), not float32's.
  CHECK(j["layers"][0]["bytes"].get<int>() < 4 * 32 * 32 * 4);

  test::TempDir t;
  const test::RunResult dump =
      attn_run("--model " + test::q(golden("model.gguf")) + " --layer 0 --dump-weights " +
               test::q(t / "w.safetensors"));
  REQUIRE_MESSAGE(dump.exit_code == 0, dump.err);
  const StateDict sd = open_state_dict(t / "w.safetensors");
  CHECK(sd.contains("q_proj.weight"));
  CHECK(sd.find("q_proj.weight")->shape == std::vector<std::size_t>{32, 32});
  CHECK(sd.find("k_proj.weight")->shape == std::vector<std::size_t>{16, 32});
}

TEST_CASE("cli gguf: files that lie are one line, exit 65 (or 78 for an unknown architecture)") {
  test::TempDir t;
  // Truncated: the first 200 bytes of a real file.
  const std::string whole = test::read_text(golden("model.gguf"));
  test::write_text(t / "cut.gguf", whole.substr(0, 200));
  check_one_line(attn_run("--model " + test::q(t / "cut.gguf")), 65, "cut.gguf: ");

  llama_file("mamba", 4, 1, 1, 512).save(t / "mamba.gguf");
  check_one_line(attn_run("--model " + test::q(t / "mamba.gguf")), 78,
                 "general.architecture \"mamba\" is not supported (supported: llama, qwen2");

  llama_file("llama", 0, 1, 1, 512).save(t / "zero_heads.gguf");
  check_one_line(attn_run("--model " + test::q(t / "zero_heads.gguf")), 65,
                 "llama.attention.head_count: expected an integer in [1, ");

  // head_count one per layer: 3 values for 2 layers, or a layer's 0 heads.
  llama_file("llama", 4, 2, 1, 512, {4, 4, 4}).save(t / "heads3.gguf");
  check_one_line(attn_run("--model " + test::q(t / "heads3.gguf")), 65,
                 "llama.attention.head_count: expected an integer or one per layer (2 integers), "
                 "found [i32 x 3");
  Image pattern3;  // a 3-bool sliding_window_pattern for 2 layers
  pattern3.str("llama.attention.sliding_window_pattern"), pattern3.u32(9), pattern3.u32(7);
  pattern3.u64(3), pattern3.b += std::string("\1\0\1", 3);
  llama_file("llama", 4, 2, 1, 512, {}, {pattern3}).save(t / "pattern3.gguf");
  check_one_line(attn_run("--model " + test::q(t / "pattern3.gguf")), 65,
                 "llama.attention.sliding_window_pattern: expected a bool per layer (2, true for "
                 "a sliding layer) or an integer, found [bool x 3");
  Image kv2;  // heads [4, 3] over 2 KV heads
  kv2.kv_u32("llama.attention.head_count_kv", 2);
  llama_file("llama", 4, 2, 1, 512, {4, 3}, {kv2}).save(t / "heads_kv.gguf");
  check_one_line(attn_run("--model " + test::q(t / "heads_kv.gguf")), 65,
                 "llama.attention.head_count_kv: layer 1's 2 KV heads do not divide its 3 heads");
  Image clamp;  // MPT's clip_qkv (attention.clamp_kqv): read, the layers run
  clamp.str("mpt.attention.clamp_kqv"), clamp.u32(6), clamp.u32(0x41000000);  // 8.0f
  llama_file("mpt", 4, 1, 1, 512, {}, {clamp}).save(t / "mpt_clamp.gguf");
  const test::RunResult clamped = attn_run("--model " + test::q(t / "mpt_clamp.gguf"));
  CHECK(clamped.exit_code == 0);
  Image layout;  // a Falcon whose attn_qkv is not in the converter's order
  layout.kv_str("falcon.tensor_data_layout", "per KV group");
  llama_file("falcon", 4, 1, 1, 512, {}, {layout}).save(t / "falcon_layout.gguf");
  check_one_line(attn_run("--model " + test::q(t / "falcon_layout.gguf")), 65,
                 "falcon.tensor_data_layout: expected \"jploski\" (attn_qkv as [Q | K | V]), "
                 "found \"per KV group\"");
  llama_file("llama", 4, 2, 1, 512, {4, 0}).save(t / "heads_zero.gguf");
  const test::RunResult listed2 =
      attn_run("--model " + test::q(t / "heads_zero.gguf") + " --format json");
  CHECK(listed2.exit_code != 0);  // layer 1 has no attention: the listing says why
  CHECK(listed2.err.find("layer 1 has 0 attention heads") != std::string::npos);

  // gguf-py's big-endian writer (tests/golden/generate.py --gguf-py): refused, saying why.
  check_one_line(
      attn_run("--model " + test::q(test::source_path("tests/golden/gguf_py_big_endian.gguf"))), 65,
      "a big-endian GGUF file (only little-endian files are read)");

  llama_file("llama", 4, 2000000000u, 1, 512).save(t / "many_layers.gguf");
  check_one_line(attn_run("--model " + test::q(t / "many_layers.gguf")), 65,
                 "llama.block_count: expected an integer in [1, 4096], found 2000000000");

  // IQ2_XXS (16): 66 bytes per 256 values; listed, refused when the layer runs.
  llama_file("llama", 4, 1, 16, 66).save(t / "iq2.gguf");
  const test::RunResult listed = attn_run("--model " + test::q(t / "iq2.gguf") + " --format json");
  REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
  CHECK(listed.out.find("IQ2_XXS") != std::string::npos);
  Tensor x;
  x.shape = {2, 256};
  x.data.assign(512, 0.5f);
  test::write_text(t / "x.npy", encode_npy(x));
  check_one_line(
      attn_run("--model " + test::q(t / "iq2.gguf") + " --layer 0 --input " + test::q(t / "x.npy")),
      65, "iq2.gguf:blk.0.attn_q.weight: GGUF type IQ2_XXS is not supported");
}

TEST_CASE("cli gguf: the layer listing of each architecture's golden file") {
  // (tests/golden/gguf/<name>, the family row it maps onto, its layers)
  const std::vector<std::tuple<std::string, std::string, std::size_t>> files = {
      {"starcoder2", "starcoder2", 2},
      {"granite", "granite", 2},
      {"granitemoe", "granite", 1},
      {"qwen3moe", "qwen3_moe", 1},
      {"qwen3_next", "qwen3_next", 4},
      {"qwen3_5", "qwen3_5_text", 4},
      {"command_r", "cohere", 2},
      {"cohere2", "cohere2", 4},
      {"stablelm", "stablelm", 2},
      {"internlm2", "internlm2", 2},
      {"smollm3", "smollm3", 4},
      {"starcoder", "gpt_bigcode", 2},
      {"starcoder_mha", "gpt_bigcode", 2},
      {"phi2", "phi", 2},
      {"llama4", "llama4_text", 4},
      {"llama4_maverick", "llama4_text", 4},
      {"llama4_mobilellm", "llama4_text", 4},
      {"deepseek_v3", "deepseek_v3", 3},
      {"deepseek_v2_lite", "deepseek_v3", 2},
      {"deepseek_v2_lite_old", "deepseek_v3", 2},
      {"bert", "bert", 2},
      {"modernbert", "modernbert", 3},
      {"t5", "t5", 2},
      {"umt5", "umt5", 2},
      {"gemma4", "gemma4_text", 4},
      {"gemma4_e2b", "gemma4_text", 5},
      {"gpt2", "gpt2", 2},
      {"falcon", "falcon", 2},
      {"falcon_mq", "falcon", 2},
      {"mpt", "mpt", 2},
      {"glm4", "glm4", 2},
      {"glm4moe", "glm4_moe", 2},
      {"exaone4", "exaone4", 64},
      {"exaone4_swa_off", "exaone4", 2},
      {"ernie4_5", "ernie4_5", 2},
      {"ernie4_5_moe", "ernie4_5_moe", 2},
      {"seed_oss", "seed_oss", 2},
      {"apertus", "apertus", 2},
      {"qwen2_moe", "qwen2_moe", 2},
      {"qwen3_moe", "qwen3_moe", 2},
      {"olmo3", "olmo3", 4},
  };

  for (const auto& [name, type, layers] : files) {
    CAPTURE(name);
    const std::string file = test::source_path("tests/golden/gguf/" + name + "/model.gguf");
    const test::RunResult r = attn_run("--model " + test::q(file) + " --format json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const json j = json::parse(r.out);
    CHECK(j["model_type"] == type);
    CHECK(j["layers"].size() == layers);
    const test::RunResult text = attn_run("--model " + test::q(file));
    CHECK(text.exit_code == 0);
    CHECK(text.out.find(type) != std::string::npos);
  }
}

TEST_CASE("cli gguf: Gemma 4's --layer all runs the layers with their own K/V, skips the shared") {
  // gemma4_e2b: 5 layers, attention.shared_kv_layers 2 (layers 3 and 4 reuse the K/V of the
  // last earlier layer of their type: 1 and 2), each input by layer number.
  namespace fs = std::filesystem;
  const std::string g = test::source_path("tests/golden/gguf/gemma4_e2b");
  test::TempDir t;
  fs::create_directories(t / "in");
  for (int l = 0; l < 5; ++l)
    fs::copy_file(g + (l == 2 ? "/layer2/input.npy" : "/layer1/input.npy"),
                  t / ("in/layer_" + std::to_string(l) + ".npy"));
  const test::RunResult r =
      attn_run("--model " + test::q(g + "/model.gguf") + " --layer all --input " +
               test::q(t / "in") + " -o " + test::q(t / "out"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("layer 3: reuses the keys and values of layer 1, not run") != std::string::npos);
  const json run = json::parse(test::read_text(t / "out/run.json"));
  CHECK(run["layers"] == json({0, 1, 2}));
  CHECK(run["skipped"][0]["layer"] == 3);
  CHECK(run["skipped"][0]["kv_shared_from"] == 1);
  CHECK(run["skipped"][1]["layer"] == 4);
  CHECK(run["skipped"][1]["kv_shared_from"] == 2);
  CHECK(!fs::exists(t / "out/layer_3"));
  for (int l : {1, 2}) {
    const std::string got = t / ("out/layer_" + std::to_string(l) + "/context.npy");
    const std::string want = g + "/layer" + std::to_string(l) + "/expected/context.npy";
    test::check_close(to_float32(read_npy(got), "context.npy", false),
                      to_float32(read_npy(want), "expected", false), "context.npy");
  }
}

TEST_CASE("cli gguf: Gemma 4 files that cannot be Gemma 4 are one line, exit 65") {
  test::TempDir t;
  const std::vector<float> quarter = {1, 1, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f};
  const std::string f = t / "g.gguf";
  // The file as the converter writes it lists; its full layer 1 turns 2 pairs of 8 (0.25).
  gemma4_file(quarter).save(f);
  const test::RunResult ok = attn_run("--model " + test::q(f) + " --format json");
  REQUIRE_MESSAGE(ok.exit_code == 0, ok.err);
  CHECK(json::parse(ok.out)["layers"].size() == 2);
  const Config full = load_model_config(f, 1);
  CHECK(full.head_size == 16);
  CHECK(!full.k_eq_v);
  CHECK(full.spec.rope->scaling->partial_rotary_factor == 0.25);
  gemma4_file(quarter, "", 16, false).save(f);
  CHECK(load_model_config(f, 1).k_eq_v);  // no attn_v on the full layer
  CHECK(load_model_config(f, 0).head_size == 8);
  // head_count_kv per layer: the full layer's own count, with attn_v (per_layer_config) and
  // without (num_global_key_value_heads, k_eq_v).
  gemma4_file(quarter, "", 16, true, 2).save(f);
  CHECK(load_model_config(f, 1).kv_heads() == 2);
  CHECK(!load_model_config(f, 1).k_eq_v);
  CHECK(load_model_config(f, 0).kv_heads() == 1);
  gemma4_file(quarter, "", 16, false, 2).save(f);
  CHECK(load_model_config(f, 1).kv_heads() == 2);
  CHECK(load_model_config(f, 1).k_eq_v);
  CHECK(load_model_config(f, 0).kv_heads() == 1);

  gemma4_file({1, 1, 0.5f, 1e30f, 1e30f, 1e30f, 1e30f, 1e30f}).save(f);
  check_one_line(attn_run("--model " + test::q(f)), 65,
                 "rope_freqs.weight: expected 1 for each turned pair, then 1e30");
  gemma4_file({1, 1, 1e30f, 1e30f}).save(f);
  check_one_line(attn_run("--model " + test::q(f)), 65,
                 "rope_freqs.weight: expected 8 factors (attention.key_length / 2), found 4");
  gemma4_file(quarter, "gemma4.attention.key_length_swa").save(f);
  check_one_line(attn_run("--model " + test::q(f)), 65,
                 "gemma4.attention.key_length_swa: is missing (Gemma 4 needs it)");
  gemma4_file(quarter, "gemma4.attention.sliding_window_pattern").save(f);
  check_one_line(attn_run("--model " + test::q(f)), 65,
                 "gemma4.attention.sliding_window_pattern: is missing");
  gemma4_file(quarter, "", 8).save(f);
  check_one_line(attn_run("--model " + test::q(f)), 65,
                 "gemma4.rope.dimension_count: expected the head size 16");
}

TEST_CASE("cli gguf: EXAONE 4 and OLMo 3 slide by llama.cpp's period, not the bool pattern") {
  test::TempDir t;
  const std::string f = t / "e.gguf";
  // A 64-layer file whose bool pattern says every layer slides: llama_model_exaone4 reads the
  // pattern only as an integer (get_key_or_arr skips an array), so every 4th layer is full.
  Image window, bools, period;
  window.kv_u32("exaone4.attention.sliding_window", 3);
  bools.str("exaone4.attention.sliding_window_pattern"), bools.u32(9), bools.u32(7), bools.u64(64);
  bools.b += std::string(64, '\1');
  llama_file("exaone4", 4, 64, 1, 512, {}, {window, bools}).save(f);
  CHECK(load_model_config(f, 0).spec.sliding_window == 3);
  CHECK(load_model_config(f, 0).spec.rope.has_value());
  CHECK(!load_model_config(f, 3).spec.sliding_window);
  CHECK(!load_model_config(f, 3).spec.rope);  // global NoPE
  // An integer pattern is llama.cpp's period.
  period.kv_u32("exaone4.attention.sliding_window_pattern", 2);
  llama_file("exaone4", 4, 64, 1, 512, {}, {window, period}).save(f);
  CHECK(!load_model_config(f, 1).spec.sliding_window);
  CHECK(load_model_config(f, 2).spec.sliding_window == 3);
  // OLMo 3 (olmo2 with a window): llama_model_olmo2 skips the bool array too.
  Image olmo_window, olmo_bools;
  olmo_window.kv_u32("olmo2.attention.sliding_window", 3);
  olmo_bools.str("olmo2.attention.sliding_window_pattern"), olmo_bools.u32(9), olmo_bools.u32(7),
      olmo_bools.u64(4);
  olmo_bools.b += std::string(4, '\1');
  llama_file("olmo2", 4, 4, 1, 512, {}, {olmo_window, olmo_bools}).save(f);
  CHECK(open_model_folder(f).model_type == "olmo3");
  CHECK(load_model_config(f, 2).spec.sliding_window == 3);
  CHECK(!load_model_config(f, 3).spec.sliding_window);
  // A window of 0: llama.cpp's OLMo 2 (no sliding layer), whatever the pattern.
  olmo_window = Image();
  olmo_window.kv_u32("olmo2.attention.sliding_window", 0);
  llama_file("olmo2", 4, 4, 1, 512, {}, {olmo_window, olmo_bools}).save(f);
  CHECK(open_model_folder(f).model_type == "olmo2");
  CHECK(!load_model_config(f, 2).spec.sliding_window);
}

TEST_CASE("cli gguf: a 3 GiB file whose layer is small runs under ulimit -v 2000000") {
#if defined(__SANITIZE_ADDRESS__)
  MESSAGE("skipped: AddressSanitizer cannot run under ulimit -v");
  return;
#endif
  // Layer 0 of a llama file (C 256, 4 heads, F16 zeros but attn_q), then a
  // 3 GiB token_embd.weight left as a hole (a sparse file: no disk used).
  // Only the header and the layer's tensors are mapped, not the file.
  test::TempDir t;
  Image g;
  g.b = "GGUF";
  g.u32(3), g.u64(5), g.u64(4);
  g.kv_str("general.architecture", "llama");
  g.kv_u32("llama.block_count", 1);
  g.kv_u32("llama.embedding_length", 256);
  g.kv_u32("llama.attention.head_count", 4);
  const std::uint64_t f16 = 256 * 256 * 2, big_rows = (std::uint64_t(3) << 30) / (256 * 4);
  std::uint64_t at = 0;
  for (const char* name : {"blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_v.weight",
                           "blk.0.attn_output.weight"}) {
    g.tensor(name, {256, 256}, 1, at);
    at += f16;
  }
  g.tensor("token_embd.weight", {256, big_rows}, 0, at);
  g.pad();
  const std::uint64_t header = g.b.size();
  for (std::uint64_t i = 0; i < 256 * 256; ++i) g.b += std::string("\x00\x3c", 2);  // q = 1.0
  g.b += std::string(std::size_t(3 * f16), '\0');
  g.save(t / "big.gguf");
  std::filesystem::resize_file(t / "big.gguf", header + at + big_rows * 256 * 4);
  REQUIRE(std::filesystem::file_size(t / "big.gguf") > (std::uint64_t(3) << 30));
  test::write_text(t / "x.npy", attn::encode_npy(test::random_tensor({4, 256}, 3)));

  const std::string limited = "ulimit -v 2000000; " + test::quoted_binary();
  auto r = test::run("bash -c " + test::q(limited + " -q --model " + test::q(t / "big.gguf") +
                                          " --layer 0 --input " + test::q(t / "x.npy") + " -o " +
                                          test::q(t / "o")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  // v is zero: the context is zero, whatever the maps.
  const Tensor c = to_float32(read_npy(t / "o/context.npy"), "context.npy", false);
  CHECK(c.shape == std::vector<std::size_t>{4, 256});
  // The layer listing reads the header only.
  r = test::run("bash -c " + test::q(limited + " --model " + test::q(t / "big.gguf")));
  CHECK_MESSAGE(r.exit_code == 0, r.err);
}

namespace {
// A GGUF file of one layer (C 16, 2 heads of 8), its metadata the
// architecture's sizes plus `extra` (each one key, type and value), its
// tensors F32 zeros of the given ne (ggml order).
Image small_gguf(const std::string& arch, const std::vector<Image>& extra,
                 const std::vector<std::pair<std::string, std::vector<std::uint64_t>>>& tensors) {
  Image g;
  g.b = "GGUF";
  g.u32(3), g.u64(tensors.size()), g.u64(4 + extra.size());
  g.kv_str("general.architecture", arch);
  g.kv_u32(arch + ".block_count", 1);
  g.kv_u32(arch + ".embedding_length", 16);
  g.kv_u32(arch + ".attention.head_count", 2);
  for (const Image& kv : extra) g.b += kv.b;
  std::uint64_t at = 0;
  std::vector<std::uint64_t> sizes;
  for (const auto& [name, ne] : tensors) {
    g.tensor(name, ne, 0, at);
    std::uint64_t n = 4;
    for (auto d : ne) n *= d;
    at += (n + 31) / 32 * 32;
  }
  g.pad();
  g.b += std::string(std::size_t(at), '\0');
  return g;
}

Image kv_u32(const std::string& key, std::uint32_t v) {
  Image i;
  i.kv_u32(key, v);
  return i;
}

Image kv_f32(const std::string& key, float v) {
  Image i;
  std::uint32_t bits;
  std::memcpy(&bits, &v, 4);
  i.str(key), i.u32(6), i.u32(bits);
  return i;
}

const std::vector<std::pair<std::string, std::vector<std::uint64_t>>> kLayer0 = {
    {"blk.0.attn_q.weight", {16, 16}},
    {"blk.0.attn_k.weight", {16, 16}},
    {"blk.0.attn_v.weight", {16, 16}},
    {"blk.0.attn_output.weight", {16, 16}}};
}  // namespace

TEST_CASE("cli gguf: lies in the metadata are refused, each named as the file spells it") {
  test::TempDir t;
  test::write_text(t / "x.npy", attn::encode_npy(test::random_tensor({3, 16}, 5)));
  const auto run_layer = [&](const std::string& name, const Image& g) {
    g.save(t / name);
    return attn_run("--model " + test::q(t / name) + " --layer 0 --input " + test::q(t / "x.npy") +
                    " -o " + test::q(t / "o"));
  };
  // Gemma 3's sliding layers with a window of 0: not the family's default 4096.
  test::check_cli_failure(
      run_layer("g3.gguf",
                small_gguf("gemma3", {kv_u32("gemma3.attention.sliding_window", 0)}, kLayer0)),
      65, {"g3.gguf", "gemma3.attention.sliding_window", "is 0"});
  // rope_freqs.weight must be one factor per pair: (4,), not (2, 2).
  auto freqs = kLayer0;
  freqs.push_back({"rope_freqs.weight", {2, 2}});
  test::check_cli_failure(run_layer("ff.gguf", small_gguf("llama", {}, freqs)), 65,
                          {"ff.gguf", "rope_freqs.weight"});
  // The rope base and the rotated dimensions, as the GGUF keys.
  test::check_cli_failure(
      run_layer("fb.gguf", small_gguf("llama", {kv_f32("llama.rope.freq_base", 0.0f)}, kLayer0)),
      65, {"fb.gguf", "llama.rope.freq_base"});
  test::check_cli_failure(
      run_layer("dc.gguf", small_gguf("llama", {kv_u32("llama.rope.dimension_count", 7)}, kLayer0)),
      65, {"dc.gguf", "llama.rope.dimension_count", "even"});
  // A tensor of the wrong shape is named as the file names it.
  auto wrong = kLayer0;
  wrong[0].second = {16, 8};
  test::check_cli_failure(run_layer("q.gguf", small_gguf("llama", {}, wrong)), 65,
                          {"q.gguf", "blk.0.attn_q.weight", "expected shape (16, 16)"});
  CHECK_FALSE(std::filesystem::exists(t / "o"));
}

TEST_CASE("cli gguf: the hybrids' files run their attention layers and refuse the others") {
  // (golden file, family row, each layer's kind as llama.cpp's converter wrote it: attention
  // where attention.head_count_kv is not 0; Nemotron-H's others by their tensors)
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> files = {
      {"granite_4_h",
       "granitemoehybrid",
       {"mamba", "full_attention", "mamba", "mamba", "full_attention"}},
      {"nemotron_h",
       "nemotron_h",
       {"mamba", "mlp", "full_attention", "mlp", "mamba", "full_attention", "moe"}},
      {"jamba",
       "jamba",
       {"mamba", "mamba", "full_attention", "mamba", "mamba", "mamba", "full_attention", "mamba"}},
      {"falcon_h1", "falcon_h1", {"full_attention", "full_attention", "full_attention"}},
  };
  for (const auto& [name, type, kinds] : files) {
    CAPTURE(name);
    const std::string dir = test::source_path("tests/golden/gguf/" + name);
    const test::RunResult r =
        attn_run("--model " + test::q(dir + "/model.gguf") + " --format json");
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const json j = json::parse(r.out);
    CHECK(j["model_type"] == type);
    REQUIRE(j["layers"].size() == kinds.size());
    std::string runs;
    for (std::size_t l = 0; l < kinds.size(); ++l) {
      CHECK(j["layers"][l]["type"] == kinds[l]);
      CHECK(j["layers"][l]["runs"] == (kinds[l] == "full_attention"));
      if (kinds[l] == "full_attention") runs += (runs.empty() ? "" : ", ") + std::to_string(l);
    }
    // The first layer that is not attention: refused by its kind, the attention layers listed.
    for (std::size_t l = 0; l < kinds.size(); ++l) {
      if (kinds[l] == "full_attention") continue;
      test::TempDir t;
      test::check_cli_failure(
          attn_run("--model " + test::q(dir + "/model.gguf") + " --layer " + std::to_string(l) +
                   " --input " +
                   test::q(dir + "/layer" + runs.substr(0, runs.find(',')) + "/input.npy") +
                   " -o " + test::q(t / "o")),
          64,
          {"layer " + std::to_string(l), "a " + kinds[l] + " layer",
           "its attention layers are " + runs});
      CHECK(!std::filesystem::exists(t / "o"));
      break;
    }
  }
}

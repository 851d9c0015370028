// Golden tests of Hugging Face model folders (CONTRACT.md v2 "Model folders")
// against PyTorch: every tests/golden/folders/<name>/ (written by the
// golden package, tests/golden/generate.py; listed in tests/golden/manifest.json)
// holds model/ — config.json in the family's own spelling and
// a whole tiny model's weights under their real names, in the container a hub
// folder has — and layer<N>/ cases with torch's context and maps computed from
// the family's published attention. Each case runs as the executable runs it:
//  - case.json ({"model": "../model", "layer": N, "input", masks}) through
//    load_config, load_run, attention_spec and forward on both kernels;
//  - without masks also as --model DIR --layer N: load_model_config with the
//    input given as a flag (LoadOptions::input_path);
//  - and a few through the built binary, checking context.npy and run.json's
//    "from_model".
// Context and maps must agree within 1e-5 of the output's scale.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/config.h"
#include "attn/error.h"
#include "attn/model_folder.h"
#include "attn/npy.h"
#include "attn/run.h"
#include "check_close.h"
#include "expect_error.h"
#include "golden_manifest.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace attn;
using nlohmann::json;

using attn::test::check_close;

namespace {

const std::string& folders_root() {
  static const std::string root = test::source_path("tests/golden/folders");
  return root;
}

// Every folders/<name>/layer<N>, sorted: "gemma3/layer2", ...
std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& model : fs::directory_iterator(folders_root())) {
    if (!model.is_directory()) continue;
    for (const auto& e : fs::directory_iterator(model.path()))
      if (e.is_directory() && fs::exists(e.path() / "case.json"))
        names.push_back(model.path().filename().string() + "/" + e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Tensor expected(const std::string& dir, const std::string& what) {
  const std::string path = dir + "/expected/" + what + ".npy";
  return to_float32(read_npy(path), path, false);
}

struct Output {
  Tensor context;  // as the input was given: (B, S, C) or (S, C)
  Tensor maps;     // (B, H, S, S) or (H, S, S)
};

// forward() as the app calls it; `with_maps` = the kernel that writes the
// maps (TensorSink), else the streaming one.
Output run_forward(const LoadedRun& run, const AttentionSpec& spec, bool with_maps) {
  const std::size_t B = run.x.shape[0], L = run.x.shape[1];
  const std::size_t H = std::size_t(run.weights.H);
  TensorSink sink(B, H, L, map_keys(run.weights, spec, run.keys()));
  ForwardOptions opt;
  opt.threads = 2;
  if (with_maps) opt.attention = &sink;
  Output o;
  forward(run.weights, spec, run.forward_inputs(), o.context, opt);
  o.context = context_as_given(std::move(o.context), run);
  o.maps = std::move(sink.maps);
  if (!run.batched) o.maps.shape.erase(o.maps.shape.begin());
  return o;
}

void check_run(const Config& cfg, const LoadOptions& lo, const std::string& dir, bool maps_too) {
  const LoadedRun run = load_run(cfg, lo);
  const AttentionSpec spec = attention_spec(cfg);
  const Tensor want_ctx = expected(dir, "context"), want_maps = expected(dir, "attention");
  for (bool with_maps : {false, true}) {
    INFO((with_maps ? "maps kernel" : "streaming kernel"));
    const Output o = run_forward(run, spec, with_maps);
    check_close(o.context, want_ctx, "context");
    if (with_maps && maps_too) check_close(o.maps, want_maps, "attention");
  }
}

void check_case(const test::GoldenCase& entry) {
  const std::string& name = entry.name;
  const std::string dir = folders_root() + "/" + name;
  const json c = json::parse(test::read_text(dir + "/case.json"));
  // The manifest's checks are what the case's files say.
  const bool as_model =
      !(c.contains("attention_mask") || c.contains("positions") || c.contains("weights_prefix"));
  CHECK(entry.has("config"));
  CHECK(entry.has("model") == as_model);
  CHECK(entry.has("residual_norm") == fs::exists(dir + "/expected/residual_norm.npy"));
  CHECK(entry.has("input_norm") == fs::exists(dir + "/residual.npy"));

  // --config case.json: the folder's layer under the case's own keys.
  const Config cfg = load_config(dir + "/case.json");
  REQUIRE(cfg.from_model != nullptr);
  // An encoder-decoder's decoder module: "decoder_layer" [+ "cross_attention"].
  const bool decoder = c.contains("decoder_layer");
  if (decoder) {
    CHECK(cfg.layer == c["decoder_layer"].get<std::int64_t>());
    CHECK(cfg.module == (c.value("cross_attention", false) ? "decoder_cross" : "decoder_self"));
  } else if (!c.contains("weights_prefix")) {
    CHECK(cfg.layer == c["layer"].get<std::int64_t>());
  }
  CHECK(cfg.weights.find("/model/") != std::string::npos);  // the folder's weights
  check_run(cfg, {}, dir, true);

  // --residual: the residual stream whose block norm (the family row's) is input.npy gives
  // the same outputs (a post-norm family's is input.npy itself).
  if (entry.has("input_norm")) {
    INFO("--residual --input residual.npy");
    ModelFlags residual;
    residual.input_norm = true;
    const Config rc = load_config(dir + "/case.json", residual);
    REQUIRE(rc.spec.input_norm.has_value());
    LoadOptions lo;
    lo.input_path = dir + "/residual.npy";
    check_run(rc, lo, dir, true);
  }

  // --tokens: the family's embedding of tokens.npy (then the block's norm) is residual.npy
  // and gives the same outputs, by --config case.json (with token_positions.npy as its
  // positions: they number the learned positions) and by --model DIR --layer 0.
  CHECK(entry.has("tokens") == fs::exists(dir + "/tokens.npy"));
  if (entry.has("tokens")) {
    INFO("--tokens tokens.npy");
    Tensor stream = to_float32(read_npy(dir + "/residual.npy"), "residual.npy", false);
    if (stream.ndim() == 2) stream.shape.insert(stream.shape.begin(), 1);  // (1, S, C)
    LoadOptions lo;
    lo.tokens = dir + "/tokens.npy";
    ModelFlags tokens;
    tokens.tokens = true;
    Config tc = load_config(dir + "/case.json", tokens);
    const bool offset = fs::exists(dir + "/token_positions.npy");
    if (offset) {  // position_ids of the learned positions: the config's positions
      tc.positions.path = dir + "/token_positions.npy";
      resolve_config(tc);
    }
    REQUIRE(tc.embedding.has_value());
    REQUIRE(tc.spec.input_norm.has_value());
    check_close(load_run(tc, lo).x, stream, "embedding");
    check_run(tc, lo, dir, true);
    if (as_model && !offset) {
      ModelFlags model{dir + "/../model", c["layer"].get<std::int64_t>()};
      model.tokens = true;
      check_run(load_config("", model), lo, dir, true);
    }
  }

  // --model DIR --layer N --input FILE: only the folder's settings (not for
  // cases that pick another module by weights_prefix: T5's decoder).
  if (!as_model) return;
  if (decoder) {  // --model DIR --decoder-layer N [--cross --encoder-output FILE]
    INFO("as --model DIR --decoder-layer N");
    ModelFlags flags;
    flags.model = dir + "/../model";
    flags.decoder_layer = c["decoder_layer"].get<std::int64_t>();
    flags.cross = c.value("cross_attention", false);
    if (flags.cross) flags.encoder_output = dir + "/" + c["kv_input"].get<std::string>();
    LoadOptions lo;
    lo.input_path = dir + "/input.npy";
    check_run(load_config("", flags), lo, dir, true);
    return;
  }
  INFO("as --model DIR --layer N");
  // A case of a folder's other tower names it (a CLIPModel's vision tower: --model-type).
  const Config flags = load_config("", ModelFlags{dir + "/../model", c["layer"].get<std::int64_t>(),
                                                  c.value("model_type", std::string())});
  LoadOptions lo;
  lo.input_path = dir + "/input.npy";
  check_run(flags, lo, dir, true);
}

}  // namespace

TEST_CASE("golden folders: every model_type's layers match PyTorch") {
  // The cases on disk are the manifest's (every FOLDERS spec of tests/golden/gen/families:
  // layer<N>/, T5's decoder_self<N>/ and decoder_cross<N>/, a CLIPModel's vision_layer<N>/).
  const std::vector<test::GoldenCase> manifest = test::golden_manifest("folders");
  const std::vector<std::string> names = case_names();
  CHECK(names == test::golden_case_names("folders"));
  std::vector<std::string> folders, listed;
  for (const test::GoldenCase& entry : manifest) {
    folders.push_back(entry.name.substr(0, entry.name.find('/')));
    listed.push_back(entry.folder);
    CAPTURE(entry.name);
    try {
      check_case(entry);
    } catch (const std::exception& e) {
      FAIL_CHECK(entry.name << ": " << e.what());
    }
  }
  CHECK(folders == listed);
  folders.erase(std::unique(folders.begin(), folders.end()), folders.end());
  std::vector<std::string> on_disk;
  for (const auto& model : fs::directory_iterator(folders_root()))
    if (model.is_directory()) on_disk.push_back(model.path().filename().string());
  std::sort(on_disk.begin(), on_disk.end());
  CHECK(on_disk == folders);  // no folder without cases
}

TEST_CASE("golden folders: Gemma 4's layers have their own sizes, k_eq_v, v_norm, shared K/V") {
  auto folder = [](const std::string& name, std::int64_t layer) {
    return load_model_config(folders_root() + "/" + name + "/model", layer);
  };
  // gemma4 (text_config): sliding layers head_dim 8 and 2 KV heads, default rope over the head;
  // full layers global_head_dim 16, num_global_key_value_heads 1 with attention_k_eq_v, and
  // proportional rope (0.25) over all 16 dimensions.
  const Config local = folder("gemma4", 0), global = folder("gemma4", 1);
  CHECK(local.head_size == 8);
  CHECK(local.kv_heads() == 2);
  CHECK(local.spec.sliding_window == 3);
  CHECK_FALSE(local.k_eq_v);
  CHECK(local.spec.rope->rotary_dim == 8);
  CHECK(local.spec.rope->theta == 10000.0);
  CHECK_FALSE(local.spec.rope->scaling.has_value());
  CHECK(local.spec.v_norm->eps == 1e-6);
  CHECK(local.spec.scale == 1.0);
  CHECK(local.spec.qk_norm->weight_offset == 0);
  CHECK(local.weights_prefix == "model.language_model.layers.0.self_attn.");
  CHECK(global.head_size == 16);
  CHECK(global.kv_heads() == 1);
  CHECK(global.k_eq_v);
  CHECK_FALSE(global.spec.sliding_window.has_value());
  CHECK(global.spec.rope->rotary_dim == 16);
  CHECK(global.spec.rope->theta == 1000000.0);
  CHECK(global.spec.rope->scaling->type == "proportional");
  CHECK(*global.spec.rope->scaling->partial_rotary_factor == 0.25);
  CHECK(global.spec.v_norm.has_value());
  // gemma4_text (Gemma4ForCausalLM): no k_eq_v, so the full layer keeps its KV heads and its
  // v_proj; the class's default rope_parameters; the last 2 layers reuse layers 1 and 2's K/V.
  const Config full = folder("gemma4_text", 2);
  CHECK(full.head_size == 16);
  CHECK(full.kv_heads() == 1);
  CHECK_FALSE(full.k_eq_v);
  CHECK(full.spec.rope->scaling->type == "proportional");
  CHECK(full.weights_prefix == "model.layers.2.self_attn.");
  test::expect_error([&] { folder("gemma4_text", 3); }, Exit::usage, "--layer: layer 3 of ",
                     "reuses the keys and values of layer 1");
  test::expect_error([&] { folder("gemma4_text", 3); }, Exit::usage, "--layer: layer 3 of ",
                     "the layers that run are 0, 1, 2");
  test::expect_error([&] { folder("gemma4_text", 4); }, Exit::usage, "--layer: layer 4 of ",
                     "reuses the keys and values of layer 2");
}

TEST_CASE("golden folders: v3's gated, qk_norm-kind families are mapped per layer") {
  auto folder = [](const std::string& name, std::int64_t layer) {
    return load_model_config(folders_root() + "/" + name + "/model", layer);
  };
  // Qwen3-Next: full_attention_interval 2 makes layers 1 and 3 full attention.
  const Config next = folder("qwen3_next", 3);
  CHECK(next.spec.gate);
  CHECK(next.spec.rope->rotary_dim == 4);  // partial_rotary_factor 0.25 of 16
  CHECK(next.spec.qk_norm->weight_offset == 1);
  CHECK(next.spec.qk_norm->kind == QkNormKind::rms);
  CHECK(next.weights_prefix == "model.layers.3.self_attn.");
  // Linear-attention layers are refused, naming the type and the layers that run.
  test::expect_error([&] { folder("qwen3_next", 2); }, Exit::usage, "--layer: layer 2 of ",
                     "is a linear_attention layer, which attn-run does not run");
  test::expect_error([&] { folder("qwen3_next", 0); }, Exit::usage, "--layer: layer 0 of ",
                     "its attention layers are 1, 3");
  // Qwen3.5: the multimodal wrapper's text_config, layer_types, v5 rope_parameters.
  const Config q35 = folder("qwen3_5", 2);
  CHECK(q35.spec.gate);
  CHECK(q35.kv_heads() == 1);
  CHECK(q35.spec.rope->theta == 10000000.0);
  CHECK(q35.spec.rope->rotary_dim == 2);
  CHECK(q35.weights_prefix == "model.language_model.layers.2.self_attn.");
  test::expect_error([&] { folder("qwen3_5", 0); }, Exit::usage, "--layer: layer 0 of ",
                     "linear_attention");
  // Cohere: interleaved rope, per-head LayerNorm q/k norms from use_qk_norm.
  const Config cohere = folder("cohere", 1);
  CHECK(cohere.spec.rope->style == RopeStyle::interleaved);
  CHECK(cohere.spec.qk_norm->kind == QkNormKind::layer);
  CHECK(cohere.spec.qk_norm->per_head);
  CHECK(cohere.spec.qk_norm->eps == 1e-5);
  CHECK_FALSE(cohere.spec.gate);
  // Llama 4 (in llama4's text_config): 3 rope layers of 4 are chunked with L2 q/k norms, the
  // 4th has no rope and tunes its queries' temperature.
  const Config chunked = folder("llama4", 1), nope = folder("llama4", 3);
  CHECK(chunked.spec.attention_chunk == 3);
  CHECK(chunked.spec.qk_norm->kind == QkNormKind::l2);
  CHECK(chunked.spec.rope->style == RopeStyle::interleaved);
  CHECK(chunked.spec.rope->scaling->type == "llama3");
  CHECK_FALSE(chunked.spec.attn_temperature.has_value());
  CHECK(chunked.weights_prefix == "language_model.model.layers.1.self_attn.");
  CHECK_FALSE(nope.spec.rope.has_value());
  CHECK_FALSE(nope.spec.qk_norm.has_value());
  CHECK_FALSE(nope.spec.attention_chunk.has_value());
  CHECK(nope.spec.attn_temperature->floor_scale == 4.0);
  CHECK(nope.spec.attn_temperature->attn_scale == doctest::Approx(0.1));
  // Cohere 2: sliding layers rotate (interleaved), the global one has no rope.
  CHECK(folder("cohere2", 2).spec.sliding_window == 3);
  CHECK(folder("cohere2", 2).spec.rope->style == RopeStyle::interleaved);
  CHECK_FALSE(folder("cohere2", 3).spec.sliding_window.has_value());
  CHECK_FALSE(folder("cohere2", 3).spec.rope.has_value());
  // StableLM: partial rotary, q/k/v bias, one LayerNorm per head under q_layernorm.norms.{h}.
  const Config stablelm = folder("stablelm", 1);
  CHECK(stablelm.spec.rope->rotary_dim == 2);
  CHECK(stablelm.qkv_bias);
  CHECK_FALSE(stablelm.out_bias);
  CHECK(stablelm.spec.qk_norm->kind == QkNormKind::layer);
  CHECK(stablelm.spec.qk_norm->per_head);
}

TEST_CASE("golden folders: each folder's config.json is its family's, mapped per layer") {
  // What the folders exercise in the mapping, so a regenerated set cannot
  // silently lose a pattern.
  auto folder = [](const std::string& name, std::int64_t layer) {
    return load_model_config(folders_root() + "/" + name + "/model", layer);
  };
  const Config g3_local = folder("gemma3", 0), g3_global = folder("gemma3", 2);
  CHECK(g3_local.spec.sliding_window == 3);
  CHECK(g3_local.spec.rope->theta == 10000.0);
  CHECK(!g3_global.spec.sliding_window);
  CHECK(g3_global.spec.rope->theta == 1000000.0);
  CHECK(folder("gemma2", 0).spec.sliding_window == 4);
  CHECK(!folder("gemma2", 1).spec.sliding_window);
  CHECK(folder("gemma2", 1).spec.softcap == 2.0);
  CHECK(!folder("qwen2", 0).spec.sliding_window);
  CHECK(folder("qwen2", 2).spec.sliding_window == 3);
  CHECK(folder("gpt_oss", 0).spec.sliding_window == 3);
  CHECK(!folder("gpt_oss", 1).spec.sliding_window);
  CHECK(folder("gpt_oss", 1).spec.sinks);
  CHECK(folder("falcon", 0).kv_heads() == 2);  // n_head_kv
  CHECK(folder("falcon_mq", 0).kv_heads() == 1);
  CHECK(folder("falcon_rw", 0).spec.alibi.has_value());
  CHECK(folder("bloom", 1).spec.alibi.has_value());
  CHECK(folder("mpt", 0).spec.alibi.has_value());
  CHECK(folder("gpt_neox", 0).spec.rope->rotary_dim == 4);
  CHECK(folder("phi3", 0).spec.rope->rotary_dim == 6);
  CHECK(folder("olmo2", 0).spec.rope->theta == 500000.0);  // transformers v5 rope_parameters
  CHECK(folder("gpt2", 2).spec.scale == doctest::Approx(1.0 / (std::sqrt(6.0) * 3.0)));
  CHECK(folder("bert", 0).spec.causal == false);
  // v3's decoders
  CHECK(folder("gpt_bigcode", 0).kv_heads() == 1);  // multi_query
  CHECK(folder("gpt_bigcode_mha", 0).kv_heads() == 3);
  CHECK(folder("starcoder2", 1).spec.sliding_window == 4);
  CHECK(folder("granite", 0).spec.scale == 0.125);  // attention_multiplier
  CHECK(folder("phi", 0).spec.rope->rotary_dim == 4);
  CHECK(folder("gptj", 0).spec.rope->rotary_dim == 8);
  CHECK(folder("gptj", 0).spec.rope->style == RopeStyle::interleaved);
  CHECK(folder("internlm2", 0).kv_heads() == 2);
  CHECK(folder("smollm3", 2).spec.rope.has_value());
  CHECK(!folder("smollm3", 3).spec.rope.has_value());  // no_rope_layers
  CHECK(!folder("smollm3_swa", 0).spec.sliding_window);
  CHECK(folder("smollm3_swa", 1).spec.sliding_window == 3);
  CHECK(!folder("smollm3_swa", 1).spec.rope.has_value());
  // T5's family: scale 1, no biases, d_kv heads, block 0's table for every
  // encoder layer (UMT5: each layer's own), T5Config's default max_distance.
  const Config t5 = folder("t5", 2);
  CHECK(t5.spec.scale == 1.0);
  CHECK(t5.head_size == 6);
  CHECK_FALSE(t5.qkv_bias);
  CHECK_FALSE(t5.out_bias);
  REQUIRE(t5.spec.relative_bias.has_value());
  CHECK(t5.spec.relative_bias->table ==
        "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  CHECK(t5.spec.relative_bias->num_buckets == 8);
  CHECK(t5.spec.relative_bias->max_distance == 128);
  CHECK(t5.spec.relative_bias->bidirectional);
  CHECK(folder("flan_t5", 1).spec.relative_bias->num_buckets == 32);
  CHECK(folder("umt5", 2).spec.relative_bias->table.empty());
  // DeepSeek's mla: q_lora_rank null (V2-Lite), D = max(Dn + Dr, Dv), rope on the Dr part,
  // the scale with yarn's mscale_all_dim squared, rope_interleave false, v5's head_dim ignored.
  const Config lite = folder("deepseek_v2_lite", 0), v3 = folder("deepseek_v3", 1);
  REQUIRE(lite.mla.has_value());
  CHECK(lite.mla->q_lora_rank == 0);
  CHECK(lite.spec.rope->style == RopeStyle::interleaved);
  const double m = 0.1 * 0.707 * std::log(40.0) + 1.0;
  CHECK(lite.spec.scale == doctest::Approx(m * m / std::sqrt(12.0)));
  CHECK(v3.mla->q_lora_rank == 24);
  CHECK(v3.head_size == 12);
  CHECK(v3.spec.rope->rotary_dim == 4);
  const Config v5 = folder("deepseek_v3_v5", 0);
  CHECK(v5.head_size == 12);
  CHECK(v5.spec.rope->style == RopeStyle::half);
  CHECK(v5.qkv_bias);
  const Config k25 = folder("kimi_k25", 0);  // kimi_k2 nested in kimi_k25's text_config
  CHECK(k25.weights_prefix == "language_model.model.layers.0.self_attn.");
  CHECK(k25.mla->q_lora_rank == 16);
}

TEST_CASE("golden folders: attn-run --model DIR --layer N end to end") {
  struct Run {
    const char* name;
    int layer;
    const char* weights;  // the file the folder's weights come from
  };
  // Sharded bf16 safetensors, a folder holding both model.safetensors and
  // pytorch_model.bin, pytorch_model.bin alone (f16), and Gemma 3's global layer.
  for (const Run& r :
       {Run{"gemma2", 1, "model.safetensors.index.json"}, Run{"gpt2", 2, "model.safetensors"},
        Run{"gemma3", 2, "model.safetensors"}, Run{"gpt_neox", 0, "model.safetensors"},
        Run{"bloom", 1, "pytorch_model.bin"},
        // v3: Qwen3.5's gated layer in its wrapper's shards, Llama 4's no-rope layer with
        // temperature, StableLM's per-head norms from a pytorch_model.bin
        Run{"qwen3_5", 2, "model.safetensors.index.json"}, Run{"llama4", 3, "model.safetensors"},
        Run{"stablelm", 1, "pytorch_model.bin"}}) {
    const std::string name = r.name;
    CAPTURE(name);
    const std::string model = folders_root() + "/" + r.name + "/model";
    const std::string dir = folders_root() + "/" + r.name + "/layer" + std::to_string(r.layer);
    const json c = json::parse(test::read_text(dir + "/case.json"));
    test::TempDir t;
    // A padded case (gpt_neox, bloom) runs through --config case.json.
    const std::string how = c.contains("attention_mask")
                                ? " --config " + test::q(dir + "/case.json")
                                : " --model " + test::q(model) + " --layer " +
                                      std::to_string(r.layer) + " --input " +
                                      test::q(dir + "/input.npy");
    const test::RunResult res = test::run(test::quoted_binary() + how + " -o " + test::q(t / "o"));
    REQUIRE_MESSAGE(res.exit_code == 0, res.err);
    check_close(to_float32(read_npy(t / "o/context.npy"), "context.npy", false),
                expected(dir, "context"), "context.npy");
    check_close(to_float32(read_npy(t / "o/attention.npy"), "attention.npy", false),
                expected(dir, "attention"), "attention.npy");
    const json rj = json::parse(test::read_text(t / "o/run.json"));
    const json& from = rj["config"]["from_model"];
    REQUIRE(from.is_object());
    const std::string weights = from["weights"].get<std::string>();
    CHECK(weights.find(r.name) != std::string::npos);
    CHECK(weights.substr(weights.rfind('/') + 1) == r.weights);
    CHECK(from["weights_prefix"].get<std::string>().find("." + std::to_string(r.layer) + ".") !=
          std::string::npos);
    CHECK(from.contains("num_heads"));
  }
}

TEST_CASE("golden folders: a T5 config naming a decoder module takes the decoder's table") {
  // The folder's relative_bias.table for an encoder layer is the encoder's block 0; a
  // weights_prefix of the decoder's self-attention takes the decoder's settings, its table
  // as T5Stack shares it (decoder block 0's, never the encoder's), one-directional.
  test::TempDir tmp;
  const std::string model = folders_root() + "/t5/model", input = tmp / "x.npy";
  test::write_text(input, encode_npy(Tensor({5, 24}, 0.5f)));
  auto config = [&](const std::string& prefix) {
    const std::string path = tmp / "c.json";
    test::write_text(path, json{{"model", model},
                                {"layer", 0},
                                {"input", input},
                                {"causal", true},
                                {"weights_prefix", prefix}}
                               .dump());
    return load_config(path);
  };
  const Config c2 = config("decoder.block.2.layer.0.SelfAttention.");
  REQUIRE(c2.spec.relative_bias.has_value());
  CHECK(c2.spec.relative_bias->table ==
        "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight");
  CHECK_FALSE(c2.spec.relative_bias->bidirectional);
  CHECK(c2.layer == 2);
  CHECK(c2.module == "decoder_self");
  CHECK(load_run(c2, LoadOptions{}).weights.relative_bias.shape == std::vector<std::size_t>{8, 4});
  const Config c0 = config("decoder.block.0.layer.0.SelfAttention.");
  CHECK(load_run(c0, LoadOptions{}).weights.relative_bias.shape == std::vector<std::size_t>{8, 4});
}

TEST_CASE("golden folders: --model opens the weights once, for the key names and the tensors") {
  // The index opened for the key names is the one load_run reads: after the
  // config is read, another file renamed over the weights (an unrelated
  // safetensors with none of the layer's keys) changes nothing, where a
  // second open would read the new file and fail.
  test::TempDir tmp;
  const std::string model = tmp / "model", case_dir = folders_root() + "/gemma/layer0";
  fs::copy(folders_root() + "/gemma/model", model);
  const Config cfg = load_model_config(model, 0);
  REQUIRE(cfg.model_weights != nullptr);
  CHECK(cfg.model_weights->source() == cfg.weights);
  fs::copy_file(folders_root() + "/gpt2/model/model.safetensors", tmp / "other.safetensors");
  fs::rename(tmp / "other.safetensors", model + "/model.safetensors");
  CHECK_THROWS(load_run(load_model_config(model, 0), LoadOptions{}));  // a fresh open sees it
  LoadOptions lo;
  lo.input_path = case_dir + "/input.npy";
  check_run(cfg, lo, case_dir, true);
}

TEST_CASE("golden folders: every family of the table has a golden folder") {
  // Adding a family is a row and a golden fixture (docs/adding-a-family.md):
  // each supported model_type must be some folder's (after unwrapping), so a
  // row without a fixture fails here.
  std::vector<std::string> covered;
  for (const auto& entry : fs::directory_iterator(folders_root())) {
    const std::string model = (entry.path() / "model").string();
    if (fs::exists(model + "/config.json")) covered.push_back(open_model_folder(model).model_type);
  }
  for (const std::string& type : supported_model_types()) {
    CAPTURE(type);
    CHECK(std::find(covered.begin(), covered.end(), type) != covered.end());
  }
}

// A post-norm family's attention module returns LayerNorm(o_proj(context) + input)
// (BertAttention, through BertSelfOutput; DistilBERT's TransformerBlock sa_layer_norm, OPT-350m's
// OPTDecoderLayer self_attn_layer_norm):
// expected/residual_norm.npy (the manifest's "residual_norm" cases) is that output, which
// --with-residual-norm and the config key "residual_norm": true give.
TEST_CASE("golden folders: --with-residual-norm matches BertAttention's output") {
  std::vector<std::string> with_norm;
  for (const std::string& name : case_names())
    if (fs::exists(folders_root() + "/" + name + "/expected/residual_norm.npy"))
      with_norm.push_back(name);
  // bert, roberta, xlm_roberta, electra (BertSelfOutput), distilbert, OPT-350m
  CHECK(with_norm == test::golden_case_names("folders", "residual_norm"));
  CHECK_FALSE(with_norm.empty());
  for (const std::string& name : with_norm) {
    CAPTURE(name);
    const std::string dir = folders_root() + "/" + name;
    const Tensor want = expected(dir, "residual_norm");
    // The flag (--config case.json --with-residual-norm) and the config key.
    ModelFlags flags;
    flags.residual_norm = true;
    const Config by_flag = load_config(dir + "/case.json", flags);
    json c = json::parse(test::read_text(dir + "/case.json"));
    c["residual_norm"] = true;
    const Config by_key = parse_config(c.dump(), dir + "/case.json");
    for (const Config* cfg : {&by_flag, &by_key}) {
      REQUIRE(cfg->spec.residual_norm.has_value());
      const std::string& prefix = cfg->spec.residual_norm->prefix;
      // The layer's own norm: BertSelfOutput's, DistilBERT's or OPT-350m's.
      const auto ends_with = [&](const std::string& tail) {
        return prefix.size() >= tail.size() &&
               prefix.compare(prefix.size() - tail.size(), tail.size(), tail) == 0;
      };
      const std::string layer = "." + std::to_string(cfg->layer.value()) + ".";
      const bool norm_named = ends_with(layer + "attention.output.LayerNorm.") ||
                              ends_with(layer + "sa_layer_norm.") ||
                              ends_with(layer + "self_attn_layer_norm.");
      CHECK_MESSAGE(norm_named, prefix);
      const LoadedRun run = load_run(*cfg, {});
      const AttentionSpec spec = attention_spec(*cfg);
      for (bool with_maps : {false, true}) {
        INFO((with_maps ? "maps kernel" : "streaming kernel"));
        check_close(run_forward(run, spec, with_maps).context, want, "residual_norm context");
      }
    }
    // Without it the context is the output projection's: not BertAttention's output.
    const Config plain = load_config(dir + "/case.json");
    CHECK_FALSE(plain.spec.residual_norm.has_value());
    const Tensor ctx = run_forward(load_run(plain, {}), attention_spec(plain), false).context;
    float diff = 0.0f;
    for (std::size_t i = 0; i < ctx.size(); ++i)
      diff = std::max(diff, std::fabs(ctx.data[i] - want.data[i]));
    CHECK(diff > 0.1f);
  }
}

// Golden tests of GGUF files (CONTRACT.md "(v3) GGUF") against
// PyTorch: every tests/golden/gguf/<name>/ (written by tests/golden/generate.py) holds a
// model.gguf as llama.cpp's converter writes it (its metadata, Q/K rows
// permuted for llama, Gemma's 1 + w norms, Llama 3's rope_freqs.weight, the
// tensors in F32/F16/BF16 and in block types) and layer<N>/ cases with torch's
// context and maps of the Hugging Face layer on the dequantized weights. Each
// case runs through load_config (case.json: "model": "../model.gguf") and
// forward on both kernels; llama's also without the un-permutation, which
// must fail. Context and maps must agree within 1e-5 of the output's scale.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attn/attention.h"
#include "attn/config.h"
#include "attn/model_folder.h"
#include "attn/npy.h"
#include "attn/run.h"
#include "attn/state_dict.h"
#include "check_close.h"
#include "golden_manifest.h"
#include "test_util.h"

namespace fs = std::filesystem;
using namespace attn;
using nlohmann::json;

namespace {

const std::string& gguf_root() {
  static const std::string root = test::source_path("tests/golden/gguf");
  return root;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& model : fs::directory_iterator(gguf_root())) {
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

// Context and maps of a run on the kernel that writes maps, or the streaming one.
std::pair<Tensor, Tensor> run_forward(const Config& cfg, bool with_maps,
                                      const LoadOptions& lo = {}) {
  const LoadedRun run = load_run(cfg, lo);
  const AttentionSpec spec = attention_spec(cfg);
  const std::size_t B = run.x.shape[0], L = run.x.shape[1];
  TensorSink sink(B, std::size_t(run.weights.H), L, map_keys(run.weights, spec, run.keys()));
  ForwardOptions opt;
  opt.threads = 2;
  if (with_maps) opt.attention = &sink;
  Tensor ctx;
  forward(run.weights, spec, run.forward_inputs(), ctx, opt);
  ctx = context_as_given(std::move(ctx), run);
  Tensor maps = std::move(sink.maps);
  if (!run.batched) maps.shape.erase(maps.shape.begin());
  return {std::move(ctx), std::move(maps)};
}

// Whether the manifest lists `check` for `name` in `set`.
bool has_check(const std::string& set, const std::string& name, const std::string& check) {
  for (const test::GoldenCase& c : test::golden_manifest(set))
    if (c.name == name) return c.has(check);
  return false;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    m = std::max(m, double(std::fabs(a.data[i] - b.data[i])));
  return m;
}

}  // namespace

TEST_CASE("golden gguf: every architecture's layers match PyTorch on the dequantized weights") {
  // The cases on disk are the manifest's: every GGUF spec of tests/golden/gen/families (the
  // converters' architectures, every dequantized block type but MXFP4, GGUF v2 and v3,
  // per-layer head counts, rope_freqs.weight, gguf-py's own files: an i32 head_count_kv array,
  // general.alignment 64).
  const std::vector<std::string> names = case_names();
  CHECK(names == test::golden_case_names("gguf"));
  for (const std::string& name : names) {
    CAPTURE(name);
    const std::string dir = gguf_root() + "/" + name;
    try {
      const Config cfg = load_config(dir + "/case.json");
      REQUIRE(cfg.from_model != nullptr);
      for (bool with_maps : {false, true}) {
        INFO((with_maps ? "maps kernel" : "streaming kernel"));
        const auto [ctx, maps] = run_forward(cfg, with_maps);
        test::check_close(ctx, expected(dir, "context"), "context");
        if (with_maps) test::check_close(maps, expected(dir, "attention"), "attention");
      }
      // --residual: blk.N.attn_norm of residual.npy (the residual stream) is input.npy.
      CHECK(fs::exists(dir + "/residual.npy") == has_check("gguf", name, "input_norm"));
      if (fs::exists(dir + "/residual.npy")) {
        ModelFlags residual;
        residual.input_norm = true;
        const Config rc = load_config(dir + "/case.json", residual);
        REQUIRE(rc.spec.input_norm.has_value());
        CHECK(rc.spec.input_norm->offset == 0);  // Gemma's stored 1 + w
        LoadOptions lo;
        lo.input_path = dir + "/residual.npy";
        for (bool with_maps : {false, true}) {
          INFO((with_maps ? "--residual, maps kernel" : "--residual, streaming kernel"));
          const auto [ctx, maps] = run_forward(rc, with_maps, lo);
          test::check_close(ctx, expected(dir, "context"), "context");
          if (with_maps) test::check_close(maps, expected(dir, "attention"), "attention");
        }
      }
      // --tokens: token_embd's rows of tokens.npy (dequantized row by row; Gemma's sqrt(C) in
      // float32), then blk.0.attn_norm, are residual.npy: the same outputs.
      CHECK(fs::exists(dir + "/tokens.npy") == has_check("gguf", name, "tokens"));
      if (fs::exists(dir + "/tokens.npy")) {
        ModelFlags tokens;
        tokens.tokens = true;
        const Config tc = load_config(dir + "/case.json", tokens);
        REQUIRE(tc.embedding.has_value());
        CHECK(tc.embedding->word == "token_embd.weight");
        CHECK(tc.embedding->scale_dtype == EmbeddingDtype::float32);
        LoadOptions lo;
        lo.tokens = dir + "/tokens.npy";
        Tensor stream = to_float32(read_npy(dir + "/residual.npy"), "residual.npy", false);
        stream.shape.insert(stream.shape.begin(), 1);  // (S, C) as (1, S, C)
        test::check_close(load_run(tc, lo).x, stream, "embedding");
        for (bool with_maps : {false, true}) {
          INFO((with_maps ? "--tokens, maps kernel" : "--tokens, streaming kernel"));
          const auto [ctx, maps] = run_forward(tc, with_maps, lo);
          test::check_close(ctx, expected(dir, "context"), "context");
          if (with_maps) test::check_close(maps, expected(dir, "attention"), "attention");
        }
      }
    } catch (const std::exception& e) {
      FAIL_CHECK(name << ": " << e.what());
    }
  }
}

TEST_CASE("golden gguf: llama-like files without the Q/K un-permutation do not match") {
  // The same case with blk.N.attn_q/attn_k read in the file's (permuted) row
  // order: the un-permutation is what makes it equal the Hugging Face layer.
  for (const char* name :
       {"llama/layer0", "llama_kquants/layer1", "granite/layer1", "internlm2/layer1",
        "smollm3/layer2", "granitemoe/layer0", "llama_layer_heads/layer1"}) {
    CAPTURE(name);
    const std::string dir = gguf_root() + "/" + name;
    Config cfg = load_config(dir + "/case.json");
    REQUIRE(cfg.model_weights != nullptr);
    const std::string prefix = cfg.weights_prefix;
    const StateDict raw = read_gguf_tensors(cfg.weights);
    StateDict permuted = *cfg.model_weights;
    for (const char* t : {"attn_q.weight", "attn_k.weight"})
      permuted.add(prefix + t, raw.read_f32(prefix + t, false));
    const Tensor want = expected(dir, "context");
    test::check_close(run_forward(cfg, false).first, want, "context");  // as a control
    cfg.model_weights = std::make_shared<const StateDict>(std::move(permuted));
    CHECK(max_abs_diff(run_forward(cfg, false).first, want) > 1e-2);
  }
}

TEST_CASE("golden gguf: the metadata maps onto the family rows") {
  auto layer = [](const std::string& name, std::int64_t n) {
    return load_model_config(gguf_root() + "/" + name + "/model.gguf", n);
  };
  const ModelFolder m = open_model_folder(gguf_root() + "/gemma3/model.gguf");
  CHECK(m.model_type == "gemma3_text");
  CHECK(m.gguf_architecture == "gemma3");
  CHECK(m.num_layers == 6);
  CHECK(layer("gemma3", 0).spec.sliding_window == 3);  // llama.cpp's period 6: 0-4 slide
  CHECK(layer("gemma3", 0).spec.rope->theta == 10000.0);
  CHECK(!layer("gemma3", 5).spec.sliding_window);
  CHECK(layer("gemma3", 5).spec.rope->theta == 1e6);
  CHECK(layer("gemma3", 5).spec.qk_norm->weight_offset == 0);      // stored as 1 + w
  CHECK(layer("gemma3_swa_base", 0).spec.rope->theta == 20000.0);  // rope.freq_base_swa
  CHECK(layer("gemma3_swa_base", 5).spec.rope->theta == 1e6);
  CHECK(!layer("gemma3_swa_layers", 0).spec.sliding_window);  // [false, true, true], not period 6
  CHECK(layer("gemma3_swa_layers", 1).spec.sliding_window == 3);
  CHECK(layer("gemma3_swa_layers", 1).spec.rope->theta == 10000.0);
  CHECK(layer("gemma2", 0).spec.rope->theta == 10000.0);  // no freq_base in the file
  CHECK(layer("gemma2", 0).spec.softcap == 2.0);
  CHECK(layer("gemma2", 0).spec.sliding_window == 4);
  CHECK(!layer("gemma2", 1).spec.sliding_window);
  CHECK(layer("gpt_oss", 1).spec.sinks);
  CHECK(layer("gpt_oss", 0).spec.sliding_window == 3);
  CHECK(layer("llama", 0).weights_prefix == "blk.0.");
  // rope_freqs.weight: Llama 3's rule as stored divisors (rope_type llama3, freq_factors).
  REQUIRE(layer("llama", 1).spec.rope->scaling.has_value());
  CHECK(layer("llama", 1).spec.rope->scaling->type == "llama3");
  CHECK(layer("llama", 1).spec.rope->scaling->freq_factors.size() == 4);
  CHECK(layer("llama", 1).spec.rope->scaling->long_factor.empty());
  CHECK(layer("qwen2", 0).qkv_bias);
  CHECK(layer("phi3", 1).spec.rope->rotary_dim == 6);  // rope.dimension_count
  CHECK(layer("phi3", 1).spec.rope->scaling->long_factor == std::vector<double>{1.0, 1.5, 2.0});
  CHECK(layer("phi3", 1).spec.sliding_window == 5);
  CHECK(layer("mistral", 0).kv_heads() == 1);
  CHECK(layer("olmo2", 1).spec.qk_norm->scope_all);
  CHECK(layer("bloom", 1).spec.alibi.has_value());
  CHECK(layer("gpt_neox", 0).spec.rope->rotary_dim == 4);
  CHECK(open_model_folder(gguf_root() + "/gpt2/model.gguf").model_type == "gpt2");
  CHECK(layer("gpt2", 1).layout == Layout::fused);  // [Q | K | V] rows, not Conv1D's
  CHECK(layer("gpt2", 1).qkv_bias);
  CHECK(layer("gpt2", 1).out_bias);
  CHECK(!layer("gpt2", 1).spec.rope);  // learned positions, outside the attention
  CHECK(layer("gpt2", 1).spec.causal);
  CHECK(open_model_folder(gguf_root() + "/falcon/model.gguf").model_type == "falcon");
  CHECK(layer("falcon", 0).layout == Layout::fused);
  CHECK(layer("falcon", 0).kv_heads() == 2);
  CHECK(layer("falcon", 0).spec.rope->style == RopeStyle::half);
  CHECK(!layer("falcon", 0).qkv_bias);
  CHECK(layer("falcon_mq", 1).kv_heads() == 1);
  CHECK(open_model_folder(gguf_root() + "/mpt/model.gguf").model_type == "mpt");
  CHECK(layer("mpt", 1).layout == Layout::fused);
  CHECK(layer("mpt", 1).spec.alibi.has_value());
  CHECK(!layer("mpt", 1).spec.rope);
  CHECK(!layer("mpt", 1).qkv_bias);
  // head_count [4, 2], head_count_kv [2, 1]: each layer its own (llama.cpp's n_head(il)).
  CHECK(layer("llama_layer_heads", 0).num_heads == 4);
  CHECK(layer("llama_layer_heads", 0).kv_heads() == 2);
  CHECK(layer("llama_layer_heads", 1).num_heads == 2);
  CHECK(layer("llama_layer_heads", 1).kv_heads() == 1);
}

TEST_CASE("golden gguf: CONTRACT.md v3's families map onto their rows") {
  auto layer = [](const std::string& name, std::int64_t n) {
    return load_model_config(gguf_root() + "/" + name + "/model.gguf", n);
  };
  auto type_of = [](const std::string& name) {
    return open_model_folder(gguf_root() + "/" + name + "/model.gguf").model_type;
  };
  CHECK(type_of("starcoder2") == "starcoder2");
  CHECK(layer("starcoder2", 0).qkv_bias);  // use_bias from the file's attn_q.bias
  CHECK(layer("starcoder2", 0).out_bias);
  CHECK(!layer("starcoder2", 0).spec.sliding_window);  // the converter writes none
  CHECK(layer("starcoder2", 1).spec.rope->theta == 100000.0);
  CHECK(type_of("granite") == "granite");
  CHECK(layer("granite", 1).spec.scale == 0.125);  // attention.scale
  CHECK(layer("granite", 1).kv_heads() == 1);
  CHECK(!layer("granite", 1).qkv_bias);
  CHECK(type_of("granitemoe") == "granite");
  CHECK(layer("granitemoe", 0).spec.scale == 0.0625);
  CHECK(type_of("qwen3moe") == "qwen3_moe");
  CHECK(layer("qwen3moe", 0).spec.qk_norm.has_value());
  CHECK(type_of("qwen3_next") == "qwen3_next");
  CHECK(layer("qwen3_next", 1).spec.gate);
  CHECK(layer("qwen3_next", 3).spec.qk_norm->weight_offset == 0);  // stored as 1 + w
  CHECK(layer("qwen3_next", 3).spec.rope->rotary_dim == 4);
  CHECK_THROWS(layer("qwen3_next", 0));  // linear attention (full_attention_interval 2)
  CHECK(type_of("qwen3_5") == "qwen3_5_text");
  CHECK(layer("qwen3_5", 3).spec.gate);
  CHECK(layer("qwen3_5", 3).spec.qk_norm->weight_offset == 0);
  CHECK_THROWS(layer("qwen3_5", 2));
  CHECK(type_of("command_r") == "cohere");
  CHECK(layer("command_r", 0).spec.qk_norm.has_value());  // use_qk_norm from attn_q_norm
  CHECK(layer("command_r", 0).spec.rope->style == RopeStyle::interleaved);
  CHECK(type_of("cohere2") == "cohere2");
  CHECK(layer("cohere2", 2).spec.sliding_window == 3);
  CHECK(!layer("cohere2", 3).spec.sliding_window);
  CHECK(!layer("cohere2", 3).spec.rope);
  CHECK(type_of("stablelm") == "stablelm");
  CHECK(layer("stablelm", 0).qkv_bias);  // use_qkv_bias
  CHECK(!layer("stablelm", 0).out_bias);
  CHECK(layer("stablelm", 1).spec.rope->rotary_dim == 2);
  CHECK(layer("stablelm", 1).spec.rope->theta == 10000.0);  // no freq_base in the file
  CHECK(type_of("internlm2") == "internlm2");
  CHECK(layer("internlm2", 1).kv_heads() == 2);
  CHECK(layer("internlm2", 1).layout == Layout::proj);  // attn_q/k/v, not wqkv
  CHECK(type_of("smollm3") == "smollm3");
  CHECK(layer("smollm3", 2).spec.rope.has_value());
  CHECK(!layer("smollm3", 3).spec.rope);  // llama.cpp's every 4th layer
  CHECK(type_of("starcoder") == "gpt_bigcode");
  CHECK(layer("starcoder", 0).kv_heads() == 1);
  CHECK(layer("starcoder_mha", 1).kv_heads() == 2);  // attn_qkv of 3C rows
  CHECK(layer("starcoder_mha", 1).layout == Layout::neox);
  CHECK(type_of("phi2") == "phi");
  CHECK(layer("phi2", 0).spec.rope->rotary_dim == 6);
  CHECK(layer("phi2", 0).qkv_bias);
  CHECK(type_of("llama4") == "llama4_text");
  CHECK(layer("llama4", 1).spec.attention_chunk == 8192);  // llama.cpp's, not in the file
  CHECK(layer("llama4", 1).spec.qk_norm->kind == QkNormKind::l2);
  CHECK(layer("llama4", 1).spec.rope->scaling.has_value());  // rope_freqs.weight
  CHECK(!layer("llama4", 3).spec.rope);
  CHECK(layer("llama4", 3).spec.attn_temperature->floor_scale == 8192.0);
  CHECK(layer("llama4_maverick", 1).spec.attention_chunk == 8192);
  CHECK(!layer("llama4_maverick", 1).spec.qk_norm);           // 128 experts: use_qk_norm false
  CHECK(layer("llama4_mobilellm", 3).spec.rope.has_value());  // sliding_window 0: rope everywhere
  CHECK(!layer("llama4_mobilellm", 3).spec.attention_chunk);
  CHECK(type_of("deepseek_v3") == "deepseek_v3");
  const Config v3 = layer("deepseek_v3", 1);
  REQUIRE(v3.mla.has_value());
  CHECK(v3.mla->q_lora_rank == 32);
  CHECK(v3.mla->kv_lora_rank == 32);
  CHECK(v3.mla->qk_nope_head_dim == 8);  // key_length_mla - rope.dimension_count
  CHECK(v3.mla->v_head_dim == 6);        // value_length_mla
  CHECK(layer("deepseek_v2_lite", 0).mla->q_lora_rank == 0);  // none: q_proj
  const ModelFolder ds = open_model_folder(gguf_root() + "/deepseek_v2_lite/model.gguf");
  CHECK(std::fabs(ds.hf["rope_scaling"]["mscale_all_dim"].get<double>() - 0.707) < 1e-6);
  CHECK(layer("deepseek_v2_lite_old", 1).mla->qk_nope_head_dim == 8);  // from key_length
  CHECK(layer("deepseek_v2_lite_old", 1).mla->v_head_dim == 8);
  CHECK(type_of("bert") == "bert");
  CHECK(!layer("bert", 0).spec.causal);
  CHECK(layer("bert", 0).qkv_bias);
  CHECK(type_of("modernbert") == "modernbert");
  CHECK(!layer("modernbert", 0).spec.sliding_window);  // global_attn_every_n_layers 3, from 0
  CHECK(layer("modernbert", 0).spec.rope->theta == 160000.0);
  CHECK(layer("modernbert", 1).spec.sliding_window.has_value());
  CHECK(layer("modernbert", 1).spec.rope->theta == 10000.0);  // rope.freq_base_swa
  CHECK(type_of("t5") == "t5");
  CHECK(layer("t5", 1).weights_prefix == "enc.blk.1.");
  CHECK(layer("t5", 1).spec.relative_bias->table == "enc.blk.0.attn_rel_b.weight");
  CHECK(layer("t5", 1).spec.relative_bias->max_distance == 128);  // llama.cpp's
  CHECK(type_of("umt5") == "umt5");                               // a table in every block
  CHECK(layer("umt5", 1).spec.relative_bias->table.empty());
}

TEST_CASE("golden gguf: the decoders of families_text.cpp map onto their rows") {
  auto layer = [](const std::string& name, std::int64_t n) {
    return load_model_config(gguf_root() + "/" + name + "/model.gguf", n);
  };
  auto type_of = [](const std::string& name) {
    return open_model_folder(gguf_root() + "/" + name + "/model.gguf").model_type;
  };
  CHECK(type_of("glm4") == "glm4");
  CHECK(layer("glm4", 0).spec.rope->rotary_dim == 8);  // rope.dimension_count, half of 16
  CHECK(layer("glm4", 0).spec.rope->style == RopeStyle::interleaved);
  CHECK(layer("glm4", 0).qkv_bias);
  CHECK(!layer("glm4", 0).out_bias);
  CHECK(type_of("glm4moe") == "glm4_moe");
  CHECK(layer("glm4moe", 1).spec.rope->style == RopeStyle::half);
  CHECK(layer("glm4moe", 1).spec.qk_norm.has_value());  // use_qk_norm from attn_q_norm
  CHECK(type_of("exaone4") == "exaone4");
  CHECK(layer("exaone4", 2).spec.sliding_window == 3);  // the file's window at 64 layers
  CHECK(layer("exaone4", 2).spec.rope->scaling.has_value());
  CHECK(!layer("exaone4", 3).spec.sliding_window);
  CHECK(!layer("exaone4", 3).spec.rope);                    // global NoPE
  CHECK(!layer("exaone4_swa_off", 0).spec.sliding_window);  // llama.cpp: no window below 64 layers
  CHECK(layer("exaone4_swa_off", 1).spec.rope.has_value());
  CHECK(type_of("ernie4_5") == "ernie4_5");
  CHECK(layer("ernie4_5", 1).spec.rope->style == RopeStyle::interleaved);
  CHECK(type_of("ernie4_5_moe") == "ernie4_5_moe");
  CHECK(layer("ernie4_5_moe", 0).qkv_bias);  // use_bias from attn_q.bias
  CHECK(layer("ernie4_5_moe", 0).out_bias);
  CHECK(type_of("seed_oss") == "seed_oss");
  CHECK(layer("seed_oss", 0).qkv_bias);
  CHECK(layer("seed_oss", 0).out_bias);  // attention_out_bias from attn_output.bias
  CHECK(type_of("apertus") == "apertus");
  CHECK(layer("apertus", 1).spec.qk_norm.has_value());
  CHECK(layer("apertus", 1).spec.rope->scaling.has_value());  // rope_freqs.weight
  CHECK(type_of("qwen2_moe") == "qwen2_moe");
  CHECK(layer("qwen2_moe", 1).qkv_bias);
  CHECK(!layer("qwen2_moe", 1).out_bias);
  CHECK(type_of("qwen3_moe") == "qwen3_moe");
  CHECK(layer("qwen3_moe", 0).head_size == 16);  // key_length, not C / H
  CHECK(type_of("olmo3") == "olmo3");            // olmo2 with a window
  CHECK(layer("olmo3", 0).spec.sliding_window == 3);
  CHECK(!layer("olmo3", 0).spec.rope->scaling);  // the sliding layers' rope unscaled
  CHECK(!layer("olmo3", 3).spec.sliding_window);
  CHECK(layer("olmo3", 3).spec.rope->scaling.has_value());
  CHECK(type_of("olmo2") == "olmo2");  // without a window, OLMo 2's row
}

TEST_CASE("golden gguf: Gemma 4's per-layer-type keys map onto the gemma4_text row") {
  auto layer = [](const std::string& name, std::int64_t n) {
    return load_model_config(gguf_root() + "/" + name + "/model.gguf", n);
  };
  const ModelFolder m = open_model_folder(gguf_root() + "/gemma4/model.gguf");
  CHECK(m.model_type == "gemma4_text");
  CHECK(m.gguf_architecture == "gemma4");
  // Sliding layer: key_length_swa, head_count_kv's entry, rope.freq_base_swa, whole head.
  const Config s = layer("gemma4", 0);
  CHECK(s.head_size == 8);
  CHECK(s.kv_heads() == 2);
  CHECK(s.spec.sliding_window == 3);
  CHECK(s.spec.rope->theta == 10000.0);
  CHECK(s.spec.rope->rotary_dim == 8);
  CHECK(!s.spec.rope->scaling);
  CHECK(s.spec.scale == 1.0);
  CHECK(s.spec.qk_norm->weight_offset == 0);  // stored as w (norm_shift 0), multiplied by w
  CHECK(s.spec.v_norm.has_value());
  CHECK(!s.k_eq_v);
  // Full layer: key_length, k_eq_v (no attn_v), head_count_kv's entry, rope_freqs.weight's
  // 2 turned pairs of 8 as the proportional fraction 0.25 at rope.freq_base.
  const Config f = layer("gemma4", 1);
  CHECK(f.head_size == 16);
  CHECK(f.kv_heads() == 1);
  CHECK(f.k_eq_v);
  CHECK(!f.spec.sliding_window);
  CHECK(f.spec.rope->theta == 1e6);
  CHECK(f.spec.rope->rotary_dim == 16);
  REQUIRE(f.spec.rope->scaling.has_value());
  CHECK(f.spec.rope->scaling->type == "proportional");
  CHECK(f.spec.rope->scaling->partial_rotary_factor == 0.25);
  // E2B's shape: attn_v on the full layers (no k_eq_v), one head_count_kv for all, and the
  // last shared_kv_layers layers refused (their K/V are an earlier layer's).
  CHECK(!layer("gemma4_e2b", 2).k_eq_v);
  CHECK(layer("gemma4_e2b", 2).kv_heads() == 1);
  CHECK(layer("gemma4_e2b", 2).spec.rope->theta == 500000.0);
  CHECK(layer("gemma4_e2b", 1).spec.rope->theta == 20000.0);
  CHECK(layer("gemma4_e2b", 1).spec.sliding_window == 4);
  const ModelFolder e2b = open_model_folder(gguf_root() + "/gemma4_e2b/model.gguf");
  CHECK(e2b.hf["num_kv_shared_layers"] == 2);
  CHECK_THROWS(layer("gemma4_e2b", 3));
  CHECK_THROWS(layer("gemma4_e2b", 4));
}

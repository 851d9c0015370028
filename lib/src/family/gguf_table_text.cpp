// The GGUF architectures of families_text.cpp's decoders (gguf_table.h), read,
// not copied, from llama.cpp's converter (convert_hf_to_gguf.py, conversion/
// glm.py, exaone.py, ernie.py, olmo.py, llama.py, qwen.py, hunyuan.py) and
// src/llama-model.cpp's llama_model_rope_type (NORM architectures whose
// Hugging Face rope turns pairs are left unpermuted, NEOX ones are
// rotate_half's own) and load_hparams (src/models/<arch>.cpp).
#include "family/gguf_table.h"

namespace attn::family {

namespace {

GgufArch entry(const char* architecture, const char* model_type) {
  return GgufArch{architecture, model_type, /*permuted_qk=*/false};
}

}  // namespace

void add_text_archs(std::vector<GgufArch>& t) {
  // GLM-4 (Glm4Model): NORM rope on Hugging Face's pairs, unpermuted (the converter permutes
  // only for M-RoPE); rope.dimension_count int(head_dim * partial_rotary_factor); q/k/v
  // biases as the file has them.
  t.push_back(entry("glm4", "glm4"));
  // GLM-4.5 / 4.6 (Glm4MoeModel): NEOX rope, unpermuted; q/k norms (use_qk_norm) when the file
  // has attn_q_norm.
  GgufArch a = entry("glm4moe", "glm4_moe");
  a.qk_norm_key = "use_qk_norm";
  t.push_back(a);
  // EXAONE 4 (Exaone4Model): NEOX rope; llama.cpp's window only at 64 layers, 4096 unless the
  // file says, every 4th layer full unless the file's sliding_window_pattern is another integer
  // (the converter's bool array is skipped by llama_model_exaone4's get_key_or_arr: gguf_model);
  // llama3 as rope_freqs.weight.
  a = entry("exaone4", "exaone4");
  a.fixed = {{"sliding_window", 4096}};
  a.int_keys = {{"attention.sliding_window_pattern", "sliding_window_pattern"}};
  t.push_back(a);
  // ERNIE 4.5 (Ernie4_5Model, Ernie4_5MoeModel): NORM rope on Hugging Face's pairs,
  // unpermuted; q/k/v/o biases as use_bias.
  for (const auto& [arch, type] :
       {std::pair{"ernie4_5", "ernie4_5"}, std::pair{"ernie4_5-moe", "ernie4_5_moe"}}) {
    a = entry(arch, type);
    a.bias_key = "use_bias";
    t.push_back(a);
  }
  // Seed-OSS (SeedOssModel, a TextModel): NEOX; q/k/v biases and o_proj's as the file has them.
  a = entry("seed_oss", "seed_oss");
  a.out_bias_key = "attention_out_bias";
  t.push_back(a);
  // Apertus (a LlamaModel with undo_permute false): NEOX, unpermuted; q/k norms; llama3 as
  // rope_freqs.weight, and without it no scaling (not ApertusConfig's default llama3).
  t.push_back([] {
    GgufArch e = entry("apertus", "apertus");
    e.fixed = {{"rope_scaling", nullptr}};
    return e;
  }());
  // The MoE variants of Qwen2 / Qwen3 (Qwen2MoeModel, Qwen3MoeModel): NEOX, tensors unchanged;
  // Qwen2-MoE's q/k/v biases as qkv_bias.
  a = entry("qwen2moe", "qwen2_moe");
  a.bias_key = "qkv_bias";
  t.push_back(a);
  t.push_back(entry("qwen3moe", "qwen3_moe"));
  // OLMo (OlmoModel, conversion/olmo.py): Q/K permuted (LlamaModel.permute) for llama.cpp's
  // NORM rope; clip_qkv as attention.clamp_kqv, which build_qkv clamps q, k and v with.
  a = GgufArch{"olmo", "olmo", /*permuted_qk=*/true};
  a.keys = {{"attention.clamp_kqv", "clip_qkv"}};
  t.push_back(a);
  // OLMoE (OlmoeModel): NEOX, tensors unchanged; attn_q_norm / attn_k_norm over all heads.
  t.push_back(entry("olmoe", "olmoe"));
  // Hunyuan dense and MoE (HunYuanModel, HunYuanMoEModel, conversion/hunyuan.py): NEOX,
  // tensors unchanged (query_layernorm / key_layernorm as attn_q_norm / attn_k_norm, normed
  // after rope by llama.cpp as by the row); a "dynamic" rope with alpha is written as the
  // scaled rope.freq_base with scaling type none, which the row reads as a plain rope.
  t.push_back(entry("hunyuan-dense", "hunyuan_v1_dense"));
  t.push_back(entry("hunyuan-moe", "hunyuan_v1_moe"));
}

}  // namespace attn::family

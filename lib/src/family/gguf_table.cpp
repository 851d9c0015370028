// The GGUF architectures (gguf_table.h): read, not copied, from llama.cpp's
// sources (convert_hf_to_gguf.py / conversion/*.py, src/llama-model.cpp,
// src/llama-arch.cpp).
#include "family/gguf_table.h"

#include "family/gguf_gemma4.h"

namespace attn::family {

namespace {

using nlohmann::json;

// Entries of the table past the positional fields of the first ones.
GgufArch arch_of(const char* architecture, const char* model_type, bool permuted_qk,
                 json fixed = json::object()) {
  GgufArch a{architecture, model_type, permuted_qk};
  a.fixed = std::move(fixed);
  return a;
}

// CONTRACT.md v3's families as llama.cpp converts them
// (convert_hf_to_gguf.py's conversion/*.py; llama-model.cpp's load_hparams and
// llama_model_rope_type: NORM-mode architectures get their Q/K rows permuted
// by LlamaModel.permute unless Hugging Face already ropes pairs).
void add_v3_archs(std::vector<GgufArch>& t) {
  // StarCoder2: TextModel's keys, q/k/v/o biases from use_bias, NEOX rope
  // unpermuted. The converter writes no sliding_window (llama.cpp runs no
  // window), so none applies.
  GgufArch a = arch_of("starcoder2", "starcoder2", false);
  a.bias_key = "use_bias";
  t.push_back(a);
  // Granite: a LlamaModel (Q/K permuted, NORM rope); attention_multiplier is
  // attention.scale (left out when config.json has none: the row's 1.0, as
  // GraniteConfig, where llama.cpp would take 1/sqrt(D)); embedding_multiplier
  // is embedding_scale (llama.cpp's ggml_scale of the token embeddings).
  a = arch_of("granite", "granite", true);
  a.keys = {{"attention.scale", "attention_multiplier"},
            {"embedding_scale", "embedding_multiplier"}};
  t.push_back(a);
  // Granite MoE (GraniteMoeModel, a GraniteModel): the same attention.
  a.architecture = "granitemoe";
  t.push_back(a);
  // Qwen3-Next: NEOX rope unpermuted; every *norm.weight stored as 1 + w
  // (Qwen3NextModel.modify_tensors), q/k norms included; q_proj (H, 2D) kept
  // with its gate; full_attention_interval (the other layers are linear
  // attention: their attn_qkv / attn_gate are the Gated DeltaNet's).
  a = arch_of("qwen3next", "qwen3_next", false);
  a.norm_shift = true;
  a.int_keys = {{"full_attention_interval", "full_attention_interval"}};
  t.push_back(a);
  // Qwen3.5 (dense and MoE: Qwen3NextModel's subclasses, the same attention
  // tensors; only the linear attention's V heads are reordered). llama.cpp
  // ropes it as interleaved MRoPE (dimension_sections); attn-run's positions
  // are text positions, the same on every axis, where that is the plain rope.
  for (const char* q35 : {"qwen35", "qwen35moe"}) {
    a = arch_of(q35, "qwen3_5_text", false);
    a.norm_shift = true;
    a.int_keys = {{"full_attention_interval", "full_attention_interval"}};
    t.push_back(a);
  }
  // Command R (CommandR2Model): NORM rope on Cohere's interleaved pairs, as
  // Hugging Face's, unpermuted; q/k LayerNorms (H, D) when use_qk_norm.
  a = arch_of("command-r", "cohere", false);
  a.qk_norm_key = "use_qk_norm";
  t.push_back(a);
  // Cohere 2: llama.cpp hard-codes 3 sliding layers of 4; the biases (zeros)
  // are dropped by the converter.
  t.push_back(arch_of("cohere2", "cohere2", false, {{"sliding_window_pattern", 4}}));
  // StableLM: NEOX rope, partial rotary; no rope.freq_base (llama.cpp's
  // 10000); q_layernorm.norms.{h} stacked as attn_q_norm (H, D).
  a = arch_of("stablelm", "stablelm", false);
  a.bias_key = "use_qkv_bias";
  a.qk_norm_key = "qk_layernorm";
  t.push_back(a);
  // InternLM2: the converter splits wqkv (per KV group [q..., k, v]) into
  // attn_q / attn_k / attn_v and permutes Q/K (NORM rope): read as q/k/v_proj.
  a = arch_of("internlm2", "internlm2", true);
  a.layout = "proj";
  a.bias_key = "bias";
  t.push_back(a);
  // SmolLM3: a LlamaModel (Q/K permuted); llama.cpp hard-codes no rope on
  // every 4th layer (n_no_rope_layer_step; no key in the file).
  t.push_back(arch_of("smollm3", "smollm3", true, {{"no_rope_layer_interval", 4}}));
  // StarCoder / SantaCoder (GPT-BigCode): c_attn as attn_qkv unchanged. The
  // converter writes head_count_kv 1 whatever multi_query says; attn_qkv's
  // rows tell (C + 2D: one K/V head; 3C: per-head [q, k, v], gguf_model).
  t.push_back(arch_of("starcoder", "gpt_bigcode", false));
  // phi-2 (Phi2Model): NEOX partial rotary, biases, no rope.freq_base
  // (llama.cpp's 10000), head_count_kv = head_count.
  t.push_back(arch_of("phi2", "phi", false));
  // Llama 4 (Llama4Model: a LlamaModel with undo_permute False: Hugging Face
  // ropes complex pairs, ggml's NORM mode): llama.cpp hard-codes 3 chunked
  // rope layers of 4 (chunks of 8192, L2 q/k norms) and the no-rope layers'
  // temperature (floor 8192, scale 0.1); attention.sliding_window 0
  // (MobileLLM) is rope everywhere, unchunked. rope_freqs.weight is llama3's.
  // DeepSeek-V2 / V3 / R1, Kimi-K2 (DeepseekV2Model): NORM rope on the pairs
  // Hugging Face ropes too (V2's complex pairs, V3's rope_interleave), so
  // nothing permuted; MLA as an MQA of key_length kv_lora_rank + rope dims,
  // the head sizes in key_length_mla / value_length_mla (older files: in
  // key_length / value_length, with attn_kv_b whole); yarn's mscale_all_dim as
  // rope.scaling.yarn_log_multiplier / 0.1 (mscale taken equal to it, as every
  // DeepSeek / Kimi config has it).
  // BERT (BertModel; RobertaModel, XLMRobertaModel, DistilBertModel and
  // CamemBERT convert to it too: all BertSelfAttention's math): q/k/v and
  // output biases, bidirectional, absolute positions outside the attention.
  a = arch_of("bert", "bert", false);
  a.layout = "proj";
  t.push_back(a);
  // ModernBERT: Wqkv as attn_qkv; sliding_window is local_attention (llama.cpp's
  // symmetric window), sliding_window_pattern global_attn_every_n_layers (global
  // first), rope.freq_base the global base and rope.freq_base_swa the local one
  // (absent: the global one, as llama.cpp).
  a = arch_of("modern-bert", "modernbert", false);
  a.int_keys = {{"attention.sliding_window", "local_attention"},
                {"attention.sliding_window_pattern", "global_attn_every_n_layers"}};
  a.keys = {{"rope.freq_base", "global_rope_theta"}, {"rope.freq_base_swa", "local_rope_theta"}};
  t.push_back(a);
  // T5 (T5ForConditionalGeneration, MT5, UMT5) and T5EncoderModel: the encoder's
  // blocks as enc.blk.N. (--layer N, as for a folder); attn_rel_b in block 0
  // (UMT5: every block, gguf_model picks umt5's row); llama.cpp's
  // max_distance is 128.
  for (const char* t5 : {"t5", "t5encoder"}) {
    a = arch_of(t5, "t5", false, {{"relative_attention_max_distance", 128}});
    a.blk = "enc.blk.";
    a.int_keys = {{"embedding_length", "d_model"},
                  {"attention.key_length", "d_kv"},
                  {"attention.head_count", "num_heads"},
                  {"block_count", "num_layers"},
                  {"attention.relative_buckets_count", "relative_attention_num_buckets"}};
    t.push_back(a);
  }
  a = arch_of("deepseek2", "deepseek_v3", false);
  a.mla = true;
  t.push_back(a);
  t.push_back(arch_of("llama4", "llama4_text", false,
                      {{"attention_chunk_size", 8192},
                       {"no_rope_layer_interval", 4},
                       {"use_qk_norm", true},
                       {"attn_temperature_tuning", true},
                       {"floor_scale", 8192},
                       {"attn_scale", 0.1}}));
  // Gemma 4 (Gemma4Model, a Gemma3Model with norm_shift 0: q/k norm weights
  // stored as w, which Gemma 4 multiplies by), NEOX rope unpermuted; its
  // per-layer-type keys are gguf_gemma4.cpp's. llama.cpp hard-codes scale 1,
  // as the row does.
  a = arch_of("gemma4", "gemma4_text", false);
  a.per_layer_type = gguf_gemma4;
  t.push_back(a);
}

}  // namespace

const std::vector<GgufArch>& gguf_table() {
  static const std::vector<GgufArch> t = [] {
    std::vector<GgufArch> t = {
        // Llama 1-3, Mistral, Mixtral and the like: the converter permutes Q/K;
        // Llama 3's rope scaling is the tensor rope_freqs.weight.
        {"llama", "llama", true},
        {"qwen2", "qwen2"},
        {"gemma", "gemma", false, true},
        {"olmo2", "olmo2"},  // q/k norms over all heads ([H*D]), NEOX rope, unpermuted
        {"qwen3", "qwen3"},
        // Gemma 2: even layers slide (period 2 in llama.cpp), softcap 50 by default.
        {"gemma2", "gemma2", false, true, 10000.0, 46, {{"attn_logit_softcapping", 50.0}}},
        // Gemma 3: 5 sliding layers to 1 global, sliding layers at base 10000 unscaled.
        {"gemma3",
         "gemma3_text",
         false,
         true,
         1e6,
         62,
         {{"sliding_window_pattern", 6}, {"rope_local_base_freq", 10000.0}}},
        {"phi3", "phi3"},
        // GPT-NeoX / Pythia and BLOOM: query_key_value reordered to [Q | K | V]
        // (reshape(H, 3, D, C) gathered by part), so the file's attn_qkv is fused.
        {"gptneox", "gpt_neox", false, false, 10000.0, 0, json::object(), "fused"},
        {"bloom", "bloom", false, false, 10000.0, 0, json::object(), "fused"},
        // GPT-2 (GPT2Model): the converter transposes Conv1D's c_attn (C, 3C) and
        // c_proj to Linear's (out, in), so attn_qkv holds the rows [Q | K | V]
        // (fused) with its bias; learned positions are outside the attention.
        {"gpt2", "gpt2", false, false, 10000.0, 0, json::object(), "fused"},
        // MPT (MPTModel): Wqkv as attn_qkv ([Q | K | V]), ALiBi from the file
        // (gguf_arch.cpp writes its attn_config).
        {"mpt", "mpt", false, false, 10000.0, 0, json::object(), "fused"},
        // DBRX (DbrxModel): Wqkv as attn_qkv ([Q | K | V]), NEOX rope (rotate_half) on
        // unpermuted rows; gguf_arch.cpp writes its attn_config.
        {"dbrx", "dbrx", false, false, 10000.0, 0, json::object(), "fused"},
        // Falcon (FalconModel): query_key_value's KV groups [q..., k, v] are
        // reordered to [Q (H*D) | K (Hkv*D) | V (Hkv*D)] (its "jploski" layout),
        // head_count_kv always written (1 for the multi-query 7B); NEOX rope
        // (rotate_half) unpermuted. new_decoder_architecture makes the row read
        // the KV heads from num_key_value_heads; its bias flag is "bias".
        {"falcon",
         "falcon",
         false,
         false,
         10000.0,
         0,
         {{"new_decoder_architecture", true}, {"alibi", false}},
         "fused",
         "bias"},
        // gpt-oss: YaRN without truncation of the correction range (HF's config).
        {"gpt-oss", "gpt_oss", false, false, 150000.0},
    };
    // Gemma 3: today's converter (TextModel) writes the sliding layers' base
    // (rope_local_base_freq) as rope.freq_base_swa; older files leave it to
    // llama.cpp's 10000.
    for (GgufArch& a : t)
      if (std::string(a.architecture) == "gemma3")
        a.keys = {{"rope.freq_base_swa", "rope_local_base_freq"}};
    add_v3_archs(t);
    add_text_archs(t);
    add_hybrid_archs(t);
    return t;
  }();
  return t;
}

const GgufArch* gguf_arch_of(const std::string& name) {
  for (const GgufArch& a : gguf_table())
    if (name == a.architecture) return &a;
  return nullptr;
}

}  // namespace attn::family

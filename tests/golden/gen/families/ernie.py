"""ERNIE 4.5 (dense and MoE): modeling_ernie4_5.Ernie4_5Attention (Ernie4_5_MoeAttention is the
same): LlamaAttention with q/k/v/o_proj biases from use_bias, rope in pairs over the whole head
(GLM's rotate_half of x[..., 0::2] / x[..., 1::2], cos/sin[..., :D/2].repeat_interleave(2), in
float32); Ernie4_5Config's head_dim 128 and rope_theta 500000, Ernie4_5_MoeConfig's head_dim
C // H. llama.cpp converts both (ernie4_5, ernie4_5-moe: NORM rope, unpermuted)."""
from .. import gguf, hf
from .. import weights as W

MODEL_TYPES = ("ernie4_5", "ernie4_5_moe")
CLASS_DEFAULTS = {
    "ernie4_5": dict(rope_theta=500000.0, use_bias=False, head_dim=128, num_key_value_heads=2,
                     max_position_embeddings=131072),
    "ernie4_5_moe": dict(rope_theta=500000.0, use_bias=False, num_key_value_heads=4,
                         max_position_embeddings=131072),
}


def settings(cfg, layer):
    mt = cfg["model_type"]
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS[mt])
    a = hf.decoder(cfg, mt, layer, bias_key="use_bias")
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg), style="interleaved"))


def neighbours(s, layer, g, small=4):
    if s.model_type == "ernie4_5" or layer == 0:  # moe_layer_start_index 1: a dense first MLP
        return W.llama_neighbours(s, layer, g)
    return W.llama_neighbours(s, layer, g, mlp=lambda p: {  # Ernie4_5_MoeSparseMoeBlock
        p + "mlp.gate.weight": W.small(g, 2, s.C),
        p + "mlp.moe_statics.e_score_correction_bias": W.small(g, 1, 2),
        p + "mlp.experts.0.gate_proj.weight": W.small(g, small, s.C),
        p + "mlp.shared_experts.gate_proj.weight": W.small(g, small, s.C)})


def gguf_metadata(w, arch, cfg, n_layers):
    """Ernie4_5Model: TextModel's keys; Ernie4_5MoeModel adds the experts'."""
    gguf.text_model_metadata(w, arch, cfg, n_layers)
    if arch == "ernie4_5-moe":
        w.add(arch + ".expert_count", 2)
        w.add(arch + ".expert_used_count", 1)
        w.add(arch + ".interleave_moe_layer_step", 1)
        w.add(arch + ".leading_dense_block_count", 1)


ERNIE = {"architectures": ["Ernie4_5ForCausalLM"], "model_type": "ernie4_5", "bos_token_id": 1,
         "eos_token_id": 2, "head_dim": 12, "hidden_act": "silu", "hidden_size": 32,
         "intermediate_size": 8, "max_position_embeddings": 131072, "num_attention_heads": 4,
         "num_hidden_layers": 2, "num_key_value_heads": 2, "pad_token_id": 0,
         "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": True,
         "torch_dtype": "bfloat16", "use_bias": False, "use_cache": False, "vocab_size": 12}

ERNIE_MOE = {"architectures": ["Ernie4_5_MoeForCausalLM"], "model_type": "ernie4_5_moe",
             "hidden_act": "silu", "hidden_size": 32, "intermediate_size": 8,
             "max_position_embeddings": 131072, "moe_intermediate_size": 4, "moe_k": 1,
             "moe_layer_end_index": 1, "moe_layer_interval": 1, "moe_layer_start_index": 1,
             "moe_num_experts": 2, "moe_num_shared_experts": 1, "num_attention_heads": 4,
             "num_hidden_layers": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-05,
             "rope_theta": 500000.0, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
             "use_bias": True, "vocab_size": 12}

FOLDERS = [
    # ERNIE-4.5-0.3B's spelling: no biases, head_dim 12 (not C // H), rope in pairs
    dict(name="ernie4_5", seed=521, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
         S=8, pad="left", offset=100, config=ERNIE),
    # ERNIE-4.5-21B-A3B's kind: no head_dim (C // H), use_bias
    dict(name="ernie4_5_moe", seed=522, container="safetensors", dtype="f32", layers=[1], B=2,
         S=7, pad="right", config=ERNIE_MOE),
]

HELDOUT = [
    # Ernie4_5Config's head_dim 128 when config.json leaves it out, q/k/v/o biases
    dict(name="ernie4_5_defaults", seed=621, container="safetensors", dtype="f32", layers=[0],
         B=1, S=8,
         config={"model_type": "ernie4_5", "hidden_size": 32, "num_attention_heads": 2,
                 "num_key_value_heads": 1, "num_hidden_layers": 1, "use_bias": True}),
]

GGUF = [
    dict(name="ernie4_5", arch="ernie4_5", seed=523, layers=[1], metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "Q4_K", "attn_v": "F16", "attn_output": "Q8_0"},
         config=dict(ERNIE, hidden_size=256, head_dim=16)),
    dict(name="ernie4_5_moe", arch="ernie4_5-moe", seed=524, layers=[0, 1],
         metadata=gguf_metadata,
         types={"attn_q": "Q5_1", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "F16"},
         config=ERNIE_MOE),
]

"""GLM-4 and GLM-4.5/4.6/4.7: modeling_glm4.Glm4Attention: q/k/v_proj with attention_bias
(Glm4Config's default true), o_proj without; rope on the first partial_rotary_factor (0.5) of the
head in pairs (cos/sin[..., :R/2].repeat_interleave(2), rotate_half of x[..., 0::2] /
x[..., 1::2]); Glm4Config's head_dim 128 when config.json leaves it out.
modeling_glm4_moe.Glm4MoeAttention: the same projections (attention_bias default false), with
use_qk_norm an RMSNorm per head (x * w) before rope, rotate_half on the first half of the head;
head_dim from config.json, else C // H. llama.cpp converts them as glm4 (NORM rope, unpermuted)
and glm4moe (NEOX), with rope.dimension_count = int(head_dim * partial_rotary_factor)."""
from .. import gguf, hf
from .. import weights as W
from ..reference import QkNorm

MODEL_TYPES = ("glm4", "glm4_moe")
CLASS_DEFAULTS = {
    "glm4": dict(rope_theta=10000.0, attention_bias=True, partial_rotary_factor=0.5,
                 head_dim=128, num_key_value_heads=2, max_position_embeddings=131072),
    "glm4_moe": dict(rope_theta=10000.0, attention_bias=False, partial_rotary_factor=0.5,
                     use_qk_norm=False, rms_norm_eps=1e-5, num_key_value_heads=8,
                     max_position_embeddings=131072),
}


def settings(cfg, layer):
    mt = cfg["model_type"]
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS[mt])
    b = bool(cfg["attention_bias"])
    a = hf.decoder(cfg, mt, layer, qkv_bias=b, o_bias=False)
    a = a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], cfg["partial_rotary_factor"],
                               scaling=hf.get(cfg, "rope_scaling"), params=hf.v5_params(cfg),
                               style="interleaved" if mt == "glm4" else "half"))
    if mt == "glm4_moe" and cfg["use_qk_norm"]:
        a = a.replace(qk_norm=QkNorm("rms", cfg["rms_norm_eps"]))
    return a


def neighbours(s, layer, g, small=4):
    p = f"model.layers.{layer}."
    if s.model_type == "glm4":  # Glm4DecoderLayer: four norms, a fused gate_up_proj
        return {p + "input_layernorm.weight": W.ones(s.C),
                p + "post_self_attn_layernorm.weight": W.ones(s.C),
                p + "post_attention_layernorm.weight": W.ones(s.C),
                p + "post_mlp_layernorm.weight": W.ones(s.C),
                p + "mlp.gate_up_proj.weight": W.small(g, 2 * small, s.C),
                p + "mlp.down_proj.weight": W.small(g, s.C, small)}
    if layer == 0:  # first_k_dense_replace: a dense MLP
        return W.llama_neighbours(s, layer, g)
    return W.llama_neighbours(s, layer, g, mlp=lambda q: {  # Glm4MoeMoE
        q + "mlp.gate.weight": W.small(g, 2, s.C),
        q + "mlp.gate.e_score_correction_bias": W.small(g, 2),
        q + "mlp.experts.0.gate_proj.weight": W.small(g, small, s.C),
        q + "mlp.shared_experts.gate_proj.weight": W.small(g, small, s.C)})


def gguf_metadata(w, arch, cfg, n_layers):
    """Glm4Model / Glm4MoeModel.set_gguf_parameters: TextModel's keys and the rotary part."""
    gguf.text_model_metadata(w, arch, cfg, n_layers)
    D = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    w.add(arch + ".rope.dimension_count", int(D * cfg.get("partial_rotary_factor", 0.5)))
    if arch == "glm4moe":
        w.add(arch + ".expert_count", 2)
        w.add(arch + ".expert_shared_count", 1)
        w.add(arch + ".leading_dense_block_count", 1)


GLM4 = {"architectures": ["Glm4ForCausalLM"], "model_type": "glm4", "attention_bias": True,
        "attention_dropout": 0.0, "eos_token_id": [5, 6], "head_dim": 12, "hidden_act": "silu",
        "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 8,
        "max_position_embeddings": 256, "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 2, "pad_token_id": 4, "partial_rotary_factor": 0.5,
        "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16", "transformers_version": "4.51.3", "use_cache": True,
        "vocab_size": 12}

GLM4_MOE = {"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe",
            "attention_bias": True, "attention_dropout": 0.0, "first_k_dense_replace": 1,
            "head_dim": 12, "hidden_act": "silu", "hidden_size": 32, "intermediate_size": 8,
            "max_position_embeddings": 256, "moe_intermediate_size": 4, "n_group": 1,
            "n_routed_experts": 2, "n_shared_experts": 1, "norm_topk_prob": True,
            "num_attention_heads": 4, "num_experts_per_tok": 1, "num_hidden_layers": 2,
            "num_key_value_heads": 2, "num_nextn_predict_layers": 0, "partial_rotary_factor": 0.5,
            "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 1000000,
            "routed_scaling_factor": 2.5, "tie_word_embeddings": False, "topk_group": 1,
            "torch_dtype": "bfloat16", "transformers_version": "4.54.0", "use_cache": True,
            "use_qk_norm": True, "vocab_size": 12}

FOLDERS = [
    # GLM-4-0414: q/k/v biases, rope in pairs on 6 of the 12 head dims, GQA
    dict(name="glm4", seed=501, container="safetensors", dtype="bf16", layers=[0, 1], B=2, S=8,
         pad="left", config=GLM4),
    # GLM-4.5 / 4.6: use_qk_norm, biases, rotate_half on the first half of the head
    dict(name="glm4_moe", seed=502, container="safetensors", dtype="f32", layers=[0, 1], B=2,
         S=7, pad="right", offset=30, config=GLM4_MOE),
]

HELDOUT = [
    # Glm4Config's defaults: head_dim 128 whatever hidden_size says, attention_bias true,
    # partial_rotary_factor 0.5; v5 rope_parameters
    dict(name="glm4_defaults", seed=601, container="safetensors", dtype="f32", layers=[1], B=2,
         S=9, pad="left",
         config={"model_type": "glm4", "hidden_size": 32, "num_attention_heads": 2,
                 "num_key_value_heads": 1, "num_hidden_layers": 2,
                 "rope_parameters": {"rope_type": "default", "rope_theta": 50000.0}}),
    # GLM-4.5-Air: no q/k norms, no biases, no head_dim (C // H), partial 0.25
    dict(name="glm4_moe_air", seed=602, container="bin", dtype="f32", layers=[0], B=1, S=8,
         config={"model_type": "glm4_moe", "hidden_size": 64, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 1, "use_qk_norm": False,
                 "partial_rotary_factor": 0.25, "rope_theta": 10000.0}),
]

GGUF = [
    # Glm4Model: NORM rope on HF's pairs, unpermuted; rope.dimension_count 8 of 16
    dict(name="glm4", arch="glm4", seed=503, layers=[0, 1], metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "F16", "attn_v": "Q4_0", "attn_output": "Q8_0"},
         config=dict(GLM4, head_dim=16)),
    # Glm4MoeModel: NEOX rope, q/k norms (use_qk_norm from attn_q_norm)
    dict(name="glm4moe", arch="glm4moe", seed=504, layers=[1], metadata=gguf_metadata,
         types={"attn_q": "Q5_0", "attn_k": "Q8_0", "attn_v": "F16", "attn_output": "IQ4_NL"},
         config=dict(GLM4_MOE, head_dim=16)),
]

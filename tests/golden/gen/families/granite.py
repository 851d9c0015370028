"""Granite (and Granite MoE's attention): modeling_granite.GraniteAttention: LlamaAttention whose
scaling is attention_multiplier (1.0 unless given), biases as attention_bias."""
from .. import hf
from ..reference import Layer, Rope

MODEL_TYPES = ("granite",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, attention_bias=False, attention_multiplier=1.0)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H, Hkv, D = hf.sizes(cfg)
    b = bool(cfg["attention_bias"])
    return Layer(C, H, Hkv, D, qkv_bias=b, o_bias=b, scale=cfg["attention_multiplier"],
                 rope=Rope(float(cfg["rope_theta"]), D, hf.rope_scaling(cfg),
                           cfg.get("max_position_embeddings")),
                 model_type="granite", prefix=f"model.layers.{layer}.self_attn.")


FOLDERS = [
    # Granite 3: attention_multiplier (1/D here, as Granite's 1/128 for D = 128) is the scale
    dict(name="granite", seed=304, container="safetensors", dtype="bf16", layers=[0, 1], S=8,
         offset=5,
         config={"architectures": ["GraniteForCausalLM"], "model_type": "granite",
                 "attention_bias": False, "attention_dropout": 0.1,
                 "attention_multiplier": 0.125, "embedding_multiplier": 12.0,
                 "hidden_act": "silu", "hidden_size": 32, "intermediate_size": 8,
                 "logits_scaling": 8.0, "max_position_embeddings": 64, "mlp_bias": False,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
                 "residual_multiplier": 0.22, "rms_norm_eps": 1e-05, "rope_scaling": None,
                 "rope_theta": 10000000.0, "torch_dtype": "bfloat16", "vocab_size": 12}),
]

HELDOUT = [
    # attention_multiplier left out (1.0), biases, linear scaling
    dict(name="granite", seed=404, container="safetensors", dtype="f32", layers=[1], B=2,
         S=7, pad="right",
         config={"model_type": "granite", "hidden_size": 24, "num_attention_heads": 3,
                 "num_hidden_layers": 2, "attention_bias": True, "rope_theta": 10000.0,
                 "rope_scaling": {"rope_type": "linear", "factor": 2.0},
                 "max_position_embeddings": 64}),
]

GGUF = [
    # Granite 3: a LlamaModel (Q/K permuted), attention_multiplier as attention.scale, MQA.
    dict(name="granite", arch="granite", seed=32, layers=[1], permute=True,
         extra={"attention.scale": 0.125, "embedding_scale": 12.0, "residual_scale": 0.22,
                "logit_scale": 8.0},
         types={"attn_q": "Q4_0", "attn_k": "Q8_0", "attn_v": "IQ4_NL", "attn_output": "F16"},
         config={"architectures": ["GraniteForCausalLM"], "model_type": "granite",
                 "attention_bias": False, "attention_multiplier": 0.125,
                 "embedding_multiplier": 12.0, "hidden_size": 32, "intermediate_size": 8,
                 "logits_scaling": 8.0, "max_position_embeddings": 64,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
                 "residual_multiplier": 0.22, "rms_norm_eps": 1e-05,
                 "rope_theta": 10000000.0, "vocab_size": 12}),
    # Granite MoE (GraniteMoeForCausalLM): Granite's attention, Q/K permuted.
    dict(name="granitemoe", arch="granitemoe", seed=50, layers=[0], permute=True,
         extra={"attention.scale": 0.0625, "expert_count": 2, "expert_used_count": 1},
         types={"attn_q": "Q8_0", "attn_k": "Q4_K", "attn_v": "Q8_0", "attn_output": "Q6_K"},
         config={"architectures": ["GraniteMoeForCausalLM"], "model_type": "granite",
                 "attention_bias": False, "attention_multiplier": 0.0625,
                 "hidden_size": 256, "intermediate_size": 8, "max_position_embeddings": 64,
                 "num_attention_heads": 4, "num_hidden_layers": 1, "num_key_value_heads": 2,
                 "num_local_experts": 2, "num_experts_per_tok": 1, "rms_norm_eps": 1e-06,
                 "rope_theta": 10000.0, "vocab_size": 12}),
]

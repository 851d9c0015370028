"""Qwen3 (and Qwen3-MoE's attention): modeling_qwen3.Qwen3Attention: Qwen2's with
Qwen3RMSNorm q/k norms per head (x * w) before rope, attention_bias on all four."""
from .. import hf
from ..reference import QkNorm

MODEL_TYPES = ("qwen3",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, use_sliding_window=False, sliding_window=4096,
                      max_window_layers=28, attention_bias=False, rms_norm_eps=1e-6,
                      head_dim=128)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "qwen3", layer, bias_key="attention_bias")
    sliding = bool(cfg["use_sliding_window"]) and layer >= cfg["max_window_layers"]
    return a.replace(qk_norm=QkNorm("rms", cfg["rms_norm_eps"]),
                     rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)),
                     window=cfg["sliding_window"] if hf.sliding(cfg, layer, sliding) else None)


FOLDERS = [
    dict(name="qwen3", seed=8, container="safetensors", dtype="f32", layers=[0, 1], S=8,
         config={"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
                 "attention_bias": False, "head_dim": 12, "hidden_size": 32,
                 "intermediate_size": 8, "max_position_embeddings": 64,
                 "max_window_layers": 2, "num_attention_heads": 4, "num_hidden_layers": 2,
                 "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
                 "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                  "original_max_position_embeddings": 16},
                 "rope_theta": 1000000, "sliding_window": None, "use_sliding_window": False,
                 "vocab_size": 12}),
]

HELDOUT = [
    dict(name="qwen3", seed=108, container="safetensors", dtype="f32", layers=[0, 1], B=2,
         S=7, pad="left",
         config={"model_type": "qwen3", "attention_bias": True, "head_dim": 8,
                 "hidden_size": 48, "max_position_embeddings": 64, "max_window_layers": 1,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
                 "rms_norm_eps": 1e-5, "rope_theta": 10000, "sliding_window": 3,
                 "use_sliding_window": True}),
]

GGUF = [
    dict(name="qwen3", arch="qwen3", writer="by_layout", seed=14, layers=[1],
         types={"attn_q": "Q5_K", "attn_k": "IQ4_XS", "attn_v": "Q8_0", "attn_output": "F16"},
         config={"model_type": "qwen3", "hidden_size": 256, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 2,
                 "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                 "attention_bias": False, "use_sliding_window": False}),
    # Qwen3-MoE (Qwen3-30B-A3B's kind): Qwen3's attention under its own architecture.
    dict(name="qwen3moe", arch="qwen3moe", writer="by_layout", seed=24, layers=[0],
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q4_0", "attn_output": "Q8_0"},
         config={"model_type": "qwen3", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 1,
                 "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                 "attention_bias": False, "use_sliding_window": False}),
]

VARIANTS = [  # qk_norm per head + GQA
    dict(name="qwen3_qknorm", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 1000000.0}, qk_norm=(1e-6, 0), save=True),
]

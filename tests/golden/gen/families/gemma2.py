"""Gemma 2: modeling_gemma2.Gemma2Attention: scale query_pre_attn_scalar ** -0.5,
attn_logit_softcapping (tanh(s / c) * c, 50 unless given), a sliding window on even layers (or
layer_types' sliding layers)."""
import math

from .. import hf

MODEL_TYPES = ("gemma2",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, head_dim=256, query_pre_attn_scalar=256,
                      attn_logit_softcapping=50.0, sliding_window=4096, attention_bias=False)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "gemma2", layer, bias_key="attention_bias")
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)),
                     scale=cfg["query_pre_attn_scalar"] ** -0.5,
                     softcap=cfg["attn_logit_softcapping"],
                     window=cfg["sliding_window"] if hf.sliding(cfg, layer, layer % 2 == 0)
                     else None)


FOLDERS = [
    # three shards + index, bf16
    dict(name="gemma2", seed=10, container="shards3", dtype="bf16", layers=[0, 1], B=2, S=8,
         pad="left",
         config={"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
                 "attn_logit_softcapping": 2.0, "final_logit_softcapping": 30.0,
                 "head_dim": 16, "hidden_act": "gelu_pytorch_tanh", "hidden_size": 32,
                 "intermediate_size": 8, "max_position_embeddings": 64,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
                 "query_pre_attn_scalar": 24, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
                 "sliding_window": 4, "torch_dtype": "bfloat16", "vocab_size": 12}),
]

HELDOUT = [
    # Gemma 2 without attn_logit_softcapping (Gemma2Config: 50.0); layer_types
    dict(name="gemma2", seed=110, container="safetensors", dtype="f32", layers=[2, 3], B=2,
         S=9, pad="right",
         config={"model_type": "gemma2", "head_dim": 8, "hidden_size": 32,
                 "num_attention_heads": 2, "num_hidden_layers": 4, "num_key_value_heads": 1,
                 "query_pre_attn_scalar": 32, "rope_theta": 10000.0, "sliding_window": 2,
                 "max_position_embeddings": 64,
                 "layer_types": ["sliding_attention", "full_attention",
                                 "sliding_attention", "full_attention"]}),
    dict(name="gemma2_cap", seed=120, container="safetensors", dtype="f32", layers=[0], S=7,
         config={"model_type": "gemma2", "head_dim": 8, "hidden_size": 32,
                 "attn_logit_softcapping": 1.5, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "num_key_value_heads": 2,
                 "query_pre_attn_scalar": 8, "rope_theta": 10000.0, "sliding_window": 5,
                 "max_position_embeddings": 64}),
]

GGUF = [
    dict(name="gemma2", arch="gemma2", writer="by_layout", seed=15, layers=[0, 1],
         types={"attn_q": "BF16", "attn_k": "F16"},
         config={"model_type": "gemma2", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 2,
                 "query_pre_attn_scalar": 16, "attn_logit_softcapping": 2.0,
                 "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
                 "rope_theta": 10000.0, "sliding_window": 4}),
]

VARIANTS = [  # softcap + query_pre_attn_scalar + window
    dict(name="gemma2_softcap_window", writer="decoder", C=32, H=4, Hkv=2, D=16,
         rope_cfg={"theta": 10000.0}, scale=1 / math.sqrt(24.0), window=4, softcap=2.0, S=8,
         save=True),
]

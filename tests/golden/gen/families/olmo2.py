"""OLMo 2: modeling_olmo2.Olmo2Attention: Olmo2RMSNorm q/k norms over all heads (q_norm (H*D),
k_norm (Hkv*D), x * w) before the head view, then rope (transformers v5 rope_parameters)."""
from .. import hf
from ..reference import QkNorm

MODEL_TYPES = ("olmo2",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, attention_bias=False, rms_norm_eps=1e-5)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "olmo2", layer, bias_key="attention_bias")
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)),
                     qk_norm=QkNorm("rms", cfg["rms_norm_eps"], scope="all"))


FOLDERS = [
    dict(name="olmo2", seed=20, container="safetensors", dtype="f32", layers=[0, 1], S=7,
         config={"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2",
                 "attention_bias": False, "hidden_size": 32, "intermediate_size": 8,
                 "max_position_embeddings": 64, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
                 "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
                 "vocab_size": 12}),
]

HELDOUT = [
    dict(name="olmo2", seed=119, container="safetensors", dtype="bf16", layers=[1], B=2, S=8,
         pad="right",
         config={"model_type": "olmo2", "hidden_size": 48, "max_position_embeddings": 64,
                 "num_attention_heads": 6, "num_hidden_layers": 2, "num_key_value_heads": 6,
                 "rms_norm_eps": 1e-6, "rope_theta": 10000,
                 "rope_scaling": {"rope_type": "dynamic", "factor": 3.0}}),
]

GGUF = [
    dict(name="olmo2", arch="olmo2", writer="by_layout", seed=21, layers=[1],
         types={"attn_q": "Q8_0", "attn_v": "BF16"},
         config={"model_type": "olmo2", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 2,
                 "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
                 "rope_theta": 500000.0, "attention_bias": False}),
]

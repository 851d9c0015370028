"""Phi-3: modeling_phi3.Phi3Attention: one fused qkv_proj ([Q | K | V] rows, no bias), o_proj,
partial rotary (partial_rotary_factor), LongRoPE (rope_scaling "longrope", early configs' "su" or
"yarn" names, with original_max_position_embeddings), a sliding window on every layer."""
from .. import hf, plain
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("phi3",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, partial_rotary_factor=1.0, sliding_window=None)
NAMES = ("qkv_proj", "o_proj")


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "phi3", layer).replace(layout="fused", names=NAMES)
    scaling = hf.get(cfg, "rope_scaling")
    if scaling and scaling.get("type") in ("su", "yarn"):  # Phi3Config's early names
        scaling = dict(scaling, type="longrope")
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], cfg["partial_rotary_factor"],
                                  scaling, hf.v5_params(cfg)),
                     window=cfg["sliding_window"])


def attention_weights(a, g):
    sd = {}
    W.put(sd, "qkv_proj", W.lin(g, (a.H + 2 * a.Hkv) * a.D, a.C, False))
    W.put(sd, "o_proj", W.lin(g, a.C, a.H * a.D, False))
    return sd


FOLDERS = [
    dict(name="phi3", seed=12, container="safetensors", dtype="f32", layers=[0, 1], S=9,
         config={"architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
                 "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 64,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
                 "original_max_position_embeddings": 8, "partial_rotary_factor": 0.75,
                 "rms_norm_eps": 1e-05,
                 "rope_scaling": {"type": "longrope",
                                  "long_factor": [1.0, 1.5, 2.0],
                                  "short_factor": [1.0, 1.1, 1.2]},
                 "rope_theta": 10000.0, "sliding_window": 5, "vocab_size": 12}),
]

HELDOUT = [
    dict(name="phi3", seed=112, container="safetensors", dtype="f16", layers=[1], B=2, S=7,
         pad="right",
         config={"model_type": "phi3", "hidden_size": 48, "max_position_embeddings": 64,
                 "num_attention_heads": 6, "num_hidden_layers": 2, "num_key_value_heads": 6,
                 "rope_scaling": None, "rope_theta": 10000.0, "sliding_window": None}),
    dict(name="phi3_long", seed=122, container="safetensors", dtype="f32", layers=[0], S=6,
         offset=30,
         config={"model_type": "phi3", "hidden_size": 32, "max_position_embeddings": 128,
                 "num_attention_heads": 2, "num_hidden_layers": 1, "num_key_value_heads": 1,
                 "original_max_position_embeddings": 32, "rope_theta": 10000.0,
                 "rope_scaling": {"type": "longrope", "long_factor": [1.0 + i for i in range(8)],
                                  "short_factor": [1.0] * 8},
                 "sliding_window": 4}),
    dict(name="phi3_su", seed=142, container="safetensors", dtype="f32", layers=[0], S=6,
         offset=3,
         config={"model_type": "phi3", "hidden_size": 32, "max_position_embeddings": 32,
                 "num_attention_heads": 2, "num_hidden_layers": 1, "num_key_value_heads": 2,
                 "original_max_position_embeddings": 4, "rope_theta": 10000.0,
                 "rope_scaling": {"type": "su", "long_factor": [1.0 + i for i in range(8)],
                                  "short_factor": [1.0] * 8}}),
]

GGUF = [
    # Phi-3: fused attn_qkv, partial rotary, LongRoPE factors as tensors, a window.
    dict(name="phi3", arch="phi3", writer="by_layout", seed=18, layers=[1], S=9,
         types={"attn_qkv": "Q8_0", "attn_output": "Q5_0"},
         config={"model_type": "phi3", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 2,
                 "max_position_embeddings": 64, "original_max_position_embeddings": 8,
                 "partial_rotary_factor": 0.75, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
                 "rope_scaling": {"type": "longrope", "long_factor": [1.0, 1.5, 2.0],
                                  "short_factor": [1.0, 1.1, 1.2]},
                 "sliding_window": 5}),
]

PLAIN = [
    dict(name="phi3_qkv_proj_gqa_bf16", seed=1010, prefix="model.layers.0.self_attn.",
         block="model.layers.0.", C=16, H=4, Hkv=2, D=4, dtype="bf16", causal=True),
]


def write_plain(out, case):
    """Phi3Attention without positions: qkv_proj's [Q | K | V], repeat_kv, o_proj."""
    C, H, Hkv, D = case["C"], case["H"], case["Hkv"], case["D"]

    def draw():
        own = {}
        plain.add(own, "qkv_proj", plain.plain_linear(H * D + 2 * Hkv * D, C, False))
        plain.add(own, "o_proj", plain.plain_linear(C, H * D, False))
        return own, {}

    plain.family_case(out, case, draw, Layer(C, H, Hkv, D, layout="fused", names=NAMES))



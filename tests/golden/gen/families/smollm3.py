"""SmolLM3: modeling_smollm3.SmolLM3Attention: use_rope = no_rope_layers[layer] (config.json's
list, else every no_rope_layer_interval-th layer without rope); with use_sliding_window (and no
layer_types) the no-rope layers slide; biases as attention_bias."""
from .. import hf
from ..reference import Layer, Rope

MODEL_TYPES = ("smollm3",)
CLASS_DEFAULTS = dict(rope_theta=2000000.0, num_key_value_heads=4, use_sliding_window=False,
                      sliding_window=None, no_rope_layers=None, no_rope_layer_interval=4,
                      attention_bias=False)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H, Hkv, D = hf.sizes(cfg)
    L = cfg["num_hidden_layers"]
    b = bool(cfg["attention_bias"])
    no_rope = cfg["no_rope_layers"] or [
        int((i + 1) % cfg["no_rope_layer_interval"] != 0) for i in range(L)]
    types = cfg.get("layer_types") or [
        "sliding_attention" if cfg["use_sliding_window"] and cfg["sliding_window"] is not None
        and not no_rope[i] else "full_attention" for i in range(L)]
    rope = Rope(float(cfg["rope_theta"]), D, hf.rope_scaling(cfg),
                cfg.get("max_position_embeddings")) if no_rope[layer] else None
    return Layer(C, H, Hkv, D, qkv_bias=b, o_bias=b, rope=rope,
                 window=cfg["sliding_window"] if types[layer] == "sliding_attention" else None,
                 model_type="smollm3", prefix=f"model.layers.{layer}.self_attn.")


FOLDERS = [
    # SmolLM3: no_rope_layers (layer 3 has no rope), no window
    dict(name="smollm3", seed=308, container="safetensors", dtype="bf16", layers=[2, 3], B=2,
         S=8, pad="left",
         config={"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3",
                 "attention_bias": False, "hidden_act": "silu", "hidden_size": 32,
                 "intermediate_size": 8,
                 "layer_types": ["full_attention"] * 4, "max_position_embeddings": 64,
                 "max_window_layers": 28, "no_rope_layer_interval": 4,
                 "no_rope_layers": [1, 1, 1, 0], "num_attention_heads": 4,
                 "num_hidden_layers": 4, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
                 "rope_scaling": None, "rope_theta": 5000000.0, "sliding_window": None,
                 "use_sliding_window": False, "vocab_size": 12}),
    # SmolLM3 with sliding windows: the no-rope layers (every 2nd) slide
    dict(name="smollm3_swa", seed=309, container="safetensors", dtype="f32", layers=[0, 1],
         S=9,
         config={"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3",
                 "hidden_size": 32, "max_position_embeddings": 64,
                 "no_rope_layer_interval": 2, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "num_key_value_heads": 4, "rope_theta": 10000.0,
                 "sliding_window": 3, "use_sliding_window": True, "vocab_size": 12}),
]

HELDOUT = [
    # no_rope_layers left out: every 4th layer without rope, sliding there
    dict(name="smollm3", seed=408, container="safetensors", dtype="f32", layers=[3, 4], B=2,
         S=9, pad="right",
         config={"model_type": "smollm3", "hidden_size": 32, "num_attention_heads": 4,
                 "num_hidden_layers": 5, "use_sliding_window": True, "sliding_window": 4,
                 "rope_theta": 10000.0, "max_position_embeddings": 64}),
]

GGUF = [
    # SmolLM3: a LlamaModel (Q/K permuted); layer 3 has no rope (every 4th, hard-coded).
    dict(name="smollm3", arch="smollm3", seed=38, layers=[2, 3], permute=True,
         types={"attn_q": "Q4_1", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "IQ4_NL"},
         config={"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3",
                 "attention_bias": False, "hidden_size": 32, "intermediate_size": 8,
                 "layer_types": ["full_attention"] * 4, "max_position_embeddings": 64,
                 "no_rope_layer_interval": 4, "no_rope_layers": [1, 1, 1, 0],
                 "num_attention_heads": 4, "num_hidden_layers": 4, "num_key_value_heads": 2,
                 "rms_norm_eps": 1e-06, "rope_theta": 5000000.0, "sliding_window": None,
                 "use_sliding_window": False, "vocab_size": 12}),
]

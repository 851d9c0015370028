"""StarCoder2: modeling_starcoder2.Starcoder2Attention: q/k/v/o_proj with use_bias, a
sliding_window on every layer."""
from .. import hf
from .. import weights as W
from ..reference import Layer, Rope

MODEL_TYPES = ("starcoder2",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, num_key_value_heads=2, sliding_window=None,
                      use_bias=True)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H, Hkv, D = hf.sizes(cfg)
    b = bool(cfg["use_bias"])
    return Layer(C, H, Hkv, D, qkv_bias=b, o_bias=b, window=cfg["sliding_window"],
                 rope=Rope(float(cfg["rope_theta"]), D, hf.rope_scaling(cfg),
                           cfg.get("max_position_embeddings")),
                 model_type="starcoder2", prefix=f"model.layers.{layer}.self_attn.")


def neighbours(s, layer, g, small=4):
    p = f"model.layers.{layer}."
    one = W.ones(s.C)
    return {p + "input_layernorm.weight": one, p + "input_layernorm.bias": one * 0,
            p + "mlp.c_fc.weight": W.small(g, small, s.C)}


FOLDERS = [
    dict(name="starcoder2", seed=303, container="safetensors", dtype="bf16", layers=[0, 1],
         B=2, S=9, pad="right",
         config={"architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2",
                 "attention_dropout": 0.1, "hidden_act": "gelu_pytorch_tanh",
                 "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 64,
                 "norm_epsilon": 1e-05, "num_attention_heads": 4, "num_hidden_layers": 2,
                 "num_key_value_heads": 2, "residual_dropout": 0.1, "rope_theta": 100000,
                 "sliding_window": 4, "torch_dtype": "bfloat16", "use_bias": True,
                 "vocab_size": 12}),
]

HELDOUT = [
    # num_key_value_heads left out (Starcoder2Config: 2), no bias, no window
    dict(name="starcoder2", seed=403, container="shards2", dtype="f32", layers=[1], B=2, S=8,
         pad="left",
         config={"model_type": "starcoder2", "hidden_size": 48, "num_attention_heads": 6,
                 "num_hidden_layers": 2, "use_bias": False, "sliding_window": None,
                 "max_position_embeddings": 64}),
]

GGUF = [
    # StarCoder2 (starcoder2-3b's spelling): biases, NEOX rope; its 4096 window is not in the
    # file (the converter writes none, llama.cpp runs none) and longer than the input here.
    dict(name="starcoder2", arch="starcoder2", seed=31, layers=[0, 1],
         types={"attn_q": "Q8_0", "attn_k": "Q5_0", "attn_v": "F16", "attn_output": "BF16"},
         config={"architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2",
                 "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 64,
                 "norm_epsilon": 1e-05, "num_attention_heads": 4, "num_hidden_layers": 2,
                 "num_key_value_heads": 2, "rope_theta": 100000, "sliding_window": 4096,
                 "use_bias": True, "vocab_size": 12}),
]

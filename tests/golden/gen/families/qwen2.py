"""Qwen2: modeling_qwen2.Qwen2Attention (q/k/v_proj with bias, o_proj without), a window on the
layers from max_window_layers on when use_sliding_window (or layer_types' sliding layers)."""
from .. import hf, plain

MODEL_TYPES = ("qwen2",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, use_sliding_window=False, sliding_window=4096,
                      max_window_layers=28)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "qwen2", layer, qkv_bias=True, o_bias=False)
    sliding = bool(cfg["use_sliding_window"]) and layer >= cfg["max_window_layers"]
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)),
                     window=cfg["sliding_window"] if hf.sliding(cfg, layer, sliding) else None)


FOLDERS = [
    dict(name="qwen2", seed=7, container="safetensors", dtype="bf16", layers=[0, 2], B=2, S=8,
         pad="left",
         config={"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
                 "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 128,
                 "max_window_layers": 1, "num_attention_heads": 4, "num_hidden_layers": 3,
                 "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
                 "sliding_window": 3, "use_sliding_window": True, "vocab_size": 12}),
]

HELDOUT = [
    # Qwen2: a window in config.json but use_sliding_window false; newer layer_types spelling
    dict(name="qwen2_off", seed=107, container="safetensors", dtype="f32", layers=[1], S=8,
         config={"model_type": "qwen2", "hidden_size": 32, "max_position_embeddings": 64,
                 "max_window_layers": 0, "num_attention_heads": 4, "num_hidden_layers": 2,
                 "num_key_value_heads": 4, "rope_theta": 10000.0, "sliding_window": 2,
                 "use_sliding_window": False}),
    dict(name="qwen2_types", seed=117, container="safetensors", dtype="f32", layers=[0, 3],
         B=2, S=9, pad="right",
         config={"model_type": "qwen2", "hidden_size": 32, "max_position_embeddings": 64,
                 "max_window_layers": 2, "num_attention_heads": 4, "num_hidden_layers": 4,
                 "num_key_value_heads": 2, "rope_theta": 10000.0, "sliding_window": 4,
                 "use_sliding_window": True,
                 "layer_types": ["full_attention", "full_attention", "sliding_attention",
                                 "sliding_attention"]}),
    # pytorch_model.bin (torch.save's zip)
    dict(name="qwen2_bin", seed=133, container="bin", dtype="bf16", layers=[0], B=2, S=7,
         pad="left",
         config={"model_type": "qwen2", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 1, "rope_theta": 10000.0,
                 "use_sliding_window": False, "max_position_embeddings": 64}),
]

GGUF = [
    dict(name="qwen2", arch="qwen2", writer="by_layout", seed=13, layers=[0],
         types={"attn_q": "F16", "attn_k": "BF16", "attn_v": "Q5_0", "attn_output": "Q4_1"},
         config={"model_type": "qwen2", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 2,
                 "max_position_embeddings": 128, "rms_norm_eps": 1e-6,
                 "rope_theta": 1000000.0, "use_sliding_window": False}),
]

PLAIN = [
    dict(name="qwen2_gqa_bias_bf16", seed=1003, prefix="model.layers.0.self_attn.",
         block="model.layers.0.", C=16, H=4, Hkv=2, D=4, dtype="bf16", causal=True),
]


def write_plain(out, case):
    plain.separate_case(out, case, biases=(True, True, True, False))

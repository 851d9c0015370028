"""Cohere (Command R) and Cohere 2 (Command R7B): modeling_cohere.CohereAttention: rope in pairs
(x[2i], x[2i+1]), with use_qk_norm a CohereLayerNorm((H, D)) on q and on k (one weight per head,
no bias) before rope; modeling_cohere2.Cohere2Attention: sliding layers (sliding_window_pattern,
or layer_types) with rope, the global ones without; head_dim = hidden_size // heads."""
from .. import hf
from .. import weights as W
from ..reference import Layer, QkNorm, Rope

MODEL_TYPES = ("cohere", "cohere2")
CLASS_DEFAULTS = {
    "cohere": dict(rope_theta=10000.0, attention_bias=False, layer_norm_eps=1e-5,
                   use_qk_norm=False),
    "cohere2": dict(rope_theta=10000.0, attention_bias=False, sliding_window=4096,
                    sliding_window_pattern=4, layer_types=None),
}


def settings(cfg, layer):
    mt = cfg["model_type"]
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS[mt])
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads") or H
    D = cfg.get("head_dim") or C // H
    if mt == "cohere2":  # Cohere2Config.__post_init__: head_dim = hidden_size // heads
        D = C // H
    b = bool(cfg["attention_bias"])
    a = Layer(C, H, Hkv, D, qkv_bias=b, o_bias=b, model_type=mt, kind="full_attention",
              prefix=f"model.layers.{layer}.self_attn.")
    rope = Rope(float(cfg["rope_theta"]), D, None, cfg.get("max_position_embeddings"),
                "interleaved")
    if mt == "cohere":
        return a.replace(rope=rope, qk_norm=QkNorm("layer", cfg["layer_norm_eps"], per_head=True)
                         if cfg["use_qk_norm"] else None)
    types = cfg["layer_types"] or [
        "sliding_attention" if (i + 1) % cfg["sliding_window_pattern"] else "full_attention"
        for i in range(cfg["num_hidden_layers"])]
    if types[layer] == "sliding_attention":
        return a.replace(kind=types[layer], window=cfg["sliding_window"], rope=rope)
    return a


def block(s, layer, g):
    return W.decoder_block(s, g, lambda b: W.prefixed(W.gated_attention(s, g), s.prefix),
                           lambda b: {b + "mlp.up_proj.weight": W.small(g, 8, s.C)})


def model(cfg, layers, g):
    sd, top = W.decoder_outside(layers[0], g)
    sd["lm_head.weight"] = W.small(g, 12, layers[0].C)
    for i, s in enumerate(layers):
        sd.update(block(s, i, g))
    return sd


def gguf_weights(s, layer, g):
    return W.under(block(s, layer, g), s.prefix)


FOLDERS = [
    # interleaved rotary, per-head LayerNorm q/k norms, f16
    dict(name="cohere", seed=103, container="safetensors", dtype="f16", layers=[0, 1], B=2,
         S=7, pad="right",
         config={"architectures": ["CohereForCausalLM"], "model_type": "cohere",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "num_hidden_layers": 2, "intermediate_size": 8, "vocab_size": 12,
                 "max_position_embeddings": 256, "rope_theta": 8000000.0,
                 "layer_norm_eps": 1e-05, "use_qk_norm": True, "attention_bias": False,
                 "logit_scale": 0.125, "hidden_act": "silu", "torch_dtype": "float16",
                 "transformers_version": "4.40.0"}),
    # The residual stream in (--residual): CohereLayerNorm, a LayerNorm without bias, first.
    dict(name="cohere_residual", seed=43, container="safetensors", dtype="f32", layers=[1], B=1,
         S=6, input_norm=dict(kind="layer", name="input_layernorm.", eps=1e-5, layers=[1]),
         config={"architectures": ["CohereForCausalLM"], "model_type": "cohere",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "num_hidden_layers": 2, "intermediate_size": 8, "vocab_size": 12,
                 "max_position_embeddings": 256, "rope_theta": 10000.0,
                 "layer_norm_eps": 1e-05, "use_qk_norm": False, "attention_bias": False}),
    # sliding layers with rope, a global one without
    dict(name="cohere2", seed=105, container="safetensors", dtype="f32", layers=[2, 3], B=2,
         S=8, pad="right",
         config={"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 1,
                 "head_dim": 8, "num_hidden_layers": 4, "sliding_window": 3,
                 "sliding_window_pattern": 4, "intermediate_size": 8, "vocab_size": 12,
                 "max_position_embeddings": 256, "rope_theta": 50000.0, "layer_norm_eps": 1e-05,
                 "attention_bias": False, "logit_scale": 0.25, "hidden_act": "silu",
                 "torch_dtype": "bfloat16", "transformers_version": "4.48.0"}),
]

HELDOUT = [
    # Cohere without use_qk_norm (Command R), bias on.
    dict(name="cohere_plain", seed=203, container="bin", dtype="f32", layers=[1], B=2, S=6,
         config={"model_type": "cohere", "hidden_size": 24, "num_attention_heads": 3,
                 "num_hidden_layers": 2, "attention_bias": True, "rope_theta": 75000.0}),
    # Cohere 2 with layer_types instead of the pattern.
    dict(name="cohere2_types", seed=204, container="safetensors", dtype="f16",
         layers=[0, 1], B=2, S=9, pad="left",
         config={"model_type": "cohere2", "hidden_size": 32, "num_attention_heads": 2,
                 "num_key_value_heads": 2, "num_hidden_layers": 3, "sliding_window": 4,
                 "layer_types": ["full_attention", "sliding_attention",
                                 "sliding_attention"]}),
]

GGUF = [
    # Command R+ (CommandR2Model): per-head q/k LayerNorms, interleaved rope as NORM mode.
    dict(name="command_r", arch="command-r", seed=34, layers=[0, 1],
         extra={"logit_scale": 0.125, "rope.scaling.type": "none"},
         types={"attn_q": "Q8_0", "attn_k": "F16", "attn_v": "Q4_0", "attn_output": "Q8_0"},
         config={"architectures": ["CohereForCausalLM"], "model_type": "cohere",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "num_hidden_layers": 2, "intermediate_size": 8, "vocab_size": 12,
                 "max_position_embeddings": 256, "rope_theta": 8000000.0,
                 "layer_norm_eps": 1e-05, "use_qk_norm": True, "attention_bias": False,
                 "logit_scale": 0.125}),
    # Command R7B (Cohere2Model): sliding layers with rope, every 4th global without.
    dict(name="cohere2", arch="cohere2", seed=35, layers=[2, 3], S=8,
         extra={"logit_scale": 0.25, "attention.sliding_window": 3, "vocab_size": 12,
                "rope.dimension_count": 8, "rope.scaling.type": "none"},
         types={"attn_q": "IQ4_NL", "attn_k": "Q8_0", "attn_v": "Q5_0", "attn_output": "F16"},
         config={"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 1,
                 "head_dim": 8, "num_hidden_layers": 4, "sliding_window": 3,
                 "sliding_window_pattern": 4, "intermediate_size": 8, "vocab_size": 12,
                 "max_position_embeddings": 256, "rope_theta": 50000.0, "rotary_pct": 1.0,
                 "layer_norm_eps": 1e-05, "attention_bias": False, "logit_scale": 0.25}),
]

VARIANTS = [  # Cohere's per-head LayerNorm (H, D) with interleaved rope
    dict(name="cohere_layernorm_per_head", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 10000.0, "style": "interleaved"},
         qk_norm={"kind": "layer", "eps": 1e-5, "per_head": True}, seed=12),
]

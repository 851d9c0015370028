"""StableLM (2): modeling_stablelm.StableLmAttention: q/k/v_proj with use_qkv_bias, o_proj
without; partial rotary (0.25); with qk_layernorm StableLmLayerNormPerHead: one LayerNorm per
head (q_layernorm.norms.{h}, no bias) before rope. llama.cpp's converter stacks the per-head
norms into attn_q_norm / attn_k_norm (H, D)."""
from collections import OrderedDict

import numpy as np
import torch

from .. import gguf, hf
from .. import weights as W
from ..reference import Layer, QkNorm, Rope

MODEL_TYPES = ("stablelm",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, partial_rotary_factor=0.25, use_qkv_bias=False,
                      qk_layernorm=False, layer_norm_eps=1e-5)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads") or H
    D = cfg.get("head_dim") or C // H
    norm = QkNorm("layer", cfg["layer_norm_eps"], per_head=True, split=True,
                  names=("q_layernorm", "k_layernorm")) if cfg["qk_layernorm"] else None
    return Layer(C, H, Hkv, D, qkv_bias=bool(cfg["use_qkv_bias"]), o_bias=False, qk_norm=norm,
                 rope=Rope(float(cfg["rope_theta"]), int(D * cfg["partial_rotary_factor"]), None,
                           cfg.get("max_position_embeddings")),
                 model_type="stablelm", kind="full_attention",
                 prefix=f"model.layers.{layer}.self_attn.")


def attention_tensors(s, g):
    """The gated-attention family's draws, the (H, D) norms split into one weight per head."""
    w = W.gated_attention(s, g)
    if s.qk_norm:
        for which, heads in (("q", s.H), ("k", s.Hkv)):
            t = w.pop(which + "_norm.weight")
            for h in range(heads):
                w[f"{which}_layernorm.norms.{h}.weight"] = t[h].clone()
    return w


def block(s, layer, g):
    return W.decoder_block(s, g, lambda b: W.prefixed(attention_tensors(s, g), s.prefix),
                           lambda b: {b + "mlp.up_proj.weight": W.small(g, 8, s.C)})


def model(cfg, layers, g):
    sd, top = W.decoder_outside(layers[0], g)
    sd["lm_head.weight"] = W.small(g, 12, layers[0].C)
    for i, s in enumerate(layers):
        sd.update(block(s, i, g))
    return sd


def gguf_weights(s, layer, g):
    return W.under(block(s, layer, g), s.prefix)


def to_gguf(spec, s, hf_sd):
    """StableLMModel: q_layernorm.norms.{h} stacked as attn_q_norm (H, D), after the others."""
    out, norms = OrderedDict(), {}
    for name, t in hf_sd.items():
        if ".norms." in name:
            norms.setdefault(name.split(".")[0], []).append(t)
        else:
            out.update(gguf.to_gguf(spec, s, {name: t}))
    for which, rows in norms.items():
        name = "attn_q_norm" if which == "q_layernorm" else "attn_k_norm"
        out[name + ".weight"] = np.stack(rows)
    return out


def from_gguf(spec, s, names, back):
    sd = OrderedDict()
    for name in names:
        if ".norms." in name:
            which, _, h, _ = name.split(".")
            t = back[("attn_q_norm" if which == "q_layernorm" else "attn_k_norm") + ".weight"]
            sd[name] = torch.tensor(t[int(h)])
        else:
            sd.update(gguf.from_gguf(spec, s, [name], back))
    return sd


def gguf_metadata(w, arch, cfg, n_layers):  # StableLMModel.set_gguf_parameters
    a = arch + "."
    gguf.general(w, arch)
    w.add(a + "context_length", cfg["max_position_embeddings"])
    w.add(a + "embedding_length", cfg["hidden_size"])
    w.add(a + "block_count", n_layers)
    w.add(a + "feed_forward_length", cfg["intermediate_size"])
    D = cfg["hidden_size"] // cfg["num_attention_heads"]
    w.add(a + "rope.dimension_count", int(cfg["partial_rotary_factor"] * D))
    w.add(a + "attention.head_count", cfg["num_attention_heads"])
    w.add(a + "attention.head_count_kv", cfg["num_key_value_heads"])
    w.add(a + "use_parallel_residual", bool(cfg.get("use_parallel_residual", True)))
    w.add(a + "attention.layer_norm_epsilon", float(cfg["layer_norm_eps"]))


FOLDERS = [
    # partial rotary, q_layernorm.norms.{h}, pytorch_model.bin
    dict(name="stablelm", seed=106, container="bin", dtype="f32", layers=[0, 1], B=2, S=7,
         pad="left",
         config={"architectures": ["StableLmForCausalLM"], "model_type": "stablelm",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "num_hidden_layers": 2, "intermediate_size": 8, "vocab_size": 12,
                 "max_position_embeddings": 256, "rope_theta": 10000,
                 "partial_rotary_factor": 0.25, "use_qkv_bias": True, "qk_layernorm": True,
                 "layer_norm_eps": 1e-05, "use_parallel_residual": False, "hidden_act": "silu",
                 "torch_dtype": "bfloat16", "transformers_version": "4.38.0"}),
]

HELDOUT = [
    # StableLM defaults (partial 0.25 of 16 = 4) with its per-head norms, no q/k/v bias.
    dict(name="stablelm_defaults", seed=205, container="safetensors", dtype="f32",
         layers=[0], B=2, S=7, pad="right",
         config={"model_type": "stablelm", "hidden_size": 48, "num_attention_heads": 3,
                 "num_key_value_heads": 1, "num_hidden_layers": 1, "qk_layernorm": True}),
]

GGUF = [
    # StableLM 2: q/k/v biases, per-head q/k LayerNorms (stacked), partial rotary 0.25.
    dict(name="stablelm", arch="stablelm", seed=36, layers=[0, 1], metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "Q5_1", "attn_v": "F16", "attn_output": "Q4_0"},
         config={"architectures": ["StableLmForCausalLM"], "model_type": "stablelm",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "num_hidden_layers": 2, "intermediate_size": 8, "vocab_size": 12,
                 "max_position_embeddings": 256, "rope_theta": 10000,
                 "partial_rotary_factor": 0.25, "use_qkv_bias": True, "qk_layernorm": True,
                 "layer_norm_eps": 1e-05, "use_parallel_residual": False}),
]

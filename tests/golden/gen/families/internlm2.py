"""InternLM2 (trust_remote_code: modeling_internlm2.InternLM2Attention): wqkv viewed
(Hkv, H/Hkv + 2, D) per KV group [q..., k, v] ("b q (h gs d) -> b q h gs d"), wo; biases as
bias; dynamic NTK rope (rope_scaling, none by default). llama.cpp's converter splits wqkv into
attn_q / attn_k / attn_v by KV group, Q and K rows permuted (InternLM2Model.modify_tensors)."""
from collections import OrderedDict

import numpy as np
import torch

from .. import gguf, hf
from .. import weights as W
from ..reference import Layer, Rope

MODEL_TYPES = ("internlm2",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, bias=True, rope_scaling=None)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H, Hkv, D = hf.sizes(cfg)
    b = bool(cfg["bias"])
    return Layer(C, H, Hkv, D, layout="kv_groups", names=("wqkv", "wo"), qkv_bias=b, o_bias=b,
                 rope=Rope(float(cfg["rope_theta"]), D, hf.rope_scaling(cfg),
                           cfg.get("max_position_embeddings")),
                 model_type="internlm2", prefix=f"model.layers.{layer}.attention.")


def outside(cfg, s0, g, vocab=12):
    return {"model.tok_embeddings.weight": W.small(g, vocab, s0.C),
            "output.weight": W.small(g, vocab, s0.C)}


def attention_weights(a, g):  # wqkv ((H + 2*Hkv)*D, C), wo
    sd = {}
    W.put(sd, "wqkv", W.lin(g, (a.H + 2 * a.Hkv) * a.D, a.C, a.qkv_bias))
    W.put(sd, "wo", W.lin(g, a.C, a.H * a.D, a.o_bias))
    return sd


def neighbours(s, layer, g, small=4):
    p = f"model.layers.{layer}."
    return {p + "attention_norm.weight": W.ones(s.C),
            p + "feed_forward.w1.weight": W.small(g, small, s.C)}


def to_gguf(spec, s, hf_sd):
    """wqkv split per KV group into attn_q, attn_k (both permuted) and attn_v."""
    H, Hkv, D = s.H, s.Hkv, s.D
    out = OrderedDict()
    for name, t in hf_sd.items():
        if name == "wqkv.weight":
            C = t.shape[1]
            qkv = t.reshape(Hkv, H // Hkv + 2, D, C)
            out["attn_q.weight"] = gguf.permute(qkv[:, :-2].reshape(-1, C), H)
            out["attn_k.weight"] = gguf.permute(qkv[:, -2].reshape(-1, C), Hkv)
            out["attn_v.weight"] = qkv[:, -1].reshape(-1, C)
        else:
            out.update(gguf.to_gguf(spec, s, {name: t}))
    return out


def from_gguf(spec, s, names, back):
    H, Hkv, D = s.H, s.Hkv, s.D
    sd = OrderedDict()
    for name in names:
        if name == "wqkv.weight":
            C = back["attn_q.weight"].shape[1]
            q = gguf.unpermute(back["attn_q.weight"], H).reshape(Hkv, H // Hkv, D, C)
            k = gguf.unpermute(back["attn_k.weight"], Hkv).reshape(Hkv, 1, D, C)
            v = back["attn_v.weight"].reshape(Hkv, 1, D, C)
            sd[name] = torch.tensor(np.concatenate([q, k, v], 1).reshape(-1, C))
        else:
            sd.update(gguf.from_gguf(spec, s, [name], back))
    return sd


FOLDERS = [
    # InternLM2 (trust_remote_code): wqkv per KV group, dynamic NTK past the 8 positions
    dict(name="internlm2", seed=307, container="safetensors", dtype="bf16", layers=[0, 1],
         S=11,
         config={"architectures": ["InternLM2ForCausalLM"], "model_type": "internlm2",
                 "attn_implementation": "eager",
                 "auto_map": {
                     "AutoConfig": "configuration_internlm2.InternLM2Config",
                     "AutoModelForCausalLM": "modeling_internlm2.InternLM2ForCausalLM"},
                 "bias": False, "hidden_act": "silu", "hidden_size": 48,
                 "intermediate_size": 8, "max_position_embeddings": 8,
                 "num_attention_heads": 6, "num_hidden_layers": 2, "num_key_value_heads": 2,
                 "rms_norm_eps": 1e-05, "rope_scaling": {"type": "dynamic", "factor": 2.0},
                 "rope_theta": 1000000, "torch_dtype": "bfloat16", "vocab_size": 12}),
]

HELDOUT = [
    # bias left out (InternLM2Config: True), one KV group, linear scaling
    dict(name="internlm2", seed=407, container="safetensors", dtype="f32", layers=[1], B=2,
         S=8, pad="right",
         config={"model_type": "internlm2", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "num_hidden_layers": 2, "rope_theta": 10000,
                 "rope_scaling": {"type": "linear", "factor": 3.0},
                 "max_position_embeddings": 64}),
]

GGUF = [
    # InternLM2: wqkv split into attn_q/k/v by KV group, Q/K permuted.
    dict(name="internlm2", arch="internlm2", seed=37, layers=[1], permute=True,
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q4_1", "attn_output": "Q5_0"},
         config={"architectures": ["InternLM2ForCausalLM"], "model_type": "internlm2",
                 "auto_map": {
                     "AutoConfig": "configuration_internlm2.InternLM2Config",
                     "AutoModelForCausalLM": "modeling_internlm2.InternLM2ForCausalLM"},
                 "bias": False, "hidden_size": 64, "intermediate_size": 8,
                 "max_position_embeddings": 256, "num_attention_heads": 8,
                 "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-05,
                 "rope_scaling": None, "rope_theta": 1000000, "vocab_size": 12}),
]

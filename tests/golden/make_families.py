#!/usr/bin/python3
"""Golden cases for the model families' attention layers (issue 9, CONTRACT.md v2 layouts).

Run from anywhere:  /usr/bin/python3 tests/golden/make_families.py
It rewrites tests/golden/families/ from scratch (deterministic: fixed seeds).

No `transformers` package exists here, so each family's attention is written below in
plain torch from Hugging Face's published modeling code (modeling_llama.py, modeling_qwen2.py,
modeling_opt.py, modeling_whisper.py, modeling_bert.py, modeling_gpt_neox.py,
modeling_falcon.py, modeling_phi3.py, modeling_mpt.py), read at the source, not copied.

Positions are left out on purpose: RoPE and ALiBi are issue 10. The layers run here without
position embeddings, which is exactly their projection + scaled-dot-product-attention math
with position_ids ignored (rotary_emb, alibi and the like are not applied). Dropout is off
(eval mode). BERT's output is its BertSelfOutput.dense before dropout, residual and LayerNorm;
every other family's is its output projection (o_proj, out_proj or dense).

Each case folder holds config.json (an ordinary attn-run config), the weights as the family
saves them (the real state_dict names under a realistic prefix, with the block's neighbour
keys, norms and MLP, and another layer in the same file) as a .safetensors in bf16, f16 or
f32 (written by the small writer below, no safetensors package) or a two-shard
model.safetensors.index.json, input.npy (float32), mask.npy when padded (true = padded key),
and the expected context.npy and attention.npy (float32), computed in float64 from the
stored (rounded) weights.
"""
import json
import os
import shutil
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from safetensors_write import save_safetensors  # noqa: E402  (the one writer of the scripts)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "families")
torch.set_default_dtype(torch.float64)

# ---------------------------------------------------------------------------
# safetensors: 8-byte little-endian header length, JSON header, then the data.

ST_DTYPE = {"f32": ("F32", torch.float32), "f16": ("F16", torch.float16),
            "bf16": ("BF16", torch.bfloat16)}


def write_safetensors(path, tensors):
    save_safetensors(path, tensors, metadata={"format": "pt"})


# ---------------------------------------------------------------------------
# The families' attention, from their modeling files. Shapes: x (B, S, C);
# p maps the layer's own names (no prefix) to float64 tensors as stored.

def linear(x, p, name):
    w = p[name + ".weight"]
    b = p.get(name + ".bias")
    return x @ w.T + (b if b is not None else 0.0)


def repeat_kv(t, n_rep):
    # modeling_llama.repeat_kv: (B, Hkv, S, D) -> (B, Hkv*n_rep, S, D)
    B, Hkv, S, D = t.shape
    if n_rep == 1:
        return t
    return t[:, :, None, :, :].expand(B, Hkv, n_rep, S, D).reshape(B, Hkv * n_rep, S, D)


def sdpa(q, k, v, scaling, causal, pad):
    # eager_attention_forward: softmax(q k^T * scaling + mask) v. q (B, H, S, D), k/v
    # already repeated to H heads; pad (B, S) true = padded key.
    w = (q @ k.transpose(2, 3)) * scaling
    S = q.shape[2]
    if causal:
        w = w.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), float("-inf"))
    if pad is not None:
        w = w.masked_fill(pad[:, None, None, :], float("-inf"))
    w = torch.softmax(w, dim=-1)
    return w @ v, w


def heads(t, B, S, n, D):
    return t.view(B, S, n, D).transpose(1, 2)


def merge(o):
    B, H, S, D = o.shape
    return o.transpose(1, 2).reshape(B, S, H * D)


def proj_family(x, p, H, Hkv, D, causal, pad, out="o_proj", scale_q=False):
    # Llama / Mistral / Qwen2 (LlamaAttention): q/k/v_proj, repeat_kv, o_proj.
    # OPT / Whisper / BART (OPTAttention, WhisperAttention): q_proj(x) * scaling first,
    # then q k^T; out_proj. Same numbers up to rounding.
    B, S, _ = x.shape
    scaling = D ** -0.5
    q = heads(linear(x, p, "q_proj"), B, S, H, D)
    if scale_q:
        q, scaling = q * scaling, 1.0
    k = repeat_kv(heads(linear(x, p, "k_proj"), B, S, Hkv, D), H // Hkv)
    v = repeat_kv(heads(linear(x, p, "v_proj"), B, S, Hkv, D), H // Hkv)
    o, w = sdpa(q, k, v, scaling, causal, pad)
    return linear(merge(o), p, out), w


def bert(x, p, H, D, pad):
    # BertSelfAttention: query/key/value, scores / sqrt(D) + extended mask, softmax,
    # context; BertSelfOutput.dense.
    B, S, _ = x.shape
    q = heads(linear(x, p, "self.query"), B, S, H, D)
    k = heads(linear(x, p, "self.key"), B, S, H, D)
    v = heads(linear(x, p, "self.value"), B, S, H, D)
    o, w = sdpa(q, k, v, 1.0 / D ** 0.5, False, pad)
    return linear(merge(o), p, "output.dense"), w


def neox(x, p, H, D, causal, pad):
    # GPTNeoXAttention (and BLOOM): qkv viewed (B, S, H, 3*D), per head [q, k, v].
    B, S, _ = x.shape
    qkv = linear(x, p, "query_key_value").view(B, S, H, 3 * D).transpose(1, 2)
    q, k, v = qkv[..., :D], qkv[..., D:2 * D], qkv[..., 2 * D:]
    o, w = sdpa(q, k, v, D ** -0.5, causal, pad)
    return linear(merge(o), p, "dense"), w


def falcon(x, p, H, Hkv, D, causal, pad):
    # FalconAttention._split_heads: new_decoder_architecture views (B, S, Hkv, H/Hkv + 2, D)
    # and takes [:-2] as q, [-2] as k, [-1] as v per group, k and v broadcast to the group;
    # multi_query views (B, S, H + 2, D): the one-group case of the same.
    B, S, _ = x.shape
    g = H // Hkv
    qkv = linear(x, p, "query_key_value").view(B, S, Hkv, g + 2, D)
    q = qkv[:, :, :, :-2]
    k = qkv[:, :, :, [-2]].expand(B, S, Hkv, g, D)
    v = qkv[:, :, :, [-1]].expand(B, S, Hkv, g, D)
    q, k, v = [t.reshape(B, S, H, D).transpose(1, 2) for t in (q, k, v)]
    o, w = sdpa(q, k, v, 1.0 / D ** 0.5, causal, pad)
    return linear(merge(o), p, "dense"), w


def phi3(x, p, H, Hkv, D, causal, pad):
    # Phi3Attention: qkv_proj; q = [:H*D], k = [H*D : H*D + Hkv*D], v = the rest; repeat_kv; o_proj.
    B, S, _ = x.shape
    qkv = linear(x, p, "qkv_proj")
    qp = H * D
    q = heads(qkv[..., :qp], B, S, H, D)
    k = repeat_kv(heads(qkv[..., qp:qp + Hkv * D], B, S, Hkv, D), H // Hkv)
    v = repeat_kv(heads(qkv[..., qp + Hkv * D:], B, S, Hkv, D), H // Hkv)
    o, w = sdpa(q, k, v, D ** -0.5, causal, pad)
    return linear(merge(o), p, "o_proj"), w


def mpt(x, p, H, D, causal, pad):
    # MptAttention: Wqkv, chunk(3) into q, k, v; softmax_scale 1/sqrt(D); out_proj.
    B, S, _ = x.shape
    q, k, v = linear(x, p, "Wqkv").chunk(3, dim=2)
    o, w = sdpa(heads(q, B, S, H, D), heads(k, B, S, H, D), heads(v, B, S, H, D),
                1.0 / D ** 0.5, causal, pad)
    return linear(merge(o), p, "out_proj"), w


# ---------------------------------------------------------------------------

def lin(out_f, in_f, bias=True):
    w = torch.randn(out_f, in_f) / in_f ** 0.5
    return (w, torch.randn(out_f) * 0.1) if bias else (w, None)


def add(sd, name, wb):
    sd[name + ".weight"] = wb[0]
    if wb[1] is not None:
        sd[name + ".bias"] = wb[1]


def build(case):
    """The layer's own parameters (names without prefix) and the neighbours."""
    fam, C, H, Hkv, D = case["family"], case["C"], case["H"], case["Hkv"], case["D"]
    HD, KV = H * D, Hkv * D
    own, nb = {}, {}
    if fam in ("llama", "qwen2", "opt", "whisper"):
        qb = fam in ("qwen2", "opt", "whisper")
        add(own, "q_proj", lin(HD, C, qb))
        add(own, "k_proj", lin(KV, C, fam in ("qwen2", "opt")))  # Whisper: k_proj has no bias
        add(own, "v_proj", lin(KV, C, qb))
        add(own, case.get("out", "o_proj"), lin(C, HD, fam in ("opt", "whisper")))
        nb = {"mlp.gate_proj.weight": torch.randn(2 * C, C), "mlp.down_proj.weight": torch.randn(C, 2 * C)}
    elif fam == "bert":
        for n in ("self.query", "self.key", "self.value"):
            add(own, n, lin(HD, C))
        add(own, "output.dense", lin(C, HD))
        nb = {"output.LayerNorm.weight": torch.ones(C), "output.LayerNorm.bias": torch.zeros(C)}
    elif fam in ("neox", "falcon"):
        add(own, "query_key_value", lin(HD + 2 * KV, C, case.get("bias", True)))
        add(own, "dense", lin(C, HD, case.get("bias", True)))
        nb = {"rotary_emb.inv_freq": torch.randn(D // 2)}
    elif fam == "phi3":
        add(own, "qkv_proj", lin(HD + 2 * KV, C, False))
        add(own, "o_proj", lin(C, HD, False))
    elif fam == "mpt":
        add(own, "Wqkv", lin(3 * HD, C, False))
        add(own, "out_proj", lin(C, HD, False))
    return own, nb


def run_family(case, x, p, pad):
    fam, H, Hkv, D, causal = case["family"], case["H"], case["Hkv"], case["D"], case["causal"]
    if fam in ("llama", "qwen2"):
        return proj_family(x, p, H, Hkv, D, causal, pad)
    if fam in ("opt", "whisper"):
        return proj_family(x, p, H, Hkv, D, causal, pad, out="out_proj", scale_q=True)
    if fam == "bert":
        return bert(x, p, H, D, pad)
    if fam == "neox":
        return neox(x, p, H, D, causal, pad)
    if fam == "falcon":
        return falcon(x, p, H, Hkv, D, causal, pad)
    if fam == "phi3":
        return phi3(x, p, H, Hkv, D, causal, pad)
    return mpt(x, p, H, D, causal, pad)


CASES = [
    # name, family, prefix, sizes, dtype, causal, extras
    dict(name="llama_gqa_bf16", family="llama", prefix="model.layers.1.self_attn.", block="model.layers.1.",
         C=16, H=4, Hkv=2, D=4, dtype="bf16", causal=True),
    dict(name="llama_mqa_f16_unbatched", family="llama", prefix="model.layers.1.self_attn.",
         block="model.layers.1.", C=16, H=4, Hkv=1, D=4, dtype="f16", causal=True, unbatched=True),
    dict(name="llama_gqa_sharded_f32", family="llama", prefix="model.layers.1.self_attn.",
         block="model.layers.1.", C=16, H=4, Hkv=2, D=4, dtype="f32", causal=True, shards=True),
    dict(name="qwen2_gqa_bias_bf16", family="qwen2", prefix="model.layers.0.self_attn.",
         block="model.layers.0.", C=16, H=4, Hkv=2, D=4, dtype="bf16", causal=True),
    dict(name="opt_f16", family="opt", prefix="model.decoder.layers.1.self_attn.",
         block="model.decoder.layers.1.", C=12, H=3, Hkv=3, D=4, dtype="f16", causal=True, out="out_proj"),
    dict(name="whisper_encoder_no_k_bias_f32", family="whisper", prefix="model.encoder.layers.0.self_attn.",
         block="model.encoder.layers.0.", C=12, H=3, Hkv=3, D=4, dtype="f32", causal=False, out="out_proj",
         padded=True),
    dict(name="bert_padded_f32", family="bert", prefix="bert.encoder.layer.0.attention.",
         block="bert.encoder.layer.0.attention.", C=12, H=3, Hkv=3, D=4, dtype="f32", causal=False, padded=True),
    dict(name="neox_f16", family="neox", prefix="gpt_neox.layers.0.attention.", block="gpt_neox.layers.0.attention.",
         C=16, H=4, Hkv=4, D=4, dtype="f16", causal=True, layout="neox"),
    dict(name="falcon_multi_query_bf16", family="falcon", prefix="transformer.h.0.self_attention.",
         block="transformer.h.0.self_attention.", C=16, H=4, Hkv=1, D=4, dtype="bf16", causal=True,
         layout="falcon", bias=False),
    dict(name="falcon_grouped_f32", family="falcon", prefix="transformer.h.0.self_attention.",
         block="transformer.h.0.self_attention.", C=16, H=4, Hkv=2, D=4, dtype="f32", causal=True,
         layout="falcon", bias=True),
    dict(name="phi3_qkv_proj_gqa_bf16", family="phi3", prefix="model.layers.0.self_attn.",
         block="model.layers.0.", C=16, H=4, Hkv=2, D=4, dtype="bf16", causal=True),
    dict(name="mpt_wqkv_f16", family="mpt", prefix="transformer.blocks.0.attn.", block="transformer.blocks.0.",
         C=16, H=4, Hkv=4, D=4, dtype="f16", causal=True),
]


def make_case(case, seed):
    torch.manual_seed(seed)
    d = os.path.join(ROOT, case["name"])
    os.makedirs(os.path.join(d, "expected"))
    C, B, S = case["C"], 2, 5
    st_name, st_dtype = ST_DTYPE[case["dtype"]]

    own, nb = build(case)
    # Round the layer's parameters to the stored dtype; the expectation uses those values.
    own = {k: v.to(st_dtype) for k, v in own.items()}
    stored = {}
    other = case["prefix"].replace(".1.", ".0.") if ".1." in case["prefix"] else case["prefix"].replace(".0.", ".1.")
    for k, v in own.items():  # another layer first, as whole-model files hold them
        stored[other + k] = (v.double() * 0.5).to(st_dtype)
    for k, v in nb.items():
        stored[case["block"] + k if case["block"] != case["prefix"] else case["prefix"] + k] = v.to(st_dtype)
    for k, v in own.items():
        stored[case["prefix"] + k] = v

    if case.get("shards"):
        keys = list(stored)
        half = len(keys) // 2
        files = {"model-00001-of-00002.safetensors": keys[:half], "model-00002-of-00002.safetensors": keys[half:]}
        wmap = {}
        for fname, ks in files.items():
            write_safetensors(os.path.join(d, fname), {k: stored[k] for k in ks})
            wmap.update({k: fname for k in ks})
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 0}, "weight_map": wmap}, f, indent=1)
        weights = "model.safetensors.index.json"
    else:
        write_safetensors(os.path.join(d, "model.safetensors"), stored)
        weights = "model.safetensors"

    x = torch.randn(B, S, C).to(torch.float32)
    pad = None
    if case.get("padded"):
        pad = torch.zeros(B, S, dtype=torch.bool)
        pad[1, 3:] = True  # right padding of the second sequence
        np.save(os.path.join(d, "mask.npy"), pad.numpy())
    p = {k: v.double() for k, v in own.items()}
    out, w = run_family(case, x.double(), p, pad)

    unbatched = case.get("unbatched", False)
    np.save(os.path.join(d, "input.npy"), (x[0] if unbatched else x).numpy())
    out, w = out.float(), w.float()
    np.save(os.path.join(d, "expected", "context.npy"), (out[0] if unbatched else out).numpy())
    np.save(os.path.join(d, "expected", "attention.npy"), (w[0] if unbatched else w).numpy())

    cfg = {"attention": "causal" if case["causal"] else "multi", "hidden_size": C,
           "num_heads": case["H"], "head_size": case["D"], "weights": weights,
           "weights_prefix": case["prefix"], "input": "input.npy"}
    if case["Hkv"] != case["H"]:
        cfg["num_kv_heads"] = case["Hkv"]
    if "layout" in case:
        cfg["layout"] = case["layout"]
    if pad is not None:
        cfg["padding_mask"] = "mask.npy"
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
        f.write("\n")
    return case["name"]


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    os.makedirs(ROOT)
    for i, case in enumerate(CASES):
        print(make_case(case, 1000 + i))
    print(len(CASES), "cases in", ROOT)


if __name__ == "__main__":
    main()

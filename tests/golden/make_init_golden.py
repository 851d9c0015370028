#!/usr/bin/python3
"""Golden data for the torch-exact seeded init and the GPT-2 layout.

Writes, beside this script:
  init/manifest.json      torch.manual_seed(seed) + each tutorial module's
                          constructor (copied below from
                          ../shared/tutorials 000-004) and nn.MultiheadAttention,
                          at several seeds and sizes: for every state_dict key its
                          shape, the SHA-256 of its float32 little-endian bytes
                          (so every element is checked bit for bit without
                          shipping megabytes) and its first values.
  init/gpt2_layers/       a fake two-layer GPT-2 state dict, one <key>.npy per
                          key: c_attn/c_proj are Conv1D (in, out), plus the
                          buffers attn.bias / attn.masked_bias and some other
                          keys of a whole model, as Hugging Face names them.
  init/gpt2_expected/     x.npy (S, C) and context_h1.npy (S, C): layer 1's
                          causal attention computed the way HF GPT2Attention does.

Run: /usr/bin/python3 tests/golden/make_init_golden.py  (PyTorch 1.13, CPU; Debian 12's
python3-torch). normal_ (add_bias_kv's xavier_normal_) on 16 values or more runs a
CPU-specific kernel: generate on an x86-64 machine whose torch reports "CPU capability
usage: AVX2" (torch.__config__.show()), as every AVX2 or AVX-512 CPU does.
"""
import hashlib
import json
import math
import os

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "init")


# --- The tutorial modules' constructors (forward passes are not needed) ----

class WarnerSingleHeadAttention(nn.Module):  # 002: fused Wqkv, head size C/4
    def __init__(self, hidden_size, bias=True):
        super().__init__()
        self.Wqkv = nn.Linear(hidden_size, (hidden_size // 4) * 3, bias=bias)
        self.Wo = nn.Linear(hidden_size // 4, hidden_size, bias=bias)


class WarnerCausalAttention(nn.Module):  # 002 (MultiHeadAttention has the same parameters)
    def __init__(self, hidden_size, num_heads, context_size, attn_drop=0.1, out_drop=0.1,
                 bias=True):
        super().__init__()
        assert hidden_size % num_heads == 0
        self.nh = num_heads
        self.Wqkv = nn.Linear(hidden_size, hidden_size * 3, bias=bias)
        self.Wo = nn.Linear(hidden_size, hidden_size, bias=bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.out_drop = nn.Dropout(out_drop)
        self.register_buffer('causal_mask',
            torch.triu(torch.ones([context_size, context_size],
                       dtype=torch.bool), diagonal=1)
                .view(1, 1, context_size, context_size))


class RaschkaCausalAttention(nn.Module):  # 004
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('mask',
                             torch.triu(torch.ones(context_length, context_length), diagonal=1))


class MultiHeadAttentionWrapper(nn.Module):  # 004
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [RaschkaCausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
             for _ in range(num_heads)])


class RaschkaMultiHeadAttention(nn.Module):  # 004
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert (d_out % num_heads == 0), "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask",
                             torch.triu(torch.ones(context_length, context_length), diagonal=1))


class KqvHead(nn.Module):  # 001 (syntax slips fixed) and 003: key, query, value in that order
    def __init__(self, n_embed, head_size, bias=True):
        super().__init__()
        self.key = nn.Linear(n_embed, head_size, bias=bias)
        self.query = nn.Linear(n_embed, head_size, bias=bias)
        self.value = nn.Linear(n_embed, head_size, bias=bias)


def dims(C, H, D, O, out_proj=True, qkv_bias=True, out_bias=True, **mha):
    """The config keys of a case; **mha: kdim, vdim, add_bias_kv, written only when given."""
    return dict(hidden_size=C, num_heads=H, head_size=D, out_size=O, out_proj=out_proj,
                qkv_bias=qkv_bias, out_bias=out_bias, **mha)


# name, layout, config dims, module factory; every case runs at each of its seeds.
CASES = [
    ("warner_single_c8", "fused", dims(8, 1, 2, 8), lambda: WarnerSingleHeadAttention(8)),
    ("warner_causal_c12_h3", "fused", dims(12, 3, 4, 12),
     lambda: WarnerCausalAttention(12, 3, 16)),
    ("warner_causal_c6_h2_nobias", "fused", dims(6, 2, 3, 6, qkv_bias=False, out_bias=False),
     lambda: WarnerCausalAttention(6, 2, 16, bias=False)),
    ("raschka_mha_3_2_h2", "separate", dims(3, 2, 1, 2, qkv_bias=False),
     lambda: RaschkaMultiHeadAttention(3, 2, 6, 0.0, 2)),
    ("raschka_mha_6_8_h4_qkvbias", "separate", dims(6, 4, 2, 8),
     lambda: RaschkaMultiHeadAttention(6, 8, 6, 0.0, 4, qkv_bias=True)),
    ("raschka_causal_3_2", "separate", dims(3, 1, 2, 2, out_proj=False, qkv_bias=False,
                                             out_bias=False),
     lambda: RaschkaCausalAttention(3, 2, 6, 0.0)),
    ("raschka_wrapper_3_2_h2", "per_head", dims(3, 2, 2, 4, out_proj=False, qkv_bias=False,
                                                 out_bias=False),
     lambda: MultiHeadAttentionWrapper(3, 2, 6, 0.0, 2)),
    ("raschka_wrapper_5_3_h3_bias", "per_head", dims(5, 3, 3, 9, out_proj=False,
                                                      out_bias=False),
     lambda: MultiHeadAttentionWrapper(5, 3, 6, 0.0, 3, qkv_bias=True)),
    ("kqv_8_4", "kqv", dims(8, 1, 4, 4, out_proj=False, out_bias=False), lambda: KqvHead(8, 4)),
    ("kqv_32_16_nobias", "kqv", dims(32, 1, 16, 16, out_proj=False, qkv_bias=False,
                                     out_bias=False),
     lambda: KqvHead(32, 16, bias=False)),
    ("torch_mha_e8_h2", "torch_mha", dims(8, 2, 4, 8), lambda: nn.MultiheadAttention(8, 2)),
    ("torch_mha_e6_h3_nobias", "torch_mha", dims(6, 3, 2, 6, qkv_bias=False, out_bias=False),
     lambda: nn.MultiheadAttention(6, 3, bias=False)),
    # kdim/vdim: q_proj_weight, k_proj_weight, v_proj_weight (xavier_uniform_ each, in
    # that order); add_bias_kv: bias_k, bias_v (xavier_normal_). E < 16 draws the
    # normals with torch's serial double Box-Muller (E odd: bias_v starts with the
    # value bias_k left cached); E >= 16 with its AVX2 normal_fill (E = 20: a ragged
    # tail of 16 redrawn values).
    ("torch_mha_e8_h2_kdim6_vdim5", "torch_mha", dims(8, 2, 4, 8, kdim=6, vdim=5),
     lambda: nn.MultiheadAttention(8, 2, kdim=6, vdim=5)),
    ("torch_mha_e6_h3_vdim4_nobias", "torch_mha",
     dims(6, 3, 2, 6, qkv_bias=False, out_bias=False, vdim=4),
     lambda: nn.MultiheadAttention(6, 3, bias=False, vdim=4)),
    ("torch_mha_e8_h2_bias_kv", "torch_mha", dims(8, 2, 4, 8, add_bias_kv=True),
     lambda: nn.MultiheadAttention(8, 2, add_bias_kv=True)),
    ("torch_mha_e5_h1_bias_kv_nobias", "torch_mha",
     dims(5, 1, 5, 5, qkv_bias=False, out_bias=False, add_bias_kv=True),
     lambda: nn.MultiheadAttention(5, 1, bias=False, add_bias_kv=True)),
    ("torch_mha_e16_h4_kdim12_vdim10_bias_kv", "torch_mha",
     dims(16, 4, 4, 16, kdim=12, vdim=10, add_bias_kv=True),
     lambda: nn.MultiheadAttention(16, 4, kdim=12, vdim=10, add_bias_kv=True,
                                   add_zero_attn=True)),
    ("torch_mha_e20_h4_kdim24_bias_kv_nobias", "torch_mha",
     dims(20, 4, 5, 20, qkv_bias=False, out_bias=False, kdim=24, add_bias_kv=True),
     lambda: nn.MultiheadAttention(20, 4, bias=False, kdim=24, add_bias_kv=True)),
]
SEEDS = [0, 123, 2024, 2**32 + 123]  # the last: only the low 32 bits count in torch
# GPT-2-small-shaped layers: Wqkv / in_proj_weight are (2304, 768), the 768 x 2304 case.
BIG_CASES = [
    ("warner_causal_c768_h12", "fused", dims(768, 12, 64, 768),
     lambda: WarnerCausalAttention(768, 12, 1024), [123]),
    ("torch_mha_e768_h12", "torch_mha", dims(768, 12, 64, 768),
     lambda: nn.MultiheadAttention(768, 12), [7]),
    ("torch_mha_e768_h12_kdim512_vdim256_bias_kv", "torch_mha",
     dims(768, 12, 64, 768, kdim=512, vdim=256, add_bias_kv=True),
     lambda: nn.MultiheadAttention(768, 12, kdim=512, vdim=256, add_bias_kv=True), [7]),
]


def describe(module):
    params = {}
    for key, t in module.state_dict().items():
        if t.dtype != torch.float32:
            continue  # buffers (bool masks)
        if key.endswith("mask"):
            continue
        a = np.ascontiguousarray(t.detach().numpy().astype("<f4"))
        params[key] = dict(shape=list(a.shape), sha256=hashlib.sha256(a.tobytes()).hexdigest(),
                           first=[float(v) for v in a.reshape(-1)[:4]])
    return params


def init_manifest():
    cases = []
    for name, layout, cfg, make, *seeds in CASES + BIG_CASES:
        for seed in (seeds[0] if seeds else SEEDS):
            torch.manual_seed(seed)
            module = make()
            cases.append(dict(name=name, layout=layout, seed=seed, config=cfg,
                              keys=list(describe(module).keys()), params=describe(module)))
    # The worked example, kept as a plain-number check.
    torch.manual_seed(123)
    lin = nn.Linear(3, 2, bias=False)
    example = dict(seed=123, weight=lin.weight.detach().numpy().tolist())
    return dict(generator="tests/golden/make_init_golden.py", torch=torch.__version__,
                linear_3_2_seed_123=example, cases=cases)


def gpt2_fixture():
    """Two GPT-2 blocks' attention (C=8, H=2) inside a whole-model-like state dict."""
    C, H, n_ctx = 8, 2, 6
    g = torch.Generator().manual_seed(5)
    sd = {"transformer.wte.weight": torch.randn(11, C, generator=g),
          "transformer.wpe.weight": torch.randn(n_ctx, C, generator=g)}
    for layer in range(2):
        p = f"transformer.h.{layer}."
        sd[p + "ln_1.weight"] = torch.ones(C)
        sd[p + "ln_1.bias"] = torch.zeros(C)
        # HF GPT2Attention buffers
        sd[p + "attn.bias"] = torch.tril(torch.ones((n_ctx, n_ctx), dtype=torch.bool)).view(
            1, 1, n_ctx, n_ctx)
        sd[p + "attn.masked_bias"] = torch.tensor(-1e4)
        # Conv1D: weight (nx=in, nf=out), y = x @ W + b
        sd[p + "attn.c_attn.weight"] = torch.randn(C, 3 * C, generator=g) * 0.5
        sd[p + "attn.c_attn.bias"] = torch.randn(3 * C, generator=g) * 0.1
        sd[p + "attn.c_proj.weight"] = torch.randn(C, C, generator=g) * 0.5
        sd[p + "attn.c_proj.bias"] = torch.randn(C, generator=g) * 0.1
    folder = os.path.join(OUT, "gpt2_layers")
    os.makedirs(folder, exist_ok=True)
    for key, t in sd.items():
        np.save(os.path.join(folder, key + ".npy"), t.numpy())

    # Layer 1's attention as transformers' GPT2Attention computes it (causal).
    x = torch.randn(5, C, generator=g)
    p = "transformer.h.1.attn."
    qkv = x @ sd[p + "c_attn.weight"] + sd[p + "c_attn.bias"]
    q, k, v = qkv.split(C, dim=1)
    heads = lambda t: t.view(5, H, C // H).transpose(0, 1)  # (H, S, D)
    q, k, v = heads(q), heads(k), heads(v)
    w = q @ k.transpose(-1, -2) / math.sqrt(C // H)
    w = w.masked_fill(~sd[p + "bias"][0, 0, :5, :5], float("-inf")).softmax(dim=-1)
    a = (w @ v).transpose(0, 1).reshape(5, C)
    out = a @ sd[p + "c_proj.weight"] + sd[p + "c_proj.bias"]
    folder = os.path.join(OUT, "gpt2_expected")
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "x.npy"), x.numpy())
    np.save(os.path.join(folder, "context_h1.npy"), out.numpy())


def main():
    # attn-run reproduces normal_'s AVX2 kernel (AVX-512 torch uses it too for normal_).
    show = torch.__config__.show()
    if "CPU capability usage: AVX2" not in show and "CPU capability usage: AVX512" not in show:
        raise SystemExit("make_init_golden.py: this torch does not run the AVX2 kernels "
                         "(torch.__config__.show()); generate on an AVX2 x86-64 machine")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(init_manifest(), f, indent=1)
        f.write("\n")
    gpt2_fixture()


if __name__ == "__main__":
    main()

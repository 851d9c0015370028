"""init/ and gpt2/: golden data for the torch-exact seeded init and the GPT-2 layout.

  init/manifest.json      torch.manual_seed(seed) + each tutorial module's constructor (the
                          modules of tutorials.py) and nn.MultiheadAttention, at several seeds and
                          sizes: for every state_dict key its shape, the SHA-256 of its float32
                          little-endian bytes (every element checked bit for bit without shipping
                          megabytes) and its first values (tests/unit/layer/test_init.cpp);
  init/gpt2_layers/       a fake two-layer GPT-2 state dict, one <key>.npy per key: c_attn/c_proj
                          are Conv1D (in, out), plus the buffers attn.bias / attn.masked_bias and
                          some other keys of a whole model, as Hugging Face names them;
  init/gpt2_expected/     x.npy (S, C) and context_h1.npy (S, C): layer 1's causal attention,
                          transformers' GPT2Attention (reference.attention, conv1d layout, float32);
  gpt2/                   the same state dict in the containers users bring (np.savez,
                          np.savez_compressed, .safetensors) and one config per container that
                          picks layer 1 with weights_prefix (tests/golden/test_gpt2_containers.cpp).

torch 1.13 (Debian 12's python3-torch), CPU: normal_ (add_bias_kv's xavier_normal_) on 16 values
or more runs a CPU-specific kernel: generate on an x86-64 machine whose torch reports "CPU
capability usage: AVX2" (torch.__config__.show()), as every AVX2 or AVX-512 CPU does.
"""
import hashlib
import json
import os
import struct

import numpy as np
import torch
import torch.nn as nn

from .. import reference
from ..reference import Layer
from .tutorials import (KQVHead, MultiHeadAttentionWrapper, RaschkaCausalAttention,
                        RaschkaMultiHeadAttention, WarnerCausalAttention,
                        WarnerSingleHeadAttention)


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
    ("kqv_8_4", "kqv", dims(8, 1, 4, 4, out_proj=False, out_bias=False),
     lambda: KQVHead(8, 4, bias=True)),
    ("kqv_32_16_nobias", "kqv", dims(32, 1, 16, 16, out_proj=False, qkv_bias=False,
                                     out_bias=False),
     lambda: KQVHead(32, 16, bias=False)),
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
    return dict(generator="tests/golden/generate.py", torch=torch.__version__,
                linear_3_2_seed_123=example, cases=cases)


def gpt2_fixture(out):
    """Two GPT-2 blocks' attention (C=8, H=2) inside a whole-model-like state dict; layer 1's
    attention on x (5, C) as transformers' GPT2Attention computes it (causal)."""
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
    folder = os.path.join(out, "gpt2_layers")
    os.makedirs(folder, exist_ok=True)
    for key, t in sd.items():
        np.save(os.path.join(folder, key + ".npy"), t.numpy())
    x = torch.randn(5, C, generator=g)
    p = "transformer.h.1.attn."
    lsd = {k[len(p):]: v for k, v in sd.items() if k.startswith(p)}
    layer = Layer(C, H, H, C // H, layout="conv1d", names=("c_attn", "c_proj"))
    with torch.no_grad():
        y, _ = reference.attention(layer, lsd, x[None], None, torch.arange(5)[None])
    folder = os.path.join(out, "gpt2_expected")
    os.makedirs(folder, exist_ok=True)
    np.save(os.path.join(folder, "x.npy"), x.numpy())
    np.save(os.path.join(folder, "context_h1.npy"), y[0].numpy())


# ---- gpt2/: the fixture's state dict in other containers -----------------------------------------

ST_DTYPES = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("float64"): "F64",
             np.dtype("bool"): "BOOL"}
CONTAINERS = ("gpt2_layers.npz", "gpt2_layers_compressed.npz", "gpt2_layers.safetensors",
              "../init/gpt2_layers")


def write_safetensors(path, arrays):
    """The safetensors format from NumPy arrays, keys sorted: u64 LE header length, JSON header,
    raw LE data."""
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for key in sorted(arrays):
        a = np.ascontiguousarray(arrays[key])
        raw = a.astype(a.dtype.newbyteorder("<")).tobytes()
        header[key] = {"dtype": ST_DTYPES[a.dtype], "shape": list(a.shape),
                       "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the spec's 8-byte alignment padding
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def container_configs():
    return sorted("config_" + os.path.basename(n).replace(".", "_") + ".json" for n in CONTAINERS)


def gpt2_containers(src, out):
    os.makedirs(out, exist_ok=True)
    arrays = {f[:-4]: np.load(os.path.join(src, f)) for f in sorted(os.listdir(src))
              if f.endswith(".npy")}
    np.savez(os.path.join(out, "gpt2_layers.npz"), **arrays)
    np.savez_compressed(os.path.join(out, "gpt2_layers_compressed.npz"), **arrays)
    write_safetensors(os.path.join(out, "gpt2_layers.safetensors"), arrays)
    for name in CONTAINERS:
        cfg = {"attention": "causal", "hidden_size": 8, "num_heads": 2, "context_size": 6,
               "weights": name, "weights_prefix": "transformer.h.1.attn.",
               "input": "../init/gpt2_expected/x.npy"}
        stem = os.path.basename(name).replace(".", "_")
        with open(os.path.join(out, "config_" + stem + ".json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")


def main(out, gpt2_out):
    # attn-run reproduces normal_'s AVX2 kernel (AVX-512 torch uses it too for normal_).
    show = torch.__config__.show()
    if "CPU capability usage: AVX2" not in show and "CPU capability usage: AVX512" not in show:
        raise SystemExit("init: this torch does not run the AVX2 kernels "
                         "(torch.__config__.show()); generate on an AVX2 x86-64 machine")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(init_manifest(), f, indent=1)
        f.write("\n")
    gpt2_fixture(out)
    gpt2_containers(os.path.join(out, "gpt2_layers"), gpt2_out)
    print("  wrote", out, "and", gpt2_out)

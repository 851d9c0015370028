#!/usr/bin/python3
"""Inputs of bench/bench_load.sh (the load benchmark), written to DIR:

  big.safetensors    a 24-layer, C=1024 GPT-2-medium-shaped state dict: per layer
                     h.{i}.ln_1/ln_2 weight and bias, attn.c_attn (1024, 3072) + bias,
                     attn.c_proj (1024, 1024) + bias, attn.bias (the causal buffer, BOOL
                     (1, 1, 1024, 1024)), mlp.c_fc (1024, 4096) + bias and mlp.c_proj
                     (4096, 1024) + bias (F32, or --mlp none to leave the MLP out); plus
                     wte (50257, 1024) in BF16 and wpe (1024, 1024) F32 outside the layers.
  layer12.safetensors  layer 12's attention alone (same keys, same bytes).
  x.npy              input (16, 1024) float32.
  config.json        GPT-2 causal attention, weights_prefix "h.12.attn.".

The safetensors header is written here per the format spec (u64 little-endian
header length, JSON {name: {dtype, shape, data_offsets}}, padded to 8 bytes);
tensors are streamed to the file one by one, so the generator needs little memory.
Usage: bench/bench_load.py DIR [--mlp full|none]
"""
import json
import os
import struct
import sys

import numpy as np

C, LAYERS, VOCAB, POSITIONS = 1024, 24, 50257, 1024
rng = np.random.default_rng(9)


def layer_keys(i, mlp):
    p = f"h.{i}."
    keys = [(p + "ln_1.weight", "F32", (C,)), (p + "ln_1.bias", "F32", (C,)),
            (p + "attn.bias", "BOOL", (1, 1, POSITIONS, POSITIONS)),
            (p + "attn.c_attn.weight", "F32", (C, 3 * C)), (p + "attn.c_attn.bias", "F32", (3 * C,)),
            (p + "attn.c_proj.weight", "F32", (C, C)), (p + "attn.c_proj.bias", "F32", (C,)),
            (p + "ln_2.weight", "F32", (C,)), (p + "ln_2.bias", "F32", (C,))]
    if mlp:
        keys += [(p + "mlp.c_fc.weight", "F32", (C, 4 * C)), (p + "mlp.c_fc.bias", "F32", (4 * C,)),
                 (p + "mlp.c_proj.weight", "F32", (4 * C, C)), (p + "mlp.c_proj.bias", "F32", (C,))]
    return keys


SIZES = {"F32": 4, "BF16": 2, "BOOL": 1}


def data(dtype, shape, key):
    n = int(np.prod(shape))
    if dtype == "BOOL":
        return np.tril(np.ones((POSITIONS, POSITIONS), dtype=bool)).tobytes()
    v = (rng.standard_normal(n, dtype=np.float32) * 0.02).astype(np.float32)
    if dtype == "BF16":
        return (v.view(np.uint32) >> 16).astype(np.uint16).tobytes()
    return v.tobytes()


def write_safetensors(path, keys):
    header, offset = {}, 0
    for key, dtype, shape in keys:
        n = int(np.prod(shape)) * SIZES[dtype]
        header[key] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for key, dtype, shape in keys:
            f.write(data(dtype, shape, key))


def main():
    out = sys.argv[1]
    mlp = not (len(sys.argv) > 3 and sys.argv[2] == "--mlp" and sys.argv[3] == "none")
    os.makedirs(out, exist_ok=True)
    keys = [("wte.weight", "BF16", (VOCAB, C)), ("wpe.weight", "F32", (POSITIONS, C))]
    for i in range(LAYERS):
        keys += layer_keys(i, mlp)
    keys += [("ln_f.weight", "F32", (C,)), ("ln_f.bias", "F32", (C,))]
    write_safetensors(os.path.join(out, "big.safetensors"), keys)
    # The same layer again from the same seed stream would differ: re-read its bytes instead.
    with open(os.path.join(out, "big.safetensors"), "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        hdr = json.loads(f.read(n))
        parts = []
        for key in ["h.12.attn.c_attn.weight", "h.12.attn.c_attn.bias", "h.12.attn.c_proj.weight",
                    "h.12.attn.c_proj.bias"]:
            b, e = hdr[key]["data_offsets"]
            f.seek(8 + n + b)
            parts.append((key, hdr[key], f.read(e - b)))
    header, offset = {}, 0
    for key, h, raw in parts:
        header[key] = {"dtype": h["dtype"], "shape": h["shape"],
                       "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(out, "layer12.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(raw for _, _, raw in parts))
    np.save(os.path.join(out, "x.npy"), rng.standard_normal((16, C), dtype=np.float32))
    cfg = {"attention": "causal", "hidden_size": C, "num_heads": 16, "context_size": POSITIONS,
           "layout": "gpt2", "weights": "big.safetensors", "weights_prefix": "h.12.attn.",
           "input": "x.npy"}
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Packs the two-layer GPT-2 fixture (tests/golden/init/gpt2_layers/*.npy,
written by make_init_golden.py) into the containers users bring: an .npz from
np.savez, one from np.savez_compressed and a .safetensors file, plus one
config per container that picks layer 1 with weights_prefix. The expected
output is tests/golden/init/gpt2_expected/context_h1.npy (HF GPT2Attention).

Run: /usr/bin/python3 tests/golden/make_gpt2_containers.py
"""
import json
import os
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "init", "gpt2_layers")
OUT = os.path.join(HERE, "gpt2")
ST_DTYPES = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("float64"): "F64",
             np.dtype("bool"): "BOOL"}


def write_safetensors(path, arrays):
    """The safetensors format: u64 LE header length, JSON header, raw LE data."""
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


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays = {f[:-4]: np.load(os.path.join(SRC, f)) for f in sorted(os.listdir(SRC))
              if f.endswith(".npy")}
    np.savez(os.path.join(OUT, "gpt2_layers.npz"), **arrays)
    np.savez_compressed(os.path.join(OUT, "gpt2_layers_compressed.npz"), **arrays)
    write_safetensors(os.path.join(OUT, "gpt2_layers.safetensors"), arrays)
    for name in ("gpt2_layers.npz", "gpt2_layers_compressed.npz", "gpt2_layers.safetensors",
                 "../init/gpt2_layers"):
        cfg = {"attention": "causal", "hidden_size": 8, "num_heads": 2, "context_size": 6,
               "weights": name, "weights_prefix": "transformer.h.1.attn.",
               "input": "../init/gpt2_expected/x.npy"}
        stem = os.path.basename(name).replace(".", "_")
        with open(os.path.join(OUT, "config_" + stem + ".json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
    print("wrote", OUT)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Inputs of bench/bench_layers.sh (`--layer all`), written to DIR:

  model/config.json         a Llama-3-8B-shaped config (C 4096, 32 heads, 8 KV heads, head_dim
                            128, rope theta 5e5 with llama3 scaling), LAYERS layers
  model/model.safetensors   each layer's q/k/v/o_proj weights in BF16 (84 MB a layer); every
                            layer holds the same random bytes (their own file offsets, so each is
                            read from its own pages)
  hidden.npy                (LAYERS, 1, S, 4096) float32, one random (1, S, 4096) per layer

Usage: bench/make_llama_layers.py DIR LAYERS S
"""
import json
import os
import struct
import sys

import numpy as np

C, H, HKV, D = 4096, 32, 8, 128


def main():
    out, layers, S = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out + "/model", exist_ok=True)
    rng = np.random.default_rng(29)
    shapes = {"q_proj": (H * D, C), "k_proj": (HKV * D, C), "v_proj": (HKV * D, C),
              "o_proj": (C, H * D)}
    blobs = {}
    for name, shape in shapes.items():  # bf16: the top half of float32
        w = (rng.standard_normal(shape, dtype=np.float32) * 0.02).view(np.uint32)
        blobs[name] = (w >> 16).astype(np.uint16).tobytes()
    header, offset = {}, 0
    for i in range(layers):
        for name, shape in shapes.items():
            n = len(blobs[name])
            header[f"model.layers.{i}.self_attn.{name}.weight"] = {
                "dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + n]}
            offset += n
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(out + "/model/model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for i in range(layers):
            for name in shapes:
                f.write(blobs[name])
    config = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": C,
              "num_attention_heads": H, "num_key_value_heads": HKV, "head_dim": D,
              "num_hidden_layers": layers, "rope_theta": 500000.0,
              "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                               "high_freq_factor": 4.0,
                               "original_max_position_embeddings": 8192},
              "max_position_embeddings": 131072, "attention_bias": False,
              "torch_dtype": "bfloat16"}
    with open(out + "/model/config.json", "w") as f:
        json.dump(config, f, indent=1)
    hidden = np.lib.format.open_memmap(out + "/hidden.npy", mode="w+", dtype=np.float32,
                                       shape=(layers, 1, S, C))
    for i in range(layers):
        hidden[i] = rng.standard_normal((1, S, C), dtype=np.float32)
    hidden.flush()


if __name__ == "__main__":
    main()

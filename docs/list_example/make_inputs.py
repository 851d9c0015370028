"""Writes the small inputs of docs/list_example/ (the README's --input-list
walk-through): token embeddings with C = 8 for configs/warner_causal.json,
at most 6 tokens (its context_size). Run: /usr/bin/python3 make_inputs.py"""
import numpy as np

rng = np.random.default_rng(2024)
shapes = {"short.npy": (3, 8), "four.npy": (4, 8), "pair.npy": (2, 5, 8), "six.npy": (6, 8)}
for name, shape in shapes.items():
    np.save(name, rng.uniform(-1, 1, size=shape).astype(np.float32))

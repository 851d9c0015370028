#!/usr/bin/env python3
"""Writes the shipped examples: configs/*.json and their data/ (weights as the
tutorial modules' real state_dicts, one <key>.npy per entry, and inputs).

Run from anywhere: /usr/bin/python3 scripts/make_examples.py
Needs python3-torch and python3-numpy (Debian). The outputs are committed, so
running attn-run on the examples needs neither.
"""
import json
import math
import os

import numpy as np
import torch
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SENTENCE = [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
            [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]]
LABELS = ["Your", "journey", "starts", "with", "one", "step"]


# --- The tutorial modules' constructors (tutorials 002 and 004) -------------

class WarnerSingleHead(nn.Module):  # 002 SingleHeadAttention
    def __init__(self, hidden_size, bias=True):
        super().__init__()
        self.Wqkv = nn.Linear(hidden_size, (hidden_size // 4) * 3, bias=bias)
        self.Wo = nn.Linear(hidden_size // 4, hidden_size, bias=bias)


class WarnerMultiHead(nn.Module):  # 002 MultiHeadAttention
    def __init__(self, hidden_size, num_heads, bias=True):
        super().__init__()
        self.nh = num_heads
        self.Wqkv = nn.Linear(hidden_size, hidden_size * 3, bias=bias)
        self.Wo = nn.Linear(hidden_size, hidden_size, bias=bias)


class WarnerCausal(WarnerMultiHead):  # 002 CausalAttention: same layers + buffer
    def __init__(self, hidden_size, num_heads, context_size, bias=True):
        super().__init__(hidden_size, num_heads, bias)
        self.register_buffer("causal_mask", torch.triu(
            torch.ones([context_size, context_size], dtype=torch.bool), diagonal=1)
            .view(1, 1, context_size, context_size))


class RaschkaCausal(nn.Module):  # 004 CausalAttention (one head of the wrapper)
    def __init__(self, d_in, d_out, context_length, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))


class RaschkaWrapper(nn.Module):  # 004 MultiHeadAttentionWrapper
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList([RaschkaCausal(d_in, d_out, context_length, qkv_bias)
                                    for _ in range(num_heads)])


class RaschkaMHA(nn.Module):  # 004 MultiHeadAttention
    def __init__(self, d_in, d_out, context_length, num_heads, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))


def save_state_dict(module, folder):
    path = os.path.join(ROOT, "data", folder)
    os.makedirs(path, exist_ok=True)
    for f in os.listdir(path):
        if f.endswith(".npy"):
            os.remove(os.path.join(path, f))
    for key, value in module.state_dict().items():
        np.save(os.path.join(path, key + ".npy"), value.detach().numpy())


def save_input(name, array):
    np.save(os.path.join(ROOT, "data", name), np.asarray(array, dtype=np.float32))


def write_config(name, cfg):
    with open(os.path.join(ROOT, "configs", name + ".json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")


def main():
    os.makedirs(os.path.join(ROOT, "configs"), exist_ok=True)
    os.makedirs(os.path.join(ROOT, "data"), exist_ok=True)
    sentence = torch.tensor(SENTENCE)
    save_input("sentence.npy", sentence)                               # (6, 3)
    save_input("sentence_batch.npy", torch.stack((sentence, sentence)))  # (2, 6, 3)
    # Warner's modules need C divisible by 4 (single) or by H: the sentence
    # lifted to C = 8 by a fixed random projection, still six tokens.
    torch.manual_seed(0)
    sentence8 = sentence @ torch.randn(3, 8)
    save_input("sentence_c8.npy", sentence8)                            # (6, 8)

    torch.manual_seed(123)
    save_state_dict(WarnerSingleHead(8), "warner_single")
    write_config("warner_single", {
        "attention": "single", "hidden_size": 8, "layout": "fused",
        "weights": "../data/warner_single", "input": "../data/sentence_c8.npy", "labels": LABELS})

    torch.manual_seed(123)
    save_state_dict(WarnerMultiHead(8, 2), "warner_multi")
    write_config("warner_multi", {
        "attention": "multi", "hidden_size": 8, "num_heads": 2, "layout": "fused",
        "weights": "../data/warner_multi", "input": "../data/sentence_c8.npy", "labels": LABELS})

    torch.manual_seed(123)
    save_state_dict(WarnerCausal(8, 2, context_size=6), "warner_causal")
    write_config("warner_causal", {
        "attention": "causal", "hidden_size": 8, "num_heads": 2, "context_size": 6,
        "weights": "../data/warner_causal", "input": "../data/sentence_c8.npy", "labels": LABELS})

    # Raschka's tables: torch.manual_seed(123), d_in 3, d_out 2, two heads,
    # the two-copy batch of the sentence.
    torch.manual_seed(123)
    save_state_dict(RaschkaMHA(3, 2, 6, num_heads=2), "raschka_mha")
    write_config("raschka_mha_causal", {
        "attention": "causal", "hidden_size": 3, "out_size": 2, "num_heads": 2,
        "context_size": 6, "qkv_bias": False, "out_bias": True,
        "weights": "../data/raschka_mha", "input": "../data/sentence_batch.npy", "labels": LABELS})

    torch.manual_seed(123)
    save_state_dict(RaschkaWrapper(3, 2, 6, num_heads=2), "raschka_wrapper")
    write_config("raschka_wrapper_causal", {
        "attention": "causal", "hidden_size": 3, "num_heads": 2, "head_size": 2,
        "out_proj": False, "context_size": 6, "bias": False,
        "weights": "../data/raschka_wrapper", "input": "../data/sentence_batch.npy", "labels": LABELS})

    # The same two tables with no weight files: the torch-exact seeded init
    # reproduces what torch.manual_seed(123) and the constructor drew.
    write_config("raschka_mha_causal_init", {
        "attention": "causal", "hidden_size": 3, "out_size": 2, "num_heads": 2,
        "context_size": 6, "qkv_bias": False, "out_bias": True, "layout": "separate",
        "init": {"seed": 123}, "input": "../data/sentence_batch.npy", "labels": LABELS})
    write_config("raschka_wrapper_causal_init", {
        "attention": "causal", "hidden_size": 3, "num_heads": 2, "head_size": 2,
        "out_proj": False, "context_size": 6, "bias": False, "layout": "per_head",
        "init": {"seed": 123}, "input": "../data/sentence_batch.npy", "labels": LABELS})

    # Tutorial 003: a causal head with key/query/value layers and no bias,
    # B, T, C = 4, 8, 32, head size 16, after torch.manual_seed(1337).
    torch.manual_seed(1337)
    x = torch.randn(4, 8, 32)
    head = nn.Module()
    head.key = nn.Linear(32, 16, bias=False)
    head.query = nn.Linear(32, 16, bias=False)
    head.value = nn.Linear(32, 16, bias=False)
    save_state_dict(head, "kqv_head")
    save_input("kqv_head_input.npy", x)
    write_config("kqv_causal_head", {
        "attention": "single", "hidden_size": 32, "head_size": 16, "causal": True,
        "out_proj": False, "bias": False, "scale": 16 ** -0.5,
        "weights": "../data/kqv_head", "input": "../data/kqv_head_input.npy"})

    # A GPT-2-small-shaped causal layer: C = 768, H = 12, 64 tokens. Weights
    # from the seeded init (torch-exact), so the repository holds no 9 MB file.
    torch.manual_seed(2024)
    save_input("gpt2_small_input.npy", torch.randn(64, 768))
    write_config("gpt2_small_causal", {
        "attention": "causal", "hidden_size": 768, "num_heads": 12, "context_size": 1024,
        "layout": "fused", "init": {"seed": 0}, "input": "../data/gpt2_small_input.npy"})
    print("wrote configs/ and data/")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Hugging Face model folders of T5's family (CONTRACT.md v3 relative_bias, issue 24): t5 (T5 and
Flan-T5 / T5 v1.1), mt5 and umt5, with torch's expected output for encoder layers (--model DIR
--layer N) and for the decoder's self- and cross-attention (case.json with weights_prefix,
causal, relative_bias.table and kv_input, as the README says to run them).

Each folder tests/golden/folders/<name>/ holds, as make_folders.py's do:
  model/   config.json in the family's own spelling (T5Config / MT5Config / UMT5Config keys: d_model,
           d_kv, num_heads, num_layers, num_decoder_layers, relative_attention_num_buckets,
           relative_attention_max_distance, feed_forward_proj, ...) and a whole tiny
           T5ForConditionalGeneration under its real state_dict names (shared, encoder.block.N.layer.0
           .SelfAttention.{q,k,v,o}, layer norms, DenseReluDense, decoder.block.N.layer.1
           .EncDecAttention, lm_head), in the container and dtype the hub has;
  <case>/  case.json, input.npy (and encoder_states.npy, attention_mask.npy), expected/context.npy
           and expected/attention.npy.

The reference is modeling_t5.T5Attention (modeling_mt5 and modeling_umt5 are the same attention)
written in torch, in float64 from the stored weights: q, k, v, o without bias, inner dim
num_heads * d_kv, no 1/sqrt(d_kv) scale; compute_bias's bucket of (memory - context) position
(_relative_position_bucket, bidirectional = not is_decoder) looked up in relative_attention_bias,
which T5Stack gives block 0 only (has_relative_attention_bias=bool(i == 0)) and passes on to every
later block as position_bias; UMT5 gives every self-attention its own table. The cross-attention
(EncDecAttention) has no table: position_bias is zeros. Masked keys get no weight (T5 adds
finfo.min); a row with none allowed would be zeros (CONTRACT.md).

Deterministic (fixed seeds). Usage: /usr/bin/python3 tests/golden/make_families_v3_t5.py
(rewrites folders/t5, folders/flan_t5, folders/mt5 and folders/umt5 only).
"""
import json
import os
import shutil
import sys
from collections import OrderedDict

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from make_folders import OUT, keep_mask, write_weights  # noqa: E402
from make_positions import t5_bucket  # noqa: E402  (modeling_t5._relative_position_bucket)
from make_variants import allowed_keys, softmax_rows  # noqa: E402


# ---- config.json as T5Config / MT5Config / UMT5Config read it ------------------------------

DEFAULTS = {  # the configuration classes' defaults for the keys the attention reads
    "t5": {"d_model": 512, "d_kv": 64, "num_heads": 8, "num_layers": 6,
           "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128},
    "mt5": {"d_model": 512, "d_kv": 64, "num_heads": 6, "num_layers": 8,
            "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128},
    "umt5": {"d_model": 512, "d_kv": 64, "num_heads": 6, "num_layers": 8,
             "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128},
}


def settings(cfg):
    mt = cfg["model_type"]
    get = lambda k: cfg.get(k, DEFAULTS[mt][k])  # noqa: E731
    enc = get("num_layers")
    dec = cfg.get("num_decoder_layers") or enc  # T5Config: num_decoder_layers or num_layers
    return {"model_type": mt, "C": get("d_model"), "D": get("d_kv"), "H": get("num_heads"),
            "encoder_layers": enc, "decoder_layers": dec,
            "buckets": get("relative_attention_num_buckets"),
            "max_distance": get("relative_attention_max_distance"),
            "gated": cfg.get("feed_forward_proj", "relu").startswith("gated-"),
            "d_ff": cfg.get("d_ff", 2048), "vocab": cfg.get("vocab_size", 32128),
            "every_layer_table": mt == "umt5"}


# ---- a whole T5ForConditionalGeneration's state_dict ----------------------------------------

def model_state_dict(s, g):
    r = lambda *shape, k=1.0: torch.randn(*shape, generator=g, dtype=torch.float64) * k  # noqa
    C, H, D, F = s["C"], s["H"], s["D"], s["d_ff"]
    sd = OrderedDict()
    sd["shared.weight"] = r(s["vocab"], C)

    def attention(prefix, table):
        sd[prefix + "q.weight"] = r(H * D, C, k=C ** -0.5)
        sd[prefix + "k.weight"] = r(H * D, C, k=C ** -0.5)
        sd[prefix + "v.weight"] = r(H * D, C, k=C ** -0.5)
        sd[prefix + "o.weight"] = r(C, H * D, k=(H * D) ** -0.5)
        if table:
            sd[prefix + "relative_attention_bias.weight"] = r(s["buckets"], H)

    def ff(prefix):
        if s["gated"]:
            sd[prefix + "DenseReluDense.wi_0.weight"] = r(F, C, k=0.1)
            sd[prefix + "DenseReluDense.wi_1.weight"] = r(F, C, k=0.1)
        else:
            sd[prefix + "DenseReluDense.wi.weight"] = r(F, C, k=0.1)
        sd[prefix + "DenseReluDense.wo.weight"] = r(C, F, k=0.1)
        sd[prefix + "layer_norm.weight"] = 1.0 + r(C, k=0.1)

    for stack, n in (("encoder", s["encoder_layers"]), ("decoder", s["decoder_layers"])):
        for i in range(n):
            b = f"{stack}.block.{i}."
            attention(b + "layer.0.SelfAttention.", i == 0 or s["every_layer_table"])
            sd[b + "layer.0.layer_norm.weight"] = 1.0 + r(C, k=0.1)
            if stack == "decoder":
                attention(b + "layer.1.EncDecAttention.", False)
                sd[b + "layer.1.layer_norm.weight"] = 1.0 + r(C, k=0.1)
            ff(b + f"layer.{2 if stack == 'decoder' else 1}.")
        sd[f"{stack}.final_layer_norm.weight"] = 1.0 + r(C, k=0.1)
    sd["lm_head.weight"] = r(s["vocab"], C)
    return sd


# ---- modeling_t5.T5Attention ----------------------------------------------------------------

def t5_attention(s, sd, prefix, x, keep, *, table=None, decoder=False, kv=None):
    """x (B, L, C) float64; table: the key of relative_attention_bias (None: no position bias,
    the cross-attention); kv: encoder states (B, T, C) for EncDecAttention."""
    H, D = s["H"], s["D"]
    B, L, _ = x.shape
    src = x if kv is None else kv
    T = src.shape[1]
    q = (x @ sd[prefix + "q.weight"].t()).view(B, L, H, D).transpose(1, 2)
    k = (src @ sd[prefix + "k.weight"].t()).view(B, T, H, D).transpose(1, 2)
    v = (src @ sd[prefix + "v.weight"].t()).view(B, T, H, D).transpose(1, 2)
    scores = torch.matmul(q, k.transpose(3, 2))  # no 1/sqrt(d_kv): Mesh TensorFlow's init
    if table is not None:
        context_position = torch.arange(L, dtype=torch.long)[:, None]
        memory_position = torch.arange(T, dtype=torch.long)[None, :]
        bucket = t5_bucket(memory_position - context_position, not decoder, s["buckets"],
                           s["max_distance"])
        scores = scores + sd[table][bucket].permute([2, 0, 1]).unsqueeze(0)  # (1, H, L, T)
    if kv is None:
        ok = allowed_keys(B, L, decoder, None, keep)
    else:
        ok = torch.ones(B, 1, L, T, dtype=torch.bool)
        if keep is not None:
            ok = ok & keep.bool()[:, None, None, :]
    p = softmax_rows(scores, ok)
    y = (p @ v).transpose(1, 2).reshape(B, L, H * D)
    return y @ sd[prefix + "o.weight"].t(), p


# ---- folders --------------------------------------------------------------------------------

def self_prefix(stack, i):
    return f"{stack}.block.{i}.layer.0.SelfAttention."


def make_t5_folder(spec, out=OUT, verbose=True):
    name, cfg = spec["name"], spec["config"]
    root = os.path.join(out, name)
    if os.path.isdir(root):
        shutil.rmtree(root)
    model_dir = os.path.join(root, "model")
    os.makedirs(model_dir)
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    s = settings(cfg)
    g = torch.Generator().manual_seed(spec["seed"])
    stored = write_weights(model_dir, model_state_dict(s, g), spec["container"], spec["dtype"])

    def table_of(stack, i):
        return self_prefix(stack, i if s["every_layer_table"] else 0) + \
            "relative_attention_bias.weight"

    written = []
    for case in spec["cases"]:
        kind, layer = case["kind"], case["layer"]
        B, S = case.get("B", 1), case.get("S", 7)
        x = torch.randn(B, S, s["C"], generator=g, dtype=torch.float64).float().double()
        keep = keep_mask(B, S, case["pad"]) if case.get("pad") else None
        d = os.path.join(root, case["dir"])
        os.makedirs(os.path.join(d, "expected"))
        cj = {"model": "../model", "layer": layer if kind == "encoder" else 0,
              "input": "input.npy"}
        if kind == "encoder":  # --model DIR --layer N
            ctx, maps = t5_attention(s, stored, self_prefix("encoder", layer), x, keep,
                                     table=table_of("encoder", layer))
        elif kind == "decoder":  # the decoder's causal self-attention, by weights_prefix
            prefix = self_prefix("decoder", layer)
            ctx, maps = t5_attention(s, stored, prefix, x, keep, table=table_of("decoder", layer),
                                     decoder=True)
            cj.update({"weights_prefix": prefix, "causal": True})
            if not s["every_layer_table"]:  # the table is block 0's
                cj["relative_bias"] = {"table": table_of("decoder", layer)}
        else:  # cross-attention over the encoder's states: no table, keys from kv_input
            T = case["T"]
            enc = torch.randn(B, T, s["C"], generator=g, dtype=torch.float64).float().double()
            keep = keep_mask(B, T, case["pad"]) if case.get("pad") else None
            prefix = f"decoder.block.{layer}.layer.1.EncDecAttention."
            ctx, maps = t5_attention(s, stored, prefix, x, keep, kv=enc)
            np.save(os.path.join(d, "encoder_states.npy"), enc.float().numpy())
            cj.update({"weights_prefix": prefix, "relative_bias": None,
                       "kv_input": "encoder_states.npy"})
        np.save(os.path.join(d, "input.npy"), x.float().numpy())
        if keep is not None:
            np.save(os.path.join(d, "attention_mask.npy"), keep.numpy())
            cj["attention_mask"] = "attention_mask.npy"
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(cj, f, indent=1)
        np.save(os.path.join(d, "expected", "context.npy"), ctx.float().numpy())
        np.save(os.path.join(d, "expected", "attention.npy"), maps.float().numpy())
        written.append(f"{case['dir']}: {kind} block {layer}, B {B} S {S}" +
                       (f" T {case['T']}" if kind == "cross" else "") +
                       (f", padded {case['pad']}" if case.get("pad") else ""))
    if verbose:
        size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(root) for f in fs)
        print(f"{name:14s} {s['model_type']:12s} {spec['container']:12s} {spec['dtype']:5s} "
              f"{size / 1024:6.1f} KB")
        for w in written:
            print("    " + w)


def specs():
    t5_common = {"dropout_rate": 0.1, "initializer_factor": 1.0, "layer_norm_epsilon": 1e-06,
                 "is_encoder_decoder": True, "pad_token_id": 0, "eos_token_id": 1,
                 "decoder_start_token_id": 0, "use_cache": True, "transformers_version": "4.46.0"}
    return [
        # google-t5/t5-small's spelling (no relative_attention_max_distance: the default 128),
        # shrunk; a small bucket table so 16 tokens reach its log part and saturation.
        dict(name="t5", seed=51, container="safetensors", dtype="f32",
             config=dict(t5_common, architectures=["T5ForConditionalGeneration"], model_type="t5",
                         d_model=24, d_kv=6, d_ff=16, num_heads=4, num_layers=3,
                         num_decoder_layers=3, relative_attention_num_buckets=8,
                         feed_forward_proj="relu", vocab_size=12, n_positions=512,
                         output_past=True),
             cases=[dict(dir="layer0", kind="encoder", layer=0, B=2, S=16, pad="right"),
                    dict(dir="layer2", kind="encoder", layer=2, B=1, S=16),
                    dict(dir="decoder_self2", kind="decoder", layer=2, B=1, S=16),
                    dict(dir="decoder_cross1", kind="cross", layer=1, B=2, S=6, T=9,
                         pad="right")]),
        # google/flan-t5-small's spelling (T5 v1.1: gated-gelu, untied lm_head, d_kv * heads
        # != d_model, both relative_attention keys); T5's 32 buckets up to 128, 40 tokens.
        dict(name="flan_t5", seed=52, container="safetensors", dtype="f32",
             config=dict(t5_common, architectures=["T5ForConditionalGeneration"], model_type="t5",
                         d_model=16, d_kv=8, d_ff=12, num_heads=3, num_layers=2,
                         num_decoder_layers=3, relative_attention_num_buckets=32,
                         relative_attention_max_distance=128, feed_forward_proj="gated-gelu",
                         dense_act_fn="gelu_new", is_gated_act=True, tie_word_embeddings=False,
                         vocab_size=12, n_positions=512, task_specific_params={}),
             cases=[dict(dir="layer1", kind="encoder", layer=1, B=1, S=40),
                    dict(dir="decoder_self1", kind="decoder", layer=1, B=1, S=40)]),
        # google/mt5-small's spelling (MT5ForConditionalGeneration, pytorch_model.bin, no
        # relative_attention_max_distance); the same attention as T5.
        dict(name="mt5", seed=53, container="bin", dtype="f32",
             config=dict(t5_common, architectures=["MT5ForConditionalGeneration"],
                         model_type="mt5", d_model=20, d_kv=4, d_ff=12, num_heads=5,
                         num_layers=2, num_decoder_layers=2, relative_attention_num_buckets=10,
                         feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                         tokenizer_class="T5Tokenizer", vocab_size=12),
             cases=[dict(dir="layer1", kind="encoder", layer=1, B=2, S=9, pad="left"),
                    dict(dir="decoder_cross0", kind="cross", layer=0, B=1, S=5, T=8)]),
        # google/umt5-small's spelling (UMT5ForConditionalGeneration): every self-attention
        # holds its own relative_attention_bias; bf16 in two shards.
        dict(name="umt5", seed=54, container="shards2", dtype="bf16",
             config=dict(t5_common, architectures=["UMT5ForConditionalGeneration"],
                         model_type="umt5", d_model=16, d_kv=4, d_ff=12, num_heads=4,
                         num_layers=3, num_decoder_layers=2, relative_attention_num_buckets=12,
                         relative_attention_max_distance=20, feed_forward_proj="gated-gelu",
                         tie_word_embeddings=False, scalable_attention=True,
                         tokenizer_class="T5Tokenizer", vocab_size=12),
             cases=[dict(dir="layer2", kind="encoder", layer=2, B=1, S=24),
                    dict(dir="decoder_self1", kind="decoder", layer=1, B=2, S=12)]),
    ]


def main():
    for spec in specs():
        make_t5_folder(spec)


if __name__ == "__main__":
    main()

"""positions/cases.json: expected values for lib/src/kernels/positions.cpp (tests/unit/kernels/
test_positions.cpp): RoPE inverse frequencies and attention factors for every rope_scaling type,
the same in float32 as transformers computes them with the cos and sin at a few positions (rope.precision
"float32"), rotations in both styles with partial rotary (float64 angles, as attn-run computes them), ALiBi
slopes (BLOOM's and MPT's, checked equal where both apply) and T5's relative position buckets,
all from gen/positions.py."""
import json
import os

import torch

from ..positions import (angles, bloom_slopes, deberta_bucket, mpt_slopes, rope_params, rotate,
                         t5_bucket)


def rotate_at(x, pos, inv, att, rotary_dim, style):
    """x: (heads, D) at one position, cos/sin in float64 (not rounded)."""
    emb = angles(pos * inv, style)
    return rotate(x, emb.cos() * att, emb.sin() * att, rotary_dim, style)


def main(out):
    torch.set_default_dtype(torch.float64)
    try:
        write(out)
    finally:
        torch.set_default_dtype(torch.float32)


def write(out):
    g = torch.Generator().manual_seed(7)
    rope_cases = []
    long_f = [1.0 + 0.25 * i for i in range(16)]
    short_f = [1.0 + 0.01 * i for i in range(16)]
    specs = [
        ("default", 10000.0, 64, None, None, 128),
        ("llama2_theta", 10000.0, 128, 4096, None, 4096),
        ("linear", 10000.0, 64, 2048, {"type": "linear", "factor": 4.0}, 128),
        ("dynamic_short", 10000.0, 64, 2048, {"rope_type": "dynamic", "factor": 2.0}, 100),
        ("dynamic_long", 10000.0, 64, 2048, {"rope_type": "dynamic", "factor": 2.0}, 5000),
        ("llama3", 500000.0, 128, 131072,
         {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}, 20000),
        ("yarn_qwen", 1000000.0, 128, 32768,
         {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, 40000),
        ("yarn_no_orig", 10000.0, 64, 4096,
         {"rope_type": "yarn", "factor": 2.0, "beta_fast": 16}, 64),
        ("yarn_mscale", 10000.0, 64, 163840,
         {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
          "mscale": 1.0, "mscale_all_dim": 0.707, "truncate": False}, 64),
        ("yarn_gptoss", 150000.0, 64, 131072,
         {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
          "original_max_position_embeddings": 4096, "truncate": False}, 64),
        ("longrope_short", 10000.0, 32, 131072,
         {"type": "longrope", "long_factor": long_f, "short_factor": short_f,
          "original_max_position_embeddings": 4096}, 100),
        ("longrope_long", 10000.0, 32, 131072,
         {"type": "longrope", "long_factor": long_f, "short_factor": short_f,
          "original_max_position_embeddings": 4096}, 5000),
    ]
    for name, theta, dim, mpe, scaling, seq_len in specs:
        inv, att = rope_params(theta, dim, mpe, scaling, seq_len)
        # transformers' float32 rotary embedding at a few positions up to seq_len - 1
        inv32, att32 = rope_params(theta, dim, mpe, scaling, seq_len, torch.float32)
        at = torch.tensor(sorted({0, 1, 1000, seq_len // 2, seq_len - 1}), dtype=torch.float32)
        freqs32 = at[:, None] * inv32[None, :]
        rope_cases.append({"name": name, "theta": theta, "rotary_dim": dim,
                           "max_position_embeddings": mpe, "scaling": scaling, "seq_len": seq_len,
                           "inv_freq": inv.tolist(), "attention_factor": att,
                           "float32": {"inv_freq": inv32.tolist(), "attention_factor": att32,
                                       "positions": at.long().tolist(),
                                       "cos": (freqs32.cos() * att32).tolist(),
                                       "sin": (freqs32.sin() * att32).tolist()}})

    rotations = []
    for style in ("half", "interleaved"):
        for D, R, pos in ((8, 8, 3), (16, 8, 100000), (64, 64, 131071), (10, 6, 7)):
            inv, att = rope_params(10000.0, R, None, None, pos + 1)
            x = torch.randn(3, D, generator=g)
            # float32 in, as attn-run holds q and k in float32
            x32 = x.float().double()
            y32 = rotate_at(x32, float(pos), inv, att, R, style)
            rotations.append({"style": style, "D": D, "rotary_dim": R, "position": pos,
                              "x": x32.flatten().tolist(), "y": y32.flatten().tolist()})

    alibi = []
    for n in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 40, 71):
        b, m = bloom_slopes(n), mpt_slopes(n)
        assert max(abs(u - v) for u, v in zip(b, m)) < 1e-15, n
        alibi.append({"heads": n, "max_bias": 8.0, "slopes": m})
    for n, bias in ((8, 16.0), (12, 4.0)):
        alibi.append({"heads": n, "max_bias": bias, "slopes": mpt_slopes(n, bias)})

    # T5's relative position buckets: T5 / Flan-T5 / mT5 (32, 128), small tables whose log
    # part the short golden sequences reach, and odd sizes; rel = key - query over a range
    # past max_distance on both sides.
    buckets = []
    for nb, md in ((32, 128), (16, 24), (8, 12), (6, 9), (64, 512), (33, 100), (4, 8)):
        for bidir in (True, False):
            rel = torch.arange(-2 * md - 3, 2 * md + 4, dtype=torch.long)
            buckets.append({"num_buckets": nb, "max_distance": md, "bidirectional": bidir,
                            "first": int(rel[0]),
                            "buckets": t5_bucket(rel, bidir, nb, md).tolist()})

    # DeBERTa-v2/v3's log buckets: v3's (256, 512), small tables the golden folders reach, odd
    # sizes; rel = query - key past max_position on both sides.
    deberta = []
    for size, mp in ((256, 512), (8, 16), (6, 32), (16, 24), (32, 64), (5, 40)):
        rel = torch.arange(-2 * mp - 3, 2 * mp + 4, dtype=torch.long)
        deberta.append({"bucket_size": size, "max_position": mp, "first": int(rel[0]),
                        "buckets": deberta_bucket(rel, size, mp).tolist()})

    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump({"rope": rope_cases, "rotations": rotations, "alibi": alibi,
                   "relative_buckets": buckets, "log_buckets": deberta}, f, indent=1)
    print("  wrote", out)

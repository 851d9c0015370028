#!/usr/bin/env python3
"""Expected values for lib/src/kernels/positions.cpp (RoPE frequencies, rotation, ALiBi slopes).

Written from the published code, in torch float64 (CONTRACT.md "Positions": attn-run computes
angles in float64, so the reference does too):
- inv_freq and attention_factor: transformers' modeling_rope_utils._compute_{default,linear_scaling,
  dynamic_ntk,yarn,longrope,llama3}_parameters (yarn as transformers 4.50 / main: `factor` as
  written, `truncate` default True, mscale/mscale_all_dim; longrope switching to long_factor when
  the sequence is longer than original_max_position_embeddings, as dynamic_rope_update does).
- rotation: modeling_llama.apply_rotary_pos_emb with rotate_half (style "half") and GPT-J's
  rotate_every_two (style "interleaved"); partial rotary as GPT-NeoX (rotary_ndims).
- ALiBi: BLOOM's build_alibi_tensor slopes and MPT's gen_slopes (alibi_bias_max).
- T5 relative position buckets: modeling_t5.T5Attention._relative_position_bucket (float32 log
  part, as torch runs it), bidirectional and not.
Usage: /usr/bin/python3 tests/golden/make_positions.py  (writes tests/golden/positions/cases.json)
"""
import json
import math
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "positions", "cases.json")


def default_inv_freq(base, dim):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).double() / dim))


def rope_params(theta, dim, mpe, scaling, seq_len):
    """(inv_freq, attention_factor) as modeling_rope_utils computes them; a scaling's
    "freq_factors" (GGUF's rope_freqs.weight) divide the result, as ggml_rope_ext does."""
    if scaling is not None and "freq_factors" in scaling:
        inv, att = rope_params(theta, dim, mpe, {k: v for k, v in scaling.items()
                                                 if k != "freq_factors"}, seq_len)
        return inv / torch.tensor(scaling["freq_factors"], dtype=torch.float64), att
    if scaling is None:
        return default_inv_freq(theta, dim), 1.0
    t = scaling.get("rope_type", scaling.get("type"))
    if t == "linear":
        return default_inv_freq(theta, dim) / scaling["factor"], 1.0
    if t == "dynamic":
        factor = scaling["factor"]
        seq_len = max(seq_len, mpe)
        base = theta * ((factor * seq_len / mpe) - (factor - 1)) ** (dim / (dim - 2))
        return default_inv_freq(base, dim), 1.0
    if t == "yarn":
        factor = scaling.get("factor")
        orig = scaling.get("original_max_position_embeddings", mpe)
        if factor is None:
            factor = mpe / orig
        att = scaling.get("attention_factor")
        mscale, mscale_all_dim = scaling.get("mscale"), scaling.get("mscale_all_dim")

        def get_mscale(scale, m=1):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        if att is None:
            if mscale and mscale_all_dim:
                att = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
            else:
                att = get_mscale(factor)
        beta_fast = scaling.get("beta_fast") or 32
        beta_slow = scaling.get("beta_slow") or 1

        def corr_dim(rot):
            return (dim * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(theta))

        low, high = corr_dim(beta_fast), corr_dim(beta_slow)
        if scaling.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2).double() - low) / (high - low), 0, 1)
        pos_freqs = theta ** (torch.arange(0, dim, 2).double() / dim)
        extra, inter = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
        extra_factor = 1 - ramp
        return inter * (1 - extra_factor) + extra * extra_factor, att
    if t == "llama3":
        inv = default_inv_freq(theta, dim)
        factor, lff, hff = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        low_wl, high_wl = old / lff, old / hff
        wavelen = 2 * math.pi / inv
        inv_l = torch.where(wavelen > low_wl, inv / factor, inv)
        smooth = (old / wavelen - lff) / (hff - lff)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
        return torch.where(medium, smoothed, inv_l), 1.0
    if t == "longrope":
        orig = scaling.get("original_max_position_embeddings", mpe)
        factor = scaling.get("factor")
        if factor is None:
            factor = mpe / orig
        att = scaling.get("attention_factor")
        if att is None:
            att = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(orig))
        ext = torch.tensor(scaling["long_factor"] if seq_len > orig else scaling["short_factor"],
                           dtype=torch.float64)
        return 1.0 / (ext * theta ** (torch.arange(0, dim, 2, dtype=torch.int64).double() / dim)), att
    if t == "proportional":  # _compute_proportional_rope_parameters (Gemma 4's global layers)
        angles = int(scaling.get("partial_rotary_factor", 1.0) * dim // 2)
        rotated = 1.0 / theta ** (torch.arange(0, 2 * angles, 2, dtype=torch.int64).double() / dim)
        inv = torch.cat((rotated, torch.zeros(dim // 2 - angles, dtype=torch.float64)))
        return inv / scaling.get("factor", 1.0), 1.0
    raise ValueError(t)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def rotate(x, pos, inv, att, rotary_dim, style):
    """x: (heads, D) at one position; partial rotary leaves x[..., rotary_dim:] as is."""
    freqs = pos * inv
    rot, rest = x[..., :rotary_dim], x[..., rotary_dim:]
    if style == "half":
        emb = torch.cat((freqs, freqs))
        out = rot * (emb.cos() * att) + rotate_half(rot) * (emb.sin() * att)
    else:
        emb = freqs.repeat_interleave(2)
        out = rot * (emb.cos() * att) + rotate_every_two(rot) * (emb.sin() * att)
    return torch.cat((out, rest), dim=-1)


def bloom_slopes(n):
    cp2 = 2 ** math.floor(math.log2(n))
    base = 2 ** (-(2 ** -(math.log2(cp2) - 3)))
    slopes = [base ** p for p in range(1, 1 + cp2)]
    if cp2 != n:
        extra_base = 2 ** (-(2 ** -(math.log2(2 * cp2) - 3)))
        rem = min(cp2, n - cp2)
        slopes += [extra_base ** p for p in range(1, 1 + 2 * rem, 2)]
    return slopes


def mpt_slopes(n, bias_max=8):
    n2 = 2 ** math.ceil(math.log2(n))
    m = torch.arange(1, n2 + 1).double() * bias_max / n2
    s = 1.0 / torch.pow(2, m)
    if n2 != n:
        s = torch.cat([s[1::2], s[::2]])[:n]
    return s.tolist()


def t5_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """modeling_t5.T5Attention._relative_position_bucket (int64 tensor in, int64 buckets out)."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
    return relative_buckets + torch.where(is_small, relative_position, if_large)


def main():
    torch.set_default_dtype(torch.float64)
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
        ("yarn_no_orig", 10000.0, 64, 4096, {"rope_type": "yarn", "factor": 2.0, "beta_fast": 16}, 64),
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
        rope_cases.append({"name": name, "theta": theta, "rotary_dim": dim,
                           "max_position_embeddings": mpe, "scaling": scaling, "seq_len": seq_len,
                           "inv_freq": inv.tolist(), "attention_factor": att})

    rotations = []
    for style in ("half", "interleaved"):
        for D, R, pos in ((8, 8, 3), (16, 8, 100000), (64, 64, 131071), (10, 6, 7)):
            inv, att = rope_params(10000.0, R, None, None, pos + 1)
            x = torch.randn(3, D, generator=g)
            y = rotate(x, float(pos), inv, att, R, style)
            # float32 in, as attn-run holds q and k in float32
            x32 = x.float().double()
            y32 = rotate(x32, float(pos), inv, att, R, style)
            rotations.append({"style": style, "D": D, "rotary_dim": R, "position": pos,
                              "x": x32.flatten().tolist(), "y": y32.flatten().tolist()})
        del y

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

    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"rope": rope_cases, "rotations": rotations, "alibi": alibi,
                   "relative_buckets": buckets}, f, indent=1)
    print("wrote", OUT)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Golden cases for the attention variants of CONTRACT.md v2 (issue 10): positions, masks,
windows, softcap, qk_norm, sinks, ALiBi, cross-attention and torch MHA's options; and v3's
forward-pass features (issue 24): gate (modeling_qwen3_next), qk_norm kinds layer
(modeling_cohere, Phi's qk_layernorm, per-head weights) and l2 (modeling_llama4),
attention_chunk (modeling_llama4's chunked layers), attn_temperature (its no-rope layers),
relative_bias (modeling_t5) and mla (modeling_deepseek_v2 / v3); v_norm and k_eq_v
(modeling_gemma4) with its proportional rope.

Each family's attention is written here in torch from its published modeling code
(transformers' modeling_llama / mistral / gemma2 / qwen3 / gpt_oss / gpt_neox / bloom / mpt
eager paths, and torch.nn.MultiheadAttention itself), with the two changes CONTRACT.md asks for:
  * RoPE angles and their cos/sin in float64, rounded to float32 (exact at any position;
    HF computes the angles in float32, which drifts at large positions);
  * a query row with no allowed key gets all-zero weights (HF's min-value mask gives a
    uniform row there, torch MHA gives NaN).
Each case folder (tests/golden/variants/<case>/) holds config.json (an ordinary attn-run config
in the contract's keys), weights/<state_dict key>.npy under the family's real names and prefix,
input.npy and the mask/position files the config names, and expected/context.npy,
expected/attention.npy (float32). Deterministic: fixed seeds.
Usage: /usr/bin/python3 tests/golden/make_variants.py
"""
import json
import math
import os
import shutil
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_positions import default_inv_freq, rope_params  # noqa: E402  (float64 RoPE)
from make_positions import t5_bucket  # noqa: E402  (modeling_t5's relative position buckets)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "variants")
NEG = float("-inf")


# ---- shared pieces, as the modeling files write them -------------------------------------

def rotate_half(x):  # modeling_llama.rotate_half
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope_cos_sin(positions, inv_freq, att):
    """cos, sin (B, S, R) in float64 angles rounded to float32 (CONTRACT.md "Positions")."""
    freqs = positions.double()[..., None] * inv_freq.double()[None, None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * att).float(), (emb.sin() * att).float()


def apply_rope(x, cos, sin, rotary_dim):  # x (B, H, S, D); partial rotary as GPT-NeoX
    rot, rest = x[..., :rotary_dim], x[..., rotary_dim:]
    cos, sin = cos[:, None], sin[:, None]
    return torch.cat((rot * cos + rotate_half(rot) * sin, rest), dim=-1)


def rotate_pairs(x):  # modeling_cohere.rotate_half: pairs (x[2i], x[2i+1])
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack([-x2, x1], dim=-1).flatten(-2)


def apply_rope_interleaved(x, cos, sin, rotary_dim):  # modeling_cohere.apply_rotary_pos_emb
    half = rotary_dim // 2  # cos, sin hold [freqs, freqs]: repeat_interleave them instead
    cos = torch.repeat_interleave(cos[..., :half], 2, dim=-1)[:, None]
    sin = torch.repeat_interleave(sin[..., :half], 2, dim=-1)[:, None]
    rot, rest = x[..., :rotary_dim], x[..., rotary_dim:]
    return torch.cat((rot * cos + rotate_pairs(rot) * sin, rest), dim=-1)


def layer_norm(x, w, b, eps):  # CohereLayerNorm / nn.LayerNorm over the last dim, in float32
    v = x.float()
    mean = v.mean(-1, keepdim=True)
    var = (v - mean).pow(2).mean(-1, keepdim=True)
    v = (v - mean) * torch.rsqrt(var + eps) * w.float()
    return v + b.float() if b is not None else v


def l2_norm(x, eps):  # modeling_llama4.Llama4TextL2Norm
    v = x.float()
    return v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps)


def repeat_kv(x, n_rep):  # modeling_llama.repeat_kv
    b, h, s, d = x.shape
    return x if n_rep == 1 else x[:, :, None].expand(b, h, n_rep, s, d).reshape(b, h * n_rep, s, d)


def rms_norm(x, w, eps, offset):  # Qwen3RMSNorm / Gemma3RMSNorm (offset 1: x * (1 + w))
    v = x.float()
    v = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps)
    return v * (offset + w.float())


def allowed_keys(B, S, causal, window, keep, chunk=None):
    """(B, 1, S, S) bool: causal (j <= i), sliding window (i - W < j), keep = attention_mask,
    chunk (masking_utils.chunked_overlay: i // chunk == j // chunk, Llama 4)."""
    i = torch.arange(S)[:, None]
    j = torch.arange(S)[None, :]
    ok = torch.ones(S, S, dtype=torch.bool)
    if causal:
        ok &= j <= i
    if chunk:
        ok &= (i // chunk) == (j // chunk)
    if window:
        ok &= i - window < j
        if not causal:
            ok &= j - i < window
    ok = ok[None, None].expand(B, 1, S, S)
    if keep is not None:
        ok = ok & keep.bool()[:, None, None, :]
    return ok


def softmax_rows(scores, ok, sinks=None):
    """softmax over allowed keys; rows with none get zeros; sinks join as a dropped column."""
    s = scores.masked_fill(~ok, NEG)
    if sinks is not None:  # modeling_gpt_oss.eager_attention_forward
        sk = sinks.reshape(1, -1, 1, 1).expand(s.shape[0], -1, s.shape[2], 1)
        comb = torch.cat([s, sk], dim=-1)
        comb = comb - comb.max(dim=-1, keepdim=True).values
        p = torch.softmax(comb, dim=-1)[..., :-1]
    else:
        p = torch.softmax(s, dim=-1)
    p = torch.nan_to_num(p, nan=0.0)
    return p * ok.any(-1, keepdim=True)  # no allowed key: all zeros (sinks too)


class Decoder(nn.Module):
    """The q/k/v/o_proj decoder attention of Llama, Mistral, Gemma 2, Qwen3, gpt-oss
    (modeling_llama.LlamaAttention + eager_attention_forward, with each family's extras)."""

    def __init__(self, C, H, Hkv, D, bias, o_bias, qk_norm=None, sinks=False, gate=False,
                 k_eq_v=False, v_norm=None):
        super().__init__()
        self.H, self.Hkv, self.D = H, Hkv, D
        self.gate = gate  # modeling_qwen3_next: q_proj yields per head [query | gate]
        self.v_norm = v_norm  # modeling_gemma4: v_norm's eps (an RMSNorm without a weight)
        self.q_proj = nn.Linear(C, H * D * (2 if gate else 1), bias=bias)
        self.k_proj = nn.Linear(C, Hkv * D, bias=bias)
        # modeling_gemma4's attention_k_eq_v: no v_proj, v is k_proj's output
        self.v_proj = None if k_eq_v else nn.Linear(C, Hkv * D, bias=bias)
        self.o_proj = nn.Linear(H * D, C, bias=o_bias)
        # qk_norm: (eps, offset) for RMSNorm, or a dict {kind, eps, per_head, bias} (v3)
        self.qk_norm = qk_norm
        nk = qk_norm if isinstance(qk_norm, dict) else {"kind": "rms"}
        self.norm_kind = nk["kind"] if qk_norm else None
        if qk_norm and nk["kind"] != "l2":
            per_head = nk.get("per_head", False)
            self.q_norm = nn.Parameter(torch.randn(*((H, D) if per_head else (D,))) * 0.3)
            self.k_norm = nn.Parameter(torch.randn(*((Hkv, D) if per_head else (D,))) * 0.3)
            if nk.get("bias"):
                self.q_norm_bias = nn.Parameter(torch.randn(*self.q_norm.shape) * 0.3)
                self.k_norm_bias = nn.Parameter(torch.randn(*self.k_norm.shape) * 0.3)
        self.sinks = nn.Parameter(torch.randn(H)) if sinks else None

    def forward(self, x, positions, keep, rope, scale, causal=True, window=None, softcap=None,
                chunk=None, temperature=None):
        B, S, _ = x.shape
        if self.gate:  # Qwen3NextAttention: torch.chunk(q_proj(x).view(B, S, H, 2D), 2, dim=-1)
            q, gate = torch.chunk(self.q_proj(x).view(B, S, self.H, 2 * self.D), 2, dim=-1)
            gate = gate.reshape(B, S, self.H * self.D)
        else:
            q = self.q_proj(x).view(B, S, self.H, self.D)
        k = self.k_proj(x).view(B, S, self.Hkv, self.D)
        v = self.v_proj(x).view(B, S, self.Hkv, self.D) if self.v_proj is not None else k
        if self.v_norm:  # Gemma4RMSNorm(with_scale=False): x * pow(mean(x^2) + eps, -0.5)
            v = v * torch.pow(v.float().pow(2).mean(-1, keepdim=True) + self.v_norm, -0.5)
        v = v.transpose(1, 2)
        if self.norm_kind == "rms":
            eps, off = self.qk_norm
            q, k = rms_norm(q, self.q_norm, eps, off), rms_norm(k, self.k_norm, eps, off)
        elif self.norm_kind == "layer":  # modeling_cohere / stablelm: before rope
            eps = self.qk_norm["eps"]
            qb, kb = getattr(self, "q_norm_bias", None), getattr(self, "k_norm_bias", None)
            q, k = layer_norm(q, self.q_norm, qb, eps), layer_norm(k, self.k_norm, kb, eps)
        elif self.norm_kind == "l2":
            q, k = l2_norm(q, self.qk_norm["eps"]), l2_norm(k, self.qk_norm["eps"])
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        if rope is not None:
            inv, att, R = rope[:3]
            cos, sin = rope_cos_sin(positions, inv, att)
            turn = apply_rope_interleaved if len(rope) > 3 and rope[3] else apply_rope
            q, k = turn(q, cos, sin, R), turn(k, cos, sin, R)
        if temperature:  # modeling_llama4: attn_temperature_tuning on the no-rope layers
            floor_scale, attn_scale = temperature
            cache_position = torch.arange(S)
            t = torch.log1p(torch.floor((cache_position.float() + 1.0) / floor_scale)) * attn_scale + 1.0
            q = q * t[None, None, :, None]
        k, v = repeat_kv(k, self.H // self.Hkv), repeat_kv(v, self.H // self.Hkv)
        s = (q @ k.transpose(2, 3)) * scale
        if softcap:  # modeling_gemma2: attn_logit_softcapping
            s = torch.tanh(s / softcap) * softcap
        p = softmax_rows(s, allowed_keys(B, S, causal, window, keep, chunk), self.sinks)
        self.last_attn = p
        y = (p @ v).transpose(1, 2).reshape(B, S, self.H * self.D)
        if self.gate:  # attn_output * torch.sigmoid(gate), before o_proj
            y = y * torch.sigmoid(gate)
        return self.o_proj(y)


class NeoX(nn.Module):
    """modeling_gpt_neox.GPTNeoXAttention: query_key_value viewed (H, 3, D), partial rotary."""

    def __init__(self, C, H):
        super().__init__()
        self.H, self.D = H, C // H
        self.query_key_value = nn.Linear(C, 3 * C)
        self.dense = nn.Linear(C, C)

    def forward(self, x, positions, keep, rope, alibi=None):
        B, S, C = x.shape
        qkv = self.query_key_value(x).view(B, S, self.H, 3 * self.D).transpose(1, 2)
        q, k, v = qkv.chunk(3, dim=-1)
        if rope is not None:
            inv, att, R = rope
            cos, sin = rope_cos_sin(positions, inv, att)
            q, k = apply_rope(q, cos, sin, R), apply_rope(k, cos, sin, R)
        s = (q @ k.transpose(2, 3)) / math.sqrt(self.D)
        if alibi is not None:  # BLOOM: baddbmm(alibi, q, k^T, beta=1, alpha=1/sqrt(D))
            slopes = torch.tensor(alibi, dtype=torch.float32)
            pos = positions.float()
            s = s + slopes[None, :, None, None] * (pos[:, None, None, :] - pos[:, None, :, None])
        p = softmax_rows(s, allowed_keys(B, S, True, None, keep))
        self.last_attn = p
        return self.dense((p @ v).transpose(1, 2).reshape(B, S, C))


class T5Attention(nn.Module):
    """modeling_t5.T5Attention: q, k, v, o without bias, inner dim H*d_kv (not d_model), no
    1/sqrt(D) scale; compute_bias looks the bucket of (key - query) up in a table
    (num_buckets, H) that block 0 of each stack owns and every layer of the stack uses."""

    def __init__(self, C, H, D, buckets=None):
        super().__init__()
        self.H, self.D = H, D
        self.q = nn.Linear(C, H * D, bias=False)
        self.k = nn.Linear(C, H * D, bias=False)
        self.v = nn.Linear(C, H * D, bias=False)
        self.o = nn.Linear(H * D, C, bias=False)
        if buckets:
            self.relative_attention_bias = nn.Embedding(buckets, H)

    def forward(self, x, table, keep, causal, bidirectional, buckets, max_distance):
        B, S, _ = x.shape
        q = self.q(x).view(B, S, self.H, self.D).transpose(1, 2)
        k = self.k(x).view(B, S, self.H, self.D).transpose(1, 2)
        v = self.v(x).view(B, S, self.H, self.D).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(3, 2))
        context_position = torch.arange(S, dtype=torch.long)[:, None]
        memory_position = torch.arange(S, dtype=torch.long)[None, :]
        bucket = t5_bucket(memory_position - context_position, bidirectional, buckets,
                           max_distance)
        position_bias = table(bucket).permute([2, 0, 1]).unsqueeze(0)  # (1, H, S, S)
        p = softmax_rows(scores + position_bias, allowed_keys(B, S, causal, None, keep))
        self.last_attn = p
        return self.o((p @ v).transpose(1, 2).reshape(B, S, self.H * self.D))


def t5_case(name, *, causal, buckets, max_distance, B, S, layer, seed):
    """One T5 self-attention layer past block 0: the table is block 0's (relative_bias.table)."""
    torch.manual_seed(seed)
    C, H, D = 24, 3, 6  # inner dim H*D = 18 != d_model, as T5 allows
    stack = "decoder" if causal else "encoder"
    first, m = T5Attention(C, H, D, buckets), T5Attention(C, H, D)
    x = torch.randn(B, S, C)
    keep = keep_mask(B, S, False) if not causal else torch.ones(B, S, dtype=torch.int64)
    with torch.no_grad():
        y = m(x, first.relative_attention_bias, keep, causal, not causal, buckets, max_distance)
    table = stack + ".block.0.layer.0.SelfAttention.relative_attention_bias.weight"
    prefix = "%s.block.%d.layer.0.SelfAttention." % (stack, layer)
    w = prefixed(m, prefix)
    w.update(prefixed(first, stack + ".block.0.layer.0.SelfAttention."))
    w["%s.block.%d.layer.0.layer_norm.weight" % (stack, layer)] = torch.ones(C)
    cfg = {"attention": "causal" if causal else "multi", "hidden_size": C, "num_heads": H,
           "head_size": D, "layout": "proj", "bias": False, "scale": 1.0,
           "weights_prefix": prefix,
           "weights_rename": {"q.": "q_proj.", "k.": "k_proj.", "v.": "v_proj.", "o.": "o_proj."},
           "relative_bias": {"num_buckets": buckets, "max_distance": max_distance,
                             "table": table}}
    extra = {}
    if not causal:
        cfg["attention_mask"] = "attention_mask.npy"
        extra["attention_mask.npy"] = keep.numpy()
    save_case(name, cfg, w, x, y, m.last_attn, extra)


def bloom_slopes(n):  # modeling_bloom.build_alibi_tensor
    cp2 = 2 ** math.floor(math.log2(n))
    base = 2 ** (-(2 ** -(math.log2(cp2) - 3)))
    slopes = [base ** p for p in range(1, 1 + cp2)]
    if cp2 != n:
        eb = 2 ** (-(2 ** -(math.log2(2 * cp2) - 3)))
        slopes += [eb ** p for p in range(1, 1 + 2 * min(cp2, n - cp2), 2)]
    return slopes


def mpt_slopes(n, bias_max):  # MPT's gen_slopes
    n2 = 2 ** math.ceil(math.log2(n))
    m = torch.arange(1, n2 + 1, dtype=torch.float64) * bias_max / n2
    s = 1.0 / torch.pow(2, m)
    if n2 != n:
        s = torch.cat([s[1::2], s[::2]])[:n]
    return s.tolist()


# ---- writing cases -------------------------------------------------------------------------

def save_case(name, cfg, weights, x, expected_ctx, expected_attn, extra=None):
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "weights"))
    os.makedirs(os.path.join(d, "expected"))
    for k, v in weights.items():
        np.save(os.path.join(d, "weights", k + ".npy"), v.detach().float().numpy())
    np.save(os.path.join(d, "input.npy"), x.detach().float().numpy())
    for fname, arr in (extra or {}).items():
        np.save(os.path.join(d, fname), arr)
    np.save(os.path.join(d, "expected", "context.npy"), expected_ctx.detach().float().numpy())
    np.save(os.path.join(d, "expected", "attention.npy"), expected_attn.detach().float().numpy())
    cfg = dict(cfg, weights="weights", input="input.npy")
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)


def prefixed(module, prefix):
    return {prefix + k: v for k, v in module.state_dict().items()}


def keep_mask(B, S, left):
    """attention_mask (1 = attend): row 0 full, row 1 padded by 2 on the left or right."""
    m = torch.ones(B, S, dtype=torch.int64)
    if B > 1:
        if left:
            m[1, :2] = 0
        else:
            m[1, -2:] = 0
    return m


def positions_for(keep, offset=0):  # HF: position_ids = cumsum(attention_mask) - 1
    return (keep.cumsum(-1) - 1).clamp(min=0) + offset


def decoder_case(name, C, H, Hkv, D, *, rope_cfg=None, scale=None, window=None, softcap=None,
                 qk_norm=None, sinks=False, bias=False, o_bias=False, left=True, offset=0,
                 B=2, S=7, seed=0, gate=False, chunk=None, temperature=None, positions=True,
                 k_eq_v=False, v_norm=None):
    torch.manual_seed(seed)
    m = Decoder(C, H, Hkv, D, bias, o_bias, qk_norm, sinks, gate, k_eq_v, v_norm)
    x = torch.randn(B, S, C)
    keep = keep_mask(B, S, left)
    pos = positions_for(keep, offset)
    rope = None
    cfg = {"attention": "causal", "hidden_size": C, "num_heads": H, "num_kv_heads": Hkv,
           "head_size": D, "layout": "proj", "weights_prefix": "model.layers.3.self_attn.",
           "qkv_bias": bias, "out_bias": o_bias, "attention_mask": "attention_mask.npy",
           "positions": "positions.npy"}
    if rope_cfg is not None:
        R = rope_cfg.get("rotary_dim", D)
        inv, att = rope_params(rope_cfg.get("theta", 10000.0), R,
                               rope_cfg.get("max_position_embeddings"), rope_cfg.get("scaling"),
                               int(pos.max()) + 1)
        rope = (inv, att, R, rope_cfg.get("style") == "interleaved")
        cfg["rope"] = rope_cfg
    if scale is not None:
        cfg["scale"] = scale
    if window:
        cfg["sliding_window"] = window
    if softcap:
        cfg["softcap"] = softcap
    if isinstance(qk_norm, dict):
        cfg["qk_norm"] = dict(qk_norm)
    elif qk_norm:
        cfg["qk_norm"] = {"eps": qk_norm[0], "scope": "head", "weight_offset": qk_norm[1]}
    if sinks:
        cfg["sinks"] = True
    if gate:
        cfg["gate"] = True
    if chunk:
        cfg["attention_chunk"] = chunk
    if temperature:
        cfg["attn_temperature"] = {"floor_scale": temperature[0], "attn_scale": temperature[1]}
    if k_eq_v:
        cfg["k_eq_v"] = True
    if v_norm:
        cfg["v_norm"] = {"kind": "rms", "eps": v_norm}
    extra = {"attention_mask.npy": keep.numpy(), "positions.npy": pos.numpy()}
    if not positions:  # the layer reads none: 0..S-1 (Llama 4's cache_position)
        del cfg["positions"], extra["positions.npy"]
    with torch.no_grad():
        y = m(x, pos, keep, rope, scale if scale is not None else D ** -0.5, True, window, softcap,
              chunk, temperature)
    w = prefixed(m, "model.layers.3.self_attn.")
    # neighbours under the same block prefix, as a whole-model file has them
    w["model.layers.3.input_layernorm.weight"] = torch.ones(C)
    w["model.layers.3.mlp.up_proj.weight"] = torch.randn(2 * C, C)
    for n in ("q_norm", "k_norm"):  # the families' key names for the norm weights
        at = "model.layers.3.self_attn." + n
        if at in w:
            w[at + ".weight"] = w.pop(at)
        if at + "_bias" in w:
            w[at + ".bias"] = w.pop(at + "_bias")
    save_case(name, cfg, w, x, y, m.last_attn, extra)


def mla_case(name, C, H, q_lora, kv_lora, nope, rope_dim, v, form, rope_cfg, *, bias=False,
             left=True, offset=0, B=2, S=7, seed=0):
    """DeepSeek's multi-head latent attention (deepseek_mla.py) as a plain attn-run config."""
    from deepseek_mla import DeepseekMLA, mla_scaling
    torch.manual_seed(seed)
    m = DeepseekMLA(C, H, q_lora, kv_lora, nope, rope_dim, v, bias)
    x = torch.randn(B, S, C)
    keep = keep_mask(B, S, left)
    pos = positions_for(keep, offset)
    inv, att = rope_params(rope_cfg.get("theta", 10000.0), rope_dim,
                           rope_cfg.get("max_position_embeddings"), rope_cfg.get("scaling"),
                           int(pos.max()) + 1)
    with torch.no_grad():
        y, p = m(x, pos, allowed_keys(B, S, True, None, keep), (inv, att),
                 mla_scaling(nope + rope_dim, rope_cfg.get("scaling")), form)
    cfg = {"attention": "causal", "hidden_size": C, "num_heads": H,
           "mla": {"q_lora_rank": q_lora, "kv_lora_rank": kv_lora, "qk_nope_head_dim": nope,
                   "qk_rope_head_dim": rope_dim, "v_head_dim": v},
           "rope": dict(rope_cfg, style="half" if form == "v3_half" else "interleaved"),
           "weights_prefix": "model.layers.1.self_attn.", "qkv_bias": bias, "out_bias": bias,
           "attention_mask": "attention_mask.npy", "positions": "positions.npy"}
    w = prefixed(m, "model.layers.1.self_attn.")
    w["model.layers.1.input_layernorm.weight"] = torch.ones(C)
    w["model.layers.1.mlp.gate_proj.weight"] = torch.randn(2 * C, C)
    save_case(name, cfg, w, x, y, p,
              {"attention_mask.npy": keep.numpy(), "positions.npy": pos.numpy()})


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    # Llama 3: GQA + llama3 scaling, positions past the original context (original 32).
    llama3 = {"theta": 500000.0, "max_position_embeddings": 256,
              "scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                          "high_freq_factor": 4.0, "original_max_position_embeddings": 32}}
    decoder_case("llama3_gqa_rope_left", 32, 4, 2, 8, rope_cfg=llama3, offset=100, left=True)
    decoder_case("llama3_mqa_rope_right", 32, 4, 1, 8, rope_cfg=llama3, offset=40, left=False)
    # Mistral: GQA + sliding window.
    decoder_case("mistral_window", 32, 4, 2, 8, rope_cfg={"theta": 10000.0}, window=3, S=9)
    # Gemma 2: softcap + query_pre_attn_scalar + window.
    decoder_case("gemma2_softcap_window", 32, 4, 2, 16, rope_cfg={"theta": 10000.0},
                 scale=1 / math.sqrt(24.0), window=4, softcap=2.0, S=8)
    # Qwen3: qk_norm (head) + GQA; Gemma 3 style offset 1.
    decoder_case("qwen3_qknorm", 32, 4, 2, 8, rope_cfg={"theta": 1000000.0}, qk_norm=(1e-6, 0))
    decoder_case("gemma3_qknorm_offset", 32, 4, 1, 8, rope_cfg={"theta": 10000.0},
                 qk_norm=(1e-6, 1), window=4)
    # gpt-oss: sinks + window + biases + yarn.
    yarn = {"theta": 150000.0, "max_position_embeddings": 4096,
            "scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                        "original_max_position_embeddings": 128, "truncate": False}}
    decoder_case("gptoss_sinks_window", 32, 4, 2, 8, rope_cfg=yarn, window=3, sinks=True,
                 bias=True, o_bias=True, S=8)

    # (v3) Qwen3-Next: gate per head in q_proj, partial rotary, (1 + w) q/k norms, q bias.
    decoder_case("qwen3next_gate", 32, 4, 2, 8, rope_cfg={"theta": 10000.0, "rotary_dim": 4},
                 qk_norm=(1e-6, 1), gate=True, bias=True, seed=11)

    # (v3) qk_norm kinds: Cohere's per-head LayerNorm (H, D) with interleaved rope; Phi's
    # qk_layernorm (nn.LayerNorm with a bias, shared by the heads); Llama 4's L2 norm.
    decoder_case("cohere_layernorm_per_head", 32, 4, 2, 8,
                 rope_cfg={"theta": 10000.0, "style": "interleaved"},
                 qk_norm={"kind": "layer", "eps": 1e-5, "per_head": True}, seed=12)
    decoder_case("phi_layernorm_bias", 32, 4, 4, 8, rope_cfg={"theta": 10000.0, "rotary_dim": 4},
                 qk_norm={"kind": "layer", "eps": 1e-5, "bias": True}, bias=True, o_bias=True,
                 left=False, seed=13)
    # Llama 4's chunked layers: attention_chunk, interleaved rope, L2 q/k norm, left padding.
    decoder_case("llama4_chunked_l2", 32, 4, 2, 8,
                 rope_cfg={"theta": 500000.0, "style": "interleaved"},
                 qk_norm={"kind": "l2", "eps": 1e-5}, chunk=3, S=8, seed=14)
    # Llama 4's no-rope layers: attn_temperature (floor_scale small enough to bite at S = 8).
    decoder_case("llama4_nope_temperature", 32, 4, 2, 8, temperature=(3, 0.5), S=8, left=False,
                 positions=False, seed=15)

    # Gemma 4's layers: v_norm (no weight) on both; a global layer with k_eq_v (v is k_proj's
    # output, before k_norm and rope), proportional rope (a quarter of the pairs turn), scale 1,
    # q/k norms x * w; a sliding one with its own v_proj, default rope and a window.
    decoder_case("gemma4_global_k_eq_v", 32, 4, 1, 16,
                 rope_cfg={"theta": 1000000.0,
                           "scaling": {"rope_type": "proportional", "partial_rotary_factor": 0.25}},
                 scale=1.0, qk_norm=(1e-6, 0), k_eq_v=True, v_norm=1e-6, offset=30, S=8, seed=16)
    decoder_case("gemma4_sliding_v_norm", 32, 4, 2, 8, rope_cfg={"theta": 10000.0}, scale=1.0,
                 qk_norm=(1e-6, 0), v_norm=1e-6, window=3, S=9, left=False, seed=17)

    # DeepSeek-V3 (and Kimi-K2): q_a/q_b, yarn whose mscale_all_dim enters the scale,
    # rope_interleave; V2-Lite: q_proj (q_lora_rank null), V2's complex rope, v wider than q.k.
    ds_yarn = {"theta": 10000.0, "max_position_embeddings": 2048,
               "scaling": {"type": "yarn", "factor": 40.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                           "beta_fast": 32, "beta_slow": 1,
                           "original_max_position_embeddings": 64}}
    mla_case("deepseek_v3_mla_yarn", 32, 4, 24, 16, 8, 4, 6, "v3_interleave", ds_yarn,
             offset=90, S=8)
    ds_lite = {"theta": 10000.0, "max_position_embeddings": 2048,
               "scaling": {"type": "yarn", "factor": 40.0, "mscale": 0.707,
                           "mscale_all_dim": 0.707, "beta_fast": 32, "beta_slow": 1,
                           "original_max_position_embeddings": 64}}
    mla_case("deepseek_v2_lite_mla", 32, 4, None, 16, 6, 4, 12, "v2_complex", ds_lite,
             bias=True, left=False, seed=1)
    mla_case("deepseek_v3_mla_half_rope", 32, 2, 12, 8, 4, 8, 8, "v3_half", {"theta": 5000.0},
             seed=2)

    # GPT-NeoX: partial rotary (rotary_pct 0.25 of D = 16 -> 4).
    torch.manual_seed(5)
    C, H, B, S = 64, 4, 2, 7
    m = NeoX(C, H)
    x = torch.randn(B, S, C)
    keep = keep_mask(B, S, False)
    pos = positions_for(keep)
    inv, att = rope_params(10000.0, 4, None, None, S)
    with torch.no_grad():
        y = m(x, pos, keep, (inv, att, 4))
    cfg = {"attention": "causal", "hidden_size": C, "num_heads": H, "layout": "neox",
           "weights_prefix": "gpt_neox.layers.0.attention.",
           "rope": {"theta": 10000.0, "rotary_dim": 4}, "attention_mask": "attention_mask.npy",
           "positions": "positions.npy"}
    save_case("neox_partial_rotary", cfg, prefixed(m, "gpt_neox.layers.0.attention."), x, y,
              m.last_attn, {"attention_mask.npy": keep.numpy(), "positions.npy": pos.numpy()})

    # BLOOM: ALiBi, H = 6 (not a power of two), left padding.
    torch.manual_seed(6)
    C, H = 48, 6
    m = NeoX(C, H)
    x = torch.randn(B, S, C)
    keep = keep_mask(B, S, True)
    pos = positions_for(keep)
    with torch.no_grad():
        y = m(x, pos, keep, None, alibi=bloom_slopes(H))
    cfg = {"attention": "causal", "hidden_size": C, "num_heads": H, "layout": "neox",
           "weights_prefix": "transformer.h.2.self_attention.", "alibi": True,
           "attention_mask": "attention_mask.npy", "positions": "positions.npy"}
    save_case("bloom_alibi_h6", cfg, prefixed(m, "transformer.h.2.self_attention."), x, y,
              m.last_attn, {"attention_mask.npy": keep.numpy(), "positions.npy": pos.numpy()})

    # MPT: ALiBi with alibi_bias_max 16, H = 12, fused Wqkv + out_proj.
    torch.manual_seed(7)
    C, H = 48, 12
    m = NeoX(C, H)  # the same math; re-packed below into MPT's fused q|k|v rows
    x = torch.randn(1, S, C)
    keep = torch.ones(1, S, dtype=torch.int64)
    pos = positions_for(keep)
    with torch.no_grad():
        y = m(x, pos, keep, None, alibi=mpt_slopes(H, 16.0))
    W = m.query_key_value.weight.view(H, 3, C // H, C)
    bq = m.query_key_value.bias.view(H, 3, C // H)
    w = {"transformer.blocks.0.attn.Wqkv.weight": torch.cat([W[:, i].reshape(C, C) for i in range(3)]),
         "transformer.blocks.0.attn.Wqkv.bias": torch.cat([bq[:, i].reshape(C) for i in range(3)]),
         "transformer.blocks.0.attn.out_proj.weight": m.dense.weight,
         "transformer.blocks.0.attn.out_proj.bias": m.dense.bias}
    cfg = {"attention": "causal", "hidden_size": C, "num_heads": H, "layout": "fused",
           "weights_prefix": "transformer.blocks.0.attn.", "alibi": {"max_bias": 16.0}}
    save_case("mpt_alibi_h12", cfg, w, x[0], y[0], m.last_attn[0])

    # torch.nn.MultiheadAttention: kdim/vdim, key padding, bool and float attn_mask,
    # add_bias_kv, add_zero_attn, batch_first=False, average heads.
    torch.manual_seed(8)
    E, H, L, T, B = 16, 4, 5, 6, 2
    mha = nn.MultiheadAttention(E, H, kdim=12, vdim=10, add_bias_kv=True, add_zero_attn=True)
    q = torch.randn(L, B, E)
    kx = torch.randn(T, B, 12)
    vx = torch.randn(T, B, 10)
    kpm = torch.zeros(B, T, dtype=torch.bool)
    kpm[1, -2:] = True
    bool_mask = torch.zeros(L, T + 2, dtype=torch.bool)
    bool_mask[0, 1] = True
    float_mask = torch.randn(L, T) * 0.5
    for name, am, avg in (("mha_cross_bool_mask", bool_mask[:, :T], False),
                          ("mha_cross_float_mask_avg", float_mask, True)):
        with torch.no_grad():
            y, p = mha(q, kx, vx, key_padding_mask=kpm, attn_mask=am, need_weights=True,
                       average_attn_weights=avg)
        cfg = {"attention": "multi", "hidden_size": E, "num_heads": H, "layout": "torch_mha",
               "kdim": 12, "vdim": 10, "add_bias_kv": True, "add_zero_attn": True,
               "batch_first": False, "key_input": "key.npy", "value_input": "value.npy",
               "padding_mask": "padding_mask.npy", "attn_mask": "attn_mask.npy",
               "output": {"average_heads": avg}}
        save_case(name, cfg, mha.state_dict(), q, y, p,
                  {"key.npy": kx.numpy(), "value.npy": vx.numpy(),
                   "padding_mask.npy": kpm.numpy(), "attn_mask.npy": am.numpy()})

    # T5 (CONTRACT.md v3 relative_bias): the encoder, bidirectional, with T5's 32 buckets up to
    # 128 (40 tokens reach the log-spaced buckets) and padding; the decoder's self-attention,
    # causal and one-directional, with a small table that 30 tokens take past max_distance.
    t5_case("t5_encoder_relative_bias", causal=False, buckets=32, max_distance=128, B=2, S=40,
            layer=2, seed=9)
    t5_case("t5_decoder_relative_bias", causal=True, buckets=16, max_distance=24, B=1, S=30,
            layer=1, seed=10)
    print("wrote", len(os.listdir(OUT)), "cases to", OUT)


if __name__ == "__main__":
    main()

"""DeepSeek's multi-head latent attention in plain torch, for the golden generators
(make_variants.py's mla cases, make_families_v3_mla.py's model folders).

Written from transformers' modeling_deepseek_v3.DeepseekV3Attention (and
modeling_deepseek_v2.DeepseekV2Attention, whose rope multiplies complex pairs):
  q      = q_proj(x)  or  q_b_proj(q_a_layernorm(q_a_proj(x)))          per head [q_pass | q_rot]
  ckv    = kv_a_proj_with_mqa(x) = [k_pass (kv_lora_rank) | k_rot (qk_rope_head_dim)]
  kv     = kv_b_proj(kv_a_layernorm(k_pass))                            per head [k_pass | v]
  rope on q_rot and k_rot only; k_rot (one head) expanded to every head;
  scores = [q_pass | q_rot] . [k_pass | k_rot] * scaling; softmax; p @ v; o_proj.
The rope's angles come in float64 rounded to float32 (CONTRACT.md "Positions"). Three rope
forms, as the modeling files have them:
  "v3_interleave": apply_rotary_pos_emb_interleave (rot part viewed (d/2, 2), transposed,
                   then rotate_half with cos/sin = cat(freqs, freqs)); rope_interleave true;
  "v3_half":       apply_rotary_pos_emb (rope_interleave false);
  "v2_complex":    DeepseekV2's apply_rotary_emb (view_as_complex pairs times polar(1, freqs)).
"""
import math

import torch
from torch import nn


class DeepseekRMSNorm(nn.Module):  # DeepseekV3RMSNorm (eps 1e-6: the modules' default)
    def __init__(self, n, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.variance_epsilon = eps

    def forward(self, x):
        v = x.float()
        v = v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
        return self.weight * v


def yarn_get_mscale(scale=1, mscale=1):  # modeling_deepseek_v3.yarn_get_mscale
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def mla_scaling(qk_head_dim, rope_scaling):
    """DeepseekV3Attention.__init__'s self.scaling (V2 the same since transformers #47435)."""
    s = qk_head_dim ** -0.5
    if rope_scaling is not None:
        m_all = rope_scaling.get("mscale_all_dim", 0)
        if m_all:
            m = yarn_get_mscale(rope_scaling["factor"], m_all)
            s = s * m * m
    return s


def _rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def _cos_sin(positions, inv_freq, att):
    """cos, sin (B, 1, S, Dr) from float64 angles rounded to float32; freqs (B, S, Dr/2) float64."""
    freqs = positions.double()[..., None] * inv_freq.double()[None, None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * att).float()[:, None], (emb.sin() * att).float()[:, None], freqs


def apply_mla_rope(q, k, positions, inv_freq, att, form):
    """q (B, H, S, Dr), k (B, 1, S, Dr), rotated as the modeling file of `form` does."""
    cos, sin, freqs = _cos_sin(positions, inv_freq, att)
    if form == "v2_complex":
        fc = torch.polar(torch.ones_like(freqs), freqs) * att  # complex128
        fc = fc.to(torch.complex64)[:, None]
        xq = torch.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
        xk = torch.view_as_complex(k.float().reshape(*k.shape[:-1], -1, 2))
        return (torch.view_as_real(xq * fc).flatten(3).type_as(q),
                torch.view_as_real(xk * fc).flatten(3).type_as(k))
    if form == "v3_interleave":
        b, h, s, d = q.shape
        q = q.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
        b, h, s, d = k.shape
        k = k.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
    return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin


class DeepseekMLA(nn.Module):
    """The attention of one DeepSeek-V2 / V3 decoder layer, under its state_dict names."""

    def __init__(self, C, H, q_lora_rank, kv_lora_rank, nope, rope, v, bias=False):
        super().__init__()
        self.H, self.nope, self.rope, self.v = H, nope, rope, v
        self.q_lora_rank, self.kv_lora_rank = q_lora_rank, kv_lora_rank
        qk = nope + rope
        if q_lora_rank is None:
            self.q_proj = nn.Linear(C, H * qk, bias=False)
        else:
            self.q_a_proj = nn.Linear(C, q_lora_rank, bias=bias)
            self.q_a_layernorm = DeepseekRMSNorm(q_lora_rank)
            self.q_b_proj = nn.Linear(q_lora_rank, H * qk, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(C, kv_lora_rank + rope, bias=bias)
        self.kv_a_layernorm = DeepseekRMSNorm(kv_lora_rank)
        self.kv_b_proj = nn.Linear(kv_lora_rank, H * (nope + v), bias=False)
        self.o_proj = nn.Linear(H * v, C, bias=bias)
        with torch.no_grad():  # norms that are not all ones, so a lost norm weight shows
            for n in (getattr(self, "q_a_layernorm", None), self.kv_a_layernorm):
                if n is not None:
                    n.weight.copy_(1.0 + 0.3 * torch.randn(n.weight.shape))

    def forward(self, x, positions, ok, rope, scaling, form):
        """x (B, S, C); ok (B, 1, S, S) allowed keys; rope = (inv_freq, attention_factor) or None.
        Returns the output (B, S, C) and the weights (B, H, S, S), rows with no allowed key zero."""
        B, S, _ = x.shape
        qk = self.nope + self.rope
        if self.q_lora_rank is None:
            q = self.q_proj(x)
        else:
            q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(x)))
        q = q.view(B, S, -1, qk).transpose(1, 2)
        q_pass, q_rot = torch.split(q, [self.nope, self.rope], dim=-1)
        ckv = self.kv_a_proj_with_mqa(x)
        k_pass, k_rot = torch.split(ckv, [self.kv_lora_rank, self.rope], dim=-1)
        k_pass = self.kv_b_proj(self.kv_a_layernorm(k_pass)).view(B, S, -1, self.nope + self.v)
        k_pass, v = torch.split(k_pass.transpose(1, 2), [self.nope, self.v], dim=-1)
        k_rot = k_rot.view(B, 1, S, self.rope)
        if rope is not None:
            q_rot, k_rot = apply_mla_rope(q_rot, k_rot, positions, rope[0], rope[1], form)
        k_rot = k_rot.expand(*k_pass.shape[:-1], -1)
        q = torch.cat((q_pass, q_rot), dim=-1)
        k = torch.cat((k_pass, k_rot), dim=-1)
        s = (q @ k.transpose(2, 3)) * scaling
        s = s.masked_fill(~ok, float("-inf"))
        p = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0) * ok.any(-1, keepdim=True)
        y = (p @ v).transpose(1, 2).reshape(B, S, self.H * self.v)
        return self.o_proj(y), p

"""The attention of one layer in plain torch, written once for every family: what each family's
modeling code computes in eager mode, with CONTRACT.md's two changes:
  * RoPE angles in float64, cos/sin rounded to float32 (HF computes the angles in float32, which
    drifts at large positions);
  * a query row with no allowed key gets all-zero weights (HF's min-value mask gives a uniform
    row there, torch MHA gives NaN).

A family describes its layer with a `Layer` (its file reads config.json into one, as the family's
configuration class does) and calls `attention(layer, sd, x, keep, pos)`: sd holds the layer's
tensors under the family's own names (relative to its prefix), in the dtype the math runs in
(float64 from the stored values for model folders and GGUF files, the modules' float32 for the
plain-config variants). The steps, in the order of the modeling files:

  projections   q, k, v (and Qwen3-Next's gate) from x: separate matrices (LlamaAttention),
                one fused [Q | K | V] (Phi3's qkv_proj, MPT's Wqkv, GPTBigCode's c_attn,
                ModernBERT's Wqkv), per head [q, k, v] (GPTNeoXAttention, BloomAttention),
                per KV group [q..., k, v] (FalconAttention._split_heads, InternLM2's wqkv),
                GPT-2's Conv1D (x @ W + b), or DeepSeek's multi-head latent attention (`mla`)
  qk norms      rms (Qwen3RMSNorm, Gemma3RMSNorm's 1 + w, OLMo 2 over all heads before the head
                view), layer (CohereLayerNorm per head, StableLM's per-head LayerNorms, Phi's
                qk_layernorm with a bias), before rope; l2 (Llama4TextL2Norm, no weight) and
                Hunyuan's query_layernorm / key_layernorm after it; v_norm (Gemma 4, Gemma 3n:
                RMS without a weight); clip_qkv (OLMo, DBRX, MPT: q, k, v clamped before them)
  positions     rope (half or interleaved, partial rotary, every rope_scaling), ALiBi slopes
                added after the scale (BLOOM's baddbmm, MPT's position_bias, Falcon's SDPA),
                T5's relative bias (a bucket table), or none (learned positions live outside)
  scores        (q k^T) * scale, softcap (Gemma 2: tanh(s / c) * c), Llama 4's
                attn_temperature on the queries of its no-rope layers
  masks         causal, sliding window (i - W < j; bidirectional: |i - j| < W), ModernBERT's
                symmetric local window |i - j| <= local_attention // 2, Llama 4's chunks
                (i // c == j // c), key padding (attention_mask); cross-attention keys from kv
  softmax       with gpt-oss's sinks as a dropped column; rows with no allowed key all zeros
  output        p @ v, Qwen3-Next's sigmoid(gate), then the output projection
  residual      a post-norm family's LayerNorm(output + input) (BertSelfOutput, DistilBERT's
                sa_layer_norm, OPT-350m's self_attn_layer_norm): `residual_norm`
"""
import dataclasses
from dataclasses import dataclass, field
from typing import Optional

import torch
import torch.nn.functional as F

from .positions import (angles, deberta_bucket, mrope_freqs, rope_params, rotate, rotate_half,
                        t5_bucket)

NEG = float("-inf")


@dataclass
class Rope:
    theta: float
    R: int  # rotary dims of the head (partial rotary: fewer than D)
    scaling: Optional[dict] = None  # a rope_scaling dict (modeling_rope_utils' keys)
    mpe: Optional[int] = None  # max_position_embeddings
    style: str = "half"  # "half": rotate_half; "interleaved": pairs (x[2i], x[2i+1])
    # "float64": attn-run's default angles; "float32": transformers' rotary embedding (float32
    # inv_freq, float32 position * inv_freq, float32 cos/sin times attention_scaling)
    precision: str = "float64"
    # mrope (Qwen2-VL's [t, h, w] rows of position ids): positions.mrope_freqs
    mrope_section: Optional[tuple] = None
    mrope_interleaved: bool = False


@dataclass
class QkNorm:
    kind: str  # "rms", "layer" or "l2"
    eps: float
    scope: str = "head"  # "all": over all heads' q (H*D) and k (Hkv*D) before the head view
    offset: float = 0.0  # rms: x * (offset + w) (Gemma 3, Qwen3-Next: 1)
    names: tuple = ("q_norm", "k_norm")  # the weights' (and biases') names
    per_head: bool = False  # a weight per head: (H, D) (CohereLayerNorm((H, D)), StableLM)
    split: bool = False  # StableLM: one LayerNorm per head, q_layernorm.norms.{h}.weight
    # Llama4TextAttention applies its L2 norm after rope; the plain-config variants apply every
    # kind before it: the same numbers (a rotation keeps each head's length), other roundings
    after_rope: bool = False


@dataclass
class Mla:
    """DeepSeek's multi-head latent attention (modeling_deepseek_v3 / v2)."""
    q_lora: Optional[int]  # None: q_proj (V2-Lite); else q_a_proj, q_a_layernorm, q_b_proj
    kv_lora: int
    nope: int  # qk_nope_head_dim
    rope: int  # qk_rope_head_dim
    v: int  # v_head_dim
    # "v3_interleave": apply_rotary_pos_emb_interleave (rope_interleave true); "v3_half":
    # apply_rotary_pos_emb; "v2_complex": DeepseekV2's apply_rotary_emb (complex pairs)
    form: str = "v3_interleave"


@dataclass
class Disentangled:
    """DeBERTa-v2/v3's relative attention (DebertaV2Config): pos_att_type's terms, the buckets,
    share_att_key, the table's key (outside the layer) and its LayerNorm's (None: norm_rel_ebd
    without "layer_norm")."""
    terms: tuple = ("c2p", "p2c")
    position_buckets: int = 256
    max_relative_positions: int = 512
    share_att_key: bool = True
    table: str = "deberta.encoder.rel_embeddings.weight"
    norm: Optional[str] = "deberta.encoder.LayerNorm"  # its .weight and .bias
    eps: float = 1e-7

    def span(self):  # DisentangledSelfAttention.pos_ebd_size
        return self.position_buckets if self.position_buckets > 0 else self.max_relative_positions


@dataclass
class Layer:
    """One attention layer: sizes, where q/k/v come from, and every position scheme and score
    term it uses (None / False: not used)."""
    C: int
    H: int
    Hkv: int
    D: int
    # "separate" (names q, k, v, o), "fused" (qkv, o), "per_head" (qkv, o), "kv_groups" (qkv, o),
    # "conv1d" (qkv, o), "mla"
    layout: str = "separate"
    names: tuple = ("q_proj", "k_proj", "v_proj", "o_proj")
    scale: Optional[float] = None  # None: D ** -0.5
    # scores / scale_divisor instead of * scale: the variants' per-head [q, k, v] cases divide
    # by sqrt(D) as GPT-NeoX's old _attn did (BloomAttention multiplies by its
    # inv_norm_factor); the same number up to float32 rounding, kept so their bytes hold
    scale_divisor: Optional[float] = None
    causal: bool = True
    window: Optional[int] = None
    local_half: Optional[int] = None  # ModernBERT: |i - j| <= local_half
    chunk: Optional[int] = None
    rope: Optional[Rope] = None
    alibi: Optional[list] = None  # slopes, one per head
    relative_bias: Optional[dict] = None  # {table (sd key), buckets, max_distance, bidirectional}
    softcap: Optional[float] = None
    qk_norm: Optional[QkNorm] = None
    v_norm: Optional[float] = None  # eps of the weightless RMS norm on v (Gemma 4, Gemma 3n)
    clip_qkv: Optional[float] = None  # q, k, v clamped to [-c, c] after the projections (OLMo)
    k_eq_v: bool = False  # Gemma 4: v is k_proj's output, before k_norm and rope
    sinks: bool = False  # sd["sinks"] (H,)
    gate: bool = False  # Qwen3-Next: q_proj yields per head [query | gate]
    temperature: Optional[tuple] = None  # Llama 4: (floor_scale, attn_scale)
    mla: Optional[Mla] = None
    # What the generators need beside the math: where the tensors live, whether they have
    # biases, the family, a label, whether attn-run runs the layer, and family extras.
    prefix: str = ""
    qkv_bias: bool = False
    o_bias: bool = False
    model_type: str = ""
    kind: str = ""
    runs: bool = True
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.scale is None:
            self.scale = self.D ** -0.5

    def replace(self, **kw):
        return dataclasses.replace(self, **kw)


# ---- the pieces --------------------------------------------------------------------------------

def linear(x, sd, name):  # nn.Linear: x W^T + b
    return F.linear(x, sd[name + ".weight"], sd.get(name + ".bias"))


def conv1d(x, sd, name):  # transformers' Conv1D (GPT-2): weight (in, out), x W + b
    return x @ sd[name + ".weight"] + sd[name + ".bias"]


def repeat_kv(x, n_rep):  # modeling_llama.repeat_kv: (B, Hkv, S, D) -> (B, Hkv * n_rep, S, D)
    b, h, s, d = x.shape
    return x if n_rep == 1 else x[:, :, None].expand(b, h, n_rep, s, d).reshape(b, h * n_rep, s, d)


def rms_norm(x, w, eps, offset=0.0):
    """Qwen3RMSNorm / LlamaRMSNorm (offset 0: x * w), Gemma3RMSNorm and Qwen3NextRMSNorm
    (offset 1: x * (1 + w)); w None: Gemma 4's v_norm without a weight."""
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return x if w is None else x * (offset + w)


def layer_norm(x, w, b, eps):  # CohereLayerNorm / nn.LayerNorm over the last dim
    mean = x.mean(-1, keepdim=True)
    var = (x - mean).pow(2).mean(-1, keepdim=True)
    x = (x - mean) * torch.rsqrt(var + eps) * w
    return x + b if b is not None else x


def l2_norm(x, eps):  # modeling_llama4.Llama4TextL2Norm
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def cos_sin(pos, rope, dtype):
    """cos, sin (B, S, R) in `dtype`: the angles pos * inv_freq in float64, times the attention
    factor, rounded to float32 (CONTRACT.md "Positions"), laid out for the rope's style. pos
    (B, S), or mrope's rows (3, B, S): each frequency at its row's position (mrope_freqs); rows
    without mrope_section: the time row."""
    if pos.dim() == 3 and rope.mrope_section is None:
        pos = pos[0]

    def freqs_of(inv):  # (B, S, R/2): one row of positions, or mrope's three
        if rope.mrope_section is None:
            return pos.to(inv.dtype)[..., None] * inv[None, None, :]
        rows = pos if pos.dim() == 3 else pos[None].expand(3, *pos.shape)  # as HF expands 2-D
        return mrope_freqs(rows.to(inv.dtype)[..., None] * inv, rope.mrope_section,
                           rope.mrope_interleaved)

    if rope.precision == "float32":  # e.g. modeling_llama.LlamaRotaryEmbedding.forward
        inv, att = rope_params(rope.theta, rope.R, rope.mpe, rope.scaling, int(pos.max()) + 1,
                               torch.float32)
        emb = angles(freqs_of(inv), rope.style)
        return (emb.cos() * att).to(dtype), (emb.sin() * att).to(dtype)
    inv, att = rope_params(rope.theta, rope.R, rope.mpe, rope.scaling, int(pos.max()) + 1)
    freqs = freqs_of(inv.double())
    emb = angles(freqs, rope.style)
    return (emb.cos() * att).float().to(dtype), (emb.sin() * att).float().to(dtype)


def apply_rope(x, pos, rope):  # x (B, H, S, D); modeling_llama.apply_rotary_pos_emb
    cos, sin = cos_sin(pos, rope, x.dtype)
    return rotate(x, cos[:, None], sin[:, None], rope.R, rope.style)


def allowed_keys(B, S, causal, window, keep, chunk=None, local_half=None, T=None):
    """(B, 1, S, T) bool: causal (j <= i), sliding window (i - W < j; not causal: also
    j - i < W), chunk (masking_utils.chunked_overlay: i // c == j // c), ModernBERT's local
    window (|i - j| <= local_half), keep = attention_mask over the T keys (T: S, or the
    cross-attention's key count, where only keep applies)."""
    T = S if T is None else T
    i = torch.arange(S)[:, None]
    j = torch.arange(T)[None, :]
    ok = torch.ones(S, T, dtype=torch.bool)
    if causal:
        ok &= j <= i
    if chunk:
        ok &= (i // chunk) == (j // chunk)
    if window:
        ok &= i - window < j
        if not causal:
            ok &= j - i < window
    if local_half is not None:
        ok &= (i - j).abs() <= local_half
    ok = ok[None, None].expand(B, 1, S, T)
    if keep is not None:
        ok = ok & keep.bool()[:, None, None, :]
    return ok


def softmax_rows(scores, ok, sinks=None):
    """softmax over the allowed keys; rows with none get zeros; sinks join as a dropped column
    (modeling_gpt_oss.eager_attention_forward)."""
    s = scores.masked_fill(~ok, NEG)
    if sinks is not None:
        sk = sinks.reshape(1, -1, 1, 1).expand(s.shape[0], -1, s.shape[2], 1)
        comb = torch.cat([s, sk], dim=-1)
        comb = comb - comb.max(dim=-1, keepdim=True).values
        p = torch.softmax(comb, dim=-1)[..., :-1]
    else:
        p = torch.softmax(s, dim=-1)
    p = torch.nan_to_num(p, nan=0.0)
    return p * ok.any(-1, keepdim=True)  # no allowed key: all zeros (sinks too)


# ---- projections -------------------------------------------------------------------------------

def project(a, sd, x, kv):
    """q (B, S, H, D), k and v (B, T, Hkv, D), gate (B, S, H*D) or None, from x (B, S, C) and
    the keys' input kv (B, T, C) (x itself unless cross-attention)."""
    B, S, _ = x.shape
    T = kv.shape[1]
    H, Hkv, D = a.H, a.Hkv, a.D
    lay, n = a.layout, a.names
    if lay == "separate":
        q = linear(x, sd, n[0])
        gate = None
        if a.gate:  # Qwen3NextAttention: torch.chunk(q_proj(x).view(B, S, H, 2D), 2, dim=-1)
            q, gate = torch.chunk(q.view(B, S, H, 2 * D), 2, dim=-1)
            gate = gate.reshape(B, S, H * D)
        k = linear(kv, sd, n[1])
        v = k if a.k_eq_v else linear(kv, sd, n[2])  # Gemma 4's attention_k_eq_v: no v_proj
        q, k, v = clip(a, q), clip(a, k), clip(a, v)
        if a.qk_norm and a.qk_norm.scope == "all":  # Olmo2Attention: before the head view
            q, k = qk_norm(a, sd, q, k)
        return q.reshape(B, S, H, D), k.view(B, T, Hkv, D), v.view(B, T, Hkv, D), gate
    if lay == "conv1d":
        q, k, v = conv1d(x, sd, n[0]).split(H * D, dim=-1)
    else:
        qkv = linear(x, sd, n[0])
        if lay == "fused":  # [Q | K | V] rows
            q, k, v = qkv.split([H * D, Hkv * D, Hkv * D], dim=-1)
        elif lay == "per_head":  # viewed (H, 3, D): per head [q, k, v]
            qkv = qkv.view(B, S, H, 3, D)
            return qkv[..., 0, :], qkv[..., 1, :], qkv[..., 2, :], None
        elif lay == "mp_groups":  # CodeGenAttention: reshape(..., mp_num=4, -1), each [q|v|k]
            local = H * D // 4
            q, v, k = qkv.reshape(B, S, 4, 3 * local).split(local, dim=-1)
            # _split_heads: (B, S, 4, H/4, D) as (B, S, H, D)
            return q.reshape(B, S, H, D), k.reshape(B, S, H, D), v.reshape(B, S, H, D), None
        elif lay == "kv_groups":  # viewed (Hkv, H/Hkv + 2, D): per KV group [q..., k, v]
            qkv = qkv.view(B, S, Hkv, H // Hkv + 2, D)
            return qkv[:, :, :, :-2].reshape(B, S, H, D), qkv[:, :, :, -2], qkv[:, :, :, -1], None
        else:
            raise ValueError(lay)
    q, k, v = clip(a, q), clip(a, k), clip(a, v)  # MptAttention: the fused qkv clamped
    return q.view(B, S, H, D), k.view(B, S, Hkv, D), v.view(B, S, Hkv, D), None


def clip(a, t):
    """modeling_olmo.OlmoAttention: query_states.clamp_(min=-clip_qkv, max=clip_qkv), keys and
    values alike, right after the projections (MptAttention and DBRX clamp the fused qkv)."""
    return t if a.clip_qkv is None else t.clamp(min=-a.clip_qkv, max=a.clip_qkv)


def output(a, sd, y):  # y (B, S, H*D) -> (B, S, C)
    return conv1d(y, sd, a.names[-1]) if a.layout == "conv1d" else linear(y, sd, a.names[-1])


def qk_norm(a, sd, q, k):
    """q and k through the layer's q/k norms (the weights under a.qk_norm.names)."""
    n = a.qk_norm
    if n.kind == "l2":
        return l2_norm(q, n.eps), l2_norm(k, n.eps)
    if n.split:  # StableLmLayerNormPerHead: head h's own LayerNorm
        wq = torch.stack([sd[f"{n.names[0]}.norms.{h}.weight"] for h in range(a.H)])
        wk = torch.stack([sd[f"{n.names[1]}.norms.{h}.weight"] for h in range(a.Hkv)])
        bq = bk = None
    else:
        wq, wk = sd[n.names[0] + ".weight"], sd[n.names[1] + ".weight"]
        bq, bk = sd.get(n.names[0] + ".bias"), sd.get(n.names[1] + ".bias")
    if n.kind == "rms":
        return rms_norm(q, wq, n.eps, n.offset), rms_norm(k, wk, n.eps, n.offset)
    return layer_norm(q, wq, bq, n.eps), layer_norm(k, wk, bk, n.eps)


# ---- the layer -----------------------------------------------------------------------------------

def attention(a, sd, x, keep=None, pos=None, kv=None, hooks=None):
    """context (B, S, C) and weights (B, H, S, T) of layer `a` on x (B, S, C) at positions pos
    (B, S); keep (B, T): attention_mask (1 = attend); kv (B, T, C): a cross-attention's keys.
    hooks: a dict that receives the intermediates as TransformerLens' HookedTransformer names
    them (attn-run's --save): q (B, S, H, D) and k, v (B, T, Hkv, D) after norms and rope,
    scores (B, H, S, T) before the softmax (-inf where not allowed), z (B, S, H, D) each head's
    weighted values (after the gate), result (B, S, H, C) each head's share of the output
    projection (W_O's columns of the head, without the bias)."""
    if a.mla is not None:
        return mla_attention(a, sd, x, keep, pos)
    if a.extra.get("disentangled") is not None:
        return deberta_attention(a, sd, x, keep)
    B, S, _ = x.shape
    kv = x if kv is None else kv
    T = kv.shape[1]
    q, k, v, gate = project(a, sd, x, kv)
    if a.v_norm:  # Gemma4RMSNorm(with_scale=False) on the values, before their transpose
        v = v * torch.pow(v.pow(2).mean(-1, keepdim=True) + a.v_norm, -0.5)
    v = v.transpose(1, 2)
    if a.qk_norm and a.qk_norm.scope == "head" and not a.qk_norm.after_rope:
        q, k = qk_norm(a, sd, q, k)
    q, k = q.transpose(1, 2), k.transpose(1, 2)
    if a.rope is not None:
        q, k = apply_rope(q, pos, a.rope), apply_rope(k, pos, a.rope)
    if a.qk_norm and a.qk_norm.after_rope:
        q, k = qk_norm(a, sd, q, k)
    if a.temperature:  # Llama 4's no-rope layers: at cache_position 0..S-1, not position ids
        floor_scale, attn_scale = a.temperature
        t = torch.log1p(torch.floor((torch.arange(S).float() + 1.0) / floor_scale))
        t = t * attn_scale + 1.0
        q = q * t.to(q.dtype)[None, None, :, None]
    if hooks is not None:  # hook_q, hook_k, hook_v
        hooks["q"], hooks["k"], hooks["v"] = (t.transpose(1, 2) for t in (q, k, v))
    k, v = repeat_kv(k, a.H // k.shape[1]), repeat_kv(v, a.H // v.shape[1])
    scores = q @ k.transpose(2, 3)
    scores = scores / a.scale_divisor if a.scale_divisor else scores * a.scale
    if a.softcap:  # Gemma 2's attn_logit_softcapping
        scores = torch.tanh(scores / a.softcap) * a.softcap
    if a.alibi is not None:  # slopes * (j - i), after the scale
        sl = torch.tensor(a.alibi, dtype=scores.dtype)
        p = pos.to(scores.dtype)
        scores = scores + sl[None, :, None, None] * (p[:, None, None, :] - p[:, None, :, None])
    if a.relative_bias is not None:  # T5Attention.compute_bias: the bucket of (key - query)
        rb = a.relative_bias
        bucket = t5_bucket(torch.arange(T, dtype=torch.long)[None, :] -
                           torch.arange(S, dtype=torch.long)[:, None],
                           rb["bidirectional"], rb["buckets"], rb["max_distance"])
        scores = scores + sd[rb["table"]][bucket].permute([2, 0, 1]).unsqueeze(0)
    ok = allowed_keys(B, S, a.causal, a.window, keep, a.chunk, a.local_half, T)
    probs = softmax_rows(scores, ok, sd["sinks"] if a.sinks else None)
    y = (probs @ v).transpose(1, 2).reshape(B, S, a.H * v.shape[-1])
    if gate is not None:  # attn_output * torch.sigmoid(gate), before o_proj
        y = y * torch.sigmoid(gate)
    if hooks is not None:  # hook_attn_scores, hook_z, hook_result
        hooks["scores"] = scores.masked_fill(~ok.expand_as(scores), float("-inf"))
        z = y.view(B, S, a.H, -1)
        hooks["z"] = z
        if a.layout != "conv1d":  # o_proj.weight (C, H*D) viewed per head: (C, H, D)
            w_o = sd[a.names[-1] + ".weight"].view(-1, a.H, z.shape[-1])
            hooks["result"] = torch.einsum("bshd,chd->bshc", z, w_o)
    return output(a, sd, y), probs


# ---- DeepSeek's multi-head latent attention ----------------------------------------------------

def deepseek_rms(x, w, eps=1e-6):
    """DeepseekV3RMSNorm: the variance in float32 (hidden_states.to(torch.float32)), then
    weight * x (the modules' eps 1e-6)."""
    v = x.float()
    return w * (v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + eps))


def mla_rope(q, k, pos, a):
    """q (B, H, S, Dr), k (B, 1, S, Dr) rotated as the modeling file of the form does."""
    r = a.rope
    inv, att = rope_params(r.theta, r.R, r.mpe, r.scaling, int(pos.max()) + 1)
    freqs = pos.double()[..., None] * inv.double()[None, None, :]
    if a.mla.form == "v2_complex":  # view_as_complex pairs times polar(1, freqs), in float32
        fc = (torch.polar(torch.ones_like(freqs), freqs) * att).to(torch.complex64)[:, None]
        xq = torch.view_as_complex(q.float().reshape(*q.shape[:-1], -1, 2))
        xk = torch.view_as_complex(k.float().reshape(*k.shape[:-1], -1, 2))
        return (torch.view_as_real(xq * fc).flatten(3).type_as(q),
                torch.view_as_real(xk * fc).flatten(3).type_as(k))
    if a.mla.form == "v3_interleave":  # pairs de-interleaved, then rotate_half
        b, h, s, d = q.shape
        q = q.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
        b, h, s, d = k.shape
        k = k.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = (emb.cos() * att).float()[:, None], (emb.sin() * att).float()[:, None]
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def mla_attention(a, sd, x, keep, pos):
    """DeepseekV3Attention.forward (V2's the same but its rope):
      q   = q_proj(x)  or  q_b_proj(q_a_layernorm(q_a_proj(x)))       per head [q_pass | q_rot]
      ckv = kv_a_proj_with_mqa(x) = [k_pass (kv_lora_rank) | k_rot (qk_rope_head_dim)]
      kv  = kv_b_proj(kv_a_layernorm(k_pass))                          per head [k_pass | v]
    rope on q_rot and k_rot only, k_rot (one head) for every head; scores = [q_pass | q_rot] .
    [k_pass | k_rot] * scaling; softmax; p @ v; o_proj."""
    m = a.mla
    B, S, _ = x.shape
    qk = m.nope + m.rope
    if m.q_lora is None:
        q = linear(x, sd, "q_proj")
    else:
        q = linear(deepseek_rms(linear(x, sd, "q_a_proj"), sd["q_a_layernorm.weight"]), sd,
                   "q_b_proj")
    q = q.view(B, S, -1, qk).transpose(1, 2)
    q_pass, q_rot = torch.split(q, [m.nope, m.rope], dim=-1)
    ckv = linear(x, sd, "kv_a_proj_with_mqa")
    k_pass, k_rot = torch.split(ckv, [m.kv_lora, m.rope], dim=-1)
    k_pass = linear(deepseek_rms(k_pass, sd["kv_a_layernorm.weight"]), sd, "kv_b_proj")
    k_pass, v = torch.split(k_pass.view(B, S, -1, m.nope + m.v).transpose(1, 2), [m.nope, m.v],
                            dim=-1)
    k_rot = k_rot.view(B, 1, S, m.rope)
    q_rot, k_rot = mla_rope(q_rot, k_rot, pos, a)
    k_rot = k_rot.expand(*k_pass.shape[:-1], -1)
    q = torch.cat((q_pass, q_rot), dim=-1)
    k = torch.cat((k_pass, k_rot), dim=-1)
    scores = (q @ k.transpose(2, 3)) * a.scale
    probs = softmax_rows(scores, allowed_keys(B, S, True, None, keep))
    y = (probs @ v).transpose(1, 2).reshape(B, S, a.H * m.v)
    return linear(y, sd, "o_proj"), probs


def input_norm(h, w, b, kind, eps, offset=0):
    """The block's pre-attention norm of the residual stream h (what --residual applies):
    "rms" as LlamaRMSNorm / T5LayerNorm (h * rsqrt(mean(h^2) + eps) * w; Gemma's GemmaRMSNorm
    with offset 1: * (1 + w)), "layer" as nn.LayerNorm (biased variance, bias when given)."""
    if kind == "rms":
        return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps) * (offset + w)
    return F.layer_norm(h, (h.shape[-1],), offset + w, b, eps)


def residual_norm(ctx, x, w, b, eps):
    """LayerNorm(context + input) as modeling_bert.BertSelfOutput (LayerNorm(dropout(dense(h)) +
    input_tensor), dropout off), DistilBERT's sa_layer_norm and OPT-350m's
    self_attn_layer_norm: what attn-run's --with-residual-norm computes."""
    return F.layer_norm(ctx + x, (x.shape[-1],), w, b, eps)


# ---- DeBERTa-v2/v3's disentangled attention ----------------------------------------------------

def deberta_attention(a, sd, x, keep, drop=()):
    """modeling_deberta_v2.DisentangledSelfAttention.forward and disentangled_attention_bias as
    transformers writes them today (bmm over (B*H, S, D), torch.gather by the clamped buckets),
    with DebertaV2Encoder's get_rel_embedding (the table's first 2 span rows through its LayerNorm)
    and get_attention_mask (mask[i] * mask[j]: a padded query row sees no key; the contract's
    zeros there, where transformers' finfo.min fill gives a uniform row). sd holds the layer's
    tensors under the layer's names (query_proj ... pos_query_proj, relative to
    "attention.self.", output.dense relative to "attention.") and the table and its norm under
    their full keys. drop: terms left out (the guards), the scale kept."""
    d = a.extra["disentangled"]
    B, S, C = x.shape
    H, D = a.H, a.D

    def heads(t):  # transpose_for_scores: (B, S, H*D) -> (B*H, S, D)
        return t.view(t.shape[0], t.shape[1], H, -1).permute(0, 2, 1, 3).reshape(-1, t.shape[1], D)

    q = heads(linear(x, sd, "self.query_proj"))
    k = heads(linear(x, sd, "self.key_proj"))
    v = heads(linear(x, sd, "self.value_proj"))
    scale_factor = 1 + ("c2p" in d.terms) + ("p2c" in d.terms)
    scale = torch.sqrt(torch.tensor(D, dtype=torch.float) * scale_factor).to(x.dtype)
    scores = torch.bmm(q, k.transpose(-1, -2) / scale)
    span = d.span()
    rel = sd[d.table][0:span * 2]
    if d.norm is not None:
        rel = F.layer_norm(rel, (C,), sd[d.norm + ".weight"], sd.get(d.norm + ".bias"), d.eps)
    rel = rel.unsqueeze(0)
    ids = torch.arange(S)
    relative_pos = deberta_bucket(ids[:, None] - ids[None, :], d.position_buckets,
                                  d.max_relative_positions)  # build_relative_position (S, S)
    if d.share_att_key:
        pos_query = heads(linear(rel, sd, "self.query_proj")).repeat(B, 1, 1)
        pos_key = heads(linear(rel, sd, "self.key_proj")).repeat(B, 1, 1)
    else:
        if "c2p" in d.terms:
            pos_key = heads(linear(rel, sd, "self.pos_key_proj")).repeat(B, 1, 1)
        if "p2c" in d.terms:
            pos_query = heads(linear(rel, sd, "self.pos_query_proj")).repeat(B, 1, 1)
    if "c2p" in d.terms and "c2p" not in drop:  # content -> position
        c2p = torch.bmm(q, pos_key.transpose(-1, -2))
        c2p_pos = torch.clamp(relative_pos + span, 0, span * 2 - 1)
        c2p = torch.gather(c2p, dim=-1, index=c2p_pos.expand([B * H, S, S]))
        scores = scores + c2p / scale
    if "p2c" in d.terms and "p2c" not in drop:  # position -> content
        p2c_pos = torch.clamp(-relative_pos + span, 0, span * 2 - 1)
        p2c = torch.bmm(k, pos_query.transpose(-1, -2))
        p2c = torch.gather(p2c, dim=-1, index=p2c_pos.expand([B * H, S, S])).transpose(-1, -2)
        scores = scores + p2c / scale
    scores = scores.view(B, H, S, S)
    ok = torch.ones(B, 1, S, S, dtype=torch.bool)
    if keep is not None:  # get_attention_mask: the (B, S) mask times its transpose
        m = keep.bool()
        ok = (m[:, None, None, :] & m[:, None, :, None])
    probs = softmax_rows(scores, ok)
    y = torch.bmm(probs.view(B * H, S, S), v).view(B, H, S, D).permute(0, 2, 1, 3)
    return linear(y.reshape(B, S, H * D), sd, "output.dense"), probs

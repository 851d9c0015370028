"""cases/: the tutorial modules (/work/shared/tutorials 000-004, see its README) run by PyTorch.

The modules below are the tutorials' own code, generalised only where CONTRACT.md's config asks
for it (bias flags, head_size, out_size, out_proj=false, scale, a causal flag for the multi
modules, a padding mask for all): they are the reference of these cases, so they stay as the
tutorials wrote them rather than going through reference.attention. Two deliberate changes, both
required by the contract:
  * Raschka's modules mask IN PLACE (masked_fill_) as the book's notebook does; the tutorial's
    `attn_scores.masked_fill(...)` (result dropped, so no mask at all) is kept only as
    mask_mode="tutorial" to reproduce its printed table;
  * a query row whose every key is masked gets all-zero weights: the softmax's NaN row is
    replaced by zeros (torch.nan_to_num) before attn @ v.
Each case folder holds config.json (an ordinary attn-run config), weights/ (<state_dict key>.npy,
buffers included), input.npy, mask.npy and expected/context.npy, expected/attention.npy
(float32). The computation is float32 as the modules run, so the expected values follow the
machine's float32 matrix products (within a few 1e-7 of another machine's). The tables printed in
tutorial 004 (Raschka, seed 123) are asserted before writing.
"""
import json
import math
import os
import shutil
from collections import Counter

import numpy as np
import torch
from torch import nn

NEG_INF = float("-inf")


def zero_masked_rows(attn):
    # CONTRACT.md: a row with every key masked is all zeros, never NaN.
    return torch.nan_to_num(attn, nan=0.0)


# --------------------------------------------------------------------------
# Warner (tutorials 000, 002): fused Wqkv, Wo.


class WarnerSingleHeadAttention(nn.Module):
    def __init__(self, hidden_size, bias=True, head_size=None, out_size=None, out_proj=True,
                 qkv_bias=None, out_bias=None, scale=None, causal=False):
        super().__init__()
        self.hs = head_size or hidden_size // 4
        self.scale, self.causal, self.out_proj = scale, causal, out_proj
        qkv_bias = bias if qkv_bias is None else qkv_bias
        out_bias = bias if out_bias is None else out_bias
        # linear layer to project queries, keys, values
        self.Wqkv = nn.Linear(hidden_size, self.hs * 3, bias=qkv_bias)
        # linear layer to project final output
        if out_proj:
            self.Wo = nn.Linear(self.hs, out_size or hidden_size, bias=out_bias)

    def forward(self, x, mask=None):
        B, S, C = x.shape
        q, k, v = self.Wqkv(x).reshape(B, S, 3, self.hs).unbind(dim=2)
        attn = q @ k.transpose(-2, -1)
        if self.scale is None:
            attn = attn / math.sqrt(k.size(-1))
        else:
            attn = attn * self.scale
        if self.causal:
            attn = attn.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), NEG_INF)
        if mask is not None:
            attn = attn.masked_fill(mask.view(B, 1, S), NEG_INF)
        attn = attn.softmax(dim=-1)
        attn = zero_masked_rows(attn)
        self.last_attn = attn.unsqueeze(1)  # (B, 1, S, S)
        x = attn @ v
        return self.Wo(x) if self.out_proj else x


class WarnerMultiHeadAttention(nn.Module):
    def __init__(self, hidden_size, num_heads, bias=True, head_size=None, out_size=None,
                 out_proj=True, qkv_bias=None, out_bias=None, scale=None, causal=False):
        super().__init__()
        out_size = out_size or hidden_size
        self.nh = num_heads
        self.hs = head_size or out_size // num_heads
        self.scale, self.causal, self.out_proj = scale, causal, out_proj
        qkv_bias = bias if qkv_bias is None else qkv_bias
        out_bias = bias if out_bias is None else out_bias
        self.Wqkv = nn.Linear(hidden_size, self.nh * self.hs * 3, bias=qkv_bias)
        if out_proj:
            self.Wo = nn.Linear(self.nh * self.hs, out_size, bias=out_bias)

    def forward(self, x, mask=None):
        B, S, C = x.shape
        x = self.Wqkv(x).reshape(B, S, 3, self.nh, self.hs)
        q, k, v = x.transpose(3, 1).unbind(dim=2)
        attn = q @ k.transpose(-2, -1)
        if self.scale is None:
            attn = attn / math.sqrt(k.size(-1))
        else:
            attn = attn * self.scale
        if self.causal:  # "multi" with "causal": true: the mask built per call
            attn = attn.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), NEG_INF)
        if mask is not None:
            attn = attn.masked_fill(mask.view(B, 1, 1, S), NEG_INF)
        attn = attn.softmax(dim=-1)
        attn = zero_masked_rows(attn)
        self.last_attn = attn
        x = attn @ v
        x = x.transpose(1, 2).reshape(B, S, self.nh * self.hs)
        return self.Wo(x) if self.out_proj else x


class WarnerCausalAttention(nn.Module):
    def __init__(self, hidden_size, num_heads, context_size, attn_drop=0.1, out_drop=0.1,
                 bias=True, head_size=None, out_size=None, out_proj=True, qkv_bias=None,
                 out_bias=None, scale=None):
        super().__init__()
        out_size = out_size or hidden_size
        self.nh = num_heads
        self.hs = head_size or out_size // num_heads
        self.scale, self.out_proj = scale, out_proj
        qkv_bias = bias if qkv_bias is None else qkv_bias
        out_bias = bias if out_bias is None else out_bias
        self.Wqkv = nn.Linear(hidden_size, self.nh * self.hs * 3, bias=qkv_bias)
        if out_proj:
            self.Wo = nn.Linear(self.nh * self.hs, out_size, bias=out_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.out_drop = nn.Dropout(out_drop)
        self.register_buffer('causal_mask',
                             torch.triu(torch.ones([context_size, context_size],
                                                   dtype=torch.bool), diagonal=1)
                             .view(1, 1, context_size, context_size))

    def forward(self, x, mask=None):
        B, S, C = x.shape
        if mask is None:  # the tutorial's forward requires a mask: none padded
            mask = torch.zeros(B, S, dtype=torch.bool)
        x = self.Wqkv(x).reshape(B, S, 3, self.nh, self.hs)
        q, k, v = x.transpose(3, 1).unbind(dim=2)
        attn = q @ k.transpose(-2, -1)
        if self.scale is None:
            attn = attn / math.sqrt(k.size(-1))
        else:
            attn = attn * self.scale
        # `+` on bool tensors is a logical or: true = do not attend
        combined_mask = self.causal_mask[:, :, :S, :S] + mask.view(B, 1, 1, S)
        attn = attn.masked_fill(combined_mask, NEG_INF)
        attn = attn.softmax(dim=-1)
        attn = zero_masked_rows(attn)
        attn = self.attn_drop(attn)
        self.last_attn = attn
        x = attn @ v
        x = x.transpose(1, 2).reshape(B, S, self.nh * self.hs)
        return self.out_drop(self.Wo(x)) if self.out_proj else x


# --------------------------------------------------------------------------
# Raschka (tutorial 004): separate W_query/W_key/W_value, out_proj.
# mask_mode: "book" = masked_fill_ in place (causal), "tutorial" = the
# tutorial's dropped masked_fill (no mask), "none" = no causal mask (multi).


class RaschkaCausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False, mask_mode="book",
                 scale=None):
        super().__init__()
        self.d_out = d_out
        self.mask_mode, self.scale = mask_mode, scale
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer('mask',
                             torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, pad=None):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.transpose(1, 2)
        if self.mask_mode == "book":
            attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        elif self.mask_mode == "tutorial":
            attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        if pad is not None:
            attn_scores.masked_fill_(pad.view(b, 1, num_tokens), -torch.inf)
        if self.scale is None:
            attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        else:
            attn_weights = torch.softmax(attn_scores * self.scale, dim=-1)
        attn_weights = zero_masked_rows(attn_weights)
        attn_weights = self.dropout(attn_weights)
        self.last_attn = attn_weights.unsqueeze(1)  # (b, 1, S, S)
        context_vec = attn_weights @ values
        return context_vec


class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False,
                 mask_mode="book", scale=None):
        super().__init__()
        self.heads = nn.ModuleList(
            [RaschkaCausalAttention(d_in, d_out, context_length, dropout, qkv_bias, mask_mode,
                                    scale)
             for _ in range(num_heads)])

    def forward(self, x, pad=None):
        out = torch.cat([head(x, pad) for head in self.heads], dim=-1)
        self.last_attn = torch.cat([head.last_attn for head in self.heads], dim=1)
        return out


class RaschkaMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False,
                 mask_mode="book", out_size=None, out_bias=True, out_proj=True, scale=None):
        super().__init__()
        assert (d_out % num_heads == 0), "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.mask_mode, self.scale, self.has_out_proj = mask_mode, scale, out_proj
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        if out_proj:
            self.out_proj = nn.Linear(d_out, out_size or d_out, bias=out_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask",
                             torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, pad=None):
        b, num_tokens, d_in = x.shape
        keys = self.W_key(x)
        queries = self.W_query(x)
        values = self.W_value(x)
        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.transpose(1, 2)
        queries = queries.transpose(1, 2)
        values = values.transpose(1, 2)
        attn_scores = queries @ keys.transpose(2, 3)
        if self.mask_mode == "book":
            attn_scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        elif self.mask_mode == "tutorial":
            attn_scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        if pad is not None:
            attn_scores.masked_fill_(pad.view(b, 1, 1, num_tokens), -torch.inf)
        if self.scale is None:
            attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        else:
            attn_weights = torch.softmax(attn_scores * self.scale, dim=-1)
        attn_weights = zero_masked_rows(attn_weights)
        attn_weights = self.dropout(attn_weights)
        self.last_attn = attn_weights
        context_vec = (attn_weights @ values).transpose(1, 2)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)
        if self.has_out_proj:
            context_vec = self.out_proj(context_vec)
        return context_vec


# --------------------------------------------------------------------------
# The key/query/value single head (tutorial 003; 001 is the same module).


class KQVHead(nn.Module):
    def __init__(self, C, head_size, bias=False, causal=True, scale=None):
        super().__init__()
        self.head_size, self.causal, self.scale = head_size, causal, scale
        self.key = nn.Linear(C, head_size, bias=bias)
        self.query = nn.Linear(C, head_size, bias=bias)
        self.value = nn.Linear(C, head_size, bias=bias)

    def forward(self, x, pad=None):
        B, T, C = x.shape
        k = self.key(x)
        q = self.query(x)
        s = self.head_size ** -0.5 if self.scale is None else self.scale
        wei = q @ k.transpose(-2, -1) * s
        if self.causal:
            tril = torch.tril(torch.ones(T, T))
            wei = wei.masked_fill(tril == 0, float('-inf'))
        if pad is not None:
            wei = wei.masked_fill(pad.view(B, 1, T), float('-inf'))
        wei = torch.softmax(wei, dim=-1)
        wei = zero_masked_rows(wei)
        self.last_attn = wei.unsqueeze(1)
        v = self.value(x)
        out = wei @ v
        return out


# --------------------------------------------------------------------------
# torch.nn.MultiheadAttention (batch_first). Its own forward gives NaN rows
# where every key is masked; those rows come from the same math done by hand
# (checked equal to the module on every other row).


class TorchMHA(nn.Module):
    def __init__(self, E, H, bias=True, causal=False):
        super().__init__()
        self.mha = nn.MultiheadAttention(E, H, bias=bias, batch_first=True)
        self.E, self.H, self.causal = E, H, causal

    def state_dict(self, *a, **k):  # keys as the bare module has them
        return self.mha.state_dict(*a, **k)

    def load_state_dict(self, sd, *a, **k):
        return self.mha.load_state_dict(sd, *a, **k)

    def by_hand(self, x, pad):
        m, B, S, H = self.mha, x.shape[0], x.shape[1], self.H
        D = self.E // H
        qkv = nn.functional.linear(x, m.in_proj_weight, m.in_proj_bias)
        q, k, v = [t.reshape(B, S, H, D).transpose(1, 2) for t in qkv.chunk(3, dim=-1)]
        attn = (q / math.sqrt(D)) @ k.transpose(-2, -1)
        if self.causal:
            attn = attn.masked_fill(torch.ones(S, S, dtype=torch.bool).triu(1), NEG_INF)
        if pad is not None:
            attn = attn.masked_fill(pad.view(B, 1, 1, S), NEG_INF)
        attn = zero_masked_rows(attn.softmax(dim=-1))
        y = (attn @ v).transpose(1, 2).reshape(B, S, self.E)
        return m.out_proj(y), attn

    def forward(self, x, pad=None):
        S = x.shape[1]
        attn_mask = torch.ones(S, S, dtype=torch.bool).triu(1) if self.causal else None
        out, attn = self.mha(x, x, x, key_padding_mask=pad, attn_mask=attn_mask,
                             need_weights=True, average_attn_weights=False)
        ref_out, ref_attn = self.by_hand(x, pad)
        bad = torch.isnan(out).any(dim=-1)  # (B, S) rows torch left as NaN
        ok = ~bad
        assert torch.allclose(out[ok], ref_out[ok], atol=1e-5), "torch MHA vs by hand"
        assert torch.allclose(torch.nan_to_num(attn, nan=0.0), ref_attn, atol=1e-6) or bad.any()
        out = torch.where(bad.unsqueeze(-1), ref_out, out)
        self.last_attn = ref_attn if bad.any() else attn
        return out


# ---- writing a case ----------------------------------------------------------------------

SENTENCE = [[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
            [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]]
LABELS = ["Your", "journey", "starts", "with", "one", "step"]

DTYPES = {"f4": np.float32, "f8": np.float64, "f2": np.float16, ">f4": ">f4", ">f8": ">f8"}
written = []  # (name, layout, kind, mask, batched, layout given) of each case written
LAYOUT_OF = {"WarnerSingleHeadAttention": "fused", "WarnerMultiHeadAttention": "fused",
             "WarnerCausalAttention": "fused", "RaschkaCausalAttention": "separate",
             "RaschkaMultiHeadAttention": "separate", "MultiHeadAttentionWrapper": "per_head",
             "KQVHead": "kqv", "TorchMHA": "torch_mha"}


def stored(arr32, dtype, rng):
    """The array as it goes to disk in `dtype`, and the float32 values attn-run
    must use (what NumPy's astype(float32) gives from the stored values)."""
    if dtype in ("f8", ">f8"):
        # values float32 cannot hold, so the conversion on load matters
        arr = arr32.astype(np.float64) * (1.0 + 1e-7 * rng.standard_normal(arr32.shape))
        arr = arr.astype(DTYPES[dtype])
    else:
        arr = arr32.astype(DTYPES[dtype])
    return arr, np.asarray(arr).astype(np.float32)


def short_floats(a):
    """Nested lists of the shortest decimals that give back these float32s."""
    if a.ndim == 0:
        return float(np.format_float_positional(a, unique=True, trim="0"))
    return [short_floats(r) for r in a]


def padding_mask(kind, B, S, rng):
    m = np.zeros((B, S), dtype=bool)
    if kind is None:
        return None
    for b in range(B):
        if kind == "all":  # the whole sequence of the last batch padded
            m[b, :] = b == B - 1
            continue
        p = int(rng.integers(1, S)) if S > 1 else 0
        if b == 0 and B > 1:
            p = 0  # one batch row unpadded
        if kind == "right":
            m[b, S - p:] = p > 0
        elif kind == "left":
            m[b, :p] = True
        elif kind == "random":
            m[b] = rng.random(S) < 0.4
            m[b, int(rng.integers(0, S))] = False
    return m


def write_case(out, name, module, cfg, x32, *, batched=True, pad=None, mask_dtype="bool",
               in_dtype="f4", w_dtype="f4", inline_input=False, inline_mask=False,
               fortran=False, labels=None, seed=0, expect=None, pad_kind=None):
    rng = np.random.default_rng(seed + 7)
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "weights"))
    os.makedirs(os.path.join(folder, "expected"))
    module.eval()

    # weights: stored in w_dtype; the module then runs on the float32 values
    # a reader must get from them
    sd = module.state_dict()
    loaded = {}
    for key, t in sd.items():
        a = t.detach().numpy()
        if a.dtype == np.float32:
            disk, back = stored(a, w_dtype, rng)
            loaded[key] = torch.from_numpy(back.copy())
        else:  # bool buffers (causal_mask) stay as they are
            disk = a
            loaded[key] = t
        if fortran and disk.ndim == 2:
            disk = np.asfortranarray(disk)
        np.save(os.path.join(folder, "weights", key + ".npy"), disk)
    module.load_state_dict(loaded)

    if inline_input:  # what a JSON reader gets: decimal text -> double -> float32
        assert in_dtype == "f4"
        x_json = json.loads(json.dumps(short_floats(x32)))
        x_disk, x_vals = None, np.array(x_json, dtype=np.float64).astype(np.float32)
    else:
        x_disk, x_vals = stored(x32, in_dtype, rng)
    xb = x_vals if batched else x_vals[None]
    B, S = xb.shape[0], xb.shape[1]
    pad_t = None
    if pad is not None:
        pad_t = torch.from_numpy(pad if batched else pad[None])
    with torch.no_grad():
        out = module(torch.from_numpy(xb.copy()), pad_t)
        attn = module.last_attn
    out = out.numpy().astype(np.float32)
    attn = attn.numpy().astype(np.float32)
    assert not np.isnan(out).any() and not np.isnan(attn).any(), name
    if expect is not None:  # a table printed in a tutorial
        got = np.round(out[0, :len(expect)], 4)
        assert np.allclose(got, np.array(expect), atol=1e-4 + 1e-7), (name, got, expect)
    if not batched:
        out, attn = out[0], attn[0]
    np.save(os.path.join(folder, "expected", "context.npy"), out)
    np.save(os.path.join(folder, "expected", "attention.npy"), attn)

    cfg = dict(cfg)
    cfg["weights"] = "weights"
    if inline_input:
        cfg["input"] = x_json
    else:
        np.save(os.path.join(folder, "input.npy"), x_disk)
        cfg["input"] = "input.npy"
    if pad is not None:
        if inline_mask:
            cfg["padding_mask"] = pad.tolist()
        else:
            np.save(os.path.join(folder, "mask.npy"), pad.astype(mask_dtype))
            cfg["padding_mask"] = "mask.npy"
    if labels:
        cfg["labels"] = labels
    with open(os.path.join(folder, "config.json"), "w") as f:
        # one key a line, arrays kept on their key's line
        f.write("{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in cfg.items())
                + "\n}\n")
    kind = cfg["attention"] + ("+causal" if cfg.get("causal") else "")
    written.append((name, LAYOUT_OF[type(module).__name__], kind,
                    pad_kind or ("given" if pad is not None else "none"),
                    "batched" if batched else "unbatched",
                    "explicit" if "layout" in cfg else "detected"))


def randx(B, S, C, seed, batched=True):
    g = torch.Generator().manual_seed(seed + 1000)
    x = torch.randn(B, S, C, generator=g).numpy()
    return x if batched else x[0]



# ---- the cases ----------------------------------------------------------------------------------

BATCH = np.stack([np.array(SENTENCE, np.float32)] * 2)
TUTORIAL_BASE = {"attention": "multi", "hidden_size": 3, "out_size": 2, "num_heads": 2,
                 "qkv_bias": False, "out_bias": True, "context_size": 6}
WRAPPER_BASE = {"attention": "multi", "hidden_size": 3, "num_heads": 2, "head_size": 2,
                "out_proj": False, "bias": False, "context_size": 6}

# (name, module class, constructor arguments): tutorial 004's printed tables at seed 123 and
# tutorial 003 exactly.
TUTORIALS = [
    ("tutorial_raschka_mha_multi", RaschkaMultiHeadAttention),
    ("tutorial_raschka_mha_causal", RaschkaMultiHeadAttention),
    ("tutorial_raschka_wrapper_multi", MultiHeadAttentionWrapper),
    ("tutorial_raschka_wrapper_causal", MultiHeadAttentionWrapper),
    ("tutorial_kqv_head", KQVHead),
]


def tutorial_cases(out):
    batch = BATCH
    base = TUTORIAL_BASE

    # Raschka MultiHeadAttention as printed in the tutorial (its masked_fill
    # was not in place: the unmasked result)
    torch.manual_seed(123)
    m = RaschkaMultiHeadAttention(3, 2, 6, 0.0, num_heads=2, mask_mode="tutorial")
    write_case(out, "tutorial_raschka_mha_multi", m, base, batch, inline_input=True, labels=LABELS,
               expect=[[0.2595, 0.4014], [0.2583, 0.4014], [0.2583, 0.4014],
                       [0.2575, 0.4031], [0.2582, 0.4026], [0.2575, 0.4028]])
    # the same weights through the "none" path agree exactly with the tutorial's
    torch.manual_seed(123)
    m2 = RaschkaMultiHeadAttention(3, 2, 6, 0.0, num_heads=2, mask_mode="none")
    with torch.no_grad():
        assert torch.equal(m(torch.from_numpy(batch)), m2(torch.from_numpy(batch)))

    # the book's notebook (masked in place): the causal table
    torch.manual_seed(123)
    m = RaschkaMultiHeadAttention(3, 2, 6, 0.0, num_heads=2, mask_mode="book")
    write_case(out, "tutorial_raschka_mha_causal", m,
               dict(base, attention="causal", layout="separate"), batch, inline_input=True,
               labels=LABELS, expect=[[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593]])

    wbase = WRAPPER_BASE
    torch.manual_seed(123)
    m = MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2, mask_mode="tutorial")
    write_case(out, "tutorial_raschka_wrapper_multi", m, wbase, batch, inline_input=True,
               labels=LABELS,
               expect=[[-0.5337, -0.1051, 0.5085, 0.3508], [-0.5323, -0.1080, 0.5084, 0.3508],
                       [-0.5323, -0.1079, 0.5084, 0.3506], [-0.5297, -0.1076, 0.5074, 0.3471],
                       [-0.5311, -0.1066, 0.5076, 0.3446], [-0.5299, -0.1081, 0.5077, 0.3493]])
    torch.manual_seed(123)
    m = MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2, mask_mode="book")
    write_case(out, "tutorial_raschka_wrapper_causal", m,
               dict(wbase, attention="causal", layout="per_head"), batch, labels=LABELS,
               expect=[[-0.4519, 0.2216, 0.4772, 0.1063]])

    # tutorial 003 exactly: seed 1337, x drawn first, then key, query, value
    torch.manual_seed(1337)
    x = torch.randn(4, 8, 32).numpy()
    m = KQVHead(32, 16, bias=False, causal=True)
    write_case(out, "tutorial_kqv_head", m,
               {"attention": "single", "hidden_size": 32, "head_size": 16, "causal": True,
                "out_proj": False, "bias": False}, x)


def generated():
    """Every generated case in order (its seed is 100 + its place, from 1): (name, module class,
    constructor args, constructor kwargs, cfg, B, S, C, write_case kwargs)."""
    cases = []

    def mk(name, cls, args, kw, cfg, B, S, C, **wkw):
        cases.append((name, cls, args, kw, cfg, B, S, C, wkw))

    # ---- fused, single (Warner 000/002 SingleHeadAttention)
    for C, bias, B, S, batched, pad, extra in [
        (8, True, 2, 5, True, None, {}),
        (16, False, 1, 7, True, None, {}),
        (12, True, 1, 4, False, None, {"layout": "fused"}),
        (16, True, 3, 6, True, "right", {}),
        (8, True, 2, 9, True, "left", {}),
        (32, False, 1, 3, False, "right", {"layout": "fused"}),
        (8, True, 2, 1, True, None, {}),
        (4, True, 1, 2, True, None, {}),
    ]:
        tag = f"fused_single_C{C}_{'bias' if bias else 'nobias'}_{pad or 'nomask'}" + \
              ("" if batched else "_unbatched") + f"_S{S}"
        cfg = dict({"attention": "single", "hidden_size": C}, **extra)
        if not bias:
            cfg["bias"] = False
        mk(tag, WarnerSingleHeadAttention, (C,), dict(bias=bias), cfg, B, S, C, batched=batched,
           pad=pad)
    mk("fused_single_headsize_outsize", WarnerSingleHeadAttention, (10,),
       dict(head_size=3, out_size=7), {"attention": "single", "hidden_size": 10, "head_size": 3,
                                       "out_size": 7}, 2, 5, 10, pad="right")
    mk("fused_single_no_out_proj", WarnerSingleHeadAttention, (12,), dict(out_proj=False),
       {"attention": "single", "hidden_size": 12, "out_proj": False}, 2, 4, 12)
    mk("fused_single_scale", WarnerSingleHeadAttention, (16,), dict(scale=0.7),
       {"attention": "single", "hidden_size": 16, "scale": 0.7}, 1, 6, 16)
    mk("fused_single_causal_left", WarnerSingleHeadAttention, (8,), dict(causal=True),
       {"attention": "single", "hidden_size": 8, "causal": True}, 2, 6, 8, pad="left")
    mk("fused_single_qkvbias_only", WarnerSingleHeadAttention, (8,), dict(out_bias=False),
       {"attention": "single", "hidden_size": 8, "out_bias": False}, 1, 5, 8)

    # ---- fused, multi (Warner MultiHeadAttention)
    for C, H, bias, B, S, batched, pad, extra in [
        (8, 2, True, 2, 5, True, None, {}),
        (12, 3, False, 1, 6, True, None, {"layout": "fused"}),
        (16, 4, True, 3, 7, True, "right", {}),
        (16, 2, True, 2, 8, True, "left", {}),
        (24, 4, False, 1, 5, False, "right", {}),
        (12, 2, True, 1, 9, False, None, {"layout": "fused"}),
        (32, 8, True, 2, 4, True, "random", {}),
        (6, 1, True, 2, 3, True, None, {}),
    ]:
        tag = f"fused_multi_C{C}H{H}_{'bias' if bias else 'nobias'}_{pad or 'nomask'}" + \
              ("" if batched else "_unbatched") + f"_S{S}"
        cfg = dict({"attention": "multi", "hidden_size": C, "num_heads": H}, **extra)
        if not bias:
            cfg["bias"] = False
        mk(tag, WarnerMultiHeadAttention, (C, H), dict(bias=bias), cfg, B, S, C,
           batched=batched, pad=pad)
    mk("fused_multi_outsize_headsize", WarnerMultiHeadAttention, (8, 2),
       dict(head_size=3, out_size=5), {"attention": "multi", "hidden_size": 8, "num_heads": 2,
                                       "head_size": 3, "out_size": 5}, 2, 5, 8)
    mk("fused_multi_no_out_proj", WarnerMultiHeadAttention, (12, 3), dict(out_proj=False),
       {"attention": "multi", "hidden_size": 12, "num_heads": 3, "out_proj": False}, 2, 4, 12,
       pad="right")
    mk("fused_multi_scale", WarnerMultiHeadAttention, (8, 2), dict(scale=1.3),
       {"attention": "multi", "hidden_size": 8, "num_heads": 2, "scale": 1.3}, 2, 6, 8)
    mk("fused_multi_causal_flag_left", WarnerMultiHeadAttention, (8, 2), dict(causal=True),
       {"attention": "multi", "hidden_size": 8, "num_heads": 2, "causal": True}, 2, 7, 8,
       pad="left")
    mk("fused_multi_all_padded", WarnerMultiHeadAttention, (8, 2), {},
       {"attention": "multi", "hidden_size": 8, "num_heads": 2}, 2, 4, 8, pad="all")
    mk("fused_multi_outbias_only", WarnerMultiHeadAttention, (8, 2), dict(qkv_bias=False),
       {"attention": "multi", "hidden_size": 8, "num_heads": 2, "qkv_bias": False}, 1, 5, 8)

    # ---- fused, causal (Warner CausalAttention, with its padding mask)
    for C, H, ctx, bias, B, S, batched, pad, extra in [
        (8, 2, 6, True, 2, 6, True, None, {}),
        (16, 4, 9, True, 3, 5, True, "right", {}),
        (12, 3, 7, False, 2, 7, True, "left", {"layout": "fused"}),
        (16, 2, 8, True, 1, 8, False, "left", {}),
        (8, 1, 4, False, 1, 3, False, None, {}),
        (24, 3, 9, True, 3, 9, True, "random", {}),
        (8, 2, 5, True, 1, 1, True, None, {}),
    ]:
        tag = f"fused_causal_C{C}H{H}_{'bias' if bias else 'nobias'}_{pad or 'nomask'}" + \
              ("" if batched else "_unbatched") + f"_S{S}_ctx{ctx}"
        cfg = dict({"attention": "causal", "hidden_size": C, "num_heads": H,
                    "context_size": ctx, "attn_drop": 0.1, "out_drop": 0.1}, **extra)
        if not bias:
            cfg["bias"] = False
        mk(tag, WarnerCausalAttention, (C, H, ctx), dict(bias=bias), cfg, B, S, C,
           batched=batched, pad=pad)
    mk("fused_causal_outsize_scale", WarnerCausalAttention, (8, 2, 6),
       dict(out_size=4, head_size=3, scale=0.25),
       {"attention": "causal", "hidden_size": 8, "num_heads": 2, "context_size": 6,
        "out_size": 4, "head_size": 3, "scale": 0.25}, 2, 6, 8, pad="left")
    mk("fused_causal_no_out_proj", WarnerCausalAttention, (8, 2, 6), dict(out_proj=False),
       {"attention": "causal", "hidden_size": 8, "num_heads": 2, "context_size": 6,
        "out_proj": False}, 2, 5, 8, pad="right")

    # ---- separate (Raschka MultiHeadAttention, book version)
    for C, H, hd, qb, ob, B, S, batched, pad, kind, extra in [
        (3, 2, 1, False, True, 2, 6, True, None, "causal", {}),
        (8, 2, 4, True, True, 2, 5, True, "right", "causal", {"layout": "separate"}),
        (8, 2, 4, False, False, 1, 7, True, "left", "causal", {}),
        (12, 3, 4, False, True, 3, 6, True, None, "multi", {}),
        (16, 4, 4, True, True, 1, 8, False, "left", "causal", {"layout": "separate"}),
        (6, 3, 2, False, True, 1, 4, False, "right", "multi", {}),
        (16, 2, 8, True, False, 2, 9, True, "random", "multi", {}),
        (10, 2, 3, False, True, 2, 5, True, None, "causal", {}),
    ]:
        tag = f"separate_{kind}_C{C}H{H}D{hd}_{'qkvb' if qb else 'noqkvb'}" \
              f"{'_outb' if ob else '_nooutb'}_{pad or 'nomask'}" + \
              ("" if batched else "_unbatched") + f"_S{S}"
        ctx = 9
        cfg = dict({"attention": kind, "hidden_size": C, "num_heads": H, "head_size": hd,
                    "out_size": H * hd, "qkv_bias": qb, "out_bias": ob,
                    "context_size": ctx, "dropout": 0.0}, **extra)
        if hd * H == C and kind == "multi":
            del cfg["out_size"], cfg["head_size"]  # defaults: out = C, head = C/H
        elif cfg["head_size"] * H == cfg["out_size"]:
            del cfg["head_size"]  # default out_size/num_heads
        mode = "book" if kind == "causal" else "none"
        mk(tag, RaschkaMultiHeadAttention, (C, H * hd, 9, 0.0, H),
           dict(qkv_bias=qb, mask_mode=mode, out_bias=ob), cfg, B, S, C, batched=batched,
           pad=pad)
    mk("separate_causal_outsize", RaschkaMultiHeadAttention, (8, 6, 7, 0.0, 2),
       dict(qkv_bias=True, out_size=5),
       {"attention": "causal", "hidden_size": 8, "num_heads": 2, "head_size": 3,
        "out_size": 5, "context_size": 7}, 2, 7, 8, pad="left")
    mk("separate_multi_scale_causal_flag", RaschkaMultiHeadAttention, (8, 4, 6, 0.0, 2),
       dict(mask_mode="book", scale=0.9),
       {"attention": "multi", "causal": True, "hidden_size": 8, "num_heads": 2,
        "out_size": 4, "qkv_bias": False, "scale": 0.9}, 2, 6, 8, pad="right")
    mk("separate_multi_no_out_proj", RaschkaMultiHeadAttention, (8, 4, 6, 0.0, 2),
       dict(mask_mode="none", out_proj=False),
       {"attention": "multi", "hidden_size": 8, "num_heads": 2, "head_size": 2,
        "out_proj": False, "qkv_bias": False}, 2, 6, 8)
    # Raschka's CausalAttention: one head, separate layer names, no out_proj
    mk("separate_causal_head_raschka", RaschkaCausalAttention, (6, 4, 8, 0.0), {},
       {"attention": "causal", "hidden_size": 6, "head_size": 4, "out_proj": False,
        "bias": False, "context_size": 8}, 2, 8, 6, pad="left")
    mk("separate_causal_head_raschka_bias", RaschkaCausalAttention, (5, 3, 6, 0.0),
       dict(qkv_bias=True),
       {"attention": "causal", "hidden_size": 5, "head_size": 3, "out_proj": False,
        "layout": "separate", "context_size": 6}, 1, 4, 5, batched=False)

    # ---- per_head (Raschka MultiHeadAttentionWrapper)
    for C, H, hd, qb, B, S, batched, pad, kind, extra in [
        (3, 2, 2, False, 2, 6, True, "left", "causal", {}),
        (8, 3, 2, True, 2, 5, True, "right", "causal", {"layout": "per_head"}),
        (8, 2, 4, False, 1, 7, True, None, "multi", {}),
        (6, 3, 3, True, 1, 4, False, "left", "causal", {}),
        (12, 2, 5, False, 3, 6, True, "random", "multi", {"layout": "per_head"}),
        (4, 4, 1, True, 2, 3, True, None, "causal", {}),
    ]:
        tag = f"per_head_{kind}_C{C}H{H}D{hd}_{'bias' if qb else 'nobias'}_{pad or 'nomask'}" + \
              ("" if batched else "_unbatched") + f"_S{S}"
        cfg = dict({"attention": kind, "hidden_size": C, "num_heads": H, "head_size": hd,
                    "out_proj": False, "bias": qb, "context_size": 8}, **extra)
        mode = "book" if kind == "causal" else "none"
        mk(tag, MultiHeadAttentionWrapper, (C, hd, 8, 0.0, H), dict(qkv_bias=qb, mask_mode=mode),
           cfg, B, S, C, batched=batched, pad=pad)
    mk("per_head_causal_scale", MultiHeadAttentionWrapper, (6, 3, 6, 0.0, 2),
       dict(mask_mode="book", scale=0.5),
       {"attention": "causal", "hidden_size": 6, "num_heads": 2, "head_size": 3,
        "out_proj": False, "bias": False, "scale": 0.5, "context_size": 6}, 2, 6, 6)

    # ---- kqv (tutorial 003 / 001 head)
    for C, hd, bias, causal, B, S, batched, pad, extra in [
        (16, 8, False, True, 2, 6, True, None, {}),
        (16, 4, True, True, 2, 5, True, "left", {"layout": "kqv"}),
        (8, 8, False, True, 1, 7, False, "right", {}),
        (12, 6, True, False, 2, 4, True, "right", {}),
        (32, 16, False, True, 3, 9, True, "random", {"layout": "kqv"}),
    ]:
        tag = f"kqv_{'causal' if causal else 'noncausal'}_C{C}D{hd}_" \
              f"{'bias' if bias else 'nobias'}_{pad or 'nomask'}" + \
              ("" if batched else "_unbatched") + f"_S{S}"
        cfg = dict({"attention": "single", "hidden_size": C, "head_size": hd,
                    "causal": causal, "out_proj": False, "bias": bias}, **extra)
        mk(tag, KQVHead, (C, hd, bias, causal), {}, cfg, B, S, C, batched=batched, pad=pad)
    mk("kqv_causal_scale", KQVHead, (8, 4, False, True), dict(scale=0.8),
       {"attention": "single", "hidden_size": 8, "head_size": 4, "causal": True,
        "out_proj": False, "bias": False, "scale": 0.8}, 2, 5, 8)

    # ---- torch_mha (torch.nn.MultiheadAttention, batch_first)
    for E, H, bias, causal, B, S, batched, pad, extra in [
        (8, 2, True, False, 2, 5, True, None, {}),
        (12, 3, False, False, 1, 6, True, "right", {"layout": "torch_mha"}),
        (16, 4, True, True, 2, 7, True, "left", {}),
        (8, 1, True, False, 1, 4, False, None, {}),
        (12, 2, True, True, 1, 5, False, "right", {"layout": "torch_mha"}),
        (16, 2, False, True, 3, 8, True, "random", {}),
    ]:
        kind = "causal" if causal else "multi"
        tag = f"torch_mha_{kind}_E{E}H{H}_{'bias' if bias else 'nobias'}_{pad or 'nomask'}" + \
              ("" if batched else "_unbatched") + f"_S{S}"
        cfg = dict({"attention": kind, "hidden_size": E, "num_heads": H}, **extra)
        if not bias:
            cfg["bias"] = False
        mk(tag, TorchMHA, (E, H, bias, causal), {}, cfg, B, S, E, batched=batched, pad=pad)

    # ---- file formats: dtypes, byte order, Fortran order, inline values
    mk("format_weights_f16_input_f8", WarnerMultiHeadAttention, (8, 2), {},
       {"attention": "multi", "hidden_size": 8, "num_heads": 2}, 2, 5, 8, pad="right",
       w_dtype="f2", in_dtype="f8", mask_dtype="uint8")
    mk("format_weights_f8_input_f2", RaschkaMultiHeadAttention, (6, 4, 6, 0.0, 2), {},
       {"attention": "causal", "hidden_size": 6, "num_heads": 2, "out_size": 4,
        "qkv_bias": False, "context_size": 6}, 2, 6, 6, pad="left", w_dtype="f8",
       in_dtype="f2", mask_dtype="int64")
    mk("format_big_endian_f4", WarnerCausalAttention, (8, 2, 6), {},
       {"attention": "causal", "hidden_size": 8, "num_heads": 2, "context_size": 6}, 2, 6, 8,
       pad="left", w_dtype=">f4", in_dtype=">f4", mask_dtype=">i8")
    mk("format_big_endian_f8", KQVHead, (8, 4, True, True), {},
       {"attention": "single", "hidden_size": 8, "head_size": 4, "causal": True,
        "out_proj": False}, 1, 5, 8, w_dtype=">f8", in_dtype=">f8", batched=False)
    mk("format_fortran_weights", MultiHeadAttentionWrapper, (6, 3, 6, 0.0, 2), {},
       {"attention": "causal", "hidden_size": 6, "num_heads": 2, "head_size": 3,
        "out_proj": False, "bias": False, "context_size": 6}, 2, 5, 6, fortran=True,
       pad="right", mask_dtype="uint8")
    mk("format_mask_int64_torch_mha", TorchMHA, (8, 2, True, False), {},
       {"attention": "multi", "hidden_size": 8, "num_heads": 2}, 3, 4, 8, pad="right",
       mask_dtype="int64")
    mk("format_mask_uint8_unbatched", WarnerCausalAttention, (8, 2, 8), {},
       {"attention": "causal", "hidden_size": 8, "num_heads": 2, "context_size": 8}, 1, 6, 8,
       batched=False, pad="left", mask_dtype="uint8")
    mk("format_inline_input_and_mask", WarnerMultiHeadAttention, (8, 2), {},
       {"attention": "multi", "hidden_size": 8, "num_heads": 2}, 2, 4, 8, pad="right",
       inline_input=True, inline_mask=True, labels=["a", "b", "c", "d"])
    mk("format_inline_unbatched", WarnerSingleHeadAttention, (8,), {},
       {"attention": "single", "hidden_size": 8}, 1, 3, 8, batched=False, inline_input=True)
    mk("format_weights_f16_torch_mha", TorchMHA, (8, 2, True, True), {},
       {"attention": "causal", "hidden_size": 8, "num_heads": 2}, 2, 5, 8, pad="left",
       w_dtype="f2", in_dtype="f2")
    return cases


def generated_cases(out):
    for n, (name, cls, args, kw, cfg, B, S, C, wkw) in enumerate(generated(), start=1):
        seed = 100 + n
        batched, pad = wkw.pop("batched", True), wkw.pop("pad", None)
        torch.manual_seed(seed)
        module = cls(*args, **kw)
        x = randx(B, S, C, seed, batched)
        rng = np.random.default_rng(seed)
        m = padding_mask(pad, B if batched else 1, S, rng)
        if m is not None and not batched:
            m = m[0]
        write_case(out, name, module, cfg, x, batched=batched, pad=m, seed=seed, pad_kind=pad,
                   **wkw)


def case_names():
    """(name, layout) of every case, in the order written."""
    return ([(name, LAYOUT_OF[cls.__name__]) for name, cls in TUTORIALS] +
            [(c[0], LAYOUT_OF[c[1].__name__]) for c in generated()])


def main(out):
    """Rewrites out (tests/golden/cases) from scratch and prints the case list with counts per
    layout, kind and mask."""
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    written.clear()
    tutorial_cases(out)
    generated_cases(out)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    print(f"  {len(written)} cases, {size / 1e6:.2f} MB")
    for title, key in [("layout x kind", lambda r: (r[1], r[2])),
                       ("layout x mask", lambda r: (r[1], r[3])),
                       ("mask", lambda r: r[3]), ("input", lambda r: r[4])]:
        print("  " + title + ":", ", ".join(f"{k}: {v}"
                                           for k, v in sorted(Counter(map(key, written)).items())))

"""Cases run from a plain attn-run config (not a model folder): variants/<case>/ and
families/<case>/.

variants/<case>/ (the families' positions, masks and score terms in the contract's keys): a
config.json in the contract's keys, weights/<state_dict key>.npy under the family's real names and
prefix, input.npy and the mask / position files the config names, expected/context.npy and
expected/attention.npy (float32). The weights are nn.Linear's (and the norms' torch.randn * 0.3)
drawn after torch.manual_seed(seed) in the order of the family's modules, and the expectation is
reference.attention run in float32 on them, as the modules ran.

families/<case>/ (the v2 layouts with positions left out: projection + attention math only,
position ids ignored): one layer's weights under their real prefix beside another layer and the
block's neighbour keys, in a .safetensors (bf16, f16 or f32) or two shards + index, input.npy,
mask.npy when padded (true = padded key), expected context and maps computed in float64 from the
stored (rounded) weights.

A family's file lists its cases as dicts: {"name", "writer", ...the writer's arguments}.
"""
import dataclasses
import json
import math
import os
import shutil

import numpy as np
import torch
from torch import nn

from . import reference
from .positions import bloom_slopes, mpt_slopes
from .reference import Disentangled, Layer, Mla, QkNorm, Rope
from .util import save_safetensors

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- variants/ ----------------------------------------------------------------------------------

def save_case(out, name, cfg, weights, x, expected_ctx, expected_attn, extra=None, saved=None):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "weights"))
    os.makedirs(os.path.join(d, "expected"))
    for k, v in weights.items():
        np.save(os.path.join(d, "weights", k + ".npy"), v.detach().float().numpy())
    np.save(os.path.join(d, "input.npy"), x.detach().float().numpy())
    for fname, arr in (extra or {}).items():
        np.save(os.path.join(d, fname), arr)
    np.save(os.path.join(d, "expected", "context.npy"), expected_ctx.detach().float().numpy())
    np.save(os.path.join(d, "expected", "attention.npy"), expected_attn.detach().float().numpy())
    if saved:  # --save's tensors: expected/saved/<name>.npy
        os.makedirs(os.path.join(d, "expected", "saved"))
        for k, v in saved.items():
            np.save(os.path.join(d, "expected", "saved", k + ".npy"),
                    v.detach().float().contiguous().numpy())
    cfg = dict(cfg, weights="weights", input="input.npy")
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)


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


def prefixed(sd, prefix):
    return {prefix + k: v for k, v in sd.items()}


def linear_params(sd, name, in_f, out_f, bias=True):
    """An nn.Linear(in_f, out_f)'s weight and bias (kaiming-uniform init from torch's global
    generator, as the modules drew them) under name."""
    m = nn.Linear(in_f, out_f, bias=bias)
    sd[name + ".weight"] = m.weight.detach()
    if bias:
        sd[name + ".bias"] = m.bias.detach()


def norm_kind(qk_norm):
    """A case's qk_norm: (eps, offset) for RMSNorm per head, or {kind, eps, per_head, bias}."""
    if qk_norm is None:
        return None
    if not isinstance(qk_norm, dict):
        return QkNorm("rms", qk_norm[0], offset=qk_norm[1])
    return QkNorm(qk_norm["kind"], qk_norm["eps"], per_head=qk_norm.get("per_head", False),
                  after_rope=qk_norm.get("order") == "after_rope")


def decoder(out, name, C, H, Hkv, D, *, rope_cfg=None, scale=None, window=None, softcap=None,
            qk_norm=None, sinks=False, bias=False, o_bias=False, left=True, offset=0, B=2, S=7,
            seed=0, gate=False, chunk=None, temperature=None, positions=True, k_eq_v=False,
            v_norm=None, x_scale=1.0, save=False, clip_qkv=None, guards=(), position_rows=None):
    """A q/k/v/o_proj decoder layer (modeling_llama.LlamaAttention + eager_attention_forward,
    with the family's extras) at model.layers.3.self_attn. guards: changes of the Layer (a dict
    of its fields each, or a function of the Layer giving one) that must each move the context by
    more than 1e-3 (the feature counts). position_rows(keep, pos): mrope's (3, B, S) rows."""
    torch.manual_seed(seed)
    sd = {}  # drawn in the order of the attention module's parameters
    linear_params(sd, "q_proj", C, H * D * (2 if gate else 1), bias)
    linear_params(sd, "k_proj", C, Hkv * D, bias)
    if not k_eq_v:
        linear_params(sd, "v_proj", C, Hkv * D, bias)
    linear_params(sd, "o_proj", H * D, C, o_bias)
    norm = norm_kind(qk_norm)
    if norm and norm.kind != "l2":
        for n, heads in (("q_norm", H), ("k_norm", Hkv)):
            sd[n + ".weight"] = torch.randn(*((heads, D) if norm.per_head else (D,))) * 0.3
        if isinstance(qk_norm, dict) and qk_norm.get("bias"):
            for n in ("q_norm", "k_norm"):
                sd[n + ".bias"] = torch.randn(*sd[n + ".weight"].shape) * 0.3
    if sinks:
        sd["sinks"] = torch.randn(H)
    x = torch.randn(B, S, C) * x_scale
    keep = keep_mask(B, S, left)
    pos = positions_for(keep, offset)
    if position_rows:
        pos = position_rows(keep, pos)
    rope = None
    cfg = {"attention": "causal", "hidden_size": C, "num_heads": H, "num_kv_heads": Hkv,
           "head_size": D, "layout": "proj", "weights_prefix": "model.layers.3.self_attn.",
           "qkv_bias": bias, "out_bias": o_bias, "attention_mask": "attention_mask.npy",
           "positions": "positions.npy"}
    if rope_cfg is not None:
        rope = Rope(rope_cfg.get("theta", 10000.0), rope_cfg.get("rotary_dim", D),
                    rope_cfg.get("scaling"), rope_cfg.get("max_position_embeddings"),
                    "interleaved" if rope_cfg.get("style") == "interleaved" else "half",
                    rope_cfg.get("precision", "float64"),
                    tuple(rope_cfg["mrope_section"]) if "mrope_section" in rope_cfg else None,
                    rope_cfg.get("mrope_interleaved", False))
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
    if clip_qkv is not None:
        cfg["clip_qkv"] = clip_qkv
    extra = {"attention_mask.npy": keep.numpy(), "positions.npy": pos.numpy()}
    if not positions:  # the layer reads none: 0..S-1 (Llama 4's cache_position)
        del cfg["positions"], extra["positions.npy"]
    a = Layer(C, H, Hkv, D, scale=scale, window=window, softcap=softcap, rope=rope,
              qk_norm=norm, v_norm=v_norm, k_eq_v=k_eq_v, sinks=sinks, gate=gate, chunk=chunk,
              temperature=temperature, clip_qkv=clip_qkv)
    hooks = {} if save else None  # save: the intermediates of --save too
    with torch.no_grad():
        y, p = reference.attention(a, sd, x, keep, pos, hooks=hooks)
        for change in guards:
            change = change(a) if callable(change) else change
            moved = (reference.attention(a.replace(**change), sd, x, keep, pos)[0] - y).abs().max()
            assert moved > 1e-3, f"{name}: {change} moves the context by only {moved:.2e}"
    w = prefixed(sd, "model.layers.3.self_attn.")
    # neighbours under the same block prefix, as a whole-model file has them
    w["model.layers.3.input_layernorm.weight"] = torch.ones(C)
    w["model.layers.3.mlp.up_proj.weight"] = torch.randn(2 * C, C)
    save_case(out, name, cfg, w, x, y, p, extra, hooks)


def mla(out, name, C, H, q_lora, kv_lora, nope, rope_dim, v, form, rope_cfg, scale, *,
        bias=False, left=True, offset=0, B=2, S=7, seed=0):
    """DeepSeek's multi-head latent attention (reference.mla_attention) at model.layers.1.
    self_attn., its modules' parameters drawn in DeepseekV3Attention's order; the q_a / kv_a
    norms not all ones (1 + 0.3 randn), so a lost norm weight shows; scale: the family's
    softmax scale (not in the config: attn-run derives it)."""
    torch.manual_seed(seed)
    sd = {}
    qk = nope + rope_dim
    if q_lora is None:
        linear_params(sd, "q_proj", C, H * qk, False)
    else:
        linear_params(sd, "q_a_proj", C, q_lora, bias)
        sd["q_a_layernorm.weight"] = torch.ones(q_lora)
        linear_params(sd, "q_b_proj", q_lora, H * qk, False)
    linear_params(sd, "kv_a_proj_with_mqa", C, kv_lora + rope_dim, bias)
    sd["kv_a_layernorm.weight"] = torch.ones(kv_lora)
    linear_params(sd, "kv_b_proj", kv_lora, H * (nope + v), False)
    linear_params(sd, "o_proj", H * v, C, bias)
    for n in ("q_a_layernorm.weight", "kv_a_layernorm.weight"):
        if n in sd:
            sd[n] = 1.0 + 0.3 * torch.randn(sd[n].shape)
    x = torch.randn(B, S, C)
    keep = keep_mask(B, S, left)
    pos = positions_for(keep, offset)
    scaling = rope_cfg.get("scaling")
    a = Layer(C, H, H, max(qk, v), layout="mla", scale=scale,
              rope=Rope(rope_cfg.get("theta", 10000.0), rope_dim, scaling,
                        rope_cfg.get("max_position_embeddings")),
              mla=Mla(q_lora, kv_lora, nope, rope_dim, v, form))
    with torch.no_grad():
        y, p = reference.attention(a, sd, x, keep, pos)
    cfg = {"attention": "causal", "hidden_size": C, "num_heads": H,
           "mla": {"q_lora_rank": q_lora, "kv_lora_rank": kv_lora, "qk_nope_head_dim": nope,
                   "qk_rope_head_dim": rope_dim, "v_head_dim": v},
           "rope": dict(rope_cfg, style="half" if form == "v3_half" else "interleaved"),
           "weights_prefix": "model.layers.1.self_attn.", "qkv_bias": bias, "out_bias": bias,
           "attention_mask": "attention_mask.npy", "positions": "positions.npy"}
    w = prefixed(sd, "model.layers.1.self_attn.")
    w["model.layers.1.input_layernorm.weight"] = torch.ones(C)
    w["model.layers.1.mlp.gate_proj.weight"] = torch.randn(2 * C, C)
    save_case(out, name, cfg, w, x, y, p,
              {"attention_mask.npy": keep.numpy(), "positions.npy": pos.numpy()})


def t5(out, name, *, causal, buckets, max_distance, B, S, layer, seed):
    """One T5 self-attention layer past block 0 (modeling_t5.T5Attention: q, k, v, o without
    bias, inner dim H*D = 18 != d_model, no 1/sqrt(D) scale): the table is block 0's
    (relative_bias.table), the bucket of (key - query) bidirectional in the encoder."""
    torch.manual_seed(seed)
    C, H, D = 24, 3, 6
    stack = "decoder" if causal else "encoder"
    first, sd = {}, {}  # block 0's attention (its table) first, then the layer's
    for which in (first, sd):
        for n, i, o in (("q", C, H * D), ("k", C, H * D), ("v", C, H * D), ("o", H * D, C)):
            linear_params(which, n, i, o, False)
        if which is first:
            which["relative_attention_bias.weight"] = nn.Embedding(buckets, H).weight.detach()
    x = torch.randn(B, S, C)
    keep = keep_mask(B, S, False) if not causal else torch.ones(B, S, dtype=torch.int64)
    table = stack + ".block.0.layer.0.SelfAttention.relative_attention_bias.weight"
    a = Layer(C, H, H, D, names=("q", "k", "v", "o"), scale=1.0, causal=causal,
              relative_bias={"table": "relative_attention_bias.weight", "buckets": buckets,
                             "max_distance": max_distance, "bidirectional": not causal})
    with torch.no_grad():
        y, p = reference.attention(
            a, dict(sd, **{"relative_attention_bias.weight": first[
                "relative_attention_bias.weight"]}), x, keep)
    prefix = "%s.block.%d.layer.0.SelfAttention." % (stack, layer)
    w = prefixed(sd, prefix)
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
    save_case(out, name, cfg, w, x, y, p, extra)


def per_head_qkv(out, name, cfg, C, H, *, B, S, left, seed, prefix, rope_dim=None, alibi=None,
                 fused=False):
    """GPT-NeoX's query_key_value viewed (H, 3, D) and dense (modeling_gpt_neox), with partial
    rotary (rope_dim) or ALiBi slopes (BLOOM's, or MPT's re-packed into its fused Wqkv rows
    q|k|v when `fused`); scores divided by sqrt(D) (Layer.scale_divisor)."""
    torch.manual_seed(seed)
    D = C // H
    sd = {}
    linear_params(sd, "query_key_value", C, 3 * C)
    linear_params(sd, "dense", C, C)
    x = torch.randn(B, S, C)
    keep = keep_mask(B, S, left)
    pos = positions_for(keep)
    a = Layer(C, H, H, D, layout="per_head", names=("query_key_value", "dense"),
              scale_divisor=math.sqrt(D), alibi=alibi,
              rope=Rope(10000.0, rope_dim) if rope_dim else None)
    with torch.no_grad():
        y, p = reference.attention(a, sd, x, keep, pos)
    if not fused:
        save_case(out, name, cfg, prefixed(sd, prefix), x, y, p,
                  {"attention_mask.npy": keep.numpy(), "positions.npy": pos.numpy()})
        return
    W = sd["query_key_value.weight"].view(H, 3, D, C)
    bq = sd["query_key_value.bias"].view(H, 3, D)
    w = {prefix + "Wqkv.weight": torch.cat([W[:, i].reshape(C, C) for i in range(3)]),
         prefix + "Wqkv.bias": torch.cat([bq[:, i].reshape(C) for i in range(3)]),
         prefix + "out_proj.weight": sd["dense.weight"], prefix + "out_proj.bias": sd["dense.bias"]}
    save_case(out, name, cfg, w, x[0], y[0], p[0])


def torch_mha(out, name, average):
    """torch.nn.MultiheadAttention itself (the module is the reference): kdim/vdim, key padding,
    bool or float attn_mask, add_bias_kv, add_zero_attn, batch_first=False."""
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
    am = float_mask if average else bool_mask[:, :T]
    with torch.no_grad():
        y, p = mha(q, kx, vx, key_padding_mask=kpm, attn_mask=am, need_weights=True,
                   average_attn_weights=average)
    cfg = {"attention": "multi", "hidden_size": E, "num_heads": H, "layout": "torch_mha",
           "kdim": 12, "vdim": 10, "add_bias_kv": True, "add_zero_attn": True,
           "batch_first": False, "key_input": "key.npy", "value_input": "value.npy",
           "padding_mask": "padding_mask.npy", "attn_mask": "attn_mask.npy",
           "output": {"average_heads": average}}
    save_case(out, name, cfg, mha.state_dict(), q, y, p,
              {"key.npy": kx.numpy(), "value.npy": vx.numpy(),
               "padding_mask.npy": kpm.numpy(), "attn_mask.npy": am.numpy()})


DEBERTA_RENAMES = {"self.query_proj.": "q_proj.", "self.key_proj.": "k_proj.",
                   "self.value_proj.": "v_proj.", "output.dense.": "o_proj.",
                   "self.pos_key_proj.": "pos_key_proj.", "self.pos_query_proj.": "pos_query_proj."}


def deberta(out, name, C, H, *, terms, buckets, max_relative, share, norm=True, rows=None, B=2,
            S=9, left=True, seed=0, guards=()):
    """DeBERTa-v2/v3's disentangled self-attention (reference.deberta_attention) at
    deberta.encoder.layer.1.attention., its modules drawn in DisentangledSelfAttention's order
    (query, key, value, pos_key (c2p), pos_query (p2c) when not shared), then output.dense; the
    model's relative embeddings (rows: 2 span unless given) and their LayerNorm under
    deberta.encoder. The config in the contract's keys: layout proj with DeBERTa's names renamed,
    disentangled, mask_padded_queries. guards: terms whose loss must move the context by
    more than 1e-3, and "norm" (the table's LayerNorm)."""
    torch.manual_seed(seed)
    D = C // H
    d = Disentangled(tuple(terms), buckets, max_relative, share,
                     norm="deberta.encoder.LayerNorm" if norm else None)
    sd = {}
    for n in ("query_proj", "key_proj", "value_proj"):
        linear_params(sd, "self." + n, C, H * D)
    if not share and "c2p" in terms:
        linear_params(sd, "self.pos_key_proj", C, H * D)
    if not share and "p2c" in terms:
        linear_params(sd, "self.pos_query_proj", C, H * D)
    linear_params(sd, "output.dense", H * D, C)
    sd["output.LayerNorm.weight"], sd["output.LayerNorm.bias"] = torch.ones(C), torch.zeros(C)
    model = {d.table: torch.randn(rows or 2 * d.span(), C)}
    if norm:
        model["deberta.encoder.LayerNorm.weight"] = 1.0 + 0.3 * torch.randn(C)
        model["deberta.encoder.LayerNorm.bias"] = 0.3 * torch.randn(C)
    x = torch.randn(B, S, C)
    keep = keep_mask(B, S, left)
    a = Layer(C, H, H, D, causal=False, extra={"disentangled": d})
    with torch.no_grad():
        y, p = reference.attention(a, dict(sd, **model), x, keep)
        for g in guards:
            if g == "norm":
                other = Layer(C, H, H, D, causal=False,
                              extra={"disentangled": dataclasses.replace(d, norm=None)})
                moved = (reference.attention(other, dict(sd, **model), x, keep)[0] - y).abs().max()
            else:
                moved = (reference.deberta_attention(a, dict(sd, **model), x, keep, drop=(g,))[0]
                         - y).abs().max()
            assert moved > 1e-3, f"{name}: dropping {g} moves the context by only {moved:.2e}"
    prefix = "deberta.encoder.layer.1.attention."
    cfg = {"attention": "multi", "hidden_size": C, "num_heads": H, "layout": "proj",
           "weights_prefix": prefix, "weights_rename": DEBERTA_RENAMES,
           "disentangled": {"pos_att_type": "|".join(terms), "position_buckets": buckets,
                            "max_relative_positions": max_relative, "share_att_key": share,
                            "table": d.table},
           "mask_padded_queries": True, "attention_mask": "attention_mask.npy"}
    if norm:
        cfg["disentangled"].update(norm_weight="deberta.encoder.LayerNorm.weight",
                                   norm_bias="deberta.encoder.LayerNorm.bias", eps=d.eps)
    w = dict(prefixed(sd, prefix), **model)
    w["deberta.encoder.layer.1.intermediate.dense.weight"] = torch.randn(2 * C, C)
    save_case(out, name, cfg, w, x, y, p, {"attention_mask.npy": keep.numpy()})


VARIANT_WRITERS = {"decoder": decoder, "mla": mla, "t5": t5, "per_head_qkv": per_head_qkv,
                   "torch_mha": torch_mha, "deberta": deberta}


def write_variant(out, case):
    args = {k: v for k, v in case.items() if k not in ("name", "writer", "family")}
    VARIANT_WRITERS[case["writer"]](out, case["name"], **args)


# ---- families/ ----------------------------------------------------------------------------------

ST_DTYPE = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def plain_linear(out_f, in_f, bias=True):
    """A Linear's weight and bias from torch's global generator in float64 (the default dtype
    the families/ cases were drawn with)."""
    w = torch.randn(out_f, in_f, dtype=torch.float64) / in_f ** 0.5
    return (w, torch.randn(out_f, dtype=torch.float64) * 0.1) if bias else (w, None)


def add(sd, name, wb):
    sd[name + ".weight"] = wb[0]
    if wb[1] is not None:
        sd[name + ".bias"] = wb[1]


def write_family_case(out, case, own, nb, layer):
    """families/<name>/ of one case: torch.manual_seed(case["seed"]) drew own (the layer's
    tensors) and nb (its block's neighbours) already; stores them beside another layer (half the
    values), x (2, 5, C) after them, and the layer's expected output."""
    d = os.path.join(out, case["name"])
    os.makedirs(os.path.join(d, "expected"))
    C, B, S = case["C"], 2, 5
    st_dtype = ST_DTYPE[case["dtype"]]
    # Round the layer's parameters to the stored dtype; the expectation uses those values.
    own = {k: v.to(st_dtype) for k, v in own.items()}
    stored = {}
    other = case["prefix"].replace(".1.", ".0.") if ".1." in case["prefix"] else \
        case["prefix"].replace(".0.", ".1.")
    for k, v in own.items():  # another layer first, as whole-model files hold them
        stored[other + k] = (v.double() * 0.5).to(st_dtype)
    for k, v in nb.items():
        stored[case["block"] + k if case["block"] != case["prefix"] else case["prefix"] + k] = \
            v.to(st_dtype)
    for k, v in own.items():
        stored[case["prefix"] + k] = v
    if case.get("shards"):
        keys = list(stored)
        half = len(keys) // 2
        files = {"model-00001-of-00002.safetensors": keys[:half],
                 "model-00002-of-00002.safetensors": keys[half:]}
        wmap = {}
        for fname, ks in files.items():
            save_safetensors(os.path.join(d, fname), {k: stored[k] for k in ks}, {"format": "pt"})
            wmap.update({k: fname for k in ks})
        with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": 0}, "weight_map": wmap}, f, indent=1)
        weights = "model.safetensors.index.json"
    else:
        save_safetensors(os.path.join(d, "model.safetensors"), stored, {"format": "pt"})
        weights = "model.safetensors"
    x = torch.randn(B, S, C, dtype=torch.float64).to(torch.float32)
    keep = None
    if case.get("padded"):
        pad = torch.zeros(B, S, dtype=torch.bool)
        pad[1, 3:] = True  # right padding of the second sequence
        np.save(os.path.join(d, "mask.npy"), pad.numpy())
        keep = ~pad
    p = {k: v.double() for k, v in own.items()}
    with torch.no_grad():
        y, w = reference.attention(layer, p, x.double(), keep, torch.arange(S).expand(B, S))
    unbatched = case.get("unbatched", False)
    np.save(os.path.join(d, "input.npy"), (x[0] if unbatched else x).numpy())
    y, w = y.float(), w.float()
    np.save(os.path.join(d, "expected", "context.npy"), (y[0] if unbatched else y).numpy())
    np.save(os.path.join(d, "expected", "attention.npy"), (w[0] if unbatched else w).numpy())
    cfg = {"attention": "causal" if case["causal"] else "multi", "hidden_size": C,
           "num_heads": case["H"], "head_size": case["D"], "weights": weights,
           "weights_prefix": case["prefix"], "input": "input.npy"}
    if case["Hkv"] != case["H"]:
        cfg["num_kv_heads"] = case["Hkv"]
    if "layout" in case:
        cfg["layout"] = case["layout"]
    if keep is not None:
        cfg["padding_mask"] = "mask.npy"
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
        f.write("\n")


def family_case(out, case, draw, layer):
    """families/<name>/: torch.manual_seed(case["seed"]), then draw() gives (the layer's own
    tensors, its block's neighbours)."""
    torch.manual_seed(case["seed"])
    own, nb = draw()
    write_family_case(out, case, own, nb, layer)


def separate_case(out, case, biases):
    """q/k/v_proj and the output (case["out"], default o_proj) with the given biases (q, k, v,
    o), the MLP's gate_proj and down_proj beside them (LlamaAttention, Qwen2Attention,
    OPTAttention, WhisperAttention: OPT and Whisper scale q before q k^T, the same numbers)."""
    C, H, Hkv, D = case["C"], case["H"], case["Hkv"], case["D"]
    out_name = case.get("out", "o_proj")

    def draw():
        own = {}
        add(own, "q_proj", plain_linear(H * D, C, biases[0]))
        add(own, "k_proj", plain_linear(Hkv * D, C, biases[1]))
        add(own, "v_proj", plain_linear(Hkv * D, C, biases[2]))
        add(own, out_name, plain_linear(C, H * D, biases[3]))
        return own, {"mlp.gate_proj.weight": torch.randn(2 * C, C, dtype=torch.float64),
                     "mlp.down_proj.weight": torch.randn(C, 2 * C, dtype=torch.float64)}

    family_case(out, case, draw, Layer(C, H, Hkv, D, causal=case["causal"],
                                       names=("q_proj", "k_proj", "v_proj", out_name)))


def qkv_dense_case(out, case):
    """GPTNeoXAttention / FalconAttention without positions: query_key_value (per head [q, k, v],
    or Falcon's KV groups) and dense, the rotary_emb.inv_freq buffer beside them."""
    C, H, Hkv, D = case["C"], case["H"], case["Hkv"], case["D"]
    bias = case.get("bias", True)

    def draw():
        own = {}
        add(own, "query_key_value", plain_linear(H * D + 2 * Hkv * D, C, bias))
        add(own, "dense", plain_linear(C, H * D, bias))
        return own, {"rotary_emb.inv_freq": torch.randn(D // 2, dtype=torch.float64)}

    layout = "per_head" if case["layout"] == "neox" else "kv_groups"
    family_case(out, case, draw, Layer(C, H, Hkv, D, layout=layout,
                                       names=("query_key_value", "dense")))


def fresh(out):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)


__all__ = ["bloom_slopes", "mpt_slopes"]

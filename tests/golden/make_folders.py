#!/usr/bin/python3
"""Hugging Face model folders for every model_type CONTRACT.md v2 lists (issue 11), with torch's
expected output for 2-3 of each model's layers.

Each folder tests/golden/folders/<name>/ holds
  model/       what the hub would publish: config.json in the family's own spelling (per-layer
               patterns included) and the weights of a whole (tiny) model under their real
               state_dict names, neighbours too (norms, MLP, embeddings, registered buffers), in
               model.safetensors, sharded model-0000k-of-0000n.safetensors + index, or
               pytorch_model.bin (torch.save), in float32 or bfloat16;
  layer<N>/    one run of layer N: case.json (an attn-run config: "model": "../model", "layer",
               "input" and, when padded, attention_mask/positions), input.npy (the layer's input
               hidden states, float32), and torch's expected/context.npy and expected/attention.npy;
               for the spec's "residual_norm" layers also expected/residual_norm.npy, the
               LayerNorm(context + input) that BertAttention returns (BertSelfOutput), what
               attn-run's --with-residual-norm computes (issue 30).

The expected values are each family's eager attention written in torch from its published modeling
code (transformers' modeling_<type>.py; MPT's attn_config as Mosaic's own code reads it), computed
in float64 from the stored (rounded) weights, with CONTRACT.md's two changes: RoPE angles in
float64 with cos/sin rounded to float32, and a query row with no allowed key all zeros. The
family's config.json is read here by `hf_settings` the way transformers' configuration and
modeling files read it (class defaults for missing keys), independently of attn-run's own mapping
(lib/src/family/model_folder.cpp), which is what the tests check.

Deterministic (fixed seeds). Usage: /usr/bin/python3 tests/golden/make_folders.py
"""
import json
import math
import os
import shutil
import sys
import zlib
from collections import OrderedDict

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from make_positions import bloom_slopes, mpt_slopes, rope_params  # noqa: E402
from make_variants import allowed_keys, repeat_kv, rotate_half, softmax_rows  # noqa: E402
from safetensors_write import save_safetensors  # noqa: E402

OUT = os.path.join(HERE, "folders")


# ---- config.json as transformers reads it ---------------------------------------------------

def get(cfg, key, default=None):
    """cfg[key], or the config class's default when config.json leaves it out (null stays None)."""
    return cfg[key] if key in cfg else default


# Defaults of the configuration classes for the keys the attention reads (configuration_<type>.py),
# where they matter: a config.json that leaves a key out gets these.
CLASS_DEFAULTS = {
    "llama": dict(rope_theta=10000.0, attention_bias=False),
    "mistral": dict(rope_theta=10000.0, sliding_window=4096),
    "mixtral": dict(rope_theta=1e6, sliding_window=None),
    "qwen2": dict(rope_theta=10000.0, use_sliding_window=False, sliding_window=4096,
                  max_window_layers=28),
    "qwen3": dict(rope_theta=10000.0, use_sliding_window=False, sliding_window=4096,
                  max_window_layers=28, attention_bias=False, rms_norm_eps=1e-6, head_dim=128),
    "gemma": dict(rope_theta=10000.0, head_dim=256, attention_bias=False),
    "gemma2": dict(rope_theta=10000.0, head_dim=256, query_pre_attn_scalar=256,
                   attn_logit_softcapping=50.0, sliding_window=4096, attention_bias=False),
    "gemma3_text": dict(rope_theta=1e6, rope_local_base_freq=10000.0, head_dim=256,
                        num_attention_heads=8, num_key_value_heads=4, query_pre_attn_scalar=256,
                        attn_logit_softcapping=None, sliding_window=4096, sliding_window_pattern=6,
                        rms_norm_eps=1e-6, attention_bias=False),
    "phi3": dict(rope_theta=10000.0, partial_rotary_factor=1.0, sliding_window=None),
    "gpt_neox": dict(rotary_pct=0.25, rotary_emb_base=10000, attention_bias=True),
    "falcon": dict(new_decoder_architecture=False, multi_query=True, alibi=False, bias=False,
                   rope_theta=10000.0),
    "olmo2": dict(rope_theta=10000.0, attention_bias=False, rms_norm_eps=1e-5),
    "gpt_oss": dict(rope_theta=150000.0, sliding_window=128, attention_bias=True, head_dim=64),
    "gpt2": dict(scale_attn_weights=True, scale_attn_by_inverse_layer_idx=False),
    "opt": dict(enable_bias=True),
}


def hf_settings(cfg, layer):
    """What layer `layer` of a model with this config.json computes, read as transformers'
    configuration_<type>.py and modeling_<type>.py read it. Returns a dict of the attention's
    settings (sizes, kind, prefix, positions, extras)."""
    if cfg["model_type"] == "gemma3" and "text_config" in cfg:  # Gemma3ForConditionalGeneration
        cfg = cfg["text_config"]
    mt = cfg["model_type"]
    cfg = dict(CLASS_DEFAULTS.get(mt, {}), **cfg)
    C = next(cfg[k] for k in ("hidden_size", "n_embd", "n_embed", "d_model") if k in cfg)
    H = next(cfg[k] for k in ("num_attention_heads", "n_head", "n_heads") if k in cfg)
    Hkv = get(cfg, "num_key_value_heads") or H
    D = get(cfg, "head_dim") or C // H
    s = dict(model_type=mt, C=C, H=H, Hkv=Hkv, D=D, scale=D ** -0.5, causal=True, rope=None,
             window=None, softcap=None, qk_norm=None, sinks=False, alibi=None)
    mpe = get(cfg, "max_position_embeddings")

    def rope(theta, fraction=1.0, scaling=None, params=None):
        # transformers v5: rope_parameters (flat, or per layer type) replaces theta and scaling
        if params is not None:
            theta = params.get("rope_theta", theta)
            scaling = None if params.get("rope_type", "default") == "default" else params
            fraction = params.get("partial_rotary_factor", fraction)
        if scaling is not None and scaling.get("rope_type", scaling.get("type")) == "default":
            scaling = None
        if scaling is not None and "original_max_position_embeddings" in cfg:  # Phi-3 longrope
            scaling = dict(scaling, original_max_position_embeddings=cfg[
                "original_max_position_embeddings"])
        return dict(theta=float(theta), R=int(D * fraction), scaling=scaling, mpe=mpe)

    def v5_params(layer_type="full_attention"):
        p = get(cfg, "rope_parameters")
        if p is not None and "rope_theta" not in p and layer_type in p:
            p = p[layer_type]
        return p

    def layer_type(default_sliding):
        types = get(cfg, "layer_types")
        if types:
            return types[layer] == "sliding_attention"
        return default_sliding

    def decoder(bias_key="attention_bias"):
        b = bool(get(cfg, bias_key, False))
        s.update(layout="proj", qkv_bias=b, o_bias=b, prefix=f"model.layers.{layer}.self_attn.")

    if mt in ("llama", "mistral", "mixtral", "olmo2"):
        decoder()
        s["rope"] = rope(cfg["rope_theta"], scaling=get(cfg, "rope_scaling"), params=v5_params())
        if mt in ("mistral", "mixtral"):  # every layer slides (MistralAttention's sliding_window)
            s["window"] = get(cfg, "sliding_window")
        if mt == "olmo2":  # Olmo2RMSNorm over all heads' q and k, weight * x
            s["qk_norm"] = (cfg["rms_norm_eps"], "all", 0)
    elif mt in ("qwen2", "qwen3"):
        decoder()
        if mt == "qwen2":  # Qwen2Attention: q/k/v with bias, o_proj without
            s.update(qkv_bias=True, o_bias=False)
        else:
            s["qk_norm"] = (cfg["rms_norm_eps"], "head", 0)
        s["rope"] = rope(cfg["rope_theta"], scaling=get(cfg, "rope_scaling"), params=v5_params())
        sliding = bool(cfg["use_sliding_window"]) and layer >= cfg["max_window_layers"]
        if layer_type(sliding):
            s["window"] = cfg["sliding_window"]
    elif mt == "gemma":
        decoder()
        s["rope"] = rope(cfg["rope_theta"], scaling=get(cfg, "rope_scaling"), params=v5_params())
    elif mt == "gemma2":  # sliding on even layers, softcap, query_pre_attn_scalar
        decoder()
        s["rope"] = rope(cfg["rope_theta"], scaling=get(cfg, "rope_scaling"), params=v5_params())
        s["scale"] = cfg["query_pre_attn_scalar"] ** -0.5
        s["softcap"] = cfg["attn_logit_softcapping"]
        if layer_type(layer % 2 == 0):
            s["window"] = cfg["sliding_window"]
    elif mt == "gemma3_text":  # 5 local : 1 global, local rope base, qk_norm (1 + w)
        decoder()
        s["scale"] = cfg["query_pre_attn_scalar"] ** -0.5
        s["softcap"] = cfg["attn_logit_softcapping"]
        s["qk_norm"] = (cfg["rms_norm_eps"], "head", 1)
        sliding = layer_type(bool((layer + 1) % cfg["sliding_window_pattern"]))
        if sliding:
            s["window"] = cfg["sliding_window"]
            p = v5_params("sliding_attention")
            s["rope"] = rope(cfg["rope_local_base_freq"] if p is None else p["rope_theta"])
        else:
            s["rope"] = rope(cfg["rope_theta"], scaling=get(cfg, "rope_scaling"),
                             params=v5_params("full_attention"))
    elif mt == "phi3":  # fused qkv_proj, partial rotary, longrope, a window on every layer
        s.update(layout="phi3", qkv_bias=False, o_bias=False,
                 prefix=f"model.layers.{layer}.self_attn.")
        scaling = get(cfg, "rope_scaling")
        if scaling and scaling.get("type") in ("su", "yarn"):  # Phi3Config's early names
            scaling = dict(scaling, type="longrope")
        s["rope"] = rope(cfg["rope_theta"], cfg["partial_rotary_factor"], scaling, v5_params())
        s["window"] = cfg["sliding_window"]
    elif mt == "gpt_oss":  # sinks, alternating sliding layers, yarn
        decoder()
        s["sinks"] = True
        s["rope"] = rope(cfg["rope_theta"], scaling=get(cfg, "rope_scaling"), params=v5_params())
        if layer_type(layer % 2 == 0):
            s["window"] = cfg["sliding_window"]
    elif mt == "opt":
        b = bool(cfg["enable_bias"])
        s.update(layout="proj", qkv_bias=b, o_bias=b, out="out_proj",
                 prefix=f"model.decoder.layers.{layer}.self_attn.")
    elif mt == "gpt_neox":  # query_key_value per head [q, k, v], partial rotary
        b = bool(cfg["attention_bias"])
        s.update(layout="neox", qkv_bias=b, o_bias=b, prefix=f"gpt_neox.layers.{layer}.attention.")
        s["rope"] = rope(cfg.get("rope_theta", cfg["rotary_emb_base"]), cfg["rotary_pct"],
                         get(cfg, "rope_scaling"))
    elif mt == "falcon":
        new, mq = cfg["new_decoder_architecture"], cfg["multi_query"]
        kv = get(cfg, "num_kv_heads", get(cfg, "n_head_kv"))  # RWConfig's n_head_kv
        if new:
            s.update(layout="falcon", Hkv=kv or H)
        elif mq:
            s.update(layout="falcon", Hkv=1)
        else:
            s.update(layout="neox", Hkv=H)
        b = bool(cfg["bias"])
        s.update(qkv_bias=b, o_bias=b, prefix=f"transformer.h.{layer}.self_attention.")
        if cfg["alibi"]:
            s["alibi"] = bloom_slopes(H)  # build_alibi_tensor, added after the scale (SDPA)
        else:
            s["rope"] = rope(cfg["rope_theta"], scaling=get(cfg, "rope_scaling"))
    elif mt == "bloom":
        s.update(layout="neox", qkv_bias=True, o_bias=True, alibi=bloom_slopes(H),
                 prefix=f"h.{layer}.self_attention.")
    elif mt == "mpt":  # Wqkv q|k|v, ALiBi from attn_config (MptAttentionConfig: alibi=True)
        a = dict(dict(alibi=True, alibi_bias_max=8, softmax_scale=None), **get(cfg, "attn_config", {}))
        b = not get(cfg, "no_bias", True)
        s.update(layout="mpt", qkv_bias=b, o_bias=b, prefix=f"transformer.blocks.{layer}.attn.")
        if a["softmax_scale"] is not None:
            s["scale"] = a["softmax_scale"]
        if a["alibi"]:
            s["alibi"] = mpt_slopes(H, a["alibi_bias_max"])
    elif mt == "gpt2":  # Conv1D c_attn / c_proj
        s.update(layout="gpt2", qkv_bias=True, o_bias=True, prefix=f"h.{layer}.attn.")
        s["scale"] = D ** -0.5 if cfg["scale_attn_weights"] else 1.0
        if cfg["scale_attn_by_inverse_layer_idx"]:
            s["scale"] /= layer + 1
    elif mt in ("bert", "roberta"):
        s.update(layout="bert", qkv_bias=True, o_bias=True, causal=bool(get(cfg, "is_decoder")),
                 prefix=f"{mt}.encoder.layer.{layer}.attention.")
    else:
        raise ValueError(mt)
    return s


# ---- one layer's weights under the family's names ------------------------------------------

def lin(g, out_f, in_f, bias=True):
    w = torch.randn(out_f, in_f, generator=g, dtype=torch.float64) / math.sqrt(in_f)
    b = torch.randn(out_f, generator=g, dtype=torch.float64) * 0.3 if bias else None
    return w, b


def put(sd, name, wb):
    sd[name + ".weight"] = wb[0]
    if wb[1] is not None:
        sd[name + ".bias"] = wb[1]


def layer_norm_params(name, C):
    """A LayerNorm's weight and bias, drawn from a generator of their own (seeded by the norm's
    name), so adding or changing them leaves every other tensor's values as they were."""
    g = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    w = 1.0 + 0.3 * torch.randn(C, generator=g, dtype=torch.float64)
    return w, 0.3 * torch.randn(C, generator=g, dtype=torch.float64)


def residual_norm(ctx, x, stored, module, norm, eps):
    """LayerNorm(context + input) as modeling_bert.BertSelfOutput (LayerNorm(dropout(dense(h)) +
    input_tensor), dropout off): the norm `norm` of the layer's module `module` ("bert.encoder.
    layer.0."), from the stored weights, in float64."""
    w, b = stored[module + norm + "weight"], stored.get(module + norm + "bias")
    return torch.nn.functional.layer_norm(ctx + x, (x.shape[-1],), w, b, eps)


def attention_weights(s, g):
    """The attention's own tensors, names relative to s["prefix"]."""
    C, H, Hkv, D = s["C"], s["H"], s["Hkv"], s["D"]
    qb, ob = s["qkv_bias"], s["o_bias"]
    sd = OrderedDict()
    lay = s["layout"]
    if lay == "proj":
        put(sd, "q_proj", lin(g, H * D, C, qb))
        put(sd, "k_proj", lin(g, Hkv * D, C, qb))
        put(sd, "v_proj", lin(g, Hkv * D, C, qb))
        put(sd, s.get("out", "o_proj"), lin(g, C, H * D, ob))
        if s["qk_norm"]:
            n = D if s["qk_norm"][1] == "head" else None
            sd["q_norm.weight"] = 1.0 + 0.3 * torch.randn(n or H * D, generator=g, dtype=torch.float64)
            sd["k_norm.weight"] = 1.0 + 0.3 * torch.randn(n or Hkv * D, generator=g, dtype=torch.float64)
        if s["sinks"]:
            sd["sinks"] = torch.randn(H, generator=g, dtype=torch.float64)
    elif lay == "phi3":
        put(sd, "qkv_proj", lin(g, (H + 2 * Hkv) * D, C, False))
        put(sd, "o_proj", lin(g, C, H * D, False))
    elif lay in ("neox", "falcon"):
        put(sd, "query_key_value", lin(g, (H + 2 * Hkv) * D, C, qb))
        put(sd, "dense", lin(g, C, H * D, ob))
    elif lay == "mpt":
        put(sd, "Wqkv", lin(g, (H + 2 * Hkv) * D, C, qb))
        put(sd, "out_proj", lin(g, C, H * D, ob))
    elif lay == "gpt2":  # Conv1D: (in, out)
        w, b = lin(g, 3 * C, C)
        sd["c_attn.weight"], sd["c_attn.bias"] = w.t().contiguous(), b
        w, b = lin(g, C, C)
        sd["c_proj.weight"], sd["c_proj.bias"] = w.t().contiguous(), b
    elif lay == "bert":
        for n in ("query", "key", "value"):
            put(sd, "self." + n, lin(g, H * D, C))
        put(sd, "output.dense", lin(g, C, H * D))
        # BertSelfOutput's LayerNorm (--with-residual-norm)
        w, b = layer_norm_params(s["prefix"] + "output.LayerNorm.", C)
        sd["output.LayerNorm.weight"], sd["output.LayerNorm.bias"] = w, b
    return sd


def block_neighbours(mt, layer, C, g, small=4):
    """A few keys around the attention in the same block, as a whole-model file has them."""
    r = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64) * 0.1  # noqa: E731
    one = torch.ones(C, dtype=torch.float64)
    if mt in ("gpt2",):
        p = f"h.{layer}."
        return {p + "ln_1.weight": one, p + "ln_1.bias": one * 0, p + "mlp.c_fc.weight": r(C, small),
                p + "attn.bias": torch.tril(torch.ones(1, 1, 16, 16)).bool(),  # the causal buffer
                p + "attn.masked_bias": torch.tensor(-1e4)}
    if mt in ("bert", "roberta"):
        p = f"{mt}.encoder.layer.{layer}."
        return {p + "intermediate.dense.weight": r(small, C), p + "output.dense.weight": r(C, small)}
    if mt == "gpt_neox":
        p = f"gpt_neox.layers.{layer}."
        return {p + "input_layernorm.weight": one, p + "attention.rotary_emb.inv_freq": r(2),
                p + "mlp.dense_h_to_4h.weight": r(small, C)}
    if mt in ("falcon", "bloom"):
        p = (f"transformer.h.{layer}." if mt == "falcon" else f"h.{layer}.")
        return {p + "input_layernorm.weight": one, p + "mlp.dense_h_to_4h.weight": r(small, C)}
    if mt == "mpt":
        p = f"transformer.blocks.{layer}."
        return {p + "norm_1.weight": one, p + "ffn.up_proj.weight": r(small, C)}
    if mt == "opt":  # self_attn_layer_norm: after the attention when do_layer_norm_before is false
        p = f"model.decoder.layers.{layer}."
        w, b = layer_norm_params(p + "self_attn_layer_norm.", C)
        return {p + "self_attn_layer_norm.weight": w, p + "self_attn_layer_norm.bias": b,
                p + "fc1.weight": r(small, C)}
    p = f"model.layers.{layer}."
    n = {p + "input_layernorm.weight": one}
    if mt == "mixtral":
        n[p + "block_sparse_moe.gate.weight"] = r(2, C)
        n[p + "block_sparse_moe.experts.0.w1.weight"] = r(small, C)
    elif mt == "gpt_oss":
        n[p + "mlp.router.weight"] = r(2, C)
        n[p + "mlp.experts.gate_up_proj"] = r(2, C, small)
    else:
        n[p + "mlp.up_proj.weight"] = r(small, C)
    return n


def model_outside(mt, C, g, vocab=12):
    r = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64) * 0.1  # noqa: E731
    return {
        "gpt2": {"wte.weight": r(vocab, C), "ln_f.weight": torch.ones(C, dtype=torch.float64)},
        "bert": {"bert.embeddings.word_embeddings.weight": r(vocab, C)},
        "roberta": {"roberta.embeddings.word_embeddings.weight": r(vocab, C)},
        "gpt_neox": {"gpt_neox.embed_in.weight": r(vocab, C), "embed_out.weight": r(vocab, C)},
        "falcon": {"transformer.word_embeddings.weight": r(vocab, C)},
        "bloom": {"word_embeddings.weight": r(vocab, C)},
        "mpt": {"transformer.wte.weight": r(vocab, C)},
        "opt": {"model.decoder.embed_tokens.weight": r(vocab, C)},
    }.get(mt, {"model.embed_tokens.weight": r(vocab, C),
               "model.norm.weight": torch.ones(C, dtype=torch.float64)})


# ---- the attention, as each family's modeling code computes it ------------------------------

def rms_norm(x, w, eps, offset):  # Qwen3RMSNorm / Olmo2RMSNorm (offset 0), Gemma3RMSNorm (1 + w)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (offset + w)


def cos_sin(pos, rope):
    """(B, S, R) cos and sin: angles in float64, rounded to float32 (CONTRACT.md "Positions")."""
    inv, att = rope_params(rope["theta"], rope["R"], rope["mpe"], rope["scaling"], int(pos.max()) + 1)
    freqs = pos.double()[..., None] * inv.double()[None, None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * att).float().double(), (emb.sin() * att).float().double()


def apply_rope(x, cos, sin, R):  # modeling_llama.apply_rotary_pos_emb; partial as GPT-NeoX
    rot, rest = x[..., :R], x[..., R:]
    return torch.cat((rot * cos[:, None] + rotate_half(rot) * sin[:, None], rest), dim=-1)


def linear(x, sd, name):
    y = x @ sd[name + ".weight"].t()
    return y + sd[name + ".bias"] if name + ".bias" in sd else y


def qkv_heads(s, sd, x):
    """q (B, H, S, D), k and v (B, Hkv, S, D) from the family's projections."""
    B, S, _ = x.shape
    H, Hkv, D = s["H"], s["Hkv"], s["D"]
    lay = s["layout"]

    def heads(t, n):
        return t.view(B, S, n, D).transpose(1, 2)

    if lay == "proj":
        q, k, v = linear(x, sd, "q_proj"), linear(x, sd, "k_proj"), linear(x, sd, "v_proj")
        if s["qk_norm"] and s["qk_norm"][1] == "all":  # Olmo2Attention: norm before the view
            eps = s["qk_norm"][0]
            q, k = rms_norm(q, sd["q_norm.weight"], eps, 0), rms_norm(k, sd["k_norm.weight"], eps, 0)
        q, k, v = heads(q, H), heads(k, Hkv), heads(v, Hkv)
        if s["qk_norm"] and s["qk_norm"][1] == "head":  # Qwen3 / Gemma 3: per head
            eps, off = s["qk_norm"][0], s["qk_norm"][2]
            q = rms_norm(q, sd["q_norm.weight"], eps, off)
            k = rms_norm(k, sd["k_norm.weight"], eps, off)
        return q, k, v
    if lay in ("phi3", "mpt"):  # q of all heads, then k, then v
        qkv = linear(x, sd, "qkv_proj" if lay == "phi3" else "Wqkv")
        q, k, v = qkv.split([H * D, Hkv * D, Hkv * D], dim=-1)
        return heads(q, H), heads(k, Hkv), heads(v, Hkv)
    if lay == "neox":  # GPT-NeoX / BLOOM / Falcon (old, not multi-query): (H, 3, D)
        qkv = linear(x, sd, "query_key_value").view(B, S, H, 3, D)
        return tuple(qkv[..., i, :].transpose(1, 2) for i in range(3))
    if lay == "falcon":  # FalconAttention._split_heads: (Hkv, H/Hkv + 2, D) per KV group
        qkv = linear(x, sd, "query_key_value").view(B, S, Hkv, H // Hkv + 2, D)
        q = qkv[:, :, :, :-2].reshape(B, S, H, D).transpose(1, 2)
        return q, qkv[:, :, :, -2].transpose(1, 2), qkv[:, :, :, -1].transpose(1, 2)
    if lay == "gpt2":  # Conv1D: x @ W + b
        y = x @ sd["c_attn.weight"] + sd["c_attn.bias"]
        q, k, v = y.split(s["C"], dim=-1)
        return heads(q, H), heads(k, H), heads(v, H)
    if lay == "bert":
        return tuple(heads(linear(x, sd, "self." + n), H) for n in ("query", "key", "value"))
    raise ValueError(lay)


def output_proj(s, sd, y):
    lay = s["layout"]
    if lay == "gpt2":
        return y @ sd["c_proj.weight"] + sd["c_proj.bias"]
    name = {"proj": s.get("out", "o_proj"), "phi3": "o_proj", "neox": "dense", "falcon": "dense",
            "mpt": "out_proj", "bert": "output.dense"}[lay]
    return linear(y, sd, name)


def layer_attention(s, sd, x, keep, pos):
    """context (B, S, C) and maps (B, H, S, S) of one layer; sd: names relative to the prefix."""
    B, S, _ = x.shape
    q, k, v = qkv_heads(s, sd, x)
    if s["rope"] is not None:
        cos, sin = cos_sin(pos, s["rope"])
        q, k = apply_rope(q, cos, sin, s["rope"]["R"]), apply_rope(k, cos, sin, s["rope"]["R"])
    k, v = repeat_kv(k, s["H"] // k.shape[1]), repeat_kv(v, s["H"] // v.shape[1])
    scores = (q @ k.transpose(2, 3)) * s["scale"]
    if s["softcap"]:  # Gemma 2: tanh(scores / c) * c
        scores = torch.tanh(scores / s["softcap"]) * s["softcap"]
    if s["alibi"] is not None:  # BLOOM baddbmm / MPT position_bias / Falcon SDPA: after the scale
        sl = torch.tensor(s["alibi"], dtype=torch.float64)
        p = pos.double()
        scores = scores + sl[None, :, None, None] * (p[:, None, None, :] - p[:, None, :, None])
    ok = allowed_keys(B, S, s["causal"], s["window"], keep)
    sinks = sd["sinks"] if s["sinks"] else None
    probs = softmax_rows(scores, ok, sinks)
    y = (probs @ v).transpose(1, 2).reshape(B, S, s["H"] * s["D"])
    return output_proj(s, sd, y), probs


# ---- the folders ------------------------------------------------------------------------------

DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def write_weights(model_dir, sd, container, dtype):
    """Stored as the hub has them; returns the values as read back, in float64."""
    stored = OrderedDict((k, v.to(DT[dtype]) if v.is_floating_point() else v) for k, v in sd.items())
    if container in ("safetensors", "safetensors+bin"):  # the hub's gpt2 folder has both
        save_safetensors(os.path.join(model_dir, "model.safetensors"), stored,
                         {"format": "pt"})
    elif container.startswith("shards"):  # model-0000k-of-0000n.safetensors + index
        n = int(container[len("shards"):])
        names = list(stored)
        cut = [round(i * len(names) / n) for i in range(n + 1)]  # in order: a layer may straddle
        groups = [names[cut[i]:cut[i + 1]] for i in range(n)]
        weight_map, total = {}, 0
        for i, gr in enumerate(groups):
            fname = f"model-{i + 1:05d}-of-{n:05d}.safetensors"
            save_safetensors(os.path.join(model_dir, fname), {k: stored[k] for k in gr},
                             {"format": "pt"})
            for k in gr:
                weight_map[k] = fname
                total += stored[k].numel() * stored[k].element_size()
        with open(os.path.join(model_dir, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    if container in ("bin", "safetensors+bin"):  # torch.save, as save_pretrained before 4.35
        torch.save(OrderedDict((k, v.clone()) for k, v in stored.items()),
                   os.path.join(model_dir, "pytorch_model.bin"))
    return OrderedDict((k, v.double() if v.is_floating_point() else v) for k, v in stored.items())


def keep_mask(B, S, pad):
    """attention_mask (1 = attend): row 0 full; row 1 padded by 2 on the left or right."""
    m = torch.ones(B, S, dtype=torch.int64)
    if pad == "left":
        m[1:, :2] = 0
    elif pad == "right":
        m[1:, -2:] = 0
    return m


def make_folder(spec, out=OUT, verbose=True):
    """Writes folders/<name>/model and one layer<N>/ per layer of spec["layers"]."""
    name, cfg = spec["name"], spec["config"]
    root = os.path.join(out, name)
    model_dir = os.path.join(root, "model")
    os.makedirs(model_dir)
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    g = torch.Generator().manual_seed(spec["seed"])
    text = cfg.get("text_config", cfg)  # Gemma 3's multimodal config.json nests the text model
    n_layers = next(text[k] for k in ("num_hidden_layers", "n_layer", "n_layers") if k in text)
    s0 = hf_settings(cfg, 0)
    mt = s0["model_type"]
    sd, per_layer = OrderedDict(model_outside(mt, s0["C"], g)), {}
    # Other prefixes a whole model's keys may carry (BertModel without "bert.", GPT-2 saved
    # from GPT2LMHeadModel with "transformer.", Gemma 3 inside its multimodal model, ...).
    renames = spec.get("rename", [])

    def rn(key):
        for old, new in renames:
            if key.startswith(old):
                return new + key[len(old):]
        return key

    for layer in range(n_layers):
        s = hf_settings(cfg, layer)
        w = attention_weights(s, g)
        per_layer[layer] = s
        for k, v in w.items():
            sd[s["prefix"] + k] = v
        for k, v in block_neighbours(mt, layer, s["C"], g).items():
            sd[k] = v
    sd = OrderedDict((rn(k), v) for k, v in sd.items())
    stored = write_weights(model_dir, sd, spec["container"], spec["dtype"])
    written = []
    for layer in spec["layers"]:
        s = per_layer[layer]
        p = rn(s["prefix"])
        lsd = {k[len(p):]: v for k, v in stored.items() if k.startswith(p)}
        B, S = spec.get("B", 1), spec.get("S", 7)
        x = torch.randn(B, S, s["C"], generator=g, dtype=torch.float64).float().double()
        pad = spec.get("pad")
        keep = keep_mask(B, S, pad)
        pos = (keep.cumsum(-1) - 1).clamp(min=0) if pad else torch.arange(S).expand(B, S)
        pos = pos + spec.get("offset", 0)
        with torch.no_grad():
            ctx, maps = layer_attention(s, lsd, x, keep if pad else None, pos)
        d = os.path.join(root, f"layer{layer}")
        os.makedirs(os.path.join(d, "expected"))
        case = {"model": "../model", "layer": layer, "input": "input.npy"}
        unbatched = spec.get("unbatched", False)
        xs = x[0] if unbatched else x
        np.save(os.path.join(d, "input.npy"), xs.float().numpy())
        if pad:
            np.save(os.path.join(d, "attention_mask.npy"), keep.numpy())
            case["attention_mask"] = "attention_mask.npy"
        if (pad or spec.get("offset", 0)) and (s["rope"] or s["alibi"]):  # positions need them
            np.save(os.path.join(d, "positions.npy"), pos.numpy())
            case["positions"] = "positions.npy"
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
        ctx, maps = (ctx[0], maps[0]) if unbatched else (ctx, maps)
        np.save(os.path.join(d, "expected", "context.npy"), ctx.float().numpy())
        np.save(os.path.join(d, "expected", "attention.npy"), maps.float().numpy())
        rnorm = spec.get("residual_norm")
        if rnorm and layer in rnorm["layers"]:  # the layer's module: the prefix's parent
            module = p[:p.rstrip(".").rfind(".") + 1]
            full = residual_norm(ctx, xs, stored, module, rnorm["name"], rnorm["eps"])
            np.save(os.path.join(d, "expected", "residual_norm.npy"), full.float().numpy())
        kind = ", ".join(filter(None, [
            f"window {s['window']}" if s["window"] else "",
            f"rope theta {s['rope']['theta']:g} R {s['rope']['R']}" +
            (f" {s['rope']['scaling'].get('rope_type', s['rope']['scaling'].get('type'))}"
             if s["rope"]["scaling"] else "") if s["rope"] else "",
            "alibi" if s["alibi"] else "", f"softcap {s['softcap']}" if s["softcap"] else "",
            f"qk_norm {s['qk_norm'][1]}" if s["qk_norm"] else "", "sinks" if s["sinks"] else "",
            f"H {s['H']}/{s['Hkv']} D {s['D']}", "causal" if s["causal"] else "bidirectional"]))
        written.append(f"layer {layer}: {kind}")
    if verbose:
        size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(root) for f in fs)
        print(f"{name:14s} {mt:12s} {spec['container']:12s} {spec['dtype']:5s} {size / 1024:6.1f} KB")
        for w in written:
            print("    " + w)
    return per_layer


def specs():
    L = lambda types: [t for t in types]  # noqa: E731
    llama3_scaling = {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                      "original_max_position_embeddings": 32, "rope_type": "llama3"}
    return [
        dict(name="gpt2", seed=1, container="safetensors+bin", dtype="f32", layers=[0, 2], S=7, unbatched=True,
             config={"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 24,
                     "n_head": 4, "n_layer": 3, "n_positions": 64, "n_ctx": 64, "vocab_size": 12,
                     "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05,
                     "scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": True,
                     "reorder_and_upcast_attn": False}),
        dict(name="bert", seed=2, container="safetensors", dtype="f16", layers=[0, 1], B=2, S=7,
             pad="right", residual_norm=dict(layers=[0], name="attention.output.LayerNorm.",
                                             eps=1e-12),
             config={"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 32,
                     "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 8,
                     "hidden_act": "gelu", "max_position_embeddings": 64,
                     "position_embedding_type": "absolute", "type_vocab_size": 2,
                     "vocab_size": 12, "layer_norm_eps": 1e-12}),
        dict(name="roberta", seed=3, container="safetensors", dtype="f16", layers=[1], S=6,
             residual_norm=dict(layers=[1], name="attention.output.LayerNorm.",
                                eps=1e-12),  # RobertaConfig's layer_norm_eps
             config={"architectures": ["RobertaForMaskedLM"], "model_type": "roberta",
                     "hidden_size": 32, "num_attention_heads": 2, "num_hidden_layers": 2,
                     "intermediate_size": 8, "max_position_embeddings": 66, "pad_token_id": 1,
                     "position_embedding_type": "absolute", "vocab_size": 12}),
        dict(name="llama", seed=4, container="safetensors", dtype="bf16", layers=[0, 1], B=2, S=7,
             pad="left", offset=60,
             config={"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                     "attention_bias": False, "attention_dropout": 0.0, "head_dim": 8,
                     "hidden_act": "silu", "hidden_size": 32, "intermediate_size": 8,
                     "max_position_embeddings": 256, "mlp_bias": False, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-05,
                     "rope_scaling": llama3_scaling, "rope_theta": 500000.0,
                     "tie_word_embeddings": True, "torch_dtype": "bfloat16", "vocab_size": 12}),
        dict(name="mistral", seed=5, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
             S=9, pad="right",
             config={"architectures": ["MistralForCausalLM"], "model_type": "mistral",
                     "head_dim": 8, "hidden_size": 32, "intermediate_size": 8,
                     "max_position_embeddings": 128, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-05,
                     "rope_theta": 1000000.0, "sliding_window": 3, "vocab_size": 12}),
        dict(name="mixtral", seed=6, container="safetensors", dtype="f32", layers=[1], S=9,
             offset=4,
             config={"architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
                     "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 8,
                     "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
                     "num_local_experts": 2, "num_experts_per_tok": 1, "rms_norm_eps": 1e-05,
                     "rope_parameters": {"rope_type": "dynamic", "factor": 2.0,
                                         "rope_theta": 1000000.0},
                     "sliding_window": None, "vocab_size": 12}),
        dict(name="qwen2", seed=7, container="safetensors", dtype="bf16", layers=[0, 2], B=2, S=8,
             pad="left",
             config={"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
                     "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 128,
                     "max_window_layers": 1, "num_attention_heads": 4, "num_hidden_layers": 3,
                     "num_key_value_heads": 2, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
                     "sliding_window": 3, "use_sliding_window": True, "vocab_size": 12}),
        dict(name="qwen3", seed=8, container="safetensors", dtype="f32", layers=[0, 1], S=8,
             config={"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3",
                     "attention_bias": False, "head_dim": 12, "hidden_size": 32,
                     "intermediate_size": 8, "max_position_embeddings": 64,
                     "max_window_layers": 2, "num_attention_heads": 4, "num_hidden_layers": 2,
                     "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
                     "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                      "original_max_position_embeddings": 16},
                     "rope_theta": 1000000, "sliding_window": None, "use_sliding_window": False,
                     "vocab_size": 12}),
        dict(name="gemma", seed=9, container="safetensors", dtype="f16", layers=[0, 1], S=7,
             config={"architectures": ["GemmaForCausalLM"], "model_type": "gemma",
                     "head_dim": 16, "hidden_act": "gelu_pytorch_tanh", "hidden_size": 32,
                     "intermediate_size": 8, "max_position_embeddings": 64,
                     "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
                     "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "vocab_size": 12}),
        dict(name="gemma2", seed=10, container="shards3", dtype="bf16", layers=[0, 1], B=2, S=8,
             pad="left",
             config={"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
                     "attn_logit_softcapping": 2.0, "final_logit_softcapping": 30.0,
                     "head_dim": 16, "hidden_act": "gelu_pytorch_tanh", "hidden_size": 32,
                     "intermediate_size": 8, "max_position_embeddings": 64,
                     "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
                     "query_pre_attn_scalar": 24, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
                     "sliding_window": 4, "torch_dtype": "bfloat16", "vocab_size": 12}),
        dict(name="gemma3", seed=11, container="safetensors", dtype="f32", layers=[0, 2], S=8,
             offset=40,
             config={"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
                     "attn_logit_softcapping": None, "head_dim": 8, "hidden_size": 32,
                     "intermediate_size": 8, "max_position_embeddings": 128,
                     "num_attention_heads": 4, "num_hidden_layers": 3, "num_key_value_heads": 2,
                     "query_pre_attn_scalar": 10, "rms_norm_eps": 1e-06,
                     "rope_local_base_freq": 10000.0,
                     "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                     "rope_theta": 1000000.0, "sliding_window": 3, "sliding_window_pattern": 3,
                     "vocab_size": 12}),
        dict(name="phi3", seed=12, container="safetensors", dtype="f32", layers=[0, 1], S=9,
             config={"architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
                     "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 64,
                     "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
                     "original_max_position_embeddings": 8, "partial_rotary_factor": 0.75,
                     "rms_norm_eps": 1e-05,
                     "rope_scaling": {"type": "longrope",
                                      "long_factor": [1.0, 1.5, 2.0],
                                      "short_factor": [1.0, 1.1, 1.2]},
                     "rope_theta": 10000.0, "sliding_window": 5, "vocab_size": 12}),
        dict(name="gpt_neox", seed=13, container="safetensors", dtype="f16", layers=[0, 1], B=2,
             S=7, pad="right",
             config={"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox",
                     "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 64,
                     "num_attention_heads": 2, "num_hidden_layers": 2, "rotary_emb_base": 20000,
                     "rotary_pct": 0.25, "use_parallel_residual": True, "vocab_size": 12}),
        dict(name="falcon", seed=14, container="safetensors", dtype="f16", layers=[0, 1], S=7,
             config={"architectures": ["FalconForCausalLM"], "model_type": "falcon",
                     "alibi": False, "bias": False, "hidden_size": 32, "n_head": 4,
                     "n_head_kv": 2, "n_layer": 2, "new_decoder_architecture": True,
                     "parallel_attn": True, "vocab_size": 12}),
        dict(name="falcon_mq", seed=15, container="safetensors", dtype="bf16", layers=[1], S=7,
             config={"architectures": ["FalconForCausalLM"], "model_type": "falcon",
                     "alibi": False, "bias": False, "hidden_size": 32, "multi_query": True,
                     "new_decoder_architecture": False, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "parallel_attn": True, "rope_theta": 10000.0,
                     "vocab_size": 12}),
        dict(name="falcon_rw", seed=16, container="safetensors", dtype="bf16", layers=[0], B=2,
             S=7, pad="left",
             config={"architectures": ["FalconForCausalLM"], "model_type": "falcon",
                     "alibi": True, "bias": True, "hidden_size": 32, "multi_query": False,
                     "new_decoder_architecture": False, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "parallel_attn": False, "vocab_size": 12}),
        dict(name="bloom", seed=17, container="bin", dtype="f16", layers=[0, 1], B=2, S=7,
             pad="left",
             config={"architectures": ["BloomForCausalLM"], "model_type": "bloom", "n_embed": 24,
                     "n_head": 6, "n_layer": 2, "layer_norm_epsilon": 1e-05,
                     "apply_residual_connection_post_layernorm": False, "vocab_size": 12}),
        dict(name="mpt", seed=18, container="safetensors", dtype="bf16", layers=[0, 1], S=7,
             config={"architectures": ["MPTForCausalLM"], "model_type": "mpt",
                     "attn_config": {"alibi": True, "alibi_bias_max": 8, "attn_impl": "torch",
                                     "attn_pdrop": 0, "attn_type": "multihead_attention",
                                     "attn_uses_sequence_id": False, "clip_qkv": None,
                                     "prefix_lm": False, "qk_ln": False, "softmax_scale": None},
                     "d_model": 24, "expansion_ratio": 4, "max_seq_len": 64, "n_heads": 6,
                     "n_layers": 2, "no_bias": True, "vocab_size": 12}),
        dict(name="opt", seed=19, container="safetensors", dtype="f16", layers=[0, 1], B=2, S=7,
             pad="right",
             config={"architectures": ["OPTForCausalLM"], "model_type": "opt",
                     "do_layer_norm_before": True, "enable_bias": True, "ffn_dim": 8,
                     "hidden_size": 32, "max_position_embeddings": 64, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "vocab_size": 12, "word_embed_proj_dim": 32}),
        dict(name="olmo2", seed=20, container="safetensors", dtype="f32", layers=[0, 1], S=7,
             config={"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2",
                     "attention_bias": False, "hidden_size": 32, "intermediate_size": 8,
                     "max_position_embeddings": 64, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
                     "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
                     "vocab_size": 12}),
        dict(name="gpt_oss", seed=21, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
             S=8, pad="left",
             config={"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
                     "attention_bias": True, "head_dim": 8, "hidden_size": 32,
                     "intermediate_size": 8, "layer_types": L(["sliding_attention",
                                                                "full_attention"]),
                     "max_position_embeddings": 4096, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "num_key_value_heads": 2, "num_local_experts": 2,
                     "rms_norm_eps": 1e-05,
                     "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                                      "original_max_position_embeddings": 128,
                                      "rope_type": "yarn", "truncate": False},
                     "rope_theta": 150000, "sliding_window": 3, "torch_dtype": "bfloat16",
                     "vocab_size": 12}),
        # OPT-350m's post-norm: OPTDecoderLayer's self_attn_layer_norm(residual + attention),
        # nn.LayerNorm's eps (--with-residual-norm); unpadded, so it also runs as --model
        dict(name="opt_350m", seed=22, container="safetensors", dtype="f32", layers=[1], B=2, S=6,
             residual_norm=dict(layers=[1], name="self_attn_layer_norm.", eps=1e-5),
             config={"_remove_final_layer_norm": False, "architectures": ["OPTForCausalLM"],
                     "model_type": "opt", "do_layer_norm_before": False, "enable_bias": True,
                     "ffn_dim": 8, "hidden_size": 32, "layer_norm_elementwise_affine": True,
                     "max_position_embeddings": 64, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "vocab_size": 12, "word_embed_proj_dim": 32}),
    ]


def main():
    os.makedirs(OUT, exist_ok=True)
    n = 0
    for spec in specs():  # only this script's folders: the v3 generators write theirs beside
        shutil.rmtree(os.path.join(OUT, spec["name"]), ignore_errors=True)
        make_folder(spec)
        n += len(spec["layers"])
    total = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(OUT) for f in fs)
    print(f"wrote {len(specs())} model folders, {n} layer cases, {total / 1024:.0f} KB, to {OUT}")


if __name__ == "__main__":
    main()

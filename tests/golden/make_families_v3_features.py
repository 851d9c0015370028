#!/usr/bin/python3
"""Hugging Face model folders for CONTRACT.md v3's families that use the v3 forward-pass
features (issue 24): gated attention (qwen3_next, qwen3_5), qk_norm kinds (cohere: per-head
LayerNorm; llama4_text: L2), attention chunks and temperature tuning (llama4_text).

Same layout as make_folders.py (whose helpers this reuses): tests/golden/folders/<name>/model/
holds config.json in the family's real spelling and a whole tiny model under the real state_dict
names (layers attn-run does not run, such as Qwen3-Next's Gated DeltaNet, included); each
layer<N>/ one run: case.json, input.npy and torch's expected/context.npy and attention.npy.

Each family's attention is written below in plain torch from transformers' modeling code
(modeling_qwen3_next.Qwen3NextAttention, which Qwen3_5Attention inherits;
modeling_cohere.CohereAttention; modeling_llama4.Llama4TextAttention), and config.json is read
as the configuration classes read it (class defaults for missing keys), independently of
attn-run's family table. CONTRACT.md's changes hold: RoPE angles in float64, cos/sin rounded to
float32; a query row with no allowed key is all zeros.

Rewrites only its own folders. Deterministic. Usage:
    /usr/bin/python3 tests/golden/make_families_v3_features.py
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
from make_folders import OUT, keep_mask, lin, linear, put, rms_norm, write_weights  # noqa: E402
from make_positions import rope_params  # noqa: E402
from make_variants import allowed_keys, repeat_kv, rotate_half, softmax_rows  # noqa: E402


# ---- config.json as transformers reads it --------------------------------------------------

CLASS_DEFAULTS = {  # configuration_<type>.py, the keys the attention reads
    "qwen3_next": dict(rope_theta=10000.0, partial_rotary_factor=0.25, attention_bias=False,
                       rms_norm_eps=1e-6, head_dim=256, full_attention_interval=4),
    "qwen3_5_text": dict(rope_theta=10000.0, partial_rotary_factor=0.25, attention_bias=False,
                         rms_norm_eps=1e-6, head_dim=256, full_attention_interval=4),
    "cohere": dict(rope_theta=10000.0, attention_bias=False, layer_norm_eps=1e-5,
                   use_qk_norm=False),
    "stablelm": dict(rope_theta=10000.0, partial_rotary_factor=0.25, use_qkv_bias=False,
                     qk_layernorm=False, layer_norm_eps=1e-5),
    "cohere2": dict(rope_theta=10000.0, attention_bias=False, sliding_window=4096,
                    sliding_window_pattern=4, layer_types=None),
    "llama4_text": dict(rope_theta=500000.0, attention_bias=False, rms_norm_eps=1e-5,
                        attention_chunk_size=8192, no_rope_layers=None, no_rope_layer_interval=4,
                        use_qk_norm=True, attn_temperature_tuning=True, floor_scale=8192,
                        attn_scale=0.1, rope_scaling=None),
}


def settings(cfg, layer):
    """What layer `layer` computes, as the family's configuration and modeling code read it."""
    wrapped = cfg["model_type"] in ("qwen3_5", "llama4")
    if wrapped:  # Qwen3_5ForConditionalGeneration, Llama4ForConditionalGeneration
        cfg = cfg["text_config"]
    mt = cfg["model_type"]
    cfg = dict(CLASS_DEFAULTS.get(mt, {}), **cfg)
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads") or H
    D = cfg.get("head_dim") or C // H
    if mt == "cohere2":  # Cohere2Config.__post_init__: head_dim = hidden_size // heads
        D = C // H
    s = dict(model_type=mt, C=C, H=H, Hkv=Hkv, D=D, scale=D ** -0.5, runs=True, rope=None,
             qk_norm=None, gate=False, chunk=None, temperature=None, window=None,
             prefix=f"model.layers.{layer}.self_attn.", type="full_attention")
    if mt == "stablelm":  # StableLmAttention: q/k/v bias from use_qkv_bias, o_proj none
        s.update(qkv_bias=bool(cfg["use_qkv_bias"]), o_bias=False)
    else:
        b = bool(cfg["attention_bias"])
        s.update(qkv_bias=b, o_bias=b)
    mpe = cfg.get("max_position_embeddings")
    if mt in ("qwen3_next", "qwen3_5_text"):
        types = cfg.get("layer_types") or [
            "linear_attention" if (i + 1) % cfg["full_attention_interval"] else "full_attention"
            for i in range(cfg["num_hidden_layers"])]
        s["type"] = types[layer]
        s["runs"] = types[layer] == "full_attention"
        p = cfg.get("rope_parameters") or {}  # v5 (Qwen3.5: mrope_section over text positions)
        theta = p.get("rope_theta", cfg["rope_theta"])
        frac = p.get("partial_rotary_factor", cfg["partial_rotary_factor"])
        s["rope"] = dict(theta=float(theta), R=int(D * frac), scaling=None, mpe=mpe,
                         interleaved=False)
        s["qk_norm"] = dict(kind="rms", eps=cfg["rms_norm_eps"], offset=1)  # Qwen3NextRMSNorm
        s["gate"] = True
        if mt == "qwen3_5_text" and wrapped:
            s["prefix"] = f"model.language_model.layers.{layer}.self_attn."
    elif mt == "cohere":
        s["rope"] = dict(theta=float(cfg["rope_theta"]), R=D, scaling=None, mpe=mpe,
                         interleaved=True)
        if cfg["use_qk_norm"]:  # CohereLayerNorm((H, D)), no bias, before the transpose
            s["qk_norm"] = dict(kind="layer", eps=cfg["layer_norm_eps"], per_head=True)
    elif mt == "stablelm":  # partial rotary; StableLmLayerNormPerHead (one LayerNorm per head)
        s["rope"] = dict(theta=float(cfg["rope_theta"]), R=int(D * cfg["partial_rotary_factor"]),
                         scaling=None, mpe=mpe, interleaved=False)
        if cfg["qk_layernorm"]:
            s["qk_norm"] = dict(kind="layer", eps=cfg["layer_norm_eps"], per_head=True,
                                names="norms")
    elif mt == "cohere2":  # layer_types, or sliding_window_pattern; rope on sliding layers only
        types = cfg["layer_types"] or [
            "sliding_attention" if (i + 1) % cfg["sliding_window_pattern"] else "full_attention"
            for i in range(cfg["num_hidden_layers"])]
        s["type"] = types[layer]
        if types[layer] == "sliding_attention":
            s["window"] = cfg["sliding_window"]
            s["rope"] = dict(theta=float(cfg["rope_theta"]), R=D, scaling=None, mpe=mpe,
                             interleaved=True)
    elif mt == "llama4_text":  # Llama4TextConfig: no_rope_layers (1 = rope), default interval 4
        n = cfg["num_hidden_layers"]
        flags = cfg["no_rope_layers"] or [int((i + 1) % cfg["no_rope_layer_interval"] != 0)
                                          for i in range(n)]
        if wrapped:
            s["prefix"] = f"language_model.model.layers.{layer}.self_attn."
        if flags[layer]:  # rope, chunked (Llama4TextDecoderLayer.use_chunked_attention), L2 norm
            s["rope"] = dict(theta=float(cfg["rope_theta"]), R=D, scaling=cfg["rope_scaling"],
                             mpe=mpe, interleaved=True)
            s["chunk"] = cfg["attention_chunk_size"]
            if s["chunk"]:
                s["type"] = "chunked_attention"
            if cfg["use_qk_norm"]:
                s["qk_norm"] = dict(kind="l2", eps=cfg["rms_norm_eps"])
        elif cfg["attn_temperature_tuning"]:
            s["temperature"] = (cfg["floor_scale"], cfg["attn_scale"])
    else:
        raise ValueError(mt)
    return s


# ---- the attention ---------------------------------------------------------------------------

def cos_sin(pos, rope):
    """(B, S, R): angles in float64, cos/sin rounded to float32; interleaved: each angle twice
    in a row (Cohere's repeat_interleave), else the halves (rotate_half)."""
    inv, att = rope_params(rope["theta"], rope["R"], rope["mpe"], rope["scaling"],
                           int(pos.max()) + 1)
    freqs = pos.double()[..., None] * inv.double()[None, None, :]
    emb = (torch.repeat_interleave(freqs, 2, dim=-1) if rope["interleaved"]
           else torch.cat((freqs, freqs), dim=-1))
    return (emb.cos() * att).float().double(), (emb.sin() * att).float().double()


def rotate_pairs(x):  # modeling_cohere.rotate_half: (x[2i], x[2i+1]) -> (-x[2i+1], x[2i])
    return torch.stack([-x[..., 1::2], x[..., ::2]], dim=-1).flatten(-2)


def apply_rope(x, cos, sin, rope):  # x (B, H, S, D); partial rotary keeps the rest
    R = rope["R"]
    rot, rest = x[..., :R], x[..., R:]
    turn = rotate_pairs if rope["interleaved"] else rotate_half
    return torch.cat((rot * cos[:, None] + turn(rot) * sin[:, None], rest), dim=-1)


def layer_norm(x, w, eps):  # CohereLayerNorm: mean-subtracted, float32 in the model, no bias
    mean = x.mean(-1, keepdim=True)
    var = (x - mean).pow(2).mean(-1, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps) * w


def qk_norm(s, x, w):  # x (B, S, heads, D)
    n = s["qk_norm"]
    if n["kind"] == "rms":
        return rms_norm(x, w, n["eps"], n.get("offset", 0))
    if n["kind"] == "layer":
        return layer_norm(x, w, n["eps"])
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + n["eps"])  # Llama4TextL2Norm


def layer_attention(s, sd, x, keep, pos):
    """context (B, S, C) and maps (B, H, S, S); sd: the layer's names without the prefix."""
    B, S, _ = x.shape
    H, Hkv, D = s["H"], s["Hkv"], s["D"]
    if s["gate"]:  # Qwen3NextAttention: q_proj viewed (B, S, H, 2D) -> [query | gate]
        q, gate = torch.chunk(linear(x, sd, "q_proj").view(B, S, H, 2 * D), 2, dim=-1)
        gate = gate.reshape(B, S, H * D)
    else:
        q = linear(x, sd, "q_proj").view(B, S, H, D)
    k = linear(x, sd, "k_proj").view(B, S, Hkv, D)
    v = linear(x, sd, "v_proj").view(B, S, Hkv, D).transpose(1, 2)
    if s["qk_norm"] and s["qk_norm"]["kind"] != "l2":  # before rope
        if s["qk_norm"].get("names") == "norms":  # StableLmLayerNormPerHead: head h's LayerNorm
            wq = torch.stack([sd[f"q_layernorm.norms.{h}.weight"] for h in range(H)])
            wk = torch.stack([sd[f"k_layernorm.norms.{h}.weight"] for h in range(Hkv)])
        else:
            wq, wk = sd["q_norm.weight"], sd["k_norm.weight"]
        q, k = qk_norm(s, q, wq), qk_norm(s, k, wk)
    q, k = q.transpose(1, 2), k.transpose(1, 2)
    if s["rope"] is not None:
        cos, sin = cos_sin(pos, s["rope"])
        q, k = apply_rope(q, cos, sin, s["rope"]), apply_rope(k, cos, sin, s["rope"])
    if s["qk_norm"] and s["qk_norm"]["kind"] == "l2":  # Llama 4: after rope
        q, k = qk_norm(s, q, None), qk_norm(s, k, None)
    if s["temperature"]:  # Llama 4's no-rope layers, at cache_position 0..S-1
        floor_scale, attn_scale = s["temperature"]
        t = torch.log1p(torch.floor((torch.arange(S).float() + 1.0) / floor_scale)) * attn_scale + 1.0
        q = q * t.double()[None, None, :, None]
    k, v = repeat_kv(k, H // Hkv), repeat_kv(v, H // Hkv)
    scores = (q @ k.transpose(2, 3)) * s["scale"]
    probs = softmax_rows(scores, allowed_keys(B, S, True, s["window"], keep, s["chunk"]))
    y = (probs @ v).transpose(1, 2).reshape(B, S, H * D)
    if s["gate"]:  # attn_output * torch.sigmoid(gate), before o_proj
        y = y * torch.sigmoid(gate)
    return linear(y, sd, "o_proj"), probs


# ---- one layer's tensors, as the family names them ----------------------------------------------

def layer_weights(s, layer, g):
    C, H, Hkv, D = s["C"], s["H"], s["Hkv"], s["D"]
    r = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    sd = OrderedDict()
    block = s["prefix"][:-len("self_attn.")]
    sd[block + "input_layernorm.weight"] = torch.ones(C, dtype=torch.float64)
    if not s["runs"]:  # Qwen3NextGatedDeltaNet's tensors: recognized as no attention layer
        la = block + "linear_attn."
        sd[la + "in_proj_qkvz.weight"] = r(4 * D, C) * 0.1
        sd[la + "in_proj_ba.weight"] = r(4, C) * 0.1
        sd[la + "conv1d.weight"] = r(2 * D, 1, 4) * 0.1
        sd[la + "dt_bias"] = torch.ones(2, dtype=torch.float64)
        sd[la + "A_log"] = r(2) * 0.1
        sd[la + "norm.weight"] = torch.ones(D, dtype=torch.float64)
        sd[la + "out_proj.weight"] = r(C, D) * 0.1
    else:
        p = s["prefix"]
        w = OrderedDict()
        put(w, "q_proj", lin(g, H * D * (2 if s["gate"] else 1), C, s["qkv_bias"]))
        put(w, "k_proj", lin(g, Hkv * D, C, s["qkv_bias"]))
        put(w, "v_proj", lin(g, Hkv * D, C, s["qkv_bias"]))
        put(w, "o_proj", lin(g, C, H * D, s["o_bias"]))
        n = s["qk_norm"]
        if n and n["kind"] != "l2":
            per_head = n.get("per_head", False)
            # Qwen3-Next's zero-centred weights (x * (1 + w)) start near 0, the others near 1
            base = 0.0 if n.get("offset") else 1.0
            w["q_norm.weight"] = base + 0.3 * r(*((H, D) if per_head else (D,)))
            w["k_norm.weight"] = base + 0.3 * r(*((Hkv, D) if per_head else (D,)))
        if n and n.get("names") == "norms":  # StableLM: q_layernorm.norms.{h}.weight
            for which, heads in (("q", H), ("k", Hkv)):
                t = w.pop(which + "_norm.weight")
                for h in range(heads):
                    w[f"{which}_layernorm.norms.{h}.weight"] = t[h].clone()
        for k, v in w.items():
            sd[p + k] = v
    sd[block + "post_attention_layernorm.weight"] = torch.ones(C, dtype=torch.float64)
    if s["model_type"] == "llama4_text":  # Llama4TextMoe
        sd[block + "feed_forward.router.weight"] = r(1, C) * 0.1
        sd[block + "feed_forward.experts.gate_up_proj"] = r(1, C, 16) * 0.1
    else:
        sd[block + "mlp.up_proj.weight"] = r(8, C) * 0.1
    return sd


def model_outside(s, g, vocab=12):
    r = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64) * 0.1  # noqa: E731
    top = s["prefix"][:s["prefix"].index("layers.")]
    sd = OrderedDict([(top + "embed_tokens.weight", r(vocab, s["C"])),
                      (top + "norm.weight", torch.ones(s["C"], dtype=torch.float64))])
    if "language_model" in top and s["model_type"] == "qwen3_5_text":  # the vision tower
        sd["model.visual.patch_embed.proj.weight"] = r(8, 3, 2, 2, 2)
    if s["model_type"] == "llama4_text" and "language_model" in top:
        sd["vision_model.patch_embedding.linear.weight"] = r(8, 12)
        sd["language_model.lm_head.weight"] = r(vocab, s["C"])
    else:
        sd["lm_head.weight"] = r(vocab, s["C"])
    return sd


def write_folder(spec, out=OUT, verbose=True):
    name, cfg = spec["name"], spec["config"]
    root = os.path.join(out, name)
    if os.path.isdir(root):
        shutil.rmtree(root)
    model_dir = os.path.join(root, "model")
    os.makedirs(model_dir)
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    g = torch.Generator().manual_seed(spec["seed"])
    text = cfg.get("text_config", cfg)
    per_layer = [settings(cfg, i) for i in range(text["num_hidden_layers"])]
    sd = model_outside(per_layer[0], g)
    for i, s in enumerate(per_layer):
        sd.update(layer_weights(s, i, g))
    stored = write_weights(model_dir, sd, spec["container"], spec["dtype"])
    lines = []
    for layer in spec["layers"]:
        s = per_layer[layer]
        assert s["runs"], (name, layer)
        p = s["prefix"]
        lsd = {k[len(p):]: v for k, v in stored.items() if k.startswith(p)}
        B, S = spec.get("B", 2), spec.get("S", 7)
        x = torch.randn(B, S, s["C"], generator=g, dtype=torch.float64).float().double()
        pad = spec.get("pad")
        keep = keep_mask(B, S, pad)
        pos = (keep.cumsum(-1) - 1).clamp(min=0) if pad else torch.arange(S).expand(B, S)
        with torch.no_grad():
            ctx, maps = layer_attention(s, lsd, x, keep if pad else None, pos)
        d = os.path.join(root, f"layer{layer}")
        os.makedirs(os.path.join(d, "expected"))
        case = {"model": "../model", "layer": layer, "input": "input.npy"}
        np.save(os.path.join(d, "input.npy"), x.float().numpy())
        if pad:
            np.save(os.path.join(d, "attention_mask.npy"), keep.numpy())
            case["attention_mask"] = "attention_mask.npy"
            if s["rope"]:  # the temperature reads cache_position 0..S-1, not position ids
                np.save(os.path.join(d, "positions.npy"), pos.numpy())
                case["positions"] = "positions.npy"
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
        np.save(os.path.join(d, "expected", "context.npy"), ctx.float().numpy())
        np.save(os.path.join(d, "expected", "attention.npy"), maps.float().numpy())
        lines.append(f"    layer {layer}: {s['type']}, H {s['H']}/{s['Hkv']} D {s['D']}"
                     + (f", rope R {s['rope']['R']}" if s["rope"] else "")
                     + (f", qk_norm {s['qk_norm']['kind']}" if s["qk_norm"] else "")
                     + (", gate" if s["gate"] else "")
                     + (f", chunk {s['chunk']}" if s["chunk"] else "")
                     + (", temperature" if s["temperature"] else ""))
    if verbose:
        print(f"{name:14s} {per_layer[0]['model_type']:14s} {spec['container']:12s} "
              f"{spec['dtype']}")
        print("\n".join(lines))


# ---- the folders --------------------------------------------------------------------------------

def specs():
    qwen3_next = {
        "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
        "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "num_hidden_layers": 4, "full_attention_interval": 2, "intermediate_size": 8,
        "vocab_size": 12, "max_position_embeddings": 256, "rope_theta": 10000000,
        "partial_rotary_factor": 0.25, "rms_norm_eps": 1e-06, "attention_bias": False,
        "attention_dropout": 0.0, "hidden_act": "silu", "linear_conv_kernel_dim": 4,
        "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_num_key_heads": 1,
        "linear_num_value_heads": 2, "num_experts": 0, "decoder_sparse_step": 1,
        "torch_dtype": "bfloat16", "transformers_version": "4.57.0"}
    qwen3_5 = {
        "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
        "image_token_id": 248056, "video_token_id": 248057, "tie_word_embeddings": False,
        "text_config": {
            "model_type": "qwen3_5_text", "hidden_size": 32, "num_attention_heads": 4,
            "num_key_value_heads": 1, "head_dim": 8, "num_hidden_layers": 3,
            "layer_types": ["linear_attention", "full_attention", "full_attention"],
            "intermediate_size": 8, "vocab_size": 12, "max_position_embeddings": 256,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000000,
                                "partial_rotary_factor": 0.25, "mrope_section": [1, 1, 0],
                                "mrope_interleaved": True},
            "rms_norm_eps": 1e-06, "attention_bias": False, "hidden_act": "silu",
            "linear_num_key_heads": 1, "linear_num_value_heads": 2, "dtype": "bfloat16"},
        "vision_config": {"model_type": "qwen3_5_vision", "depth": 1, "hidden_size": 8},
        "transformers_version": "5.2.0"}
    cohere = {
        "architectures": ["CohereForCausalLM"], "model_type": "cohere", "hidden_size": 32,
        "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
        "intermediate_size": 8, "vocab_size": 12, "max_position_embeddings": 256,
        "rope_theta": 8000000.0, "layer_norm_eps": 1e-05, "use_qk_norm": True,
        "attention_bias": False, "logit_scale": 0.125, "hidden_act": "silu",
        "torch_dtype": "float16", "transformers_version": "4.40.0"}
    llama4 = {
        "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
        "image_token_index": 200092, "tie_word_embeddings": False,
        "text_config": {
            "model_type": "llama4_text", "hidden_size": 32, "num_attention_heads": 4,
            "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 4,
            "intermediate_size": 16, "intermediate_size_mlp": 16, "num_local_experts": 1,
            "num_experts_per_tok": 1, "interleave_moe_layer_step": 1, "vocab_size": 12,
            "max_position_embeddings": 256, "attention_chunk_size": 3, "no_rope_layers": [],
            "rope_theta": 500000.0,
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
            "use_qk_norm": True, "attn_temperature_tuning": True, "floor_scale": 4,
            "attn_scale": 0.1, "rms_norm_eps": 1e-05, "attention_bias": False,
            "hidden_act": "silu", "torch_dtype": "bfloat16"},
        "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 8},
        "transformers_version": "4.51.0"}
    cohere2 = {
        "architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2", "hidden_size": 32,
        "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 8,
        "num_hidden_layers": 4, "sliding_window": 3, "sliding_window_pattern": 4,
        "intermediate_size": 8, "vocab_size": 12, "max_position_embeddings": 256,
        "rope_theta": 50000.0, "layer_norm_eps": 1e-05, "attention_bias": False,
        "logit_scale": 0.25, "hidden_act": "silu", "torch_dtype": "bfloat16",
        "transformers_version": "4.48.0"}
    stablelm = {
        "architectures": ["StableLmForCausalLM"], "model_type": "stablelm", "hidden_size": 32,
        "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 2,
        "intermediate_size": 8, "vocab_size": 12, "max_position_embeddings": 256,
        "rope_theta": 10000, "partial_rotary_factor": 0.25, "use_qkv_bias": True,
        "qk_layernorm": True, "layer_norm_eps": 1e-05, "use_parallel_residual": False,
        "hidden_act": "silu", "torch_dtype": "bfloat16", "transformers_version": "4.38.0"}
    return [
        dict(name="stablelm", seed=106, config=stablelm, container="bin", dtype="f32",
             layers=[0, 1], pad="left"),
        dict(name="cohere2", seed=105, config=cohere2, container="safetensors", dtype="f32",
             layers=[2, 3], S=8, pad="right"),
        dict(name="llama4", seed=104, config=llama4, container="safetensors", dtype="bf16",
             layers=[1, 3], S=8, pad="left"),
        dict(name="qwen3_next", seed=101, config=qwen3_next, container="safetensors",
             dtype="bf16", layers=[1, 3], pad="left"),
        dict(name="qwen3_5", seed=102, config=qwen3_5, container="shards2", dtype="bf16",
             layers=[1, 2], S=6),
        dict(name="cohere", seed=103, config=cohere, container="safetensors", dtype="f16",
             layers=[0, 1], pad="right"),
    ]


def main():
    for spec in specs():
        write_folder(spec)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Hugging Face model folders of Gemma 4's text layers (issue 24), the last family of CONTRACT.md
v3's list: model_type gemma4 (Gemma4ForConditionalGeneration, the text model in text_config under
model.language_model.) and gemma4_text (Gemma4ForCausalLM, model.layers.).

What Gemma 4's text attention does (modeling_gemma4.Gemma4TextAttention, configuration_gemma4's
Gemma4TextConfig), written below in plain torch and read from config.json independently of
attn-run's family table:
  * layer_types: sliding_attention (sliding_window) and full_attention layers (default: every 6th
    full, the last one full);
  * per-layer sizes: a full layer's head size is global_head_dim (512 unless given); with
    attention_k_eq_v its KV heads are num_global_key_value_heads and it has no v_proj: the values
    are k_proj's output, taken before k_norm and rope;
  * q_norm and k_norm: Gemma4RMSNorm, x * pow(mean(x^2) + eps, -0.5) * w (no 1 + w), before rope;
    v_norm: the same without a weight, on every layer's values;
  * rope_parameters per layer type: sliding layers the default rope over head_dim; full layers
    "proportional" rope: over the whole (global) head, the first int(p * D // 2) frequencies
    theta^(-2i/D) and zeros after (modeling_rope_utils._compute_proportional_rope_parameters);
  * scaling 1.0 (the q/k norms replace 1/sqrt(D));
  * num_kv_shared_layers: the last n layers reuse the keys and values of the last earlier layer of
    their type and have no k_proj, v_proj, k_norm (attn-run refuses them; none is run here).
CONTRACT.md's changes hold: RoPE angles in float64, cos/sin rounded to float32; a query row with
no allowed key is all zeros.

Same layout as make_folders.py: tests/golden/folders/<name>/model/ holds config.json and a whole
tiny model under the real state_dict names; each layer<N>/ one run (case.json, input.npy, torch's
expected/context.npy and attention.npy). Rewrites only its own folders. Deterministic. Usage:
    /usr/bin/python3 tests/golden/make_families_v3_gemma4.py
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
from make_folders import OUT, keep_mask, lin, linear, put, write_weights  # noqa: E402
from make_positions import rope_params  # noqa: E402
from make_variants import allowed_keys, repeat_kv, rotate_half, softmax_rows  # noqa: E402


# ---- config.json as Gemma4TextConfig reads it ----------------------------------------------------

TEXT_DEFAULTS = dict(  # Gemma4TextConfig's class defaults for the keys the attention reads
    hidden_size=2304, num_attention_heads=8, num_key_value_heads=4, head_dim=256,
    num_hidden_layers=30, rms_norm_eps=1e-6, attention_bias=False, sliding_window=512,
    layer_types=None, rope_parameters=None, use_bidirectional_attention=None,
    attention_k_eq_v=False, num_kv_shared_layers=0, max_position_embeddings=131072)
DEFAULT_ROPE = {  # Gemma4TextConfig.__post_init__'s default_rope_params
    "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
    "full_attention": {"rope_type": "proportional", "partial_rotary_factor": 0.25,
                       "rope_theta": 1000000.0}}


def text_config(cfg):
    if cfg["model_type"] == "gemma4":  # Gemma4Config: the text model in text_config
        cfg = cfg["text_config"]
    t = dict(TEXT_DEFAULTS, **cfg)
    n = t["num_hidden_layers"]
    if t["layer_types"] is None:  # sliding_window_pattern 6: 5 sliding, then 1 full
        t["layer_types"] = ["sliding_attention" if (i + 1) % 6 else "full_attention"
                            for i in range(n)]
    t["layer_types"] = list(t["layer_types"])
    t["layer_types"][-1] = "full_attention"  # forced, with a warning
    if t["rope_parameters"] is None:
        t["rope_parameters"] = DEFAULT_ROPE
    t.setdefault("global_head_dim", 512)
    t.setdefault("num_global_key_value_heads", None)
    return t


def settings(cfg, layer):
    """What layer `layer` computes, as Gemma4TextAttention.__init__ sets it up."""
    t = text_config(cfg)
    wrapped = cfg["model_type"] == "gemma4"
    n = t["num_hidden_layers"]
    layer_type = t["layer_types"][layer]
    sliding = layer_type == "sliding_attention"
    D = t["global_head_dim"] if not sliding and t["global_head_dim"] else t["head_dim"]
    k_eq_v = bool(t["attention_k_eq_v"]) and not sliding  # use_alternative_attention
    Hkv = t["num_global_key_value_heads"] if k_eq_v else t["num_key_value_heads"]
    first_shared = n - t["num_kv_shared_layers"]
    shared = layer >= first_shared >= 0 and t["num_kv_shared_layers"] > 0
    params = t["rope_parameters"][layer_type]
    rope = dict(theta=float(params["rope_theta"]), R=D, mpe=t["max_position_embeddings"],
                scaling=None)
    if params.get("rope_type", "default") == "proportional":  # head_dim_key="global_head_dim"
        rope["scaling"] = {"rope_type": "proportional",
                           "partial_rotary_factor": params.get("partial_rotary_factor", 1.0),
                           "factor": params.get("factor", 1.0)}
    window = t["sliding_window"] if sliding else None
    causal = t["use_bidirectional_attention"] != "all"
    if not causal and window:  # __post_init__: (W // 2) + 1, exclusive bounds both sides
        window = window // 2 + 1
    prefix = ("model.language_model" if wrapped else "model") + f".layers.{layer}.self_attn."
    return dict(model_type="gemma4_text", C=t["hidden_size"], H=t["num_attention_heads"],
                Hkv=Hkv, D=D, k_eq_v=k_eq_v, shared=shared, eps=t["rms_norm_eps"],
                bias=bool(t["attention_bias"]), rope=rope, window=window, causal=causal,
                type=layer_type, prefix=prefix)


# ---- the attention (modeling_gemma4.Gemma4TextAttention.forward, eager) -----------------------------

def gemma_rms(x, w, eps):  # Gemma4RMSNorm: x * pow(mean(x^2) + eps, -0.5) (* w when with_scale)
    y = x * torch.pow(x.pow(2).mean(-1, keepdim=True) + eps, -0.5)
    return y * w if w is not None else y


def cos_sin(pos, rope):
    """(B, S, D): angles in float64, cos/sin rounded to float32, both halves (rotate_half)."""
    inv, att = rope_params(rope["theta"], rope["R"], rope["mpe"], rope["scaling"],
                           int(pos.max()) + 1)
    freqs = pos.double()[..., None] * inv.double()[None, None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * att).float().double(), (emb.sin() * att).float().double()


def apply_rope(x, cos, sin):  # x (B, S, heads, D): apply_rotary_pos_emb(..., unsqueeze_dim=2)
    return x * cos[:, :, None] + rotate_half(x) * sin[:, :, None]


def layer_attention(s, sd, x, keep, pos):
    """context (B, S, C) and maps (B, H, S, S); sd: the layer's names without the prefix."""
    B, S, _ = x.shape
    H, Hkv, D = s["H"], s["Hkv"], s["D"]
    cos, sin = cos_sin(pos, s["rope"])
    q = linear(x, sd, "q_proj").view(B, S, H, D)
    q = apply_rope(gemma_rms(q, sd["q_norm.weight"], s["eps"]), cos, sin).transpose(1, 2)
    k = linear(x, sd, "k_proj").view(B, S, Hkv, D)
    v = linear(x, sd, "v_proj").view(B, S, Hkv, D) if not s["k_eq_v"] else k
    k = apply_rope(gemma_rms(k, sd["k_norm.weight"], s["eps"]), cos, sin).transpose(1, 2)
    v = gemma_rms(v, None, s["eps"]).transpose(1, 2)
    k, v = repeat_kv(k, H // Hkv), repeat_kv(v, H // Hkv)
    scores = q @ k.transpose(2, 3)  # self.scaling = 1.0
    probs = softmax_rows(scores, allowed_keys(B, S, s["causal"], s["window"], keep))
    y = (probs @ v).transpose(1, 2).reshape(B, S, H * D)
    return linear(y, sd, "o_proj"), probs


# ---- one layer's tensors, as Gemma4TextDecoderLayer names them ------------------------------------

def layer_weights(s, g, ple):
    C, H, Hkv, D = s["C"], s["H"], s["Hkv"], s["D"]
    r = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    sd = OrderedDict()
    block = s["prefix"][:-len("self_attn.")]
    sd[block + "input_layernorm.weight"] = 1.0 + 0.1 * r(C)
    w = OrderedDict()
    put(w, "q_proj", lin(g, H * D, C, s["bias"]))
    w["q_norm.weight"] = 1.0 + 0.3 * r(D)
    if not s["shared"]:  # layers sharing an earlier layer's K/V have no k_proj, v_proj, k_norm
        w["k_norm.weight"] = 1.0 + 0.3 * r(D)
        put(w, "k_proj", lin(g, Hkv * D, C, s["bias"]))
        if not s["k_eq_v"]:
            put(w, "v_proj", lin(g, Hkv * D, C, s["bias"]))
    put(w, "o_proj", lin(g, C, H * D, s["bias"]))
    for k, v in w.items():
        sd[s["prefix"] + k] = v
    for n in ("post_attention_layernorm", "pre_feedforward_layernorm",
              "post_feedforward_layernorm"):
        sd[block + n + ".weight"] = torch.ones(C, dtype=torch.float64)
    sd[block + "mlp.gate_proj.weight"] = r(8, C) * 0.1
    sd[block + "mlp.up_proj.weight"] = r(8, C) * 0.1
    sd[block + "mlp.down_proj.weight"] = r(C, 8) * 0.1
    sd[block + "layer_scalar"] = torch.ones(1, dtype=torch.float64)
    if ple:  # hidden_size_per_layer_input: the per-layer input gate and projection
        sd[block + "per_layer_input_gate.weight"] = r(ple, C) * 0.1
        sd[block + "per_layer_projection.weight"] = r(C, ple) * 0.1
        sd[block + "post_per_layer_input_norm.weight"] = torch.ones(C, dtype=torch.float64)
    return sd


def model_outside(s, g, wrapped, vocab=12):
    r = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64) * 0.1  # noqa: E731
    top = "model.language_model." if wrapped else "model."
    sd = OrderedDict([(top + "embed_tokens.weight", r(vocab, s["C"])),
                      (top + "norm.weight", torch.ones(s["C"], dtype=torch.float64))])
    if wrapped:  # Gemma4Model's vision tower and its embedder beside the language model
        sd["model.vision_tower.encoder.layers.0.self_attn.q_proj.linear.weight"] = r(8, 8)
        sd["model.embed_vision.embedding_projection.weight"] = r(s["C"], 8)
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
    t = text_config(cfg)
    wrapped = cfg["model_type"] == "gemma4"
    per_layer = [settings(cfg, i) for i in range(t["num_hidden_layers"])]
    sd = model_outside(per_layer[0], g, wrapped)
    ple = t.get("hidden_size_per_layer_input") or 0
    for s in per_layer:
        sd.update(layer_weights(s, g, ple))
    stored = write_weights(model_dir, sd, spec["container"], spec["dtype"])
    lines = []
    for layer in spec["layers"]:
        s = per_layer[layer]
        assert not s["shared"], (name, layer)
        p = s["prefix"]
        lsd = {k[len(p):]: v for k, v in stored.items() if k.startswith(p)}
        B, S = spec.get("B", 2), spec.get("S", 8)
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
            np.save(os.path.join(d, "positions.npy"), pos.numpy())
            case["attention_mask"] = "attention_mask.npy"
            case["positions"] = "positions.npy"
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(case, f, indent=1)
        np.save(os.path.join(d, "expected", "context.npy"), ctx.float().numpy())
        np.save(os.path.join(d, "expected", "attention.npy"), maps.float().numpy())
        sc = s["rope"]["scaling"]
        lines.append(f"    layer {layer}: {s['type']}, H {s['H']}/{s['Hkv']} D {s['D']}"
                     + (f", rope {sc['rope_type']} {sc['partial_rotary_factor']}" if sc else "")
                     + (", k_eq_v" if s["k_eq_v"] else "")
                     + (f", window {s['window']}" if s["window"] else "")
                     + ("" if s["causal"] else ", bidirectional"))
    if verbose:
        print(f"{name:14s} {cfg['model_type']:12s} {spec['container']:12s} {spec['dtype']}")
        print("\n".join(lines))


# ---- the folders ----------------------------------------------------------------------------------

def specs():
    # google/gemma-4-31B's shape, shrunk: k_eq_v on the full layers (KV heads 4 -> 1 there),
    # global_head_dim 16 beside head_dim 8, proportional rope (a quarter) on the full layers.
    gemma4 = {
        "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
        "boi_token_id": 255999, "eoi_token_id": 258882, "image_token_id": 258880,
        "audio_token_id": 258881, "initializer_range": 0.02, "tie_word_embeddings": True,
        "text_config": {
            "model_type": "gemma4_text", "hidden_size": 32, "intermediate_size": 8,
            "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
            "num_global_key_value_heads": 1, "head_dim": 8, "global_head_dim": 16,
            "attention_k_eq_v": True, "num_kv_shared_layers": 0, "sliding_window": 3,
            "layer_types": ["sliding_attention", "full_attention", "sliding_attention",
                            "full_attention"],
            "rope_parameters": {
                "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0,
                                   "rope_type": "proportional"},
                "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}},
            "rms_norm_eps": 1e-06, "attention_bias": False, "attention_dropout": 0.0,
            "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 262144,
            "final_logit_softcapping": 30.0, "use_bidirectional_attention": "vision",
            "vocab_size": 12, "vocab_size_per_layer_input": 12, "hidden_size_per_layer_input": 0,
            "enable_moe_block": False, "use_double_wide_mlp": False, "dtype": "bfloat16"},
        "vision_config": {"model_type": "gemma4_vision", "hidden_size": 8,
                          "num_hidden_layers": 1},
        "audio_config": None, "transformers_version": "5.5.0"}
    # google/gemma-4-E2B's shape as Gemma4ForCausalLM saves it: no k_eq_v (the full layers keep
    # num_key_value_heads and a v_proj, with global_head_dim), per-layer inputs, and the last two
    # layers sharing K/V (refused). rope_parameters left out: the class's defaults.
    gemma4_text = {
        "architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4_text",
        "hidden_size": 32, "intermediate_size": 8, "num_hidden_layers": 5,
        "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 8,
        "global_head_dim": 16, "attention_k_eq_v": False, "num_kv_shared_layers": 2,
        "sliding_window": 4,
        "layer_types": ["sliding_attention", "sliding_attention", "full_attention",
                        "sliding_attention", "full_attention"],
        "rms_norm_eps": 1e-06, "hidden_activation": "gelu_pytorch_tanh",
        "max_position_embeddings": 131072, "vocab_size": 12, "vocab_size_per_layer_input": 12,
        "hidden_size_per_layer_input": 4, "use_double_wide_mlp": True, "dtype": "bfloat16",
        "transformers_version": "5.5.0"}
    return [
        dict(name="gemma4", seed=121, config=gemma4, container="safetensors", dtype="bf16",
             layers=[0, 1], pad="left"),
        dict(name="gemma4_text", seed=122, config=gemma4_text, container="shards2",
             dtype="f32", layers=[1, 2], pad="right", S=9),
    ]


def main():
    for spec in specs():
        write_folder(spec)


if __name__ == "__main__":
    main()

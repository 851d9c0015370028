#!/usr/bin/python3
"""Hugging Face model folders of CONTRACT.md v3's decoder families that need no new forward-pass
feature (issue 24): gpt_bigcode, starcoder2, granite, phi, gptj, internlm2, smollm3, with torch's
expected output for 1-3 of each model's layers, written to tests/golden/folders/<name>/ as
make_folders.py writes the v2 families (same folder shape, same writers, same checks in
test_golden_folders).

The reference reads config.json as each family's configuration class does (`settings`, with the
class defaults for keys a config.json leaves out) and computes the attention in float64 from the
stored weights, as the family's modeling code does (transformers' modeling_<type>.py, or the
remote code a hub folder ships), with CONTRACT.md's float64 RoPE angles (cos/sin rounded to
float32) and all-zero fully masked rows. It does not use attn-run's mapping
(lib/src/family/families.cpp), which is what the tests check.

make_folders.make_folder writes the folders; it looks its family code up by name in
make_folders, so `install()` puts this file's families beside the v2 ones there (each function
falls back to make_folders' own for the other families).

Deterministic (fixed seeds). Usage:
  /usr/bin/python3 tests/golden/make_families_v3_decoders.py            writes the fixtures
  /usr/bin/python3 tests/golden/make_families_v3_decoders.py --heldout  held-out folders (other
      seeds, shapes, spellings, prefixes; class defaults left out) run through build/attn-run by
      heldout_folders.py's runner (ATTN_BIN, HELDOUT_DIR as there)
"""
import os
import shutil
import sys
from collections import OrderedDict

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_folders as mf  # noqa: E402
from make_positions import rope_params  # noqa: E402
from make_variants import allowed_keys, repeat_kv, rotate_half, softmax_rows  # noqa: E402

# configuration_<type>.py's defaults for the keys the attention reads.
CLASS_DEFAULTS = {
    "gpt_bigcode": dict(multi_query=True, scale_attn_weights=True),
    "starcoder2": dict(rope_theta=10000.0, num_key_value_heads=2, sliding_window=None,
                       use_bias=True),
    "granite": dict(rope_theta=10000.0, attention_bias=False, attention_multiplier=1.0),
    "phi": dict(rope_theta=10000.0, partial_rotary_factor=0.5, qk_layernorm=False),
    "gptj": dict(rotary_dim=64),
    "internlm2": dict(rope_theta=10000.0, bias=True, rope_scaling=None),
    "smollm3": dict(rope_theta=2000000.0, num_key_value_heads=4, use_sliding_window=False,
                    sliding_window=None, no_rope_layers=None, no_rope_layer_interval=4,
                    attention_bias=False),
}
TYPES = tuple(CLASS_DEFAULTS)


# ---- config.json as the configuration classes read it ----------------------------------------

def settings(cfg, layer):
    """Layer `layer`'s attention settings (make_folders.hf_settings' dict, plus rope "style")."""
    mt = cfg["model_type"]
    cfg = dict(CLASS_DEFAULTS[mt], **cfg)
    C = next(cfg[k] for k in ("hidden_size", "n_embd") if k in cfg)
    H = next(cfg[k] for k in ("num_attention_heads", "n_head") if k in cfg)
    L = next(cfg[k] for k in ("num_hidden_layers", "n_layer") if k in cfg)
    Hkv = cfg.get("num_key_value_heads") or H  # null: as many as the query heads
    D = C // H
    s = dict(model_type=mt, C=C, H=H, Hkv=Hkv, D=D, scale=D ** -0.5, causal=True, rope=None,
             window=None, softcap=None, qk_norm=None, sinks=False, alibi=None, layout="proj",
             prefix=f"model.layers.{layer}.self_attn.")
    mpe = cfg.get("max_position_embeddings")

    def rope(theta, R, style="half"):
        scaling = cfg.get("rope_scaling")
        if scaling is not None and scaling.get("rope_type", scaling.get("type")) == "default":
            scaling = None
        return dict(theta=float(theta), R=R, scaling=scaling, mpe=mpe, style=style)

    if mt == "gpt_bigcode":  # GPTBigCodeAttention: c_attn nn.Linear, learned positions outside
        mq = cfg["multi_query"]
        s.update(layout="bigcode_mq" if mq else "bigcode_mha", Hkv=1 if mq else H, qkv_bias=True,
                 o_bias=True, prefix=f"transformer.h.{layer}.attn.")
        s["scale"] = D ** -0.5 if cfg["scale_attn_weights"] else 1.0
    elif mt == "starcoder2":  # Starcoder2Attention: use_bias on q/k/v/o, a window on every layer
        b = bool(cfg["use_bias"])
        s.update(qkv_bias=b, o_bias=b, window=cfg["sliding_window"])
        s["rope"] = rope(cfg["rope_theta"], D)
    elif mt == "granite":  # GraniteAttention: scaling = attention_multiplier
        b = bool(cfg["attention_bias"])
        s.update(qkv_bias=b, o_bias=b, scale=cfg["attention_multiplier"])
        s["rope"] = rope(cfg["rope_theta"], D)
    elif mt == "phi":  # PhiAttention: biased q/k/v_proj and dense, partial rotary
        s.update(qkv_bias=True, o_bias=True, out="dense")
        if cfg["qk_layernorm"]:  # nn.LayerNorm(head_dim) on q and on k, before rope
            s["phi_qk_layernorm"] = cfg["layer_norm_eps"]
        s["rope"] = rope(cfg["rope_theta"], int(D * cfg["partial_rotary_factor"]))
    elif mt == "gptj":  # GPTJAttention: no biases, rotate_every_two on rotary_dim dims
        s.update(qkv_bias=False, o_bias=False, out="out_proj",
                 prefix=f"transformer.h.{layer}.attn.")
        s["rope"] = rope(10000.0, cfg["rotary_dim"] or D, "interleaved")
    elif mt == "internlm2":  # InternLM2Attention: wqkv as (Hkv, H/Hkv + 2, D), wo
        b = bool(cfg["bias"])
        s.update(layout="internlm2", qkv_bias=b, o_bias=b,
                 prefix=f"model.layers.{layer}.attention.")
        s["rope"] = rope(cfg["rope_theta"], D)
    elif mt == "smollm3":  # SmolLM3Attention: use_rope = no_rope_layers[layer]
        b = bool(cfg["attention_bias"])
        s.update(qkv_bias=b, o_bias=b)
        no_rope = cfg["no_rope_layers"] or [
            int((i + 1) % cfg["no_rope_layer_interval"] != 0) for i in range(L)]
        types = cfg.get("layer_types") or [
            "sliding_attention" if cfg["use_sliding_window"] and cfg["sliding_window"] is not None
            and not no_rope[i] else "full_attention" for i in range(L)]
        if no_rope[layer]:
            s["rope"] = rope(cfg["rope_theta"], D)
        if types[layer] == "sliding_attention":
            s["window"] = cfg["sliding_window"]
    else:
        raise ValueError(mt)
    return s


# ---- the tensors under the families' names ---------------------------------------------------

def attention_weights(s, g):
    """The attention's own tensors, names relative to s["prefix"]."""
    C, H, Hkv, D = s["C"], s["H"], s["Hkv"], s["D"]
    sd = OrderedDict()
    if s["layout"] in ("bigcode_mq", "bigcode_mha"):  # c_attn (C + 2*Hkv*D, C), c_proj
        mf.put(sd, "c_attn", mf.lin(g, (H + 2 * Hkv) * D, C, True))
        mf.put(sd, "c_proj", mf.lin(g, C, C, True))
    elif s["layout"] == "internlm2":  # wqkv ((H + 2*Hkv)*D, C), wo
        mf.put(sd, "wqkv", mf.lin(g, (H + 2 * Hkv) * D, C, s["qkv_bias"]))
        mf.put(sd, "wo", mf.lin(g, C, H * D, s["o_bias"]))
    else:
        sd = ORIGINAL["attention_weights"](s, g)
        if s.get("phi_qk_layernorm"):  # PhiAttention.q_layernorm / k_layernorm, (D) each
            for n in ("q_layernorm", "k_layernorm"):
                sd[n + ".weight"] = 1.0 + 0.3 * torch.randn(D, generator=g, dtype=torch.float64)
                sd[n + ".bias"] = 0.2 * torch.randn(D, generator=g, dtype=torch.float64)
    return sd


def block_neighbours(mt, layer, C, g, small=4):
    """Keys around the attention in the same block, as each family's checkpoints have them."""
    r = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64) * 0.1  # noqa: E731
    one = torch.ones(C, dtype=torch.float64)
    if mt in ("gpt_bigcode", "gptj"):
        p = f"transformer.h.{layer}."
        n = {p + "ln_1.weight": one, p + "ln_1.bias": one * 0}
        if mt == "gptj":  # GPTJAttention's causal buffers, in the hub's pytorch_model.bin
            n[p + "attn.bias"] = torch.tril(torch.ones(1, 1, 16, 16)).bool()
            n[p + "attn.masked_bias"] = torch.tensor(-1e9)
            n[p + "mlp.fc_in.weight"] = r(small, C)
        else:
            n[p + "mlp.c_fc.weight"] = r(small, C)
        return n
    p = f"model.layers.{layer}."
    if mt == "internlm2":
        return {p + "attention_norm.weight": one, p + "feed_forward.w1.weight": r(small, C)}
    if mt == "starcoder2":
        return {p + "input_layernorm.weight": one, p + "input_layernorm.bias": one * 0,
                p + "mlp.c_fc.weight": r(small, C)}
    if mt == "phi":
        return {p + "input_layernorm.weight": one, p + "mlp.fc1.weight": r(small, C)}
    return ORIGINAL["block_neighbours"](mt, layer, C, g, small)


def model_outside(mt, C, g, vocab=12):
    r = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64) * 0.1  # noqa: E731
    if mt == "gpt_bigcode":
        return {"transformer.wte.weight": r(vocab, C), "transformer.wpe.weight": r(64, C)}
    if mt == "gptj":
        return {"transformer.wte.weight": r(vocab, C), "lm_head.weight": r(vocab, C)}
    if mt == "internlm2":
        return {"model.tok_embeddings.weight": r(vocab, C), "output.weight": r(vocab, C)}
    if mt == "phi":
        return {"model.embed_tokens.weight": r(vocab, C),
                "model.final_layernorm.weight": torch.ones(C, dtype=torch.float64)}
    return ORIGINAL["model_outside"](mt, C, g, vocab)


# ---- the attention, as each family's modeling code computes it ------------------------------

def rotate_every_two(x):  # modeling_gptj.rotate_every_two: pairs (x[2i], x[2i+1])
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def apply_rope(x, pos, rope):
    """x (B, H, S, D): the first R dimensions rotated (rest passes), angles in float64."""
    R = rope["R"]
    inv, att = rope_params(rope["theta"], R, rope["mpe"], rope["scaling"], int(pos.max()) + 1)
    freqs = pos.double()[..., None] * inv.double()[None, None, :]  # (B, S, R/2)
    if rope["style"] == "interleaved":  # modeling_gptj: sin/cos repeat_interleave(2)
        emb, turn = freqs.repeat_interleave(2, dim=-1), rotate_every_two
    else:  # modeling_llama.apply_rotary_pos_emb
        emb, turn = torch.cat((freqs, freqs), dim=-1), rotate_half
    cos = (emb.cos() * att).float().double()[:, None]
    sin = (emb.sin() * att).float().double()[:, None]
    rot, rest = x[..., :R], x[..., R:]
    return torch.cat((rot * cos + turn(rot) * sin, rest), dim=-1)


def qkv_heads(s, sd, x):
    """q (B, H, S, D), k and v (B, Hkv, S, D)."""
    B, S, _ = x.shape
    H, Hkv, D = s["H"], s["Hkv"], s["D"]
    lay = s["layout"]
    if lay == "bigcode_mq":  # c_attn(x).split((C, D, D)): one K and V head for all queries
        q, k, v = mf.linear(x, sd, "c_attn").split([H * D, D, D], dim=-1)
        return (q.view(B, S, H, D).transpose(1, 2), k.view(B, S, 1, D).transpose(1, 2),
                v.view(B, S, 1, D).transpose(1, 2))
    if lay == "bigcode_mha":  # c_attn(x).view(B, S, H, 3D): per head [q, k, v]
        qkv = mf.linear(x, sd, "c_attn").view(B, S, H, 3 * D).transpose(1, 2)
        return qkv.split(D, dim=-1)
    if lay == "internlm2":  # rearrange "b q (h gs d) -> b q h gs d", gs = H/Hkv + 2
        qkv = mf.linear(x, sd, "wqkv").view(B, S, Hkv, H // Hkv + 2, D)
        q = qkv[:, :, :, :-2].reshape(B, S, H, D).transpose(1, 2)
        return q, qkv[:, :, :, -2].transpose(1, 2), qkv[:, :, :, -1].transpose(1, 2)
    return mf.qkv_heads(s, sd, x)


def output_proj(s, sd, y):
    name = {"bigcode_mq": "c_proj", "bigcode_mha": "c_proj", "internlm2": "wo"}.get(s["layout"])
    return mf.linear(y, sd, name) if name else mf.output_proj(s, sd, y)


def layer_attention(s, sd, x, keep, pos):
    """context (B, S, C) and maps (B, H, S, S): eager attention of modeling_<type>.py."""
    if s["model_type"] not in TYPES:
        return ORIGINAL["layer_attention"](s, sd, x, keep, pos)
    B, S, _ = x.shape
    q, k, v = qkv_heads(s, sd, x)
    if s.get("phi_qk_layernorm"):  # modeling_phi: q_layernorm(q), k_layernorm(k) before rope
        eps, D = s["phi_qk_layernorm"], s["D"]
        q = F.layer_norm(q, (D,), sd["q_layernorm.weight"], sd["q_layernorm.bias"], eps)
        k = F.layer_norm(k, (D,), sd["k_layernorm.weight"], sd["k_layernorm.bias"], eps)
    if s["rope"] is not None:
        q, k = apply_rope(q, pos, s["rope"]), apply_rope(k, pos, s["rope"])
    k, v = repeat_kv(k, s["H"] // k.shape[1]), repeat_kv(v, s["H"] // v.shape[1])
    scores = (q @ k.transpose(2, 3)) * s["scale"]
    probs = softmax_rows(scores, allowed_keys(B, S, s["causal"], s["window"], keep))
    y = (probs @ v).transpose(1, 2).reshape(B, S, s["H"] * s["D"])
    return output_proj(s, sd, y), probs


# ---- make_folders' family lookups, with this file's families -----------------------------------

ORIGINAL = {}


def install():
    """Points make_folders' per-family functions at this file's (which fall back to them)."""
    if ORIGINAL:
        return
    for name in ("hf_settings", "attention_weights", "block_neighbours", "model_outside",
                 "layer_attention"):
        ORIGINAL[name] = getattr(mf, name)
    mf.attention_weights = lambda s, g: attention_weights(s, g) if s["model_type"] in TYPES \
        else ORIGINAL["attention_weights"](s, g)
    mf.block_neighbours = lambda mt, *a, **k: (block_neighbours if mt in TYPES else ORIGINAL[
        "block_neighbours"])(mt, *a, **k)
    mf.model_outside = lambda mt, *a, **k: (model_outside if mt in TYPES else ORIGINAL[
        "model_outside"])(mt, *a, **k)
    mf.hf_settings = lambda cfg, layer: settings(cfg, layer) if cfg.get("model_type") in TYPES \
        else ORIGINAL["hf_settings"](cfg, layer)
    mf.layer_attention = layer_attention


# ---- the fixtures ------------------------------------------------------------------------------

def specs():
    return [
        # SantaCoder / StarCoder: multi_query (one K/V head), fp32 softmax flags as on the hub
        dict(name="gpt_bigcode", seed=301, container="safetensors", dtype="f16", layers=[0, 1],
             B=2, S=8, pad="left",
             config={"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode",
                     "activation_function": "gelu_pytorch_tanh", "attention_softmax_in_fp32": True,
                     "attn_pdrop": 0.1, "embd_pdrop": 0.1, "layer_norm_epsilon": 1e-05,
                     "multi_query": True, "n_embd": 32, "n_head": 4, "n_inner": 8, "n_layer": 2,
                     "n_positions": 64, "resid_pdrop": 0.1, "scale_attention_softmax_in_fp32": True,
                     "scale_attn_weights": True, "torch_dtype": "float16", "vocab_size": 12}),
        # GPT-BigCode without multi_query: c_attn per head [q, k, v]
        dict(name="gpt_bigcode_mha", seed=302, container="safetensors", dtype="f32", layers=[1],
             S=7,
             config={"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode",
                     "multi_query": False, "n_embd": 24, "n_head": 3, "n_inner": 8, "n_layer": 2,
                     "n_positions": 64, "scale_attn_weights": True, "vocab_size": 12}),
        dict(name="starcoder2", seed=303, container="safetensors", dtype="bf16", layers=[0, 1],
             B=2, S=9, pad="right",
             config={"architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2",
                     "attention_dropout": 0.1, "hidden_act": "gelu_pytorch_tanh",
                     "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 64,
                     "norm_epsilon": 1e-05, "num_attention_heads": 4, "num_hidden_layers": 2,
                     "num_key_value_heads": 2, "residual_dropout": 0.1, "rope_theta": 100000,
                     "sliding_window": 4, "torch_dtype": "bfloat16", "use_bias": True,
                     "vocab_size": 12}),
        # Granite 3: attention_multiplier (1/D here, as Granite's 1/128 for D = 128) is the scale
        dict(name="granite", seed=304, container="safetensors", dtype="bf16", layers=[0, 1], S=8,
             offset=5,
             config={"architectures": ["GraniteForCausalLM"], "model_type": "granite",
                     "attention_bias": False, "attention_dropout": 0.1,
                     "attention_multiplier": 0.125, "embedding_multiplier": 12.0,
                     "hidden_act": "silu", "hidden_size": 32, "intermediate_size": 8,
                     "logits_scaling": 8.0, "max_position_embeddings": 64, "mlp_bias": False,
                     "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
                     "residual_multiplier": 0.22, "rms_norm_eps": 1e-05, "rope_scaling": None,
                     "rope_theta": 10000000.0, "torch_dtype": "bfloat16", "vocab_size": 12}),
        # phi-2: num_key_value_heads null, partial rotary 0.4 of the head
        dict(name="phi", seed=305, container="safetensors", dtype="f16", layers=[0, 1], B=2, S=8,
             pad="left", offset=20,
             config={"architectures": ["PhiForCausalLM"], "model_type": "phi",
                     "attention_dropout": 0.0, "embd_pdrop": 0.0, "hidden_act": "gelu_new",
                     "hidden_size": 40, "intermediate_size": 8, "layer_norm_eps": 1e-05,
                     "max_position_embeddings": 64, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "num_key_value_heads": None,
                     "partial_rotary_factor": 0.4, "qk_layernorm": False, "resid_pdrop": 0.1,
                     "rope_scaling": None, "rope_theta": 10000.0, "tie_word_embeddings": False,
                     "torch_dtype": "float16", "vocab_size": 12}),
        # phi with qk_layernorm (as phi-1.5 fine-tunes set it): a LayerNorm with a bias on q and
        # on k per head, before the partial rotary
        dict(name="phi_qk_layernorm", seed=311, container="safetensors", dtype="f32", layers=[0, 1],
             B=2, S=7, pad="right",
             config={"architectures": ["PhiForCausalLM"], "model_type": "phi",
                     "hidden_act": "gelu_new", "hidden_size": 32, "intermediate_size": 8,
                     "layer_norm_eps": 1e-05, "max_position_embeddings": 64,
                     "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
                     "partial_rotary_factor": 0.5, "qk_layernorm": True, "rope_theta": 10000.0,
                     "torch_dtype": "float32", "vocab_size": 12}),
        # GPT-J: rotary_dim of the head rotated in pairs (x[2i], x[2i+1]), causal buffers saved
        dict(name="gptj", seed=306, container="safetensors", dtype="f32", layers=[0, 2], S=9,
             offset=3,
             config={"architectures": ["GPTJForCausalLM"], "model_type": "gptj",
                     "activation_function": "gelu_new", "attn_pdrop": 0.0, "embd_pdrop": 0.0,
                     "layer_norm_epsilon": 1e-05, "n_embd": 48, "n_head": 4, "n_inner": None,
                     "n_layer": 3, "n_positions": 64, "resid_pdrop": 0.0, "rotary": True,
                     "rotary_dim": 8, "tie_word_embeddings": False, "vocab_size": 12}),
        # InternLM2 (trust_remote_code): wqkv per KV group, dynamic NTK past the 8 positions
        dict(name="internlm2", seed=307, container="safetensors", dtype="bf16", layers=[0, 1],
             S=11,
             config={"architectures": ["InternLM2ForCausalLM"], "model_type": "internlm2",
                     "attn_implementation": "eager",
                     "auto_map": {
                         "AutoConfig": "configuration_internlm2.InternLM2Config",
                         "AutoModelForCausalLM": "modeling_internlm2.InternLM2ForCausalLM"},
                     "bias": False, "hidden_act": "silu", "hidden_size": 48,
                     "intermediate_size": 8, "max_position_embeddings": 8,
                     "num_attention_heads": 6, "num_hidden_layers": 2, "num_key_value_heads": 2,
                     "rms_norm_eps": 1e-05, "rope_scaling": {"type": "dynamic", "factor": 2.0},
                     "rope_theta": 1000000, "torch_dtype": "bfloat16", "vocab_size": 12}),
        # SmolLM3: no_rope_layers (layer 3 has no rope), no window
        dict(name="smollm3", seed=308, container="safetensors", dtype="bf16", layers=[2, 3], B=2,
             S=8, pad="left",
             config={"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3",
                     "attention_bias": False, "hidden_act": "silu", "hidden_size": 32,
                     "intermediate_size": 8,
                     "layer_types": ["full_attention"] * 4, "max_position_embeddings": 64,
                     "max_window_layers": 28, "no_rope_layer_interval": 4,
                     "no_rope_layers": [1, 1, 1, 0], "num_attention_heads": 4,
                     "num_hidden_layers": 4, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
                     "rope_scaling": None, "rope_theta": 5000000.0, "sliding_window": None,
                     "use_sliding_window": False, "vocab_size": 12}),
        # SmolLM3 with sliding windows: the no-rope layers (every 2nd) slide
        dict(name="smollm3_swa", seed=309, container="safetensors", dtype="f32", layers=[0, 1],
             S=9,
             config={"architectures": ["SmolLM3ForCausalLM"], "model_type": "smollm3",
                     "hidden_size": 32, "max_position_embeddings": 64,
                     "no_rope_layer_interval": 2, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "num_key_value_heads": 4, "rope_theta": 10000.0,
                     "sliding_window": 3, "use_sliding_window": True, "vocab_size": 12}),
    ]


def heldout_specs():
    """Other seeds, shapes, layers, padding, spellings and prefixes; class defaults left out."""
    return [
        # GPTBigCodeModel (no "transformer." prefix), multi_query and scale_attn_weights left out
        dict(name="gpt_bigcode", seed=401, container="safetensors", dtype="f32", layers=[2], B=2,
             S=9, pad="right", rename=[("transformer.", "")],
             config={"model_type": "gpt_bigcode", "n_embd": 40, "n_head": 5, "n_layer": 3}),
        dict(name="gpt_bigcode_mha_noscale", seed=402, container="safetensors", dtype="bf16",
             layers=[0], S=6,
             config={"model_type": "gpt_bigcode", "n_embd": 32, "n_head": 2, "n_layer": 1,
                     "multi_query": False, "scale_attn_weights": False}),
        # num_key_value_heads left out (Starcoder2Config: 2), no bias, no window
        dict(name="starcoder2", seed=403, container="shards2", dtype="f32", layers=[1], B=2, S=8,
             pad="left",
             config={"model_type": "starcoder2", "hidden_size": 48, "num_attention_heads": 6,
                     "num_hidden_layers": 2, "use_bias": False, "sliding_window": None,
                     "max_position_embeddings": 64}),
        # attention_multiplier left out (1.0), biases, linear scaling
        dict(name="granite", seed=404, container="safetensors", dtype="f32", layers=[1], B=2,
             S=7, pad="right",
             config={"model_type": "granite", "hidden_size": 24, "num_attention_heads": 3,
                     "num_hidden_layers": 2, "attention_bias": True, "rope_theta": 10000.0,
                     "rope_scaling": {"rope_type": "linear", "factor": 2.0},
                     "max_position_embeddings": 64}),
        # partial_rotary_factor left out (0.5), GQA
        dict(name="phi", seed=405, container="safetensors", dtype="f32", layers=[0], S=7,
             config={"model_type": "phi", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "num_hidden_layers": 1,
                     "max_position_embeddings": 64}),
        # dynamic NTK on the partial rotary dims past max_position_embeddings
        dict(name="phi_dynamic", seed=415, container="safetensors", dtype="f32", layers=[1], S=9,
             offset=12,
             config={"model_type": "phi", "hidden_size": 48, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "partial_rotary_factor": 0.5,
                     "rope_scaling": {"type": "dynamic", "factor": 2.0},
                     "max_position_embeddings": 16}),
        # GPTJModel ("h." prefix), the whole head rotated
        dict(name="gptj", seed=406, container="safetensors", dtype="f16", layers=[1], B=2, S=8,
             pad="left", rename=[("transformer.", "")],
             config={"model_type": "gptj", "n_embd": 32, "n_head": 4, "n_layer": 2,
                     "rotary_dim": 8, "n_positions": 64}),
        # pytorch_model.bin as EleutherAI/gpt-j-6b ships it (bool attn.bias buffers inside)
        dict(name="gptj_bin", seed=416, container="bin", dtype="f16", layers=[0], S=7, offset=9,
             config={"model_type": "gptj", "n_embd": 32, "n_head": 2, "n_layer": 1,
                     "rotary_dim": 6, "n_positions": 64}),
        # bias left out (InternLM2Config: True), one KV group, linear scaling
        dict(name="internlm2", seed=407, container="safetensors", dtype="f32", layers=[1], B=2,
             S=8, pad="right",
             config={"model_type": "internlm2", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 1, "num_hidden_layers": 2, "rope_theta": 10000,
                     "rope_scaling": {"type": "linear", "factor": 3.0},
                     "max_position_embeddings": 64}),
        # no_rope_layers left out: every 4th layer without rope, sliding there
        dict(name="smollm3", seed=408, container="safetensors", dtype="f32", layers=[3, 4], B=2,
             S=9, pad="right",
             config={"model_type": "smollm3", "hidden_size": 32, "num_attention_heads": 4,
                     "num_hidden_layers": 5, "use_sliding_window": True, "sliding_window": 4,
                     "rope_theta": 10000.0, "max_position_embeddings": 64}),
    ]


def main():
    install()
    if "--heldout" in sys.argv[1:]:
        import heldout_folders as ho
        ho.specs = heldout_specs
        ho.main()
        return
    n = 0
    for spec in specs():
        path = os.path.join(mf.OUT, spec["name"])
        if os.path.isdir(path):  # only this file's folders; make_folders.py writes the others
            shutil.rmtree(path)
        mf.make_folder(spec)
        n += len(spec["layers"])
    print(f"wrote {len(specs())} model folders, {n} layer cases, to {mf.OUT}")


if __name__ == "__main__":
    main()

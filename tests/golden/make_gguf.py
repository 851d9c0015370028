#!/usr/bin/python3
"""GGUF files as llama.cpp's converter writes them, with torch's expected output (issue 25).

Each tests/golden/gguf/<name>/ holds
  model.gguf   a whole tiny model's attention tensors (plus a block's neighbours: attn_norm,
               ffn_*), written by scripts/gguf_write.py: the metadata llama.cpp's
               convert_hf_to_gguf.py writes for the architecture (and what it leaves out, so
               llama.cpp's defaults apply), the tensors changed as the converter changes them
               (llama: Q/K rows permuted, LlamaModel.permute; Gemma: q/k norms stored as 1 + w;
               Llama 3's rope scaling as rope_freqs.weight), each in a ggml type of the spec:
               F32/F16/BF16 from Hugging Face-shaped weights, block types as random valid
               blocks with realistic scales (scripts/gguf_quants.py);
  layer<N>/    case.json ({"model": "../model.gguf", "layer": N, "input"}), input.npy and torch's
               expected/context.npy and attention.npy.

The expected values are make_folders.py's torch attention of the family (hf_settings reads the
Hugging Face config.json the GGUF came from) on the weights the GGUF holds, dequantized with the
bit-exact NumPy dequantizers and brought back to Hugging Face's order (Q/K rows un-permuted,
1 + w back to w): what the Hugging Face layer computes on the dequantized weights.

CONTRACT.md v3's families (starcoder2 ... t5) are make_gguf_v3.py's, which this script runs after
its own.

Deterministic (fixed seeds). Usage: /usr/bin/python3 tests/golden/make_gguf.py [NAME ...]
(names: only those files of this script's specs again).
"""
import json
import math
import os
import shutil
import sys
from collections import OrderedDict

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from gguf_quants import F16_SCALES, ID, TYPES, dequantize, random_blocks  # noqa: E402
from gguf_write import GGUFWriter, Value  # noqa: E402
from make_folders import hf_settings, layer_attention  # noqa: E402

OUT = os.path.join(HERE, "gguf")

# Scale magnitudes that keep each block type's values near 0.1-1 (d times its integer factors).
SCALE = {"Q4_0": 0.03, "Q4_1": 0.03, "Q5_0": 0.02, "Q5_1": 0.02, "Q8_0": 0.004, "Q2_K": 0.02,
         "Q3_K": 0.004, "Q4_K": 0.002, "Q5_K": 0.001, "Q6_K": 0.0002, "IQ4_NL": 0.003,
         "IQ4_XS": 0.0003, "MXFP4": 0.0}


def blocks(tname, rows, cols, rng):
    """Random valid blocks of a block type, (rows, cols) values, realistic scales."""
    tid = ID[tname]
    raw = np.frombuffer(random_blocks(tid, rows * cols, rng), np.uint8).copy()
    _, bs, bb = TYPES[tid]
    b = raw.reshape(-1, bb)
    for off in F16_SCALES.get(tname, []):
        v = (rng.uniform(0.5, 1.0, len(b)) * SCALE[tname]).astype(np.float16).view(np.uint16)
        b[:, off] = v & 0xFF
        b[:, off + 1] = v >> 8
    raw = b.tobytes()
    return raw, dequantize(tid, raw, rows * cols).reshape(rows, cols).astype(np.float64)


def stored(tname, w, rng):
    """(raw bytes, values as read back) of a weight in a ggml type."""
    w = np.asarray(w, np.float64)
    if tname == "F32":
        a = w.astype(np.float32)
        return a.tobytes(), a.astype(np.float64)
    if tname == "F16":
        a = w.astype(np.float16)
        return a.tobytes(), a.astype(np.float64)
    if tname == "BF16":
        u = (w.astype(np.float32).view(np.uint32) + 0x8000) >> 16  # round half up: any valid bf16
        a = u.astype(np.uint16)
        return a.tobytes(), (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    rows, cols = w.shape
    return blocks(tname, rows, cols, rng)


def permute(w, n_head):  # LlamaModel.permute of convert_hf_to_gguf.py (rows of Q or K)
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(
        w.shape)


def unpermute(w, n_head):
    return w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(
        w.shape)


def llama3_factors(theta, R, sc):  # LlamaModel.generate_extra_tensors: rope_freqs.weight
    freqs = 1.0 / (theta ** (torch.arange(0, R, 2, dtype=torch.float32) / R))
    factor, lo, hi = sc.get("factor", 8.0), sc.get("low_freq_factor", 1.0), sc.get(
        "high_freq_factor", 4.0)
    old = sc.get("original_max_position_embeddings", 8192)
    lo_wl, hi_wl = old / lo, old / hi
    out = []
    for f in freqs.tolist():
        wl = 2 * math.pi / f
        if wl < hi_wl:
            out.append(1.0)
        elif wl > lo_wl:
            out.append(factor)
        else:
            s = (old / wl - lo) / (hi - lo)
            out.append(1 / ((1 - s) / factor + s))
    return np.array(out, np.float32)


def metadata(w, arch, cfg, s, n_layers, layer_heads=None, swa_base=False):
    """The converter's keys; layer_heads [(H, Hkv) per layer]: head_count and head_count_kv as
    arrays of one i32 per layer, as gguf-py's add_head_count(list) writes them (OpenELM)."""
    a = arch + "."
    w.add("general.architecture", arch)
    w.add("general.name", "attn-run golden " + arch)
    w.add(a + "block_count", n_layers)
    w.add(a + "context_length", cfg.get("max_position_embeddings", 2048))
    w.add(a + "embedding_length", s["C"])
    w.add(a + "feed_forward_length", 8)
    if layer_heads:
        for key, i in (("attention.head_count", 0), ("attention.head_count_kv", 1)):
            w.add(a + key, Value("array", [Value("i32", h[i]) for h in layer_heads], "i32"))
    else:
        w.add(a + "attention.head_count", s["H"])
        w.add(a + "attention.head_count_kv", s["Hkv"])
    if "head_dim" in cfg:
        w.add(a + "attention.key_length", s["D"])
        w.add(a + "attention.value_length", s["D"])
    if arch != "gemma2":  # the gemma2 converter writes no freq_base: llama.cpp's 10000 applies
        w.add(a + "rope.freq_base", float(cfg.get("rope_theta", 10000.0)))
    if swa_base:  # today's TextModel: rope_local_base_freq as rope.freq_base_swa
        w.add(a + "rope.freq_base_swa", float(cfg["rope_local_base_freq"]))
    if cfg.get("layer_types"):  # add_sliding_window_pattern([t == "sliding_attention" ...])
        w.add(a + "attention.sliding_window_pattern",
              [t == "sliding_attention" for t in cfg["layer_types"]])
    if s["rope"] and s["rope"]["R"] != s["D"]:
        w.add(a + "rope.dimension_count", s["rope"]["R"])
    w.add(a + "attention.layer_norm_rms_epsilon", float(cfg.get("rms_norm_eps", 1e-6)))
    if cfg.get("sliding_window") and arch != "llama":  # LlamaModel writes no window
        w.add(a + "attention.sliding_window", cfg["sliding_window"])
    if cfg.get("attn_logit_softcapping"):
        w.add(a + "attn_logit_softcapping", float(cfg["attn_logit_softcapping"]))
    sc = cfg.get("rope_scaling") or {}
    t = sc.get("rope_type", sc.get("type"))
    if t == "linear":
        w.add(a + "rope.scaling.type", "linear")
        w.add(a + "rope.scaling.factor", float(sc["factor"]))
    elif t == "yarn":
        w.add(a + "rope.scaling.type", "yarn")
        w.add(a + "rope.scaling.factor", float(sc["factor"]))
        w.add(a + "rope.scaling.original_context_length", sc["original_max_position_embeddings"])
        if "beta_fast" in sc:
            w.add(a + "rope.scaling.yarn_beta_fast", float(sc["beta_fast"]))
            w.add(a + "rope.scaling.yarn_beta_slow", float(sc["beta_slow"]))
    elif t == "longrope":  # Phi3MiniModel: factors as tensors, attn_factor as HF derives it
        orig = cfg["original_max_position_embeddings"]
        scale = cfg["max_position_embeddings"] / orig
        # (no rope.scaling.type: the factor tensors say LongRoPE, as llama.cpp's phi3 reads them)
        w.add(a + "rope.scaling.original_context_length", orig)
        w.add(a + "rope.scaling.attn_factor",
              float(1.0 if scale <= 1.0 else math.sqrt(1 + math.log(scale) / math.log(orig))))
        for which in ("long", "short"):
            f = np.array(sc[which + "_factor"], np.float32)
            w.add_tensor(f"rope_factors_{which}.weight", f.shape, ID["F32"], f.tobytes())
    w.add("general.file_type", 1)


def own_metadata(w, arch, cfg, s, n_layers):
    """GPT2Model's, FalconModel's and MPTModel's set_gguf_parameters: their own few keys (no
    rope, no head_count_kv for GPT-2 and MPT; Falcon's head_count_kv always, 1 when the config
    has none; MPT's max_alibi_bias)."""
    a = arch + "."
    w.add("general.architecture", arch)
    w.add("general.name", "attn-run golden " + arch)
    if arch == "falcon":
        w.add(a + "context_length", 2048)
        w.add(a + "tensor_data_layout", "jploski")
    w.add(a + "block_count", n_layers)
    if arch in ("gpt2", "mpt"):
        w.add(a + "context_length", cfg["n_ctx"] if arch == "gpt2" else cfg["max_seq_len"])
    w.add(a + "embedding_length", s["C"])
    w.add(a + "feed_forward_length", 4 * s["C"])
    w.add(a + "attention.head_count", s["H"])
    if arch == "falcon":
        w.add(a + "attention.head_count_kv", s["Hkv"])
    w.add(a + "attention.layer_norm_epsilon", float(cfg.get("layer_norm_epsilon", 1e-5)))
    if arch == "mpt":  # MPTModel: the ALiBi bias bound, 0.0 without ALiBi
        ac = cfg["attn_config"]
        w.add(a + "attention.max_alibi_bias", float(ac["alibi_bias_max"]) if ac["alibi"] else 0.0)
    w.add("general.file_type", 1)


def make(spec):
    name, arch, cfg = spec["name"], spec["arch"], spec["config"]
    types = spec["types"]
    root = os.path.join(OUT, name)
    os.makedirs(root)
    g = torch.Generator().manual_seed(spec["seed"])
    rng = np.random.default_rng(spec["seed"])
    n_layers = next(cfg[k] for k in ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
                    if k in cfg)
    w = GGUFWriter(version=spec.get("version", 3))
    s0 = hf_settings(cfg, 0)
    freqs = None
    if spec.get("rope_freqs"):  # Llama 3's divisors beside another scaling: both apply
        freqs = llama3_factors(float(cfg["rope_theta"]), s0["rope"]["R"], spec["rope_freqs"])
        cfg = dict(cfg, rope_scaling=dict(cfg["rope_scaling"],
                                          freq_factors=freqs.astype(np.float64).tolist()))
        s0 = hf_settings(cfg, 0)
    if arch in ("gpt2", "falcon", "mpt"):
        own_metadata(w, arch, cfg, s0, n_layers)
    else:
        metadata(w, arch, cfg, s0, n_layers, spec.get("layer_heads"), spec.get("swa_base", False))
    C = s0["C"]
    r = lambda *shape: 0.3 * torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    w.add_tensor("token_embd.weight", (12, C), ID["F32"], r(12, C).numpy().astype(np.float32).tobytes())
    sc = cfg.get("rope_scaling") or {}
    if sc.get("rope_type") == "llama3":
        ff = llama3_factors(float(cfg["rope_theta"]), s0["rope"]["R"], sc)
        w.add_tensor("rope_freqs.weight", ff.shape, ID["F32"], ff.tobytes())
    if freqs is not None:
        w.add_tensor("rope_freqs.weight", freqs.shape, ID["F32"], freqs.tobytes())
    per_layer = {}
    for layer in range(n_layers):
        s = hf_settings(cfg, layer)
        if spec.get("layer_heads"):  # the layer's own counts (llama.cpp's n_head(il))
            s = dict(s, H=spec["layer_heads"][layer][0], Hkv=spec["layer_heads"][layer][1])
        H, Hkv, D = s["H"], s["Hkv"], s["D"]
        p = f"blk.{layer}."
        lsd = OrderedDict()
        w.add_tensor(p + "attn_norm.weight", (C,), ID["F32"], np.ones(C, np.float32).tobytes())

        def weight(gname, hfname, rows, cols, perm=None, bias=False):
            hf = r(rows, cols).numpy()
            gg = permute(hf, perm) if perm else hf
            raw, back = stored(types.get(gname, "F32"), gg, rng)
            w.add_tensor(p + gname + ".weight", (rows, cols), ID[types.get(gname, "F32")], raw)
            lsd[hfname + ".weight"] = torch.tensor(unpermute(back, perm) if perm else back)
            if bias:
                b = r(rows).numpy()
                bb = (permute(b, perm) if perm else b).astype(np.float32)
                w.add_tensor(p + gname + ".bias", (rows,), ID["F32"], bb.tobytes())
                back_b = bb.astype(np.float64)
                lsd[hfname + ".bias"] = torch.tensor(unpermute(back_b, perm) if perm else back_b)

        perm = arch == "llama"
        if s["layout"] in ("phi3", "mpt"):  # [Q | K | V] rows as Hugging Face keeps them
            weight("attn_qkv", "qkv_proj" if s["layout"] == "phi3" else "Wqkv", (H + 2 * Hkv) * D, C)
        elif s["layout"] == "neox":  # GPTNeoXModel / BloomModel: per head [q|k|v] -> [Q|K|V]
            order = lambda t: t.reshape(H, 3, D, *t.shape[1:]).swapaxes(0, 1).reshape(t.shape)  # noqa
            back = lambda t: t.reshape(3, H, D, *t.shape[1:]).swapaxes(0, 1).reshape(t.shape)  # noqa
            hf = r(3 * H * D, C).numpy()
            tname = types.get("attn_qkv", "F32")
            raw, got = stored(tname, order(hf), rng)
            w.add_tensor(p + "attn_qkv.weight", hf.shape, ID[tname], raw)
            lsd["query_key_value.weight"] = torch.tensor(back(got))
            if s["qkv_bias"]:
                b = order(r(3 * H * D).numpy()).astype(np.float32)
                w.add_tensor(p + "attn_qkv.bias", b.shape, ID["F32"], b.tobytes())
                lsd["query_key_value.bias"] = torch.tensor(back(b.astype(np.float64)))
        elif s["layout"] == "gpt2":  # GPT2Model: Conv1D (in, out) transposed to (out, in)
            for gname, hfname, cols in (("attn_qkv", "c_attn", 3 * C), ("attn_output", "c_proj", C)):
                tname = types.get(gname, "F32")
                raw, got = stored(tname, r(C, cols).numpy().T, rng)
                w.add_tensor(p + gname + ".weight", (cols, C), ID[tname], raw)
                lsd[hfname + ".weight"] = torch.tensor(np.ascontiguousarray(got.T))
                b = r(cols).numpy().astype(np.float32)
                w.add_tensor(p + gname + ".bias", b.shape, ID["F32"], b.tobytes())
                lsd[hfname + ".bias"] = torch.tensor(b.astype(np.float64))
        elif s["layout"] == "falcon":  # FalconModel: KV groups [q..., k, v] -> [Q | K | V]
            G = H // Hkv + 2
            hf = r((H + 2 * Hkv) * D, C).numpy().reshape(Hkv, G, D, C)
            conv = np.concatenate([hf[:, :-2].reshape(-1, C), hf[:, -2].reshape(-1, C),
                                   hf[:, -1].reshape(-1, C)])
            tname = types.get("attn_qkv", "F32")
            raw, got = stored(tname, conv, rng)
            w.add_tensor(p + "attn_qkv.weight", conv.shape, ID[tname], raw)
            q, k, v = np.split(got, [H * D, (H + Hkv) * D])
            lsd["query_key_value.weight"] = torch.tensor(np.concatenate(
                [q.reshape(Hkv, G - 2, D, C), k.reshape(Hkv, 1, D, C), v.reshape(Hkv, 1, D, C)],
                1).reshape(-1, C))
        else:
            weight("attn_q", "q_proj", H * D, C, H if perm else None, s["qkv_bias"])
            weight("attn_k", "k_proj", Hkv * D, C, Hkv if perm else None, s["qkv_bias"])
            weight("attn_v", "v_proj", Hkv * D, C, None, s["qkv_bias"])
        if s["layout"] != "gpt2":
            out = {"neox": "dense", "falcon": "dense", "mpt": "out_proj"}.get(s["layout"], "o_proj")
            weight("attn_output", out, C, H * D, None, s["o_bias"])
        if s["qk_norm"]:
            shift = 1.0 if arch in ("gemma2", "gemma3") else 0.0
            whole = s["qk_norm"][1] == "all"  # OLMo 2: over all heads' q (H*D) and k (Hkv*D)
            for gname, hfname, n in (("attn_q_norm", "q_norm", H * D if whole else D),
                                     ("attn_k_norm", "k_norm", Hkv * D if whole else D)):
                v = (1.0 + 0.3 * r(n)).numpy()  # Hugging Face's weight, whatever its form
                st = (v.astype(np.float32) + np.float32(shift)).astype(np.float32)  # in float32
                w.add_tensor(p + gname + ".weight", (n,), ID["F32"], st.tobytes())
                lsd[hfname + ".weight"] = torch.tensor(st.astype(np.float64) - shift)
        if s["sinks"]:
            v = r(H).numpy().astype(np.float32)
            w.add_tensor(p + "attn_sinks.weight", (H,), ID["F32"], v.tobytes())
            lsd["sinks"] = torch.tensor(v.astype(np.float64))
        w.add_tensor(p + "ffn_norm.weight", (C,), ID["F32"], np.ones(C, np.float32).tobytes())
        w.add_tensor(p + "ffn_up.weight", (8, C), ID["F32"], r(8, C).numpy().astype(np.float32).tobytes())
        w.add_tensor(p + "ffn_down.weight", (C, 8), ID["F32"], r(C, 8).numpy().astype(np.float32).tobytes())
        per_layer[layer] = (s, lsd)
    w.write(os.path.join(root, "model.gguf"))
    out = []
    for layer in spec["layers"]:
        s, lsd = per_layer[layer]
        B, S = 1, spec.get("S", 7)
        x = torch.randn(B, S, C, generator=g, dtype=torch.float64).float().double()
        pos = torch.arange(S).expand(B, S)
        with torch.no_grad():
            ctx, maps = layer_attention(s, lsd, x, None, pos)
        d = os.path.join(root, f"layer{layer}")
        os.makedirs(os.path.join(d, "expected"))
        np.save(os.path.join(d, "input.npy"), x[0].float().numpy())
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump({"model": "../model.gguf", "layer": layer, "input": "input.npy"}, f, indent=1)
        np.save(os.path.join(d, "expected", "context.npy"), ctx[0].float().numpy())
        np.save(os.path.join(d, "expected", "attention.npy"), maps[0].float().numpy())
        out.append(f"layer {layer}: window {s['window']}, softcap {s['softcap']}, "
                   f"rope {s['rope'] and (s['rope']['theta'], s['rope']['R'])}")
    size = os.path.getsize(os.path.join(root, "model.gguf"))
    print(f"{name:16s} {arch:8s} {size / 1024:6.1f} KB  " + ", ".join(
        f"{k}={v}" for k, v in types.items()))
    for o in out:
        print("    " + o)


def specs():
    llama3 = {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
              "original_max_position_embeddings": 32, "rope_type": "llama3"}
    return [
        # Llama 3 with its rope_freqs.weight; 32-element block types (rows of C = 32).
        dict(name="llama", arch="llama", seed=11, layers=[0, 1],
             types={"attn_q": "Q8_0", "attn_k": "Q4_0", "attn_v": "Q5_1", "attn_output": "IQ4_NL"},
             config={"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 2,
                     "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
                     "rope_theta": 500000.0, "rope_scaling": llama3, "attention_bias": False}),
        # K-quants need rows of 256: a wider Llama (2), GGUF version 2.
        dict(name="llama_kquants", arch="llama", seed=12, layers=[1], version=2,
             types={"attn_q": "Q4_K", "attn_k": "Q6_K", "attn_v": "Q2_K", "attn_output": "Q3_K"},
             config={"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "num_hidden_layers": 2,
                     "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
                     "rope_theta": 10000.0}),
        dict(name="qwen2", arch="qwen2", seed=13, layers=[0],
             types={"attn_q": "F16", "attn_k": "BF16", "attn_v": "Q5_0", "attn_output": "Q4_1"},
             config={"model_type": "qwen2", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "num_hidden_layers": 2,
                     "max_position_embeddings": 128, "rms_norm_eps": 1e-6,
                     "rope_theta": 1000000.0, "use_sliding_window": False}),
        dict(name="qwen3", arch="qwen3", seed=14, layers=[1],
             types={"attn_q": "Q5_K", "attn_k": "IQ4_XS", "attn_v": "Q8_0", "attn_output": "F16"},
             config={"model_type": "qwen3", "hidden_size": 256, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 2,
                     "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                     "attention_bias": False, "use_sliding_window": False}),
        dict(name="gemma2", arch="gemma2", seed=15, layers=[0, 1],
             types={"attn_q": "BF16", "attn_k": "F16"},
             config={"model_type": "gemma2", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 2,
                     "query_pre_attn_scalar": 16, "attn_logit_softcapping": 2.0,
                     "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
                     "rope_theta": 10000.0, "sliding_window": 4}),
        dict(name="gemma3", arch="gemma3", seed=16, layers=[0, 5],
             types={"attn_q": "Q8_0", "attn_v": "F16"},
             config={"model_type": "gemma3_text", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 6,
                     "query_pre_attn_scalar": 8, "max_position_embeddings": 128,
                     "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                     "rope_local_base_freq": 10000.0, "sliding_window_pattern": 6,
                     "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                     "sliding_window": 3}),
        dict(name="gemma", arch="gemma", seed=20, layers=[0],
             types={"attn_q": "Q4_1", "attn_k": "Q5_1"},
             config={"model_type": "gemma", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 1, "head_dim": 16, "num_hidden_layers": 1,
                     "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
                     "rope_theta": 10000.0}),
        dict(name="olmo2", arch="olmo2", seed=21, layers=[1],
             types={"attn_q": "Q8_0", "attn_v": "BF16"},
             config={"model_type": "olmo2", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "num_hidden_layers": 2,
                     "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
                     "rope_theta": 500000.0, "attention_bias": False}),
        dict(name="gpt_neox", arch="gptneox", seed=22, layers=[0],
             types={"attn_qkv": "Q8_0", "attn_output": "F16"},
             config={"model_type": "gpt_neox", "hidden_size": 32, "num_attention_heads": 4,
                     "num_hidden_layers": 1, "rotary_pct": 0.5, "rotary_emb_base": 10000,
                     "max_position_embeddings": 64, "layer_norm_eps": 1e-5,
                     "attention_bias": True}),
        dict(name="bloom", arch="bloom", seed=23, layers=[1],
             types={"attn_qkv": "Q4_0", "attn_output": "Q8_0"},
             config={"model_type": "bloom", "hidden_size": 32, "n_head": 4, "n_layer": 2,
                     "layer_norm_epsilon": 1e-5}),
        # Phi-3: fused attn_qkv, partial rotary, LongRoPE factors as tensors, a window.
        dict(name="phi3", arch="phi3", seed=18, layers=[1], S=9,
             types={"attn_qkv": "Q8_0", "attn_output": "Q5_0"},
             config={"model_type": "phi3", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "num_hidden_layers": 2,
                     "max_position_embeddings": 64, "original_max_position_embeddings": 8,
                     "partial_rotary_factor": 0.75, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
                     "rope_scaling": {"type": "longrope", "long_factor": [1.0, 1.5, 2.0],
                                      "short_factor": [1.0, 1.1, 1.2]},
                     "sliding_window": 5}),
        # Qwen3-MoE (Qwen3-30B-A3B's kind): Qwen3's attention under its own architecture.
        dict(name="qwen3moe", arch="qwen3moe", seed=24, layers=[0],
             types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q4_0", "attn_output": "Q8_0"},
             config={"model_type": "qwen3", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 1,
                     "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                     "attention_bias": False, "use_sliding_window": False}),
        # A Mistral checkpoint: llama.cpp converts it as "llama" (Q/K permuted; its window
        # is not in the file and is longer than the input here).
        dict(name="mistral", arch="llama", seed=19, layers=[0],
             types={"attn_q": "BF16", "attn_k": "Q8_0", "attn_v": "F32", "attn_output": "F16"},
             config={"model_type": "mistral", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 1, "num_hidden_layers": 1,
                     "max_position_embeddings": 128, "rms_norm_eps": 1e-5,
                     "rope_theta": 1000000.0, "sliding_window": 4096}),
        dict(name="gpt_oss", arch="gpt-oss", seed=17, layers=[0, 1],
             types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "Q8_0"},
             config={"model_type": "gpt_oss", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 2,
                     "layer_types": ["sliding_attention", "full_attention"],
                     "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
                     "rope_theta": 150000, "sliding_window": 3, "attention_bias": True,
                     "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                                      "original_max_position_embeddings": 128,
                                      "rope_type": "yarn", "truncate": False}}),
        # Head counts per layer (arrays of i32, as OpenELM's converter writes them): layer 1
        # has 2 heads and 1 KV head where layer 0 has 4 and 2; Q/K permuted per layer.
        dict(name="llama_layer_heads", arch="llama", seed=28, layers=[0, 1],
             layer_heads=[(4, 2), (2, 1)],
             types={"attn_q": "Q8_0", "attn_k": "F16", "attn_v": "Q8_0", "attn_output": "Q8_0"},
             config={"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 2,
                     "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
                     "rope_theta": 10000.0, "attention_bias": False}),
        # rope_freqs.weight (Llama 3's divisors) with rope.scaling.type linear: ggml divides by
        # both (freq_scale * theta / freq_factors); positions past original 32 via S = 40.
        dict(name="llama_freqs_linear", arch="llama", seed=29, layers=[1], S=40,
             rope_freqs={"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 32, "rope_type": "llama3"},
             types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "F16", "attn_output": "F16"},
             config={"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 2,
                     "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
                     "rope_theta": 500000.0, "rope_scaling": {"rope_type": "linear", "factor": 2.0},
                     "attention_bias": False}),
        # Gemma 3 as today's converter writes it: the sliding layers' base (20000 here, not
        # llama.cpp's old 10000) in rope.freq_base_swa; layer 0 slides, layer 5 is global.
        dict(name="gemma3_swa_base", arch="gemma3", seed=30, layers=[0, 5], swa_base=True,
             types={"attn_q": "Q8_0", "attn_k": "F16"},
             config={"model_type": "gemma3_text", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 6,
                     "query_pre_attn_scalar": 8, "max_position_embeddings": 128,
                     "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                     "rope_local_base_freq": 20000.0, "sliding_window_pattern": 6,
                     "sliding_window": 4}),
        # Layer types as one bool per layer in attention.sliding_window_pattern (as the
        # converters that read layer_types write it), not Gemma 3's period 6: 1 global, 2 local.
        dict(name="gemma3_swa_layers", arch="gemma3", seed=31, layers=[0, 1], S=9,
             types={"attn_q": "Q8_0", "attn_v": "F16"},
             config={"model_type": "gemma3_text", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 3,
                     "query_pre_attn_scalar": 8, "max_position_embeddings": 128,
                     "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                     "rope_local_base_freq": 10000.0, "sliding_window": 3,
                     "layer_types": ["full_attention", "sliding_attention", "sliding_attention"]}),
        # MPT (MPT-7B's kind): Wqkv unchanged as attn_qkv, ALiBi (bias bound 8), no biases.
        dict(name="mpt", arch="mpt", seed=32, layers=[1],
             types={"attn_qkv": "Q8_0", "attn_output": "Q5_1"},
             config={"model_type": "mpt", "d_model": 32, "n_heads": 4, "n_layers": 2,
                     "max_seq_len": 64, "no_bias": True,
                     "attn_config": {"alibi": True, "alibi_bias_max": 8, "clip_qkv": None}}),
        # GPT-2: attn_qkv / attn_output transposed from Conv1D, with biases; no rope.
        dict(name="gpt2", arch="gpt2", seed=25, layers=[1],
             types={"attn_qkv": "Q8_0", "attn_output": "F16"},
             config={"model_type": "gpt2", "n_embd": 32, "n_head": 4, "n_layer": 2, "n_ctx": 64,
                     "n_positions": 64, "layer_norm_epsilon": 1e-5}),
        # Falcon-40B's shape (new_decoder_architecture, 2 KV groups) and Falcon-7B's
        # (multi-query: one K/V head), attn_qkv reordered to [Q | K | V].
        dict(name="falcon", arch="falcon", seed=26, layers=[0, 1],
             types={"attn_qkv": "Q8_0", "attn_output": "Q4_0"},
             config={"model_type": "falcon", "hidden_size": 32, "num_attention_heads": 4,
                     "num_kv_heads": 2, "num_key_value_heads": 2, "num_hidden_layers": 2,
                     "new_decoder_architecture": True, "alibi": False, "bias": False,
                     "rope_theta": 10000.0, "layer_norm_epsilon": 1e-5}),
        dict(name="falcon_mq", arch="falcon", seed=27, layers=[1],
             types={"attn_qkv": "BF16", "attn_output": "Q8_0"},
             config={"model_type": "falcon", "hidden_size": 32, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "multi_query": True,
                     "new_decoder_architecture": False, "alibi": False, "bias": False,
                     "rope_theta": 10000.0, "layer_norm_epsilon": 1e-5}),
    ]


def main(only=()):
    """Every file, or (names given) only those of specs() again, the others left as they are."""
    if only:
        for spec in specs():
            if spec["name"] in only:
                shutil.rmtree(os.path.join(OUT, spec["name"]), ignore_errors=True)
                make(spec)
        return
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for spec in specs():
        make(spec)
    import make_gguf_v3  # CONTRACT.md v3's families, with their generators' references
    make_gguf_v3.main(OUT)


if __name__ == "__main__":
    main(sys.argv[1:])

"""GGUF files as llama.cpp's converter (convert_hf_to_gguf.py) writes them, with torch's expected
output: gguf/<name>/model.gguf and layer<N>/ (case.json {"model": "../model.gguf", "layer",
"input"}, input.npy, expected/context.npy and attention.npy).

The file holds a whole tiny model's attention tensors (and a block's neighbours: attn_norm,
ffn_*), the metadata the architecture's converter class writes (and what it leaves out, so
llama.cpp's defaults apply), the tensors changed as the converter changes them, each in a ggml
type of the spec: F32/F16/BF16 from Hugging Face-shaped weights, block types as random valid
blocks with realistic scales (scripts/gguf_quants.py). The expected values are the family's torch
attention on the weights the file holds, dequantized with the bit-exact NumPy dequantizers and
brought back to Hugging Face's names and order: what the Hugging Face layer computes on them.

A spec (in its family's file) has name, arch, seed, layers, types ({gguf tensor: ggml type}),
config (the Hugging Face config.json it comes from) and one of two writers:
  "by_layout"  each layer's tensors drawn here, GGUF-side, by the layer's projection layout (the
               converters of llama, qwen2/3, gemma*, olmo2, phi3, gpt-oss, gptneox, bloom, mpt,
               gpt2, falcon): Q/K rows permuted for llama (LlamaModel.permute), Gemma's q/k norms
               stored 1 + w, per-head [q,k,v] and Falcon's KV groups reordered to [Q | K | V],
               Conv1D transposed; metadata by `llama_like_metadata` or the spec's "metadata";
  "by_family"  each layer's Hugging Face tensors drawn by the family's own `gguf_weights`
               (so in its folders' order), then `to_gguf` (the family's, or the generic rename
               with "permute" for LlamaModel subclasses and "norm_plus_one" for Qwen3-Next) and
               undone by `from_gguf`; metadata by `text_model_metadata` or the spec's "metadata",
               then the spec's "extra" keys; the expected output from the config as llama.cpp
               runs the file (the spec's "runs_as" keys over "config").
"""
import math
import os
import shutil
from collections import OrderedDict

import numpy as np
import torch

from . import folder, reference
from .util import F16_SCALES, ID, TYPES, dequantize, gguf_write, random_blocks

Value = gguf_write.Value

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


def general(w, arch):
    w.add("general.architecture", arch)
    w.add("general.name", "attn-run golden " + arch)


def llama_like_metadata(w, arch, cfg, s, n_layers, spec):
    """LlamaModel's and its kin's keys (TextModel.set_gguf_parameters as the converters of the
    "by_layout" architectures write them); spec["layer_heads"] [(H, Hkv) per layer]: head_count
    and head_count_kv as arrays of one i32 per layer, as gguf-py's add_head_count(list) writes
    them (OpenELM); spec["swa_base"]: rope_local_base_freq as rope.freq_base_swa."""
    a = arch + "."
    general(w, arch)
    w.add(a + "block_count", n_layers)
    w.add(a + "context_length", cfg.get("max_position_embeddings", 2048))
    w.add(a + "embedding_length", s.C)
    w.add(a + "feed_forward_length", 8)
    layer_heads = spec.get("layer_heads")
    if layer_heads:
        for key, i in (("attention.head_count", 0), ("attention.head_count_kv", 1)):
            w.add(a + key, Value("array", [Value("i32", h[i]) for h in layer_heads], "i32"))
    else:
        w.add(a + "attention.head_count", s.H)
        w.add(a + "attention.head_count_kv", s.Hkv)
    if "head_dim" in cfg:
        w.add(a + "attention.key_length", s.D)
        w.add(a + "attention.value_length", s.D)
    if arch != "gemma2":  # the gemma2 converter writes no freq_base: llama.cpp's 10000 applies
        w.add(a + "rope.freq_base", float(cfg.get("rope_theta", 10000.0)))
    if spec.get("swa_base"):  # today's TextModel: rope_local_base_freq as rope.freq_base_swa
        w.add(a + "rope.freq_base_swa", float(cfg["rope_local_base_freq"]))
    if cfg.get("layer_types"):  # add_sliding_window_pattern([t == "sliding_attention" ...])
        w.add(a + "attention.sliding_window_pattern",
              [t == "sliding_attention" for t in cfg["layer_types"]])
    if s.rope and s.rope.R != s.D:
        w.add(a + "rope.dimension_count", s.rope.R)
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


def text_model_metadata(w, arch, cfg, n_layers, llama_model=False):
    """TextModel.set_gguf_parameters (conversion/base.py); LlamaModel's rope.dimension_count."""
    a = arch + "."
    general(w, arch)
    w.add(a + "block_count", n_layers)
    get = lambda *keys: next((cfg[k] for k in keys if cfg.get(k) is not None), None)  # noqa
    if (n := get("max_position_embeddings", "n_ctx", "n_positions")) is not None:
        w.add(a + "context_length", n)
    C, H = get("hidden_size", "n_embd"), get("num_attention_heads", "n_head")
    w.add(a + "embedding_length", C)
    w.add(a + "feed_forward_length", get("intermediate_size", "n_inner") or 8)
    w.add(a + "attention.head_count", H)
    if (n := get("num_key_value_heads")) is not None:
        w.add(a + "attention.head_count_kv", n)
    rope_params = cfg.get("rope_parameters") or {}  # transformers v5 (TextModel.rope_parameters)
    if (t := rope_params.get("rope_theta", get("rope_theta"))) is not None:
        w.add(a + "rope.freq_base", float(t))
    if (e := get("rms_norm_eps", "norm_eps")) is not None:
        w.add(a + "attention.layer_norm_rms_epsilon", float(e))
    if (e := get("layer_norm_eps", "layer_norm_epsilon", "norm_epsilon")) is not None:
        w.add(a + "attention.layer_norm_epsilon", float(e))
    if (d := get("head_dim")) is not None:
        w.add(a + "attention.key_length", d)
        w.add(a + "attention.value_length", d)
    if llama_model:
        w.add(a + "rope.dimension_count", get("head_dim") or C // H)


def n_layers_of(cfg):
    return next(cfg[k] for k in ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
                if k in cfg)


def f32(w, name, values):
    a = np.asarray(values, np.float32)
    w.add_tensor(name, a.shape, ID["F32"], a.tobytes())


def cases(root, spec, C, per_layer, g, fam, norms=None, token_embd=None):
    """layer<N>/ of the file: an unbatched input of spec["S"] (default 7) tokens drawn from g, the
    family's attention at positions 0..S-1 on the weights as the file gives them back. A layer
    with a norm in `norms` (its attn_norm weight as stored, the spec's input_norm) also gets
    residual.npy: the drawn input is the residual stream, its RMSNorm the layer's input. A layer
    of the spec's tokens also gets tokens.npy: the residual stream is those ids' rows of
    `token_embd` (as read back), times sqrt(C) in float32 with tokens' scale "sqrt" (llama.cpp's
    ggml_scale(inpL, sqrtf(n_embd)) for Gemma)."""
    lines = []
    for layer in spec["layers"]:
        s, lsd = per_layer[layer]
        B, S = 1, spec.get("S", 7)
        x = torch.randn(B, S, C, generator=g, dtype=torch.float64).float().double()
        tokens = spec.get("tokens")
        ids = None
        if tokens and layer in tokens["layers"]:
            ids = torch.randint(token_embd.shape[0], (B, S),
                                generator=torch.Generator().manual_seed(spec["seed"] + 9000))
            x = torch.tensor(token_embd)[ids]
            if tokens.get("scale") == "sqrt":
                x = (x.float() * torch.tensor(C ** 0.5, dtype=torch.float32)).double()
        h = None
        if norms and layer in norms:
            n = spec["input_norm"]
            h, x = x, reference.input_norm(x, norms[layer], None, "rms", n["eps"]).float().double()
        pos = torch.arange(S).expand(B, S)
        ctx, maps = folder.forward(fam, s, lsd, x, None, pos)
        d = os.path.join(root, f"layer{layer}")
        folder.write_case(d, {"model": "../model.gguf", "layer": layer, "input": "input.npy"},
                          x[0], ctx[0], maps[0])
        if h is not None:
            folder.save_npy(d, "residual.npy", h[0].float().numpy())
        if ids is not None:
            folder.save_npy(d, "tokens.npy", ids[0].numpy())
        lines.append(f"layer {layer}: {folder.describe(s)}")
    return lines


# ---- "by_layout": each GGUF tensor drawn by the layer's projection layout -------------------

def write_by_layout(fam, spec, root, writer):
    arch, cfg, types = spec["arch"], spec["config"], spec["types"]
    g = torch.Generator().manual_seed(spec["seed"])
    rng = np.random.default_rng(spec["seed"])
    n_layers = n_layers_of(cfg)
    w = writer(version=spec.get("version", 3))
    s0 = fam.settings(cfg, 0)
    freqs = None
    if spec.get("rope_freqs"):  # Llama 3's divisors beside another scaling: both apply
        freqs = llama3_factors(float(cfg["rope_theta"]), s0.rope.R, spec["rope_freqs"])
        cfg = dict(cfg, rope_scaling=dict(cfg["rope_scaling"],
                                          freq_factors=freqs.astype(np.float64).tolist()))
        s0 = fam.settings(cfg, 0)
    spec.get("metadata", llama_like_metadata)(w, arch, cfg, s0, n_layers, spec)
    C = s0.C
    r = lambda *shape: 0.3 * torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    token_embd = r(12, C).numpy()
    if spec.get("tokens"):  # in the spec's ggml type, read back as llama.cpp dequantizes it
        ttype = spec["tokens"].get("type", "F32")
        raw, token_embd = stored(ttype, token_embd, rng)
        w.add_tensor("token_embd.weight", (12, C), ID[ttype], raw)
        if spec["tokens"].get("vocab"):  # LlamaModel's set_vocab: the token strings
            w.add("tokenizer.ggml.model", "llama")
            w.add("tokenizer.ggml.tokens", list(spec["tokens"]["vocab"]))
    else:
        f32(w, "token_embd.weight", token_embd)
    sc = cfg.get("rope_scaling") or {}
    if sc.get("rope_type") == "llama3":
        f32(w, "rope_freqs.weight", llama3_factors(float(cfg["rope_theta"]), s0.rope.R, sc))
    if freqs is not None:
        f32(w, "rope_freqs.weight", freqs)
    per_layer, norms = {}, {}
    gn = torch.Generator().manual_seed(spec["seed"] + 7000)  # input_norm's own draws
    for layer in range(n_layers):
        s = fam.settings(cfg, layer)
        if spec.get("layer_heads"):  # the layer's own counts (llama.cpp's n_head(il))
            s = s.replace(H=spec["layer_heads"][layer][0], Hkv=spec["layer_heads"][layer][1])
        norm = None
        if layer in (spec.get("input_norm") or {}).get("layers", []):
            # as stored: Gemma's converter writes 1 + w, the multiplier itself
            norm = (1.0 + 0.3 * torch.randn(C, generator=gn, dtype=torch.float64)).float()
            norms[layer] = norm.double()
        per_layer[layer] = (s, layout_tensors(w, arch, s, f"blk.{layer}.", types, r, rng, norm))
    w.write(os.path.join(root, "model.gguf"))
    return cases(root, spec, C, per_layer, g, fam, norms, token_embd)


def layout_tensors(w, arch, s, p, types, r, rng, norm=None):
    """One layer's tensors added to w (attn_norm: `norm`, else ones); returns the layer's Hugging
    Face tensors as read back."""
    C, H, Hkv, D = s.C, s.H, s.Hkv, s.D
    lsd = OrderedDict()
    f32(w, p + "attn_norm.weight", np.ones(C, np.float32) if norm is None else norm.numpy())

    def tensor(gname, shape, values):
        tname = types.get(gname, "F32")
        raw, back = stored(tname, values, rng)
        w.add_tensor(p + gname + ".weight", shape, ID[tname], raw)
        return back

    def bias(gname, values):
        b = values.astype(np.float32)
        f32(w, p + gname + ".bias", b)
        return b.astype(np.float64)

    def weight(gname, hfname, rows, cols, perm=None, with_bias=False):
        hf = r(rows, cols).numpy()
        back = tensor(gname, (rows, cols), permute(hf, perm) if perm else hf)
        lsd[hfname + ".weight"] = torch.tensor(unpermute(back, perm) if perm else back)
        if with_bias:
            b = bias(gname, permute(r(rows).numpy(), perm) if perm else r(rows).numpy())
            lsd[hfname + ".bias"] = torch.tensor(unpermute(b, perm) if perm else b)

    perm = arch == "llama"
    qkv = s.names[0]
    if s.layout == "fused":  # [Q | K | V] rows as Hugging Face keeps them
        weight("attn_qkv", qkv, (H + 2 * Hkv) * D, C)
    elif s.layout == "per_head":  # GPTNeoXModel / BloomModel: per head [q|k|v] -> [Q|K|V]
        order = lambda t: t.reshape(H, 3, D, *t.shape[1:]).swapaxes(0, 1).reshape(t.shape)  # noqa
        back = lambda t: t.reshape(3, H, D, *t.shape[1:]).swapaxes(0, 1).reshape(t.shape)  # noqa
        hf = r(3 * H * D, C).numpy()
        lsd[qkv + ".weight"] = torch.tensor(back(tensor("attn_qkv", hf.shape, order(hf))))
        if s.qkv_bias:
            lsd[qkv + ".bias"] = torch.tensor(back(bias("attn_qkv", order(r(3 * H * D).numpy()))))
    elif s.layout == "conv1d":  # GPT2Model: Conv1D (in, out) transposed to (out, in)
        for gname, hfname, cols in (("attn_qkv", qkv, 3 * C), ("attn_output", s.names[-1], C)):
            got = tensor(gname, (cols, C), r(C, cols).numpy().T)
            lsd[hfname + ".weight"] = torch.tensor(np.ascontiguousarray(got.T))
            lsd[hfname + ".bias"] = torch.tensor(bias(gname, r(cols).numpy()))
    elif s.layout == "kv_groups":  # FalconModel: KV groups [q..., k, v] -> [Q | K | V]
        G = H // Hkv + 2
        hf = r((H + 2 * Hkv) * D, C).numpy().reshape(Hkv, G, D, C)
        conv = np.concatenate([hf[:, :-2].reshape(-1, C), hf[:, -2].reshape(-1, C),
                               hf[:, -1].reshape(-1, C)])
        q, k, v = np.split(tensor("attn_qkv", conv.shape, conv), [H * D, (H + Hkv) * D])
        lsd[qkv + ".weight"] = torch.tensor(np.concatenate(
            [q.reshape(Hkv, G - 2, D, C), k.reshape(Hkv, 1, D, C), v.reshape(Hkv, 1, D, C)],
            1).reshape(-1, C))
    else:
        weight("attn_q", s.names[0], H * D, C, H if perm else None, s.qkv_bias)
        weight("attn_k", s.names[1], Hkv * D, C, Hkv if perm else None, s.qkv_bias)
        weight("attn_v", s.names[2], Hkv * D, C, None, s.qkv_bias)
    if s.layout != "conv1d":
        weight("attn_output", s.names[-1], C, H * D, None, s.o_bias)
    if s.qk_norm:
        shift = 1.0 if arch in ("gemma2", "gemma3") else 0.0  # Gemma's converters: 1 + w
        whole = s.qk_norm.scope == "all"  # OLMo 2: over all heads' q (H*D) and k (Hkv*D)
        for gname, hfname, n in (("attn_q_norm", "q_norm", H * D if whole else D),
                                 ("attn_k_norm", "k_norm", Hkv * D if whole else D)):
            v = (1.0 + 0.3 * r(n)).numpy()  # Hugging Face's weight, whatever its form
            st = (v.astype(np.float32) + np.float32(shift)).astype(np.float32)  # in float32
            f32(w, p + gname + ".weight", st)
            lsd[hfname + ".weight"] = torch.tensor(st.astype(np.float64) - shift)
    if s.sinks:
        v = r(H).numpy().astype(np.float32)
        f32(w, p + "attn_sinks.weight", v)
        lsd["sinks"] = torch.tensor(v.astype(np.float64))
    f32(w, p + "ffn_norm.weight", np.ones(C, np.float32))
    f32(w, p + "ffn_up.weight", r(8, C).numpy())
    f32(w, p + "ffn_down.weight", r(C, 8).numpy())
    return lsd


# ---- "by_family": the family's Hugging Face tensors, converted ------------------------------

# The names gguf-py's tensor map gives the families' attention tensors.
TO_GGUF = {"q_proj": "attn_q", "k_proj": "attn_k", "v_proj": "attn_v", "o_proj": "attn_output",
           "dense": "attn_output", "wo": "attn_output", "c_attn": "attn_qkv",
           "c_proj": "attn_output", "q_norm": "attn_q_norm", "k_norm": "attn_k_norm",
           "q_a_proj": "attn_q_a", "q_a_layernorm": "attn_q_a_norm", "q_b_proj": "attn_q_b",
           "kv_a_proj_with_mqa": "attn_kv_a_mqa", "kv_a_layernorm": "attn_kv_a_norm",
           "self.query": "attn_q", "self.key": "attn_k", "self.value": "attn_v",
           "output.dense": "attn_output", "output.LayerNorm": "attn_output_norm",
           "Wqkv": "attn_qkv", "Wo": "attn_output",
           "q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_o",
           "relative_attention_bias": "attn_rel_b",
           "query_layernorm": "attn_q_norm", "key_layernorm": "attn_k_norm"}


def to_gguf(spec, s, hf):
    """The converter's tensors (GGUF names without the blk.N. prefix) from the family's: renamed,
    Q/K rows permuted for LlamaModel subclasses (spec["permute"]), Qwen3NextModel's every
    *norm.weight stored as 1 + w (spec["norm_plus_one"])."""
    out = OrderedDict()
    for name, t in hf.items():
        mod, kind = name.rsplit(".", 1)
        if spec.get("permute") and mod in ("q_proj", "k_proj"):  # LlamaModel.permute
            t = permute(t, s.H if mod == "q_proj" else s.Hkv)
        if spec.get("norm_plus_one") and mod in ("q_norm", "k_norm"):
            t = (t.astype(np.float32) + np.float32(1)).astype(np.float32)
        out[TO_GGUF[mod] + "." + kind] = t
    return out


def from_gguf(spec, s, names, back):
    """The family's tensors (torch, float64) from the dequantized GGUF ones: to_gguf undone."""
    sd = OrderedDict()
    for name in names:
        mod, kind = name.rsplit(".", 1)
        t = back[TO_GGUF[mod] + "." + kind]
        if spec.get("permute") and mod in ("q_proj", "k_proj"):
            t = unpermute(t, s.H if mod == "q_proj" else s.Hkv)
        if spec.get("norm_plus_one") and mod in ("q_norm", "k_norm"):
            t = t - 1.0  # Hugging Face's w of the (1 + w) norm
        sd[name] = torch.tensor(t)
    return sd


def gguf_weights(fam, s, layer, g):
    """The layer's Hugging Face attention tensors: the family's gguf_weights, else its folders'
    attention_weights (the same draws, in the same order)."""
    if hasattr(fam, "gguf_weights"):
        return fam.gguf_weights(s, layer, g)
    return folder.piece(fam, "attention_weights")(s, g)


def write_by_family(fam, spec, root, writer):
    arch, cfg, types = spec["arch"], spec["config"], spec["types"]
    g = torch.Generator().manual_seed(spec["seed"])
    rng = np.random.default_rng(spec["seed"])
    n_layers = n_layers_of(cfg)
    w = writer(version=3)
    if spec.get("metadata"):
        spec["metadata"](w, arch, cfg, n_layers)
    else:
        text_model_metadata(w, arch, cfg, n_layers, spec.get("permute", False))
    for key, value in spec.get("extra", {}).items():
        w.add(arch + "." + key, value)
    w.add("general.file_type", 1)
    s0 = fam.settings(cfg, 0)
    C = s0.C
    r = lambda *shape: 0.3 * torch.randn(*shape, generator=g, dtype=torch.float64)  # noqa: E731
    f32(w, "token_embd.weight", r(12, C).numpy())
    sc = cfg.get("rope_scaling") or {}
    if sc.get("rope_type") == "llama3":  # LlamaModel.generate_extra_tensors
        f32(w, "rope_freqs.weight", llama3_factors(float(cfg["rope_theta"]), s0.D, sc))
    if hasattr(fam, "gguf_rope_freqs"):
        f32(w, "rope_freqs.weight", fam.gguf_rope_freqs(cfg))
    convert_to = getattr(fam, "to_gguf", to_gguf)
    convert_from = getattr(fam, "from_gguf", from_gguf)
    # spec["runs_as"]: config.json's keys as llama.cpp runs the file, where its hard-coded
    # rules differ from Hugging Face's (EXAONE 4's window on the 64-layer model only)
    runs = dict(cfg, **spec.get("runs_as", {}))
    per_layer = {}
    for layer in range(n_layers):
        s = fam.settings(runs, layer)
        if spec.get("converter"):
            s = s.replace(extra=dict(s.extra, **spec["converter"]))
        p = f"{spec.get('blk', 'blk.')}{layer}."
        f32(w, p + "attn_norm.weight", np.ones(C, np.float32))
        hf = OrderedDict((k, v.numpy()) for k, v in gguf_weights(fam, s, layer, g).items())
        if not hf:  # a layer attn-run does not run: the family's own tensors for it
            fam.gguf_other_layer(w, p, s, r)
        back = {}
        for gname, t in convert_to(spec, s, hf).items():
            tname = types.get(gname.rsplit(".", 1)[0], "F32") if gname.endswith(".weight") \
                and t.ndim >= 2 and "norm" not in gname else "F32"
            raw, b = stored(tname, t.reshape(-1, t.shape[-1]) if t.ndim > 1 else t, rng)
            back[gname] = b.reshape(t.shape)
            w.add_tensor(p + gname, t.shape, ID[tname], raw)
        f32(w, p + "ffn_norm.weight", np.ones(C, np.float32))
        f32(w, p + "ffn_up.weight", r(8, C).numpy())
        f32(w, p + "ffn_down.weight", r(C, 8).numpy())
        per_layer[layer] = (s, convert_from(spec, s, list(hf), back) if hf else None)
    if hasattr(fam, "gguf_after_layers"):
        fam.gguf_after_layers(w, s0, per_layer, r)
    w.write(os.path.join(root, "model.gguf"))
    return cases(root, spec, C, per_layer, g, fam)


def write_gguf(fam, spec, out, writer=gguf_write.GGUFWriter, verbose=True):
    """gguf/<name>/ of one spec, rewritten from scratch."""
    root = os.path.join(out, spec["name"])
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    by = write_by_layout if spec.get("writer") == "by_layout" else write_by_family
    lines = by(fam, spec, root, writer)
    if verbose:
        size = os.path.getsize(os.path.join(root, "model.gguf"))
        print(f"  {spec['name']:22s} {spec['arch']:11s} {size / 1024:6.1f} KB  " + ", ".join(
            f"{k}={v}" for k, v in spec["types"].items()))
        for line in lines:
            print("      " + line)


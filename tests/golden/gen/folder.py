"""Hugging Face model folders: folders/<name>/ holds

  model/       what the hub would publish: config.json in the family's own spelling and the
               weights of a whole (tiny) model under their real state_dict names, neighbours too
               (norms, MLP, embeddings, registered buffers), in model.safetensors, sharded
               model-0000k-of-0000n.safetensors + index, or pytorch_model.bin (torch.save), in
               float32, float16 or bfloat16;
  layer<N>/    one run of layer N (the spec's "guards", changes of the layer's settings, must each
               move torch's context by more than 1e-3): case.json (an attn-run config: "model": "../model", "layer",
               "input" and, when padded or offset, attention_mask / positions), input.npy, and
               torch's expected/context.npy and expected/attention.npy; for the spec's
               residual_norm layers also expected/residual_norm.npy (LayerNorm(context + input),
               what --with-residual-norm computes); for the spec's input_norm layers also
               residual.npy, the residual stream whose block norm is input.npy (what --residual
               reads: the same expected outputs); for the spec's tokens layers (layer 0) also
               tokens.npy, token ids whose embedding (gen/embedding.py, the family's module) is
               residual.npy (what --tokens reads: the same expected outputs), and with an
               offset token_positions.npy, the position_ids of that run (config positions).

A family's file gives `settings(cfg, layer)` (config.json read as its configuration class reads
it, class defaults for missing keys) and its tensors: `model(cfg, layers, g)` for the whole state
dict, or the three pieces `outside`, `attention_weights` and `neighbours` drawn in the standard
order (outside the blocks, then per layer its attention and its block's other keys), each
LlamaForCausalLM's (`DEFAULTS`) unless the family defines it. The expected
values are reference.attention (or the family's `forward`) in float64 on the stored values.
"""
import json
import os
import shutil
from collections import OrderedDict

import numpy as np
import torch

from . import embedding, reference
from . import weights as W
from .util import save_safetensors

DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def n_layers(cfg):
    text = cfg.get("text_config", cfg)  # a multimodal config.json nests the text model
    return next(text[k] for k in ("num_hidden_layers", "n_layer", "n_layers") if k in text)


def layers_of(fam, cfg):
    count = fam.num_layers(cfg) if hasattr(fam, "num_layers") else n_layers(cfg)
    return [fam.settings(cfg, i) for i in range(count)]


def write_weights(model_dir, sd, container, dtype):
    """Stored as the hub has them; returns the values as read back, in float64."""
    stored = OrderedDict((k, v.to(DT[dtype]) if v.is_floating_point() else v)
                         for k, v in sd.items())
    if container in ("safetensors", "safetensors+bin"):  # the hub's gpt2 folder has both
        save_safetensors(os.path.join(model_dir, "model.safetensors"), stored, {"format": "pt"})
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
    """attention_mask (1 = attend): row 0 full; rows 1.. padded by 2 on the left or right."""
    m = torch.ones(B, S, dtype=torch.int64)
    if pad == "left":
        m[1:, :2] = 0
    elif pad == "right":
        m[1:, -2:] = 0
    return m


# A LlamaForCausalLM-like model's pieces, for the families that do not define their own.
DEFAULTS = {"outside": lambda cfg, s0, g: W.llama_outside(s0, g),
            "attention_weights": W.decoder_attention,
            "neighbours": W.llama_neighbours}


def piece(fam, name):
    return getattr(fam, name, DEFAULTS[name])


def standard_model(fam, cfg, layers, g):
    """Outside the blocks first, then per layer its attention's tensors and its neighbours."""
    sd = OrderedDict(piece(fam, "outside")(cfg, layers[0], g))
    for layer, s in enumerate(layers):
        for k, v in piece(fam, "attention_weights")(s, g).items():
            sd[s.prefix + k] = v
        for k, v in piece(fam, "neighbours")(s, layer, g).items():
            sd[k] = v
    return sd


def renamer(spec):
    """Other prefixes a whole model's keys may carry (BertModel without "bert.", GPT-2 saved
    from GPT2LMHeadModel with "transformer.", a text model inside its multimodal wrapper)."""
    renames = spec.get("rename", [])

    def rn(key):
        for old, new in renames:
            if key.startswith(old):
                return new + key[len(old):]
        return key
    return rn


def save_npy(d, name, t):
    np.save(os.path.join(d, name), t)


def write_case(d, case, x, ctx, maps, extra=None):
    """d/case.json, d/input.npy (float32), d/expected/{context,attention}.npy (float32) and the
    extra arrays (name -> numpy array), given as stored in case.json's keys."""
    os.makedirs(os.path.join(d, "expected"))
    save_npy(d, "input.npy", x.float().numpy())
    for name, arr in (extra or {}).items():
        save_npy(d, name, arr)
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
    save_npy(d, "expected/context.npy", ctx.float().numpy())
    save_npy(d, "expected/attention.npy", maps.float().numpy())


def forward(fam, s, lsd, x, keep, pos):
    with torch.no_grad():
        if hasattr(fam, "forward"):
            return fam.forward(s, lsd, x, keep, pos)
        return reference.attention(s, lsd, x, keep, pos)


def layer_cases(fam, spec, root, stored, layers, g, rn):
    """layer<N>/ for each of spec["layers"]: input x drawn from g (B, S from the spec, default
    1 and 7), padded by spec["pad"] (positions = cumsum(attention_mask) - 1, as HF's
    generate), shifted by spec["offset"]."""
    lines = []
    for layer in spec["layers"]:
        s = layers[layer]
        assert s.runs, (spec["name"], layer)
        p = rn(s.prefix)
        lsd = {k[len(p):]: v for k, v in stored.items() if k.startswith(p)}
        if hasattr(fam, "shared_tensors"):  # model-level tensors the layer reads (DeBERTa's table)
            lsd.update(fam.shared_tensors(s, stored, rn))
        B, S = spec.get("B", 1), spec.get("S", 7)
        x = torch.randn(B, S, s.C, generator=g, dtype=torch.float64).float().double()
        pad = spec.get("pad")
        keep = keep_mask(B, S, pad)
        pos = (keep.cumsum(-1) - 1).clamp(min=0) if pad else torch.arange(S).expand(B, S)
        pos = pos + spec.get("offset", 0)
        if getattr(fam, "SEQUENCE_POSITIONS", False):  # ESM: 0..S-1 whatever the padding
            pos = torch.arange(S).expand(B, S)
        if hasattr(fam, "position_rows"):  # mrope's (3, B, S) rows (Qwen2-VL's get_rope_index)
            pos = fam.position_rows(spec, keep, pos)
        tokens = spec.get("tokens")
        ids = tpos = None
        if tokens and layer in tokens["layers"]:  # the residual stream: the ids' embedding
            ids = embedding.draw_ids(spec, stored[tokens["word"]].shape[0], B, S)
            # learned positions at an offset: position_ids (the run's config positions)
            tpos = pos if tokens.get("positions") and spec.get("offset") else None
            x = embedding.embed(tokens, stored, ids, DT[spec["dtype"]], tpos)
        h = None
        normed = input_norm_of(spec, stored, p, layer, x)
        if normed is not None:  # x is the residual stream; its norm is the layer's input
            h, x = x, normed.float().double()
        ctx, maps = forward(fam, s, lsd, x, keep if pad else None, pos)
        for change in spec.get("guards", ()):  # each family feature must count
            change = change(s) if callable(change) else change  # a change of the layer's own
            moved = (forward(fam, s.replace(**change), lsd, x, keep if pad else None, pos)[0] -
                     ctx).abs().max()
            assert moved > 1e-3, f"{spec['name']} layer {layer}: {change} moves only {moved:.2e}"
        case, extra = {"model": "../model", "layer": layer, "input": "input.npy"}, {}
        if pad:
            extra["attention_mask.npy"] = keep.numpy()
            case["attention_mask"] = "attention_mask.npy"
        if (needs_positions(spec, s) or pos.dim() == 3) and not getattr(
                fam, "SEQUENCE_POSITIONS", False):
            extra["positions.npy"] = pos.numpy()
            case["positions"] = "positions.npy"
        unbatched = spec.get("unbatched", False)
        xs = x[0] if unbatched else x
        ctx, maps = (ctx[0], maps[0]) if unbatched else (ctx, maps)
        d = os.path.join(root, f"layer{layer}")
        write_case(d, case, xs, ctx, maps, extra)
        if h is not None:
            save_npy(d, "residual.npy", (h[0] if unbatched else h).float().numpy())
        if ids is not None:
            save_npy(d, "tokens.npy", (ids[0] if unbatched else ids).numpy().astype(
                tokens.get("dtype", "int64")))
        if tpos is not None:  # the positions of the --tokens run (a config's "positions")
            save_npy(d, "token_positions.npy", tpos.numpy())
        rnorm = spec.get("residual_norm")
        if rnorm and layer in rnorm["layers"]:  # the layer's module: the prefix's parent
            module = p[:p.rstrip(".").rfind(".") + 1]
            w = stored[module + rnorm["name"] + "weight"]
            b = stored.get(module + rnorm["name"] + "bias")
            full = reference.residual_norm(ctx, xs, w, b, rnorm["eps"])
            save_npy(d, "expected/residual_norm.npy", full.float().numpy())
        lines.append(f"layer {layer}: {describe(s)}")
    return lines


def block_of(prefix):
    """The block's module of an attention prefix: its parent ("model.layers.3.")."""
    return prefix[:prefix.rstrip(".").rfind(".") + 1]


def input_norm_weights(spec, sd, layers, rn):
    """The spec's input_norm layers get a norm weight (and bias) away from 1 (0 with Gemma's
    offset), drawn from a generator of their own so the other tensors keep their draws."""
    n = spec.get("input_norm")
    if not n or n["kind"] == "none":
        return sd
    g = torch.Generator().manual_seed(spec["seed"] + 7000)
    for layer in n["layers"]:
        key = block_of(rn(layers[layer].prefix)) + n["name"]
        assert key + "weight" in sd, key
        C = layers[layer].C
        sd[key + "weight"] = (0.0 if n.get("offset") else 1.0) + 0.3 * W.randn(g, C)
        if n.get("bias"):
            sd[key + "bias"] = 0.1 * W.randn(g, C)
    return sd


def input_norm_of(spec, stored, p, layer, h):
    """The block's norm of the residual stream h (float64), as the spec's input_norm says, or
    None when the layer is not one of its layers."""
    n = spec.get("input_norm")
    if not n or layer not in n["layers"]:
        return None
    if n["kind"] == "none":
        return h
    key = block_of(p) + n["name"]
    y = reference.input_norm(h, stored[key + "weight"], stored.get(key + "bias"), n["kind"],
                             n["eps"], n.get("offset", 0))
    m = n.get("multiplier", 1.0)  # Falcon-H1: input_layernorm(h) * attention_in_multiplier
    return y if m == 1.0 else (y.float() * m).double()


def needs_positions(spec, s):
    """positions.npy is written when the positions are not 0..S-1 and the layer reads them."""
    return bool((spec.get("pad") or spec.get("offset", 0)) and (s.rope or s.alibi))


def describe(s):
    r = s.rope
    return ", ".join(filter(None, [
        s.kind, f"window {s.window}" if s.window else "",
        f"rope theta {r.theta:g} R {r.R}" + (
            f" {r.scaling.get('rope_type', r.scaling.get('type'))}" if r.scaling else "") + (
            f" mrope {list(r.mrope_section)}" + (" interleaved" if r.mrope_interleaved else "")
            if r.mrope_section else "")
        if r else "", "alibi" if s.alibi else "", f"softcap {s.softcap}" if s.softcap else "",
        f"qk_norm {s.qk_norm.kind}" if s.qk_norm else "", "sinks" if s.sinks else "",
        "gate" if s.gate else "", f"chunk {s.chunk}" if s.chunk else "",
        "temperature" if s.temperature else "", "mla" if s.mla else "",
        f"H {s.H}/{s.Hkv} D {s.D}", "causal" if s.causal else "bidirectional"]))


def write_folder(fam, spec, out, verbose=True):
    """folders/<name>/ of one spec (its model/ and its cases), rewritten from scratch."""
    name, cfg = spec["name"], spec["config"]
    root = os.path.join(out, name)
    shutil.rmtree(root, ignore_errors=True)
    model_dir = os.path.join(root, "model")
    os.makedirs(model_dir)
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    g = torch.Generator().manual_seed(spec["seed"])
    layers = layers_of(fam, cfg)
    if hasattr(fam, "model"):
        sd = fam.model(cfg, layers, g)
    else:
        sd = standard_model(fam, cfg, layers, g)
    rn = renamer(spec)
    sd = OrderedDict((rn(k), v) for k, v in sd.items())
    sd = input_norm_weights(spec, sd, layers, rn)
    sd = embedding.tables(spec, sd)
    stored = write_weights(model_dir, sd, spec["container"], spec["dtype"])
    cases = getattr(fam, "folder_cases", layer_cases)
    lines = cases(fam, spec, root, stored, layers, g, rn)
    if verbose:
        size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(root) for f in fs)
        print(f"  {name:16s} {layers[0].model_type:14s} {spec['container']:12s} "
              f"{spec['dtype']:5s} {size / 1024:6.1f} KB")
        for line in lines:
            print("      " + line)


def case_dirs(fam, spec):
    """The case folders write_folder writes for a spec (the manifest's list)."""
    if hasattr(fam, "folder_case_dirs"):
        return fam.folder_case_dirs(spec)
    return [f"layer{n}" for n in spec["layers"]]

"""The encoder-decoders built on BART's attention (BART, mBART, Marian, M2M-100 / NLLB, NLLB-MoE,
Whisper): modeling_bart.BartAttention (and its copies MBartAttention, MarianAttention,
M2M100Attention, NllbMoeAttention, WhisperAttention): q_proj, k_proj, v_proj, out_proj with
biases (Whisper's k_proj without), head_dim = d_model / heads, q scaled by head_dim^-0.5 before
q k^T (the same scores as attn-run's scale); positions are embeddings added before the first layer,
so a layer has none. The encoder's self-attention is bidirectional; each decoder layer holds a
causal self_attn and a cross-attention (encoder_attn, NLLB-MoE's cross_attention) whose keys and
values are the encoder's output, the encoder's padding mask on them. The stacks have their own
layer and head counts (encoder_layers, encoder_attention_heads, decoder_layers,
decoder_attention_heads).

A family's model folder holds a whole tiny <Family>ForConditionalGeneration (or a bare
<Family>Model without the "model." prefix), and its cases are encoder layers (layer<N>/,
--model DIR --layer N), the decoder's self-attention (decoder_self<N>/: "decoder_layer", or the
contract's "layer" + "weights_prefix" + "causal" form) and its cross-attention
(decoder_cross<N>/: "decoder_layer" + "cross_attention" + "kv_input", the encoder's states)."""
import os
from collections import OrderedDict

import torch

from . import folder, reference
from . import weights as W
from .reference import Layer


def read(cfg, defaults):
    """config.json as BartConfig (and its copies) read it: class defaults for missing keys."""
    get = lambda k: cfg.get(k, defaults[k])  # noqa: E731
    return {"model_type": cfg["model_type"], "C": get("d_model"),
            "encoder_layers": get("encoder_layers"), "decoder_layers": get("decoder_layers"),
            "encoder_heads": get("encoder_attention_heads"),
            "decoder_heads": get("decoder_attention_heads"),
            "ffn": cfg.get("encoder_ffn_dim", 8), "vocab": cfg.get("vocab_size", 12),
            "positions": cfg.get("max_position_embeddings", 16)}


def layer_of(t, prefix, kind, layer, k_bias=True):
    """The Layer of an encoder self-attention ("encoder"), a decoder's ("decoder", causal) or
    the cross-attention ("cross")."""
    H = t["encoder_heads"] if kind == "encoder" else t["decoder_heads"]
    C = t["C"]
    return Layer(C, H, H, C // H, names=("q_proj", "k_proj", "v_proj", "out_proj"),
                 qkv_bias=True, o_bias=True, causal=kind == "decoder",
                 model_type=t["model_type"], kind=kind, prefix=prefix,
                 extra=dict(t, layer=layer, k_bias=k_bias))


def attention_weights(a, g):
    """BartAttention's tensors in its order: k_proj, v_proj, q_proj, out_proj."""
    C, H, D = a.C, a.H, a.D
    sd = OrderedDict()
    W.put(sd, "k_proj", W.lin(g, H * D, C, a.extra["k_bias"]))
    W.put(sd, "v_proj", W.lin(g, H * D, C))
    W.put(sd, "q_proj", W.lin(g, H * D, C))
    W.put(sd, "out_proj", W.lin(g, C, H * D))
    return sd


def norm(sd, name, C, g):
    sd[name + ".weight"] = 1.0 + 0.3 * W.randn(g, C)
    sd[name + ".bias"] = 0.3 * W.randn(g, C)


def model(t, g, top="model.", cross="encoder_attn", k_bias=True, outside=(), final_norm=True,
          head=("lm_head.weight",)):
    """A whole <Family>ForConditionalGeneration state_dict: `outside` (name, shape) first (shared
    embeddings, positions, Whisper's convolutions), then each stack's layers (attention, its
    LayerNorm, fc1, fc2, final_layer_norm; the decoder's cross-attention after its
    self-attention) and the stack's final layer_norm, then the head."""
    C, F = t["C"], t["ffn"]
    sd = OrderedDict()
    for name, shape in outside:
        sd[top + name] = W.small(g, *shape)
    for stack in ("encoder", "decoder"):
        for i in range(t[stack + "_layers"]):
            b = f"{top}{stack}.layers.{i}."
            kind = "encoder" if stack == "encoder" else "decoder"
            a = layer_of(t, b + "self_attn.", kind, i, k_bias)
            sd.update((a.prefix + k, v) for k, v in attention_weights(a, g).items())
            norm(sd, b + "self_attn_layer_norm", C, g)
            if stack == "decoder":
                c = layer_of(t, b + cross + ".", "cross", i, k_bias)
                sd.update((c.prefix + k, v) for k, v in attention_weights(c, g).items())
                norm(sd, b + cross + "_layer_norm", C, g)
            W.put(sd, b + "fc1", W.lin(g, F, C))
            W.put(sd, b + "fc2", W.lin(g, C, F))
            norm(sd, b + "final_layer_norm", C, g)
        if final_norm:
            norm(sd, f"{top}{stack}.layer_norm", C, g)
    for name in head:
        sd[name] = W.small(g, t["vocab"], C)
    return sd


def folder_cases(t, spec, root, stored, g, rn, cross="encoder_attn", k_bias=True,
                 post_norm=False):
    """spec["cases"]: encoder layers, the decoder's self-attention and its cross-attention;
    expected/residual_norm.npy for a post-norm family's self-attention (LayerNorm(out_proj +
    input) with the layer's self_attn_layer_norm)."""
    top = rn("model.")
    lines = []
    for case in spec["cases"]:
        kind, layer, form = case["kind"], case["layer"], case.get("form", "flag")
        B, S = case.get("B", 1), case.get("S", 7)
        x = torch.randn(B, S, t["C"], generator=g, dtype=torch.float64).float().double()
        keep = folder.keep_mask(B, S, case["pad"]) if case.get("pad") else None
        cj, extra, kv = {"model": "../model"}, {}, None
        stack = "encoder" if kind == "encoder" else "decoder"
        block = f"{top}{stack}.layers.{layer}."
        prefix = block + (cross if kind == "cross" else "self_attn") + "."
        if kind == "encoder":
            cj["layer"] = layer
        elif form == "prefix":  # the contract's form: the module by its weights_prefix
            cj.update({"layer": 0, "weights_prefix": prefix})
            if kind == "decoder":
                cj["causal"] = True
        else:  # the shorthand's keys
            cj["decoder_layer"] = layer
            if kind == "cross":
                cj["cross_attention"] = True
        cj["input"] = "input.npy"
        if kind == "cross":  # the encoder's states, its padding on the keys
            T = case["T"]
            kv = torch.randn(B, T, t["C"], generator=g, dtype=torch.float64).float().double()
            keep = folder.keep_mask(B, T, case["pad"]) if case.get("pad") else None
            extra["encoder_states.npy"] = kv.float().numpy()
            cj["kv_input"] = "encoder_states.npy"
        a = layer_of(t, prefix, kind, layer, k_bias)
        lsd = {k[len(prefix):]: v for k, v in stored.items() if k.startswith(prefix)}
        with torch.no_grad():
            ctx, maps = reference.attention(a, lsd, x, keep, None, kv)
        if keep is not None:
            extra["attention_mask.npy"] = keep.numpy()
            cj["attention_mask"] = "attention_mask.npy"
        d = os.path.join(root, case["dir"])
        folder.write_case(d, cj, x, ctx, maps, extra)
        if post_norm and kind != "cross":
            n = block + "self_attn_layer_norm."
            full = reference.residual_norm(ctx, x, stored[n + "weight"], stored[n + "bias"], 1e-5)
            folder.save_npy(d, "expected/residual_norm.npy", full.float().numpy())
        lines.append(f"{case['dir']}: {kind} layer {layer} ({form if kind != 'encoder' else 'layer'}"
                     f"), H {a.H} D {a.D}, B {B} S {S}" +
                     (f" T {case['T']}" if kind == "cross" else "") +
                     (f", padded {case['pad']}" if case.get("pad") else ""))
    return lines


def folder_case_checks(spec, post_norm=False):
    """config for every case; model (the flags: --layer N, or --decoder-layer N [--cross
    --encoder-output FILE]) when unpadded and not named by weights_prefix; residual_norm for a
    post-norm family's self-attention."""
    out = []
    for c in spec["cases"]:
        checks = ["config"]
        if not c.get("pad") and c.get("form", "flag") != "prefix":
            checks.append("model")
        if post_norm and c["kind"] != "cross":
            checks.append("residual_norm")
        out.append((c["dir"], c["layer"], checks))
    return out


class Family:
    """The functions every BART-shaped family file exports but `model` (its own tensors outside
    the layers): config reading with the class defaults, the encoder layer's settings, the
    cases of spec["cases"] and their checks. A family file binds them:
        _f = seq2seq.Family(DEFAULTS, post_norm=True)
        read, num_layers, settings = _f.read, _f.num_layers, _f.settings
        folder_cases, folder_case_checks, folder_case_dirs = _f.cases()"""

    def __init__(self, defaults, post_norm=False, cross="encoder_attn"):
        self.defaults, self.post_norm, self.cross = defaults, post_norm, cross

    def read(self, cfg):
        return read(cfg, self.defaults)

    def num_layers(self, cfg):
        return self.read(cfg)["encoder_layers"]

    def settings(self, cfg, layer):
        return layer_of(self.read(cfg), f"model.encoder.layers.{layer}.self_attn.", "encoder",
                        layer)

    def folder_cases(self, fam, spec, root, stored, layers, g, rn):
        return folder_cases(self.read(spec["config"]), spec, root, stored, g, rn,
                            cross=self.cross, post_norm=self.post_norm)

    def folder_case_checks(self, spec):
        return folder_case_checks(spec, post_norm=self.post_norm)

    @staticmethod
    def folder_case_dirs(spec):
        return [c["dir"] for c in spec["cases"]]

    def cases(self):
        return self.folder_cases, self.folder_case_checks, self.folder_case_dirs

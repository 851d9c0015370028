#!/usr/bin/python3
"""Hugging Face model folders of CONTRACT.md v3's encoder families (issue 24): XLM-RoBERTa, ELECTRA,
DistilBERT, ViT, CLIP's text and vision towers (standalone and inside a "clip" config.json) and
ModernBERT, with torch's expected output for 2-3 layers of each.

The folders have make_folders.py's form (model/ with config.json in the family's own spelling and a
whole tiny model under its real state_dict names; layer<N>/ with case.json, input.npy and torch's
expected/context.npy and attention.npy, and for one layer of XLM-RoBERTa, ELECTRA and DistilBERT
expected/residual_norm.npy: LayerNorm(context + input), XLMRobertaAttention's / ElectraAttention's
output and DistilBERT's TransformerBlock sa_layer_norm) and are written by make_folders.make_folder: this script
adds the families' settings, tensor names and attention to make_folders' (`encoder_settings`,
`attention_weights`, `qkv_heads`, `output_proj`, `layer_attention` below, installed over
make_folders' own for these model_types only). Each family's config.json is read here as its
configuration_<type>.py reads it (class defaults for missing keys) and its attention is written in
plain torch from its modeling_<type>.py, independently of attn-run's mapping (families.cpp).

Only this script's folders are rewritten (make_folders.py's stay). Deterministic (fixed seeds).
Usage: /usr/bin/python3 tests/golden/make_families_v3_encoders.py
"""
import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_folders as mf  # noqa: E402

OUT = mf.OUT

# Defaults of the configuration classes for the keys the attention reads (configuration_<type>.py).
CLASS_DEFAULTS = {
    "xlm-roberta": dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=12,
                        position_embedding_type="absolute", is_decoder=False),
    "electra": dict(hidden_size=256, num_attention_heads=4, num_hidden_layers=12,
                    position_embedding_type="absolute", is_decoder=False),
    # DistilBertConfig: dim / n_heads / n_layers (attribute_map: hidden_size, ...)
    "distilbert": dict(dim=768, n_heads=12, n_layers=6),
    "vit": dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=12, qkv_bias=True),
    "clip_text_model": dict(hidden_size=512, num_attention_heads=8, num_hidden_layers=12),
    "clip_vision_model": dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=12),
    "modernbert": dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=22,
                       attention_bias=False, global_attn_every_n_layers=3, local_attention=128,
                       global_rope_theta=160000.0, local_rope_theta=10000.0,
                       max_position_embeddings=8192),
}
TYPES = set(CLASS_DEFAULTS)


def unwrap(cfg):
    """CLIPConfig's text tower (CLIPTextModel.from_pretrained of a "clip" folder reads
    text_config, updated by an older text_config_dict), else cfg."""
    if cfg.get("model_type") == "clip":
        return dict(cfg["text_config"], **(cfg.get("text_config_dict") or {}),
                    model_type="clip_text_model")
    return cfg


def encoder_settings(cfg, layer):
    """What layer `layer` computes, as the family's configuration and modeling code read
    config.json; the dict of make_folders.hf_settings."""
    cfg = unwrap(cfg)
    mt = cfg["model_type"]
    cfg = dict(CLASS_DEFAULTS[mt], **cfg)
    if mt == "distilbert":
        C, H = cfg["dim"], cfg["n_heads"]
    else:
        C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    D = C // H
    s = dict(model_type=mt, C=C, H=H, Hkv=H, D=D, scale=D ** -0.5, causal=False, rope=None,
             window=None, softcap=None, qk_norm=None, sinks=False, alibi=None)
    if mt in ("xlm-roberta", "electra"):
        # XLMRobertaSelfAttention / ElectraSelfAttention are BertSelfAttention (absolute
        # positions live in the embeddings); XLMRobertaForCausalLM sets is_decoder
        assert cfg["position_embedding_type"] == "absolute"
        base = "roberta" if mt == "xlm-roberta" else "electra"  # base_model_prefix
        s.update(layout="bert", qkv_bias=True, o_bias=True, causal=bool(cfg["is_decoder"]),
                 prefix=f"{base}.encoder.layer.{layer}.attention.")
    elif mt == "distilbert":  # MultiHeadSelfAttention: q_lin, k_lin, v_lin, out_lin (bias)
        s.update(layout="distilbert", qkv_bias=True, o_bias=True,
                 prefix=f"distilbert.transformer.layer.{layer}.attention.")
    elif mt == "vit":  # ViTSelfAttention (bias = qkv_bias) and ViTSelfOutput.dense
        s.update(layout="vit", qkv_bias=bool(cfg["qkv_bias"]), o_bias=True,
                 prefix=f"vit.encoder.layer.{layer}.attention.")
    elif mt in ("clip_text_model", "clip_vision_model"):  # CLIPAttention, causal text mask
        tower = "text_model" if mt == "clip_text_model" else "vision_model"
        s.update(layout="proj", out="out_proj", qkv_bias=True, o_bias=True,
                 causal=mt == "clip_text_model",
                 prefix=f"{tower}.encoder.layers.{layer}.self_attn.")
    elif mt == "modernbert":
        # ModernBertAttention: Wqkv viewed (3, H, D), Wo; local layers (layer_id %
        # global_attn_every_n_layers != 0) see |i - j| <= local_attention // 2 and take the local
        # rope base (rope_parameters per layer type in transformers v5, else the flat keys)
        b = bool(cfg["attention_bias"])
        s.update(layout="modernbert", qkv_bias=b, o_bias=b, prefix=f"model.layers.{layer}.attn.")
        window = layer % cfg["global_attn_every_n_layers"] != 0  # ModernBertAttention.__init__
        types = cfg.get("layer_types")  # v5: the rope of config.layer_types[layer]
        local = types[layer] == "sliding_attention" if types else window
        p = cfg.get("rope_parameters")
        kind = "sliding_attention" if local else "full_attention"
        if p is not None:
            theta, scaling = p[kind]["rope_theta"], p[kind]
            if scaling.get("rope_type", "default") == "default":
                scaling = None
        else:
            theta = cfg["local_rope_theta"] if local else cfg["global_rope_theta"]
            scaling = None
        s["rope"] = dict(theta=float(theta), R=D, scaling=scaling,
                         mpe=cfg["max_position_embeddings"])
        s["local_half"] = cfg["local_attention"] // 2 if window else None
    else:
        raise ValueError(mt)
    return s


# ---- tensors under the families' names --------------------------------------------------------

def attention_weights(s, g):
    """The attention's own tensors, names relative to s["prefix"]: (out, in) Linear weights."""
    C, H, D = s["C"], s["H"], s["D"]
    sd = {}
    if s["layout"] == "distilbert":
        for n in ("q_lin", "k_lin", "v_lin"):
            mf.put(sd, n, mf.lin(g, H * D, C))
        mf.put(sd, "out_lin", mf.lin(g, C, H * D))
    elif s["layout"] == "vit":
        for n in ("query", "key", "value"):
            mf.put(sd, "attention." + n, mf.lin(g, H * D, C, s["qkv_bias"]))
        mf.put(sd, "output.dense", mf.lin(g, C, H * D))
    elif s["layout"] == "modernbert":
        mf.put(sd, "Wqkv", mf.lin(g, 3 * H * D, C, s["qkv_bias"]))
        mf.put(sd, "Wo", mf.lin(g, C, H * D, s["o_bias"]))
    else:
        return _base["attention_weights"](s, g)
    return sd


def block_neighbours(mt, layer, C, g, small=4):
    """A few keys around the attention in the same block, as a whole-model file has them."""
    r = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64) * 0.1  # noqa: E731
    one = torch.ones(C, dtype=torch.float64)
    if mt in ("xlm-roberta", "electra"):
        p = f"{'roberta' if mt == 'xlm-roberta' else 'electra'}.encoder.layer.{layer}."
        return {p + "intermediate.dense.weight": r(small, C), p + "output.dense.weight": r(C, small),
                p + "output.LayerNorm.weight": one}
    if mt == "distilbert":  # TransformerBlock.sa_layer_norm: --with-residual-norm's LayerNorm
        p = f"distilbert.transformer.layer.{layer}."
        w, b = mf.layer_norm_params(p + "sa_layer_norm.", C)
        return {p + "sa_layer_norm.weight": w, p + "sa_layer_norm.bias": b,
                p + "ffn.lin1.weight": r(small, C), p + "output_layer_norm.weight": one}
    if mt == "vit":  # the layer's own output.dense sits beside attention.output.dense
        p = f"vit.encoder.layer.{layer}."
        return {p + "layernorm_before.weight": one, p + "intermediate.dense.weight": r(small, C),
                p + "output.dense.weight": r(C, small)}
    if mt in ("clip_text_model", "clip_vision_model"):
        p = f"{'text' if mt == 'clip_text_model' else 'vision'}_model.encoder.layers.{layer}."
        return {p + "layer_norm1.weight": one, p + "mlp.fc1.weight": r(small, C)}
    if mt == "modernbert":
        p = f"model.layers.{layer}."
        n = {p + "mlp_norm.weight": one, p + "mlp.Wi.weight": r(2 * small, C)}
        if layer:  # layer 0's attn_norm is nn.Identity
            n[p + "attn_norm.weight"] = one
        return n
    return _base["block_neighbours"](mt, layer, C, g, small)


def model_outside(mt, C, g, vocab=12):
    """Keys outside the blocks: embeddings, final norms, heads."""
    r = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64) * 0.1  # noqa: E731
    if mt == "xlm-roberta":
        return {"roberta.embeddings.word_embeddings.weight": r(vocab, C),
                "lm_head.dense.weight": r(C, C)}
    if mt == "electra":  # embedding_size < hidden_size: embeddings_project
        return {"electra.embeddings.word_embeddings.weight": r(vocab, 8),
                "electra.embeddings_project.weight": r(C, 8),
                "discriminator_predictions.dense.weight": r(C, C)}
    if mt == "distilbert":
        return {"distilbert.embeddings.word_embeddings.weight": r(vocab, C),
                "vocab_projector.weight": r(vocab, C)}
    if mt == "vit":
        return {"vit.embeddings.cls_token": r(1, 1, C), "vit.embeddings.patch_embeddings.projection"
                ".weight": r(C, 3, 2, 2), "classifier.weight": r(3, C)}
    if mt == "clip_text_model":
        out = {"text_model.embeddings.token_embedding.weight": r(vocab, C),
               "text_model.final_layer_norm.weight": torch.ones(C, dtype=torch.float64)}
        if _clip_model is not None:  # CLIPModel: the vision tower's whole layers beside it
            out.update({"logit_scale": torch.tensor(2.6592, dtype=torch.float64),
                        "text_projection.weight": r(8, C)})
            vc = dict(_clip_model["vision_config"], model_type="clip_vision_model")
            for layer in range(vc["num_hidden_layers"]):
                s = encoder_settings(vc, layer)
                for k, v in mf.attention_weights(s, g).items():
                    out[s["prefix"] + k] = _vision_sd[s["prefix"] + k] = v
                out.update(block_neighbours("clip_vision_model", layer, s["C"], g))
            out["visual_projection.weight"] = r(8, s["C"])
        return out
    if mt == "clip_vision_model":
        return {"vision_model.embeddings.class_embedding": r(C),
                "vision_model.post_layernorm.weight": torch.ones(C, dtype=torch.float64)}
    if mt == "modernbert":
        return {"model.embeddings.tok_embeddings.weight": r(vocab, C),
                "model.final_norm.weight": torch.ones(C, dtype=torch.float64),
                "head.dense.weight": r(C, C)}
    return _base["model_outside"](mt, C, g, vocab)


# ---- the attention ------------------------------------------------------------------------------

def qkv_heads(s, sd, x):
    """x (B, S, C) -> q, k, v (B, H, S, D) from the family's projections."""
    B, S, _ = x.shape
    H, D = s["H"], s["D"]

    def heads(t):
        return t.view(B, S, H, D).transpose(1, 2)

    if s["layout"] == "distilbert":
        return tuple(heads(mf.linear(x, sd, n)) for n in ("q_lin", "k_lin", "v_lin"))
    if s["layout"] == "vit":
        return tuple(heads(mf.linear(x, sd, "attention." + n)) for n in ("query", "key", "value"))
    if s["layout"] == "modernbert":  # qkv.view(bs, -1, 3, H, D).transpose(3, 1).unbind(dim=2)
        qkv = mf.linear(x, sd, "Wqkv").view(B, S, 3, H, D).transpose(3, 1)
        return qkv.unbind(dim=2)
    return _base["qkv_heads"](s, sd, x)


def output_proj(s, sd, y):  # y (B, S, H*D) -> (B, S, C)
    name = {"distilbert": "out_lin", "vit": "output.dense", "modernbert": "Wo"}.get(s["layout"])
    return mf.linear(y, sd, name) if name else _base["output_proj"](s, sd, y)


def layer_attention(s, sd, x, keep, pos):
    """context (B, S, C) and maps (B, H, S, S): ModernBERT's eager_attention_forward with
    _update_attention_mask's window; the other families are make_folders' (bidirectional or
    causal, key padding)."""
    if s["layout"] != "modernbert":
        return _base["layer_attention"](s, sd, x, keep, pos)
    B, S, _ = x.shape
    q, k, v = qkv_heads(s, sd, x)
    cos, sin = mf.cos_sin(pos, s["rope"])
    q, k = mf.apply_rope(q, cos, sin, s["D"]), mf.apply_rope(k, cos, sin, s["D"])
    scores = (q @ k.transpose(2, 3)) * s["scale"]
    ok = torch.ones(B, 1, S, S, dtype=torch.bool)
    if keep is not None:
        ok &= keep.bool()[:, None, None, :]
    if s["local_half"] is not None:  # distance = |rows - rows.T| <= local_attention // 2
        i = torch.arange(S)
        ok &= ((i[:, None] - i[None, :]).abs() <= s["local_half"])[None, None]
    probs = mf.softmax_rows(scores, ok)
    y = (probs @ v).transpose(1, 2).reshape(B, S, s["H"] * s["D"])
    return output_proj(s, sd, y), probs


_base = {}


def hf_settings(cfg, layer):
    return encoder_settings(cfg, layer) if unwrap(cfg)["model_type"] in TYPES else \
        _base["hf_settings"](cfg, layer)


def install():
    """make_folders' helpers, extended by this file's families (make_folder calls them)."""
    if _base:
        return
    for name in ("hf_settings", "attention_weights", "block_neighbours", "model_outside",
                 "qkv_heads", "output_proj", "layer_attention", "make_folder"):
        _base[name] = getattr(mf, name)
        setattr(mf, name, globals()[name])


def make_folder(spec, out=OUT, verbose=True):
    """make_folders.make_folder; a CLIPModel folder holds the vision tower too, and its
    "vision_layers" are cases of their own (vision_layer<N>/, "model_type": "clip_vision_model"
    as CLIPVisionModel.from_pretrained of the folder reads vision_config)."""
    global _clip_model
    _clip_model = spec["config"] if spec["config"].get("model_type") == "clip" else None
    _vision_sd.clear()
    try:
        per_layer = _base["make_folder"](spec, out, verbose)
    finally:
        _clip_model = None
    for layer in spec.get("vision_layers", []):
        _vision_case(spec, out, layer, verbose)
    return per_layer


def _vision_case(spec, out, layer, verbose):
    """vision_layer<N>/ of a CLIPModel folder: the vision tower's layer from the stored weights."""
    cfg = dict(spec["config"]["vision_config"], model_type="clip_vision_model")
    s = encoder_settings(cfg, layer)
    root = os.path.join(out, spec["name"])
    # the values as stored (make_folders.write_weights rounds to the spec's dtype)
    lsd = {k[len(s["prefix"]):]: v.to(mf.DT[spec["dtype"]]).double()
           for k, v in _vision_sd.items() if k.startswith(s["prefix"])}
    g = torch.Generator().manual_seed(spec["seed"] + 1000 + layer)
    B, S = spec.get("B", 1), spec.get("vision_S", 5)
    x = torch.randn(B, S, s["C"], generator=g, dtype=torch.float64).float().double()
    with torch.no_grad():
        ctx, maps = mf.layer_attention(s, lsd, x, None, torch.arange(S).expand(B, S))
    d = os.path.join(root, f"vision_layer{layer}")
    os.makedirs(os.path.join(d, "expected"))
    np.save(os.path.join(d, "input.npy"), x.float().numpy())
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump({"model": "../model", "model_type": "clip_vision_model", "layer": layer,
                   "input": "input.npy"}, f, indent=1)
    np.save(os.path.join(d, "expected", "context.npy"), ctx.float().numpy())
    np.save(os.path.join(d, "expected", "attention.npy"), maps.float().numpy())
    if verbose:
        print(f"    vision layer {layer}: H {s['H']}/{s['Hkv']} D {s['D']}, bidirectional")


_clip_model = None
_vision_sd = {}  # the CLIPModel folder's vision attention tensors, by full name


def specs():
    return [
        # XLMRobertaForMaskedLM (FacebookAI/xlm-roberta-base's spelling), padded on the right
        dict(name="xlm_roberta", seed=301, container="safetensors", dtype="f32", layers=[0, 1],
             B=2, S=7, pad="right",
             residual_norm=dict(layers=[0], name="attention.output.LayerNorm.", eps=1e-05),
             config={"architectures": ["XLMRobertaForMaskedLM"], "model_type": "xlm-roberta",
                     "attention_probs_dropout_prob": 0.1, "bos_token_id": 0, "eos_token_id": 2,
                     "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 32,
                     "initializer_range": 0.02, "intermediate_size": 8, "layer_norm_eps": 1e-05,
                     "max_position_embeddings": 66, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "output_past": True, "pad_token_id": 1,
                     "position_embedding_type": "absolute", "type_vocab_size": 1,
                     "vocab_size": 12}),
        # ElectraForPreTraining (google/electra-small-discriminator's spelling): embedding_size
        dict(name="electra", seed=302, container="bin", dtype="f32", layers=[1, 2], B=2, S=6,
             residual_norm=dict(layers=[2], name="attention.output.LayerNorm.", eps=1e-12),
             config={"architectures": ["ElectraForPreTraining"], "model_type": "electra",
                     "attention_probs_dropout_prob": 0.1, "embedding_size": 8,
                     "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 24,
                     "initializer_range": 0.02, "intermediate_size": 8, "layer_norm_eps": 1e-12,
                     "max_position_embeddings": 64, "num_attention_heads": 4,
                     "num_hidden_layers": 3, "pad_token_id": 0, "type_vocab_size": 2,
                     "vocab_size": 12}),
        # DistilBertForMaskedLM (distilbert-base-uncased's spelling: dim, n_heads, n_layers)
        dict(name="distilbert", seed=303, container="safetensors", dtype="f32", layers=[0, 2],
             B=2, S=8, pad="right",  # TransformerBlock: sa_layer_norm(sa_output + x), eps 1e-12
             residual_norm=dict(layers=[2], name="sa_layer_norm.", eps=1e-12),
             config={"activation": "gelu", "architectures": ["DistilBertForMaskedLM"],
                     "attention_dropout": 0.1, "dim": 32, "dropout": 0.1, "hidden_dim": 8,
                     "initializer_range": 0.02, "max_position_embeddings": 64,
                     "model_type": "distilbert", "n_heads": 4, "n_layers": 3, "pad_token_id": 0,
                     "qa_dropout": 0.1, "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": False,
                     "tie_weights_": True, "vocab_size": 12}),
        # ViTForImageClassification (google/vit-base-patch16-224's spelling): 2x2 patches of a
        # 4x4 image and the CLS token, S = 5; images have no padding
        dict(name="vit", seed=304, container="safetensors", dtype="f32", layers=[0, 1], B=2, S=5,
             config={"architectures": ["ViTForImageClassification"], "model_type": "vit",
                     "attention_probs_dropout_prob": 0.0, "encoder_stride": 2,
                     "hidden_act": "gelu", "hidden_dropout_prob": 0.0, "hidden_size": 32,
                     "id2label": {"0": "a", "1": "b", "2": "c"}, "image_size": 4,
                     "initializer_range": 0.02, "intermediate_size": 8,
                     "label2id": {"a": 0, "b": 1, "c": 2}, "layer_norm_eps": 1e-12,
                     "num_attention_heads": 4, "num_channels": 3, "num_hidden_layers": 2,
                     "patch_size": 2, "qkv_bias": True}),
        # CLIPTextModel as Stable Diffusion's text_encoder folder ships it: causal, padded on the
        # right as CLIPTokenizer pads
        dict(name="clip_text", seed=305, container="safetensors", dtype="f16", layers=[0, 1],
             B=2, S=7, pad="right",
             config={"architectures": ["CLIPTextModel"], "model_type": "clip_text_model",
                     "attention_dropout": 0.0, "bos_token_id": 0, "dropout": 0.0,
                     "eos_token_id": 2, "hidden_act": "quick_gelu", "hidden_size": 32,
                     "initializer_factor": 1.0, "initializer_range": 0.02,
                     "intermediate_size": 8, "layer_norm_eps": 1e-05,
                     "max_position_embeddings": 77, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "pad_token_id": 1, "projection_dim": 16,
                     "torch_dtype": "float16", "vocab_size": 12}),
        # CLIPVisionModelWithProjection: bidirectional over the CLS token and 2x2 patches
        dict(name="clip_vision", seed=306, container="safetensors", dtype="f32", layers=[0, 2],
             B=2, S=5,
             config={"architectures": ["CLIPVisionModelWithProjection"],
                     "model_type": "clip_vision_model", "attention_dropout": 0.0,
                     "dropout": 0.0, "hidden_act": "quick_gelu", "hidden_size": 24,
                     "image_size": 4, "initializer_factor": 1.0, "initializer_range": 0.02,
                     "intermediate_size": 8, "layer_norm_eps": 1e-05, "num_attention_heads": 3,
                     "num_channels": 3, "num_hidden_layers": 3, "patch_size": 2,
                     "projection_dim": 8}),
        # CLIPModel (openai/clip-vit-base-patch32's spelling): the text tower of text_config, and
        # with "model_type": "clip_vision_model" the vision tower of vision_config
        dict(name="clip", seed=307, container="safetensors", dtype="f32", layers=[1], B=2, S=6,
             pad="right", vision_layers=[1], vision_S=5,
             config={"architectures": ["CLIPModel"], "initializer_factor": 1.0,
                     "logit_scale_init_value": 2.6592, "model_type": "clip", "projection_dim": 8,
                     "text_config": {"attention_dropout": 0.0, "hidden_act": "quick_gelu",
                                     "hidden_size": 24, "intermediate_size": 8,
                                     "max_position_embeddings": 77,
                                     "model_type": "clip_text_model", "num_attention_heads": 2,
                                     "num_hidden_layers": 2, "projection_dim": 8,
                                     "vocab_size": 12},
                     "text_config_dict": None,
                     "vision_config": {"hidden_size": 16, "image_size": 4, "intermediate_size": 8,
                                       "model_type": "clip_vision_model",
                                       "num_attention_heads": 2, "num_hidden_layers": 3,
                                       "patch_size": 2, "projection_dim": 8},
                     "vision_config_dict": None}),
        # ModernBertForMaskedLM (answerdotai/ModernBERT-base's spelling): layers 0 and 3 global
        # (global_rope_theta), 1 and 2 local (|i - j| <= 4 // 2, local_rope_theta); padded
        dict(name="modernbert", seed=308, container="safetensors", dtype="f32",
             layers=[0, 1], B=2, S=9, pad="right",
             config={"architectures": ["ModernBertForMaskedLM"], "attention_bias": False,
                     "attention_dropout": 0.0, "bos_token_id": 50281,
                     "classifier_activation": "gelu", "classifier_bias": False,
                     "classifier_dropout": 0.0, "classifier_pooling": "mean",
                     "cls_token_id": 50281, "decoder_bias": True,
                     "deterministic_flash_attn": False, "embedding_dropout": 0.0,
                     "eos_token_id": 50282, "global_attn_every_n_layers": 3,
                     "global_rope_theta": 160000.0, "gradient_checkpointing": False,
                     "hidden_activation": "gelu", "hidden_size": 32,
                     "initializer_cutoff_factor": 2.0, "initializer_range": 0.02,
                     "intermediate_size": 8, "layer_norm_eps": 1e-05, "local_attention": 4,
                     "local_rope_theta": 10000.0, "max_position_embeddings": 8192,
                     "mlp_bias": False, "mlp_dropout": 0.0, "model_type": "modernbert",
                     "norm_bias": False, "norm_eps": 1e-05, "num_attention_heads": 4,
                     "num_hidden_layers": 4, "pad_token_id": 50283,
                     "position_embedding_type": "absolute", "sep_token_id": 50282,
                     "tie_word_embeddings": True, "torch_dtype": "float32",
                     "vocab_size": 12}),
        # ModernBERT as transformers v5 saves it: layer_types and rope_parameters per layer type
        # (an odd local_attention, 5 // 2 = 2 each side), bf16, attention_bias; unpadded, so it
        # also runs as --model DIR --layer N with default positions
        dict(name="modernbert_v5", seed=309, container="safetensors", dtype="bf16",
             layers=[1, 2], B=2, S=10,
             config={"architectures": ["ModernBertForSequenceClassification"],
                     "attention_bias": True, "global_attn_every_n_layers": 2,
                     "hidden_size": 24, "intermediate_size": 8,
                     "layer_types": ["full_attention", "sliding_attention", "full_attention",
                                     "sliding_attention", "full_attention"],
                     "local_attention": 5, "max_position_embeddings": 64,
                     "model_type": "modernbert", "num_attention_heads": 2,
                     "num_hidden_layers": 5,
                     "rope_parameters": {
                         "full_attention": {"rope_theta": 80000.0, "rope_type": "default"},
                         "sliding_attention": {"rope_theta": 5000.0, "rope_type": "default"}},
                     "vocab_size": 12}),
    ]


def main():
    install()
    os.makedirs(OUT, exist_ok=True)
    n = 0
    for spec in specs():
        shutil.rmtree(os.path.join(OUT, spec["name"]), ignore_errors=True)
        mf.make_folder(spec)
        n += len(spec["layers"])
    print(f"wrote {len(specs())} model folders, {n} layer cases, to {OUT}")


if __name__ == "__main__":
    main()

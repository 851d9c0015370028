"""SigLIP and SigLIP 2's towers: modeling_siglip.SiglipAttention (Siglip2Attention is the same):
q/k/v_proj and out_proj with biases, bidirectional in both towers (the text tower's mask is its
padding only): siglip_text_model / siglip_vision_model, siglip2_*, and a SiglipModel folder
("siglip" / "siglip2": its text_config tower, and the vision tower's layers as cases of their
own, vision_layer<N>/ with the vision model_type, as SiglipVisionModel.from_pretrained reads
vision_config)."""
import os

import torch

from .. import folder, hf
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("siglip", "siglip_text_model", "siglip_vision_model", "siglip2",
               "siglip2_text_model", "siglip2_vision_model")
TOWER_DEFAULTS = dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=12)


def unwrap(cfg):
    """SiglipConfig's text tower (SiglipTextModel.from_pretrained of a "siglip" folder)."""
    if cfg.get("model_type") in ("siglip", "siglip2"):
        return dict(cfg["text_config"], model_type=cfg["model_type"] + "_text_model")
    return cfg


def vision_config(cfg):
    return dict(cfg["vision_config"], model_type=cfg["model_type"] + "_vision_model")


def settings(cfg, layer):
    cfg = hf.with_defaults(unwrap(cfg), TOWER_DEFAULTS)
    mt = cfg["model_type"]
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    tower = "text_model" if mt.endswith("_text_model") else "vision_model"
    return Layer(C, H, H, C // H, names=("q_proj", "k_proj", "v_proj", "out_proj"),
                 causal=False, qkv_bias=True, o_bias=True, model_type=mt,
                 prefix=f"{tower}.encoder.layers.{layer}.self_attn.")


def attention_weights(a, g):
    return W.decoder_attention(a, g, out="out_proj")


def neighbours(s, layer, g, small=4):
    p = s.prefix[:-len("self_attn.")]
    return {p + "layer_norm1.weight": W.ones(s.C), p + "mlp.fc1.weight": W.small(g, small, s.C)}


def outside(cfg, s0, g, vocab=12):
    r = lambda *shape: W.small(g, *shape)  # noqa: E731
    C = s0.C
    if s0.model_type.endswith("_vision_model"):
        return {"vision_model.embeddings.patch_embedding.weight": r(C, 3, 2, 2),
                "vision_model.post_layernorm.weight": W.ones(C),
                "vision_model.head.probe": r(1, 1, C)}
    out = {"text_model.embeddings.token_embedding.weight": r(vocab, C),
           "text_model.final_layer_norm.weight": W.ones(C), "text_model.head.weight": r(C, C)}
    if cfg.get("model_type") in ("siglip", "siglip2"):  # SiglipModel: the vision tower beside
        out.update({"logit_scale": torch.tensor(2.3026, dtype=torch.float64),
                    "logit_bias": torch.tensor(-10.0, dtype=torch.float64)})
        vc = vision_config(cfg)
        for layer in range(vc["num_hidden_layers"]):
            s = settings(vc, layer)
            for k, v in attention_weights(s, g).items():
                out[s.prefix + k] = v
            out.update(neighbours(s, layer, g))
    return out


def folder_cases(fam, spec, root, stored, layers, g, rn):
    """The text tower's layer<N>/, then a SiglipModel's vision_layer<N>/: the vision tower's
    layer from the stored weights, its input from a generator of its own (seed + 1000 + N)."""
    lines = folder.layer_cases(fam, spec, root, stored, layers, g, rn)
    for layer in spec.get("vision_layers", []):
        vc = vision_config(spec["config"])
        s = settings(vc, layer)
        lsd = {k[len(s.prefix):]: v for k, v in stored.items() if k.startswith(s.prefix)}
        vg = torch.Generator().manual_seed(spec["seed"] + 1000 + layer)
        B, S = spec.get("B", 1), spec.get("vision_S", 5)
        x = torch.randn(B, S, s.C, generator=vg, dtype=torch.float64).float().double()
        ctx, maps = folder.forward(fam, s, lsd, x, None, torch.arange(S).expand(B, S))
        folder.write_case(os.path.join(root, f"vision_layer{layer}"),
                          {"model": "../model", "model_type": vc["model_type"], "layer": layer,
                           "input": "input.npy"}, x, ctx, maps)
        lines.append(f"vision layer {layer}: {folder.describe(s)}")
    return lines


def folder_case_checks(spec):
    out = [(f"layer{n}", n, ["config"] + ([] if spec.get("pad") else ["model"]))
           for n in spec["layers"]]
    return out + [(f"vision_layer{n}", n, ["config", "model"])
                  for n in spec.get("vision_layers", [])]


FOLDERS = [
    # google/siglip-base-patch16-224's spelling (SiglipModel): the text tower (bidirectional,
    # padded on the right) and the vision tower's layer 1
    dict(name="siglip", seed=701, container="safetensors", dtype="f32", layers=[0, 1], B=2, S=7,
         pad="right", vision_layers=[1], vision_S=5,
         config={"architectures": ["SiglipModel"], "initializer_factor": 1.0,
                 "model_type": "siglip",
                 "text_config": {"hidden_size": 32, "intermediate_size": 8,
                                 "model_type": "siglip_text_model", "num_attention_heads": 4,
                                 "num_hidden_layers": 2, "vocab_size": 12},
                 "vision_config": {"hidden_size": 24, "image_size": 4, "intermediate_size": 8,
                                   "model_type": "siglip_vision_model",
                                   "num_attention_heads": 2, "num_hidden_layers": 2,
                                   "patch_size": 2}}),
    # SigLIP 2's vision tower alone (Siglip2VisionModel, as VLMs take it), bf16
    dict(name="siglip2_vision", seed=702, container="safetensors", dtype="bf16", layers=[0, 2],
         B=2, S=6,
         config={"architectures": ["Siglip2VisionModel"], "model_type": "siglip2_vision_model",
                 "attention_dropout": 0.0, "hidden_act": "gelu_pytorch_tanh",
                 "hidden_size": 32, "intermediate_size": 8, "layer_norm_eps": 1e-06,
                 "num_attention_heads": 4, "num_channels": 3, "num_hidden_layers": 3,
                 "num_patches": 16, "patch_size": 2}),
    # SigLIP 2's whole model (Siglip2Model): its text tower, and the vision tower's layer 0
    dict(name="siglip2", seed=703, container="safetensors", dtype="f32", layers=[1], B=2, S=8,
         pad="right", vision_layers=[0], vision_S=6,
         config={"architectures": ["Siglip2Model"], "model_type": "siglip2",
                 "text_config": {"hidden_size": 16, "model_type": "siglip2_text_model",
                                 "num_attention_heads": 2, "num_hidden_layers": 2,
                                 "vocab_size": 12},
                 "vision_config": {"hidden_size": 24, "model_type": "siglip2_vision_model",
                                   "num_attention_heads": 3, "num_hidden_layers": 1,
                                   "num_patches": 16, "patch_size": 2}}),
    # SiglipVisionModel in pytorch_model.bin (f16), unbatched
    dict(name="siglip_vision", seed=704, container="bin", dtype="f16", layers=[1], S=10,
         unbatched=True,
         config={"architectures": ["SiglipVisionModel"], "model_type": "siglip_vision_model",
                 "hidden_size": 40, "image_size": 8, "num_attention_heads": 5,
                 "num_hidden_layers": 2, "patch_size": 2}),
]

HELDOUT = [
    # SiglipModel with the towers' defaults left out (text heads 12 of 48, sharded)
    dict(name="siglip_defaults", seed=801, container="shards2", dtype="f32", layers=[0], B=2,
         S=8, pad="right", vision_layers=[1], vision_S=7,
         config={"architectures": ["SiglipModel"], "model_type": "siglip",
                 "text_config": {"hidden_size": 48, "num_hidden_layers": 1},
                 "vision_config": {"hidden_size": 24, "num_attention_heads": 2,
                                   "num_hidden_layers": 2}}),
    # SiglipTextModel alone, bf16
    dict(name="siglip_text", seed=802, container="safetensors", dtype="bf16", layers=[1], B=3,
         S=9, pad="right",
         config={"architectures": ["SiglipTextModel"], "model_type": "siglip_text_model",
                 "hidden_size": 32, "num_attention_heads": 4, "num_hidden_layers": 2}),
]

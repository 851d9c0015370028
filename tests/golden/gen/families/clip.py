"""CLIP's towers: modeling_clip.CLIPAttention (q/k/v_proj and out_proj with biases; the text
tower causal with its padding, the vision tower bidirectional): clip_text_model (Stable
Diffusion's text_encoder), clip_vision_model, and a CLIPModel folder ("clip": its text_config
tower, updated by an older text_config_dict, and the vision tower's tensors beside it, whose
layers are cases of their own: vision_layer<N>/ with "model_type": "clip_vision_model", as
CLIPVisionModel.from_pretrained of the folder reads vision_config)."""
import os

import torch

from .. import folder, hf
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("clip", "clip_text_model", "clip_vision_model")
CLASS_DEFAULTS = {
    "clip_text_model": dict(hidden_size=512, num_attention_heads=8, num_hidden_layers=12),
    "clip_vision_model": dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=12),
}


def unwrap(cfg):
    """CLIPConfig's text tower (CLIPTextModel.from_pretrained of a "clip" folder reads
    text_config, updated by an older text_config_dict), else cfg."""
    if cfg.get("model_type") == "clip":
        return dict(cfg["text_config"], **(cfg.get("text_config_dict") or {}),
                    model_type="clip_text_model")
    return cfg


def settings(cfg, layer):
    cfg = unwrap(cfg)
    mt = cfg["model_type"]
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS[mt])
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    tower = "text_model" if mt == "clip_text_model" else "vision_model"
    return Layer(C, H, H, C // H, names=("q_proj", "k_proj", "v_proj", "out_proj"),
                 causal=mt == "clip_text_model", qkv_bias=True, o_bias=True, model_type=mt,
                 prefix=f"{tower}.encoder.layers.{layer}.self_attn.")


def vision_config(cfg):
    return dict(cfg["vision_config"], model_type="clip_vision_model")


def attention_weights(a, g):
    return W.decoder_attention(a, g, out="out_proj")


def neighbours(s, layer, g, small=4):
    p = f"{'text' if s.model_type == 'clip_text_model' else 'vision'}_model.encoder.layers.{layer}."
    return {p + "layer_norm1.weight": W.ones(s.C), p + "mlp.fc1.weight": W.small(g, small, s.C)}


def outside(cfg, s0, g, vocab=12):
    r = lambda *shape: W.small(g, *shape)  # noqa: E731
    C = s0.C
    if s0.model_type == "clip_vision_model":
        return {"vision_model.embeddings.class_embedding": r(C),
                "vision_model.post_layernorm.weight": W.ones(C)}
    out = {"text_model.embeddings.token_embedding.weight": r(vocab, C),
           "text_model.final_layer_norm.weight": W.ones(C)}
    if cfg.get("model_type") == "clip":  # CLIPModel: the vision tower's whole layers beside it
        out.update({"logit_scale": torch.tensor(2.6592, dtype=torch.float64),
                    "text_projection.weight": r(8, C)})
        vc = vision_config(cfg)
        for layer in range(vc["num_hidden_layers"]):
            s = settings(vc, layer)
            for k, v in attention_weights(s, g).items():
                out[s.prefix + k] = v
            out.update(neighbours(s, layer, g))
        out["visual_projection.weight"] = r(8, s.C)
    return out


def folder_cases(fam, spec, root, stored, layers, g, rn):
    """The text tower's layer<N>/, then a CLIPModel's vision_layer<N>/: the vision tower's layer
    from the stored weights, its input from a generator of its own (seed + 1000 + N)."""
    lines = folder.layer_cases(fam, spec, root, stored, layers, g, rn)
    for layer in spec.get("vision_layers", []):
        s = settings(vision_config(spec["config"]), layer)
        lsd = {k[len(s.prefix):]: v for k, v in stored.items() if k.startswith(s.prefix)}
        vg = torch.Generator().manual_seed(spec["seed"] + 1000 + layer)
        B, S = spec.get("B", 1), spec.get("vision_S", 5)
        x = torch.randn(B, S, s.C, generator=vg, dtype=torch.float64).float().double()
        ctx, maps = folder.forward(fam, s, lsd, x, None, torch.arange(S).expand(B, S))
        folder.write_case(os.path.join(root, f"vision_layer{layer}"),
                          {"model": "../model", "model_type": "clip_vision_model", "layer": layer,
                           "input": "input.npy"}, x, ctx, maps)
        lines.append(f"vision layer {layer}: {folder.describe(s)}")
    return lines


def folder_case_checks(spec):
    out = [(f"layer{n}", n, ["config"] + ([] if spec.get("pad") else ["model"]))
           for n in spec["layers"]]
    return out + [(f"vision_layer{n}", n, ["config", "model"])
                  for n in spec.get("vision_layers", [])]


FOLDERS = [
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
]

HELDOUT = [
    # CLIPTextModelWithProjection, bf16, defaults for what config.json leaves out (heads 8)
    dict(name="clip_text_proj", seed=409, container="safetensors", dtype="bf16",
         layers=[2], B=3, S=9, pad="right",
         config={"architectures": ["CLIPTextModelWithProjection"],
                 "model_type": "clip_text_model", "hidden_size": 64,
                 "num_hidden_layers": 3, "projection_dim": 8}),
    # CLIPModel whose text_config_dict (older saves) overrides text_config's heads
    dict(name="clip_dict", seed=410, container="shards2", dtype="f32", layers=[0, 1], B=2,
         S=8, pad="right",
         config={"architectures": ["CLIPModel"], "model_type": "clip",
                 "text_config": {"hidden_size": 32, "num_attention_heads": 8,
                                 "num_hidden_layers": 2},
                 "text_config_dict": {"hidden_size": 32, "num_attention_heads": 2,
                                      "num_hidden_layers": 2},
                 "vision_config": {"hidden_size": 16, "num_attention_heads": 2,
                                   "num_hidden_layers": 1}}),
    # CLIPVisionModel in pytorch_model.bin (f16), unbatched
    dict(name="clip_vision_bin", seed=411, container="bin", dtype="f16", layers=[1], S=10,
         unbatched=True,
         config={"architectures": ["CLIPVisionModel"], "model_type": "clip_vision_model",
                 "hidden_size": 40, "num_attention_heads": 5, "num_hidden_layers": 2}),
]

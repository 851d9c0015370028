"""ViT: modeling_vit.ViTSelfAttention (attention.query / key / value with bias = qkv_bias) and
ViTSelfOutput.dense; bidirectional over the CLS token and the patches, no padding in images."""
from .. import hf
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("vit",)
CLASS_DEFAULTS = dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=12,
                      qkv_bias=True)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    return Layer(C, H, H, C // H, causal=False, qkv_bias=bool(cfg["qkv_bias"]), o_bias=True,
                 names=("attention.query", "attention.key", "attention.value", "output.dense"),
                 model_type="vit", prefix=f"vit.encoder.layer.{layer}.attention.")


def outside(cfg, s0, g):
    C = s0.C
    return {"vit.embeddings.cls_token": W.small(g, 1, 1, C),
            "vit.embeddings.patch_embeddings.projection.weight": W.small(g, C, 3, 2, 2),
            "classifier.weight": W.small(g, 3, C)}


def attention_weights(a, g):
    sd = {}
    for n in ("query", "key", "value"):
        W.put(sd, "attention." + n, W.lin(g, a.H * a.D, a.C, a.qkv_bias))
    W.put(sd, "output.dense", W.lin(g, a.C, a.H * a.D))
    return sd


def neighbours(s, layer, g, small=4):  # the layer's own output.dense beside attention's
    p = f"vit.encoder.layer.{layer}."
    return {p + "layernorm_before.weight": W.ones(s.C),
            p + "intermediate.dense.weight": W.small(g, small, s.C),
            p + "output.dense.weight": W.small(g, s.C, small)}


FOLDERS = [
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
]

HELDOUT = [
    # ViTModel (bare "encoder.layer.N."), qkv_bias false, sharded
    dict(name="vit_model", seed=407, container="shards2", dtype="f32", layers=[2], B=3, S=10,
         rename=[("vit.", "")],
         config={"model_type": "vit", "hidden_size": 48, "num_attention_heads": 3,
                 "num_hidden_layers": 3, "qkv_bias": False, "image_size": 6,
                 "patch_size": 2}),
    # ViT with a padded batch through attention_mask (attn-run's key padding on any encoder)
    dict(name="vit_padded", seed=408, container="safetensors", dtype="f16", layers=[0], B=2,
         S=7, pad="right",
         config={"model_type": "vit", "hidden_size": 16, "num_attention_heads": 2,
                 "num_hidden_layers": 1}),
]

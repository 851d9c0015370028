"""DINOv2 (and DINOv2 with registers): modeling_dinov2.Dinov2SelfAttention (attention.query /
key / value with qkv_bias) and Dinov2SelfOutput.dense, ViT's names; bidirectional over the CLS
token, the registers and the patches; the layer scales and the MLP outside."""
from .. import hf
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("dinov2", "dinov2_with_registers")
CLASS_DEFAULTS = dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=12,
                      qkv_bias=True)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    return Layer(C, H, H, C // H, causal=False, qkv_bias=bool(cfg["qkv_bias"]), o_bias=True,
                 names=("attention.query", "attention.key", "attention.value", "output.dense"),
                 model_type=cfg["model_type"], prefix=f"encoder.layer.{layer}.attention.")


def outside(cfg, s0, g):
    C = s0.C
    out = {"embeddings.cls_token": W.small(g, 1, 1, C),
           "embeddings.mask_token": W.small(g, 1, C),
           "embeddings.position_embeddings": W.small(g, 1, 5, C),
           "embeddings.patch_embeddings.projection.weight": W.small(g, C, 3, 2, 2)}
    if cfg["model_type"] == "dinov2_with_registers":
        out["embeddings.register_tokens"] = W.small(g, 1, cfg["num_register_tokens"], C)
    return out


def attention_weights(a, g):
    sd = {}
    for n in ("query", "key", "value"):
        W.put(sd, "attention." + n, W.lin(g, a.H * a.D, a.C, a.qkv_bias))
    W.put(sd, "output.dense", W.lin(g, a.C, a.H * a.D))
    return sd


def neighbours(s, layer, g, small=4):  # Dinov2Layer: norm1, layer_scale1, norm2, mlp
    p = f"encoder.layer.{layer}."
    return {p + "norm1.weight": W.ones(s.C), p + "layer_scale1.lambda1": W.ones(s.C),
            p + "norm2.weight": W.ones(s.C), p + "mlp.fc1.weight": W.small(g, small, s.C),
            p + "layer_scale2.lambda1": W.ones(s.C)}


FOLDERS = [
    # facebook/dinov2-small's spelling (Dinov2Model: no prefix): CLS + 2x2 patches
    dict(name="dinov2", seed=591, container="safetensors", dtype="f32", layers=[0, 1], B=2,
         S=5,
         config={"architectures": ["Dinov2Model"], "model_type": "dinov2",
                 "attention_probs_dropout_prob": 0.0, "drop_path_rate": 0.0,
                 "hidden_act": "gelu", "hidden_dropout_prob": 0.0, "hidden_size": 32,
                 "image_size": 4, "initializer_range": 0.02, "layer_norm_eps": 1e-06,
                 "layerscale_value": 1.0, "mlp_ratio": 4, "num_attention_heads": 4,
                 "num_channels": 3, "num_hidden_layers": 2, "patch_size": 2, "qkv_bias": True,
                 "torch_dtype": "float32", "use_swiglu_ffn": False}),
    # facebook/dinov2-with-registers-small's kind: CLS, 4 registers, 2x2 patches; bf16
    dict(name="dinov2_registers", seed=592, container="safetensors", dtype="bf16", layers=[1],
         B=1, S=9,
         config={"architectures": ["Dinov2WithRegistersModel"],
                 "model_type": "dinov2_with_registers", "hidden_size": 32, "image_size": 4,
                 "num_attention_heads": 2, "num_hidden_layers": 2, "num_register_tokens": 4,
                 "patch_size": 2, "qkv_bias": True}),
]

HELDOUT = [
    # Dinov2ForImageClassification ("dinov2." prefix), qkv_bias false
    dict(name="dinov2_cls", seed=691, container="safetensors", dtype="f16", layers=[1], B=2,
         S=5, rename=[("embeddings.", "dinov2.embeddings."), ("encoder.", "dinov2.encoder.")],
         config={"architectures": ["Dinov2ForImageClassification"], "model_type": "dinov2",
                 "hidden_size": 48, "num_attention_heads": 3, "num_hidden_layers": 2,
                 "qkv_bias": False}),
]

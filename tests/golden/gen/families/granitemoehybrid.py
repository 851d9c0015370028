"""Granite 4.0-H (model_type granitemoehybrid): modeling_granitemoehybrid.GraniteMoeHybridAttention
is Granite's attention (attention_multiplier as the scale, biases as attention_bias) on the
"attention" layers of layer_types (none listed: every layer Mamba); GraniteMoeHybridModel makes
a rotary embedding only when position_embedding_type is "rope": the released checkpoints say
"nope", no positions. Mamba layers hold mamba.* (GraniteMoeHybridMambaLayer), not run."""
from collections import OrderedDict

import numpy as np

from .. import gguf, hf, hybrid
from .. import weights as W
from ..reference import Layer, Rope

MODEL_TYPES = ("granitemoehybrid",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, attention_bias=False, attention_multiplier=1.0,
                      position_embedding_type=None)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H, Hkv, D = hf.sizes(cfg)
    kinds = cfg.get("layer_types") or ["mamba"] * cfg["num_hidden_layers"]
    b = bool(cfg["attention_bias"])
    rope = Rope(float(cfg["rope_theta"]), D, hf.rope_scaling(cfg),
                cfg.get("max_position_embeddings")) \
        if cfg["position_embedding_type"] == "rope" else None
    return Layer(C, H, Hkv, D, qkv_bias=b, o_bias=b, scale=cfg["attention_multiplier"],
                 rope=rope, model_type="granitemoehybrid", kind=kinds[layer],
                 runs=kinds[layer] == "attention", prefix=f"model.layers.{layer}.self_attn.")


def model(cfg, layers, g):
    def block(i, s):
        p = f"model.layers.{i}."
        sd = {p + "input_layernorm.weight": W.ones(s.C)}
        sd.update(hybrid.attention(s, g) if s.runs else hybrid.mamba(p + "mamba.", s.C, g))
        sd[p + "post_attention_layernorm.weight"] = W.ones(s.C)
        sd[p + "shared_mlp.input_linear.weight"] = W.small(g, 8, s.C)
        sd[p + "shared_mlp.output_linear.weight"] = W.small(g, s.C, 4)
        return sd
    return hybrid.model(layers, g, "model.", block)


GRANITE_H = {"architectures": ["GraniteMoeHybridForCausalLM"], "model_type": "granitemoehybrid",
             "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 100257,
             "embedding_multiplier": 12, "eos_token_id": 100257, "hidden_act": "silu",
             "init_method": "mup", "initializer_range": 0.1, "logits_scaling": 6,
             "mamba_chunk_size": 256, "mamba_conv_bias": True, "mamba_d_conv": 4,
             "mamba_d_head": 4, "mamba_d_state": 4, "mamba_expand": 2, "mamba_n_groups": 1,
             "mamba_n_heads": 2, "mamba_proj_bias": False, "max_position_embeddings": 131072,
             "normalization_function": "rmsnorm", "num_experts_per_tok": 1,
             "num_local_experts": 2, "output_router_logits": False, "pad_token_id": 100256,
             "position_embedding_type": "nope", "residual_multiplier": 0.22,
             "rms_norm_eps": 1e-05, "rope_scaling": None, "rope_theta": 10000,
             "router_aux_loss_coef": 0.0, "shared_intermediate_size": 4, "tie_word_embeddings": True,
             "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 12}
FOLDERS = [
    # ibm-granite/granite-4.0-h-tiny's spelling, shrunk: Mamba, attention, Mamba, Mamba,
    # attention; attention_multiplier (not 1/sqrt(D)) the scale, no positions
    dict(name="granite_4_h", seed=801, container="safetensors", dtype="bf16", layers=[1, 4],
         B=2, S=9, pad="right",
         config=dict(GRANITE_H, hidden_size=32, intermediate_size=8, num_attention_heads=4,
                     num_key_value_heads=2, num_hidden_layers=5, attention_multiplier=0.0625,
                     layer_types=["mamba", "attention", "mamba", "mamba", "attention"])),
    dict(name="granite_4_h_rope", seed=802, container="safetensors", dtype="f32", layers=[0],
         S=8, offset=3,
         config=dict(GRANITE_H, hidden_size=24, intermediate_size=8, num_attention_heads=3,
                     num_key_value_heads=3, num_hidden_layers=2, attention_multiplier=0.1,
                     position_embedding_type="rope", rope_theta=10000.0,
                     max_position_embeddings=64, layer_types=["attention", "mamba"])),
]

HELDOUT = [
    dict(name="granite_4_h", seed=901, container="shards2", dtype="f32", layers=[2], B=2, S=11,
         pad="left",
         config={"model_type": "granitemoehybrid", "hidden_size": 24, "num_attention_heads": 6,
                 "num_key_value_heads": 2, "num_hidden_layers": 3, "attention_bias": True,
                 "attention_multiplier": 0.25, "position_embedding_type": "nope",
                 "layer_types": ["mamba", "mamba", "attention"]}),
]


# ---- GGUF: llama.cpp's granitehybrid (conversion/granite.py GraniteHybridModel) -------------

def gguf_weights(s, layer, g):
    """An attention layer's Hugging Face tensors; none on a Mamba layer."""
    return W.decoder_attention(s, g) if s.runs else OrderedDict()


def gguf_other_layer(w, p, s, r):
    """A Mamba2 layer's tensors as the converter names them (not read)."""
    for name, shape in (("ssm_in", (28, s.C)), ("ssm_out", (s.C, 8))):
        gguf.f32(w, p + name + ".weight", r(*shape).numpy())
    gguf.f32(w, p + "ssm_norm.weight", np.ones(8, np.float32))


def gguf_metadata(w, arch, cfg, n_layers):
    """TextModel's keys (head_count_kv aside), then GraniteHybridModel's: the KV heads per
    layer (0 on Mamba layers), attention.scale and embedding_scale (GraniteModel, from the
    _multiplier keys when set), rope.scaling.finetuned false when the model has Mamba layers
    (no rope in llama.cpp's graph)."""
    gguf.text_model_metadata(w, arch, dict(cfg, num_key_value_heads=None), n_layers,
                             llama_model=True)
    a = arch + "."
    kinds = cfg["layer_types"]
    w.add(a + "attention.head_count_kv",
          [int(cfg["num_key_value_heads"]) if k == "attention" else 0 for k in kinds])
    if cfg.get("attention_multiplier"):
        w.add(a + "attention.scale", float(cfg["attention_multiplier"]))
    if cfg.get("embedding_multiplier"):
        w.add(a + "embedding_scale", float(cfg["embedding_multiplier"]))
    w.add(a + "rope.scaling.finetuned", "mamba" not in kinds)


GGUF = [
    # granite-4.0-h-tiny's shape, shrunk: attention at layers 1 and 4 among Mamba, no positions,
    # attention_multiplier the scale; Q/K rows permuted as LlamaModel does
    dict(name="granite_4_h", arch="granitehybrid", seed=841, layers=[1, 4], S=9, permute=True,
         metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "F16", "attn_output": "Q4_0"},
         config=dict(GRANITE_H, hidden_size=32, intermediate_size=8, num_attention_heads=4,
                     num_key_value_heads=2, num_hidden_layers=5, attention_multiplier=0.0625,
                     layer_types=["mamba", "attention", "mamba", "mamba", "attention"])),
]

"""Hunyuan (modeling_hunyuan_v1_dense.HunYuanDenseV1Attention; hunyuan_v1_moe's
HunYuanMoEV1Attention is the same): LlamaAttention (head_dim from the config, else C // H) whose q
and k go through rope first, then query_layernorm / key_layernorm, RMSNorms over head_dim (x * w,
eps rms_norm_eps). HunYuanDenseV1RotaryEmbedding's "DynamicNTKAlphaRotary": a "dynamic"
rope_scaling (rope_parameters) with an alpha is the plain rope of base
rope_theta * alpha ** (head_dim / (head_dim - 2)), attention factor 1. The class defaults for the
keys a config.json leaves out."""
from collections import OrderedDict

import numpy as np

from .. import gguf, hf
from .. import weights as W
from ..reference import QkNorm, Rope

MODEL_TYPES = ("hunyuan_v1_dense", "hunyuan_v1_moe")
CLASS_DEFAULTS = dict(rope_theta=10000.0, attention_bias=False, rms_norm_eps=1e-5,
                      max_position_embeddings=2048)
NAMES = ("query_layernorm", "key_layernorm")


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, cfg["model_type"], layer, bias_key="attention_bias")
    p = hf.get(cfg, "rope_parameters") or hf.get(cfg, "rope_scaling") or {}
    theta = p.get("rope_theta", cfg["rope_theta"])
    if p.get("rope_type", p.get("type")) == "dynamic" and p.get("alpha"):
        rope = Rope(theta * p["alpha"] ** (a.D / (a.D - 2)), a.D, None,
                    cfg["max_position_embeddings"])
    else:
        rope = hf.rope(cfg, a.D, theta, scaling=hf.get(cfg, "rope_scaling"),
                       params=hf.v5_params(cfg))
    return a.replace(rope=rope, qk_norm=QkNorm("rms", cfg["rms_norm_eps"], names=NAMES,
                                               after_rope=True))


def attention_weights(a, g):  # the decoder's, its norms named query_layernorm / key_layernorm
    sd = W.decoder_attention(a, g)
    return OrderedDict((k.replace("q_norm.", "query_layernorm.").replace(
        "k_norm.", "key_layernorm."), v) for k, v in sd.items())


def alpha_base(cfg):
    """HunYuanModel.set_gguf_parameters's base: rope_theta * alpha ** (head_dim / (head_dim -
    2)) for a "dynamic" rope (the MoE converter's head size: hidden_size // heads)."""
    p = cfg["rope_scaling"]
    dim = cfg["head_dim"] if cfg["model_type"] == "hunyuan_v1_dense" else \
        cfg["hidden_size"] // cfg["num_attention_heads"]
    return cfg.get("rope_theta", 10000.0) * p["alpha"] ** (dim / (dim - 2))


def gguf_metadata(w, arch, cfg, n_layers):
    """HunYuanModel (HunYuanMoEModel).set_gguf_parameters: TextModel's keys, then for the
    "dynamic" rope the scaled base, scaling type none, factor 1 and a 256k context."""
    # (gguf-py overwrites the base and the context TextModel wrote: written once here)
    gguf.text_model_metadata(w, arch, dict(cfg, rope_theta=alpha_base(cfg),
                                           max_position_embeddings=256 * 1024), n_layers)
    w.add(arch + ".rope.scaling.type", "none")
    w.add(arch + ".rope.scaling.factor", 1.0)
    w.add(arch + ".rope.scaling.original_context_length", 256 * 1024)


def gguf_runs_as(cfg):
    """The config as llama.cpp runs the file: the base as the file stores it (float32), no
    scaling."""
    return {"rope_theta": float(np.float32(alpha_base(cfg))), "rope_scaling": None,
            "max_position_embeddings": 256 * 1024}


HUNYUAN_7B = {"architectures": ["HunYuanDenseV1ForCausalLM"], "attention_bias": False,
              "attention_dropout": 0.0, "attention_head_dim": 16, "bos_token_id": 1,
              "cla_share_factor": 2, "eod_token_id": 10, "eos_token_id": 11, "head_dim": 16,
              "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02,
              "intermediate_size": 8, "max_position_embeddings": 262144, "mlp_bias": False,
              "model_type": "hunyuan_v1_dense", "norm_type": "rms", "num_attention_heads": 4,
              "num_hidden_layers": 2, "num_key_value_heads": 2, "pad_token_id": 9,
              "pretraining_tp": 1, "rms_norm_eps": 1e-05,
              "rope_scaling": {"alpha": 50.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0,
                               "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"},
              "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
              "transformers_version": "4.56.0", "use_cache": True, "use_cla": False,
              "use_qk_norm": True, "use_rotary_pos_emb": True, "vocab_size": 12}

HUNYUAN_A13B = dict(HUNYUAN_7B, architectures=["HunYuanMoEV1ForCausalLM"],
                    model_type="hunyuan_v1_moe", head_dim=8, attention_head_dim=8,
                    num_attention_heads=4, num_key_value_heads=1, num_experts=4, moe_topk=2,
                    rope_scaling={"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1,
                                  "factor": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0,
                                  "type": "dynamic"})

FOLDERS = [
    # Hunyuan-7B-Instruct's spelling: head_dim 16 (not C // H), the NTK-alpha base; the norms'
    # order and the alpha each count
    dict(name="hunyuan_v1_dense", seed=721, container="safetensors", dtype="bf16",
         layers=[0, 1], B=2, S=9, pad="left", config=HUNYUAN_7B,
         input_norm=dict(kind="rms", name="input_layernorm.", eps=1e-5, layers=[0]),
         guards=({"qk_norm": QkNorm("rms", 1e-5, names=NAMES)},
                 {"rope": Rope(10000.0, 16, None, 262144)})),
    dict(name="hunyuan_v1_moe", seed=722, container="shards2", dtype="bf16", layers=[1], B=2,
         S=8, pad="right", config=HUNYUAN_A13B,
         guards=({"qk_norm": QkNorm("rms", 1e-5, names=NAMES)},
                 {"rope": Rope(10000.0, 8, None, 262144)})),
]

GGUF_DENSE = dict(HUNYUAN_7B, max_position_embeddings=32768)
GGUF_MOE = dict(HUNYUAN_A13B, max_position_embeddings=32768)

GGUF = [
    # HunYuanModel: NEOX, tensors unchanged, the NTK-alpha base as rope.freq_base
    dict(name="hunyuan_dense", arch="hunyuan-dense", seed=723, layers=[0, 1], S=9,
         metadata=gguf_metadata, runs_as=gguf_runs_as(GGUF_DENSE),
         types={"attn_q": "Q8_0", "attn_k": "F16", "attn_v": "Q8_0", "attn_output": "Q8_0"},
         config=GGUF_DENSE),
    dict(name="hunyuan_moe", arch="hunyuan-moe", seed=724, layers=[1], S=8,
         metadata=gguf_metadata, runs_as=gguf_runs_as(GGUF_MOE),
         types={"attn_q": "Q8_0", "attn_k": "BF16", "attn_v": "F16", "attn_output": "Q8_0"},
         config=GGUF_MOE),
]

HELDOUT = [
    # no rope_scaling (rope_theta as is), biases, class defaults for the rest
    dict(name="hunyuan_plain", seed=821, container="safetensors", dtype="f32", layers=[1], B=2,
         S=7, pad="left",
         config={"model_type": "hunyuan_v1_dense", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 2, "attention_bias": True,
                 "rope_theta": 500000.0}),
    # transformers v5's rope_parameters with the alpha
    dict(name="hunyuan_moe_v5", seed=822, container="safetensors", dtype="bf16", layers=[0],
         S=8, config={"model_type": "hunyuan_v1_moe", "hidden_size": 32,
                      "num_attention_heads": 2, "num_hidden_layers": 1,
                      "rope_parameters": {"rope_type": "dynamic", "alpha": 100.0,
                                          "rope_theta": 10000.0}}),
]

VARIANTS = [
    # RMS per head after rope, GQA, positions from right padding; dropping the order (the norm
    # before rope) moves the context
    dict(name="hunyuan_qk_norm_after_rope", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 10000.0},
         qk_norm={"kind": "rms", "eps": 1e-5, "order": "after_rope"}, left=False, S=9, seed=42,
         guards=({"qk_norm": QkNorm("rms", 1e-5)},)),
]

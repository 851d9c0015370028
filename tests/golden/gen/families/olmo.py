"""OLMo (modeling_olmo.OlmoAttention): LlamaAttention whose q, k and v are clamped to
[-clip_qkv, clip_qkv] right after q_proj / k_proj / v_proj, before rope (clip_qkv null: none;
OLMo 2 and 3 drop the clamp: Olmo2Config deletes clip_qkv). Its norms are OlmoLayerNorm, a
LayerNorm without weight or bias (no tensors). OlmoConfig's defaults for the keys a config.json
leaves out."""
from collections import OrderedDict

from .. import gguf, hf
from .. import weights as W

MODEL_TYPES = ("olmo",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, attention_bias=False, clip_qkv=None,
                      max_position_embeddings=2048)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "olmo", layer, bias_key="attention_bias")
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)),
                     clip_qkv=cfg["clip_qkv"])


def outside(cfg, s0, g):  # OlmoModel: embed_tokens; its final norm has no weight
    return {"model.embed_tokens.weight": W.outside_draws(g, s0.C)["llama"]}


def neighbours(s, layer, g):  # OlmoDecoderLayer: its norms have no weight; the MLP
    return OrderedDict([(f"model.layers.{layer}.mlp.up_proj.weight", W.small(g, 4, s.C))])


def gguf_metadata(w, arch, cfg, n_layers):
    """OlmoModel.set_gguf_parameters: TextModel's keys, layer_norm_eps 1e-5, clip_qkv as
    attention.clamp_kqv when set."""
    gguf.text_model_metadata(w, arch, cfg, n_layers)
    w.add(arch + ".attention.layer_norm_epsilon", 1e-5)
    if cfg.get("clip_qkv") is not None:
        w.add(arch + ".attention.clamp_kqv", float(cfg["clip_qkv"]))


OLMO_7B_0424 = {"architectures": ["OlmoForCausalLM"], "attention_bias": False,
                "attention_dropout": 0.0, "bos_token_id": None, "clip_qkv": 0.4,
                "eos_token_id": 50279, "hidden_act": "silu", "hidden_size": 32,
                "initializer_range": 0.02, "intermediate_size": 8,
                "max_position_embeddings": 4096, "model_type": "olmo",
                "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 4,
                "pad_token_id": 1, "pretraining_tp": 1, "rope_scaling": None,
                "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "float32",
                "transformers_version": "4.40.0.dev0", "use_cache": True, "vocab_size": 12}

FOLDERS = [
    # OLMo-7B-0424-hf's spelling (its clip_qkv 8.0 here 0.4, below the projections' values),
    # float32 as released; dropping the clamp moves the context
    dict(name="olmo", seed=701, container="safetensors", dtype="f32", layers=[0, 1], B=2, S=8,
         pad="left", config=OLMO_7B_0424, guards=({"clip_qkv": None},)),
]

HELDOUT = [
    # OLMo-1B-hf's: clip_qkv null, tied embeddings; GQA and linear scaling beside it
    dict(name="olmo_no_clip", seed=801, container="safetensors", dtype="bf16", layers=[1], B=2,
         S=7, pad="right",
         config={"model_type": "olmo", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 2, "clip_qkv": None,
                 "rope_scaling": {"type": "linear", "factor": 2.0}}),
    dict(name="olmo_clip_bias", seed=802, container="shards2", dtype="f32", layers=[0], S=6,
         config={"model_type": "olmo", "hidden_size": 32, "num_attention_heads": 2,
                 "num_hidden_layers": 1, "clip_qkv": 0.3, "attention_bias": True}),
]

GGUF = [
    # OlmoModel: Q/K permuted for llama.cpp's NORM rope, the clamp as attention.clamp_kqv
    dict(name="olmo", arch="olmo", seed=703, layers=[0, 1], S=9, permute=True,
         metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "F16", "attn_v": "Q8_0", "attn_output": "BF16"},
         config=dict(OLMO_7B_0424, num_key_value_heads=2)),
]

VARIANTS = [
    # clip_qkv 0.3 (below the projections' largest values), GQA, rope, left padding
    dict(name="olmo_clip_qkv", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 10000.0}, clip_qkv=0.3, S=9, seed=41,
         guards=({"clip_qkv": None},)),
]

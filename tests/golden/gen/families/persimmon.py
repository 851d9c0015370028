"""Persimmon: modeling_persimmon.PersimmonAttention: query_key_value (with bias) viewed (H, 3, D)
per head [q, k, v] (GPT-NeoX's), with qk_layernorm an nn.LayerNorm(head_dim) with a bias on q
and on k before rope, rope (rotate_half) on the first partial_rotary_factor of the head, dense
with bias; head_dim = hidden_size // num_attention_heads, as many KV heads as query heads.
PersimmonConfig's defaults: rope_theta 25000, partial_rotary_factor 0.5, qk_layernorm true."""
from .. import hf
from .. import weights as W
from ..reference import QkNorm

MODEL_TYPES = ("persimmon",)
CLASS_DEFAULTS = dict(rope_theta=25000.0, partial_rotary_factor=0.5, qk_layernorm=True,
                      layer_norm_eps=1e-5, max_position_embeddings=16384)
NAMES = ("query_key_value", "dense")


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "persimmon", layer, qkv_bias=True, o_bias=True)
    a = a.replace(layout="per_head", names=NAMES, Hkv=a.H, D=a.C // a.H)
    norm = QkNorm("layer", cfg["layer_norm_eps"], names=("q_layernorm", "k_layernorm")) \
        if cfg["qk_layernorm"] else None
    return a.replace(qk_norm=norm,
                     rope=hf.rope(cfg, a.D, cfg["rope_theta"], cfg["partial_rotary_factor"],
                                  hf.get(cfg, "rope_scaling"), params=hf.v5_params(cfg)))


def outside(cfg, s0, g, vocab=12):
    return {"model.embed_tokens.weight": W.small(g, vocab, s0.C),
            "model.final_layernorm.weight": W.ones(s0.C),
            "model.final_layernorm.bias": W.small(g, s0.C),
            "lm_head.weight": W.small(g, vocab, s0.C)}


def attention_weights(a, g):
    """query_key_value and dense, then q_layernorm / k_layernorm (D) with biases."""
    sd = W.qkv_dense(a, g)
    if a.qk_norm:
        for n in ("q_layernorm", "k_layernorm"):
            sd[n + ".weight"] = 1.0 + 0.3 * W.randn(g, a.D)
            sd[n + ".bias"] = 0.2 * W.randn(g, a.D)
    return sd


def neighbours(s, layer, g, small=4):
    p = f"model.layers.{layer}."
    return {p + "input_layernorm.weight": W.ones(s.C),
            p + "input_layernorm.bias": W.small(g, s.C),
            p + "mlp.dense_h_to_4h.weight": W.small(g, small, s.C)}


PERSIMMON = {"architectures": ["PersimmonForCausalLM"], "model_type": "persimmon",
             "bos_token_id": 71013, "eos_token_id": 71013, "hidden_act": "relu2",
             "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 8,
             "layer_norm_eps": 1e-05, "max_position_embeddings": 64,
             "num_attention_heads": 4, "num_hidden_layers": 2, "partial_rotary_factor": 0.5,
             "qk_layernorm": True, "rope_theta": 25000.0, "tie_word_embeddings": False,
             "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 12}

FOLDERS = [
    # adept/persimmon-8b-base's spelling: q/k LayerNorms with biases, rope on half the head
    dict(name="persimmon", seed=591, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
         S=8, pad="left", config=PERSIMMON),
]

HELDOUT = [
    # the class defaults (rope_theta 25000, factor 0.5, qk_layernorm on) left out
    dict(name="persimmon_defaults", seed=691, container="safetensors", dtype="f32", layers=[1],
         B=2, S=9, pad="right",
         config={"model_type": "persimmon", "hidden_size": 48, "num_attention_heads": 4,
                 "num_hidden_layers": 2}),
    # qk_layernorm off, a quarter of the head rotated
    dict(name="persimmon_plain", seed=692, container="safetensors", dtype="f32", layers=[0],
         B=1, S=7, config={"model_type": "persimmon", "hidden_size": 64,
                           "num_attention_heads": 4, "num_hidden_layers": 1,
                           "qk_layernorm": False, "partial_rotary_factor": 0.25}),
]

"""Seed-OSS: modeling_seed_oss.SeedOssAttention: q/k/v_proj with attention_bias (SeedOssConfig's
default true), o_proj with attention_out_bias (default false), head_dim from the config (128 by
default), rotate_half rope. llama.cpp's SeedOssModel is a plain TextModel (seed_oss: NEOX rope,
tensors unchanged)."""
from .. import hf

MODEL_TYPES = ("seed_oss",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, attention_bias=True, attention_out_bias=False,
                      head_dim=128, num_key_value_heads=8, max_position_embeddings=524288)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "seed_oss", layer, qkv_bias=bool(cfg["attention_bias"]),
                   o_bias=bool(cfg["attention_out_bias"]))
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)))


SEED_OSS = {"architectures": ["SeedOssForCausalLM"], "model_type": "seed_oss",
            "attention_bias": True, "attention_dropout": 0.1, "attention_out_bias": False,
            "bos_token_id": 0, "eos_token_id": 2, "head_dim": 16, "hidden_act": "silu",
            "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 8,
            "max_position_embeddings": 524288, "mlp_bias": False, "num_attention_heads": 4,
            "num_hidden_layers": 2, "num_key_value_heads": 2, "pad_token_id": 1,
            "residual_dropout": 0.1, "rms_norm_eps": 1e-06, "rope_scaling": {"rope_type": "default"},
            "rope_theta": 10000000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
            "transformers_version": "4.55.0", "use_cache": True, "vocab_size": 12}

FOLDERS = [
    # Seed-OSS-36B's spelling: q/k/v biases, none on o_proj, head_dim 16 (not C // H)
    dict(name="seed_oss", seed=531, container="shards2", dtype="bf16", layers=[0, 1], B=2, S=8,
         pad="left", config=SEED_OSS),
]

HELDOUT = [
    # the other way round: o_proj's bias only; SeedOssConfig's head_dim 128
    dict(name="seed_oss_out_bias", seed=631, container="safetensors", dtype="f32", layers=[1],
         B=2, S=7, pad="right",
         config={"model_type": "seed_oss", "hidden_size": 32, "num_attention_heads": 2,
                 "num_key_value_heads": 1, "num_hidden_layers": 2, "attention_bias": False,
                 "attention_out_bias": True, "rope_theta": 10000.0}),
]

GGUF = [
    # SeedOssModel: TextModel's keys, biases as the file has them (attn_output.bias too)
    dict(name="seed_oss", arch="seed_oss", seed=533, layers=[0, 1],
         types={"attn_q": "Q8_0", "attn_k": "Q6_K", "attn_v": "F16", "attn_output": "Q8_0"},
         config=dict(SEED_OSS, hidden_size=256, head_dim=8, attention_out_bias=True)),
]

"""gpt-oss: modeling_gpt_oss.GptOssAttention: q/k/v/o_proj with biases, sinks (one logit per
head, a dropped column of the softmax: eager_attention_forward), yarn rope, sliding window on
even layers (or layer_types' sliding layers)."""
from .. import hf
from .. import weights as W

MODEL_TYPES = ("gpt_oss",)
CLASS_DEFAULTS = dict(rope_theta=150000.0, sliding_window=128, attention_bias=True, head_dim=64)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "gpt_oss", layer, bias_key="attention_bias", sinks=True)
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)),
                     window=cfg["sliding_window"] if hf.sliding(cfg, layer, layer % 2 == 0)
                     else None)


def neighbours(s, layer, g, small=4):
    return W.llama_neighbours(s, layer, g, mlp=lambda p: {  # GptOssMLP: router and experts
        p + "mlp.router.weight": W.small(g, 2, s.C),
        p + "mlp.experts.gate_up_proj": W.small(g, 2, s.C, small)})


FOLDERS = [
    dict(name="gpt_oss", seed=21, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
         S=8, pad="left",
         config={"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss",
                 "attention_bias": True, "head_dim": 8, "hidden_size": 32,
                 "intermediate_size": 8, "layer_types": ["sliding_attention", "full_attention"],
                 "max_position_embeddings": 4096, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "num_key_value_heads": 2, "num_local_experts": 2,
                 "rms_norm_eps": 1e-05,
                 "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                                  "original_max_position_embeddings": 128,
                                  "rope_type": "yarn", "truncate": False},
                 "rope_theta": 150000, "sliding_window": 3, "torch_dtype": "bfloat16",
                 "vocab_size": 12}),
]

HELDOUT = [
    # gpt-oss without layer_types: even layers slide (GptOssConfig's default)
    dict(name="gpt_oss", seed=120, container="safetensors", dtype="f32", layers=[2, 3], B=2,
         S=9, pad="right",
         config={"model_type": "gpt_oss", "attention_bias": True, "head_dim": 8,
                 "hidden_size": 24, "max_position_embeddings": 64, "num_attention_heads": 4,
                 "num_hidden_layers": 4, "num_key_value_heads": 1, "rope_theta": 10000,
                 "rope_scaling": None, "sliding_window": 2}),
]

GGUF = [
    dict(name="gpt_oss", arch="gpt-oss", writer="by_layout", seed=17, layers=[0, 1],
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "Q8_0"},
         config={"model_type": "gpt_oss", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 2,
                 "layer_types": ["sliding_attention", "full_attention"],
                 "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
                 "rope_theta": 150000, "sliding_window": 3, "attention_bias": True,
                 "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                                  "original_max_position_embeddings": 128,
                                  "rope_type": "yarn", "truncate": False}}),
]

VARIANTS = [  # sinks + window + biases + yarn
    dict(name="gptoss_sinks_window", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 150000.0, "max_position_embeddings": 4096,
                   "scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
                               "beta_slow": 1.0, "original_max_position_embeddings": 128,
                               "truncate": False}},
         window=3, sinks=True, bias=True, o_bias=True, S=8),
]

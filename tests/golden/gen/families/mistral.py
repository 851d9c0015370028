"""Mistral and Mixtral: modeling_mistral.MistralAttention (LlamaAttention with a sliding_window
on every layer), modeling_mixtral (the same attention, a sparse MoE beside it); their
configuration classes' defaults (Mixtral: rope_theta 1e6, no window)."""
from .. import hf
from .. import weights as W

MODEL_TYPES = ("mistral", "mixtral")
CLASS_DEFAULTS = {"mistral": dict(rope_theta=10000.0, sliding_window=4096),
                  "mixtral": dict(rope_theta=1e6, sliding_window=None)}


def settings(cfg, layer):
    mt = cfg["model_type"]
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS[mt])
    a = hf.decoder(cfg, mt, layer, bias_key="attention_bias")
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)),
                     window=hf.get(cfg, "sliding_window"))


def neighbours(s, layer, g, small=4):
    if s.model_type != "mixtral":
        return W.llama_neighbours(s, layer, g)
    return W.llama_neighbours(s, layer, g, mlp=lambda p: {  # MixtralSparseMoeBlock
        p + "block_sparse_moe.gate.weight": W.small(g, 2, s.C),
        p + "block_sparse_moe.experts.0.w1.weight": W.small(g, small, s.C)})


FOLDERS = [
    dict(name="mistral", seed=5, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
         S=9, pad="right",
         config={"architectures": ["MistralForCausalLM"], "model_type": "mistral",
                 "head_dim": 8, "hidden_size": 32, "intermediate_size": 8,
                 "max_position_embeddings": 128, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-05,
                 "rope_theta": 1000000.0, "sliding_window": 3, "vocab_size": 12}),
    # transformers v5's dynamic rope in rope_parameters; positions past max_position_embeddings
    dict(name="mixtral", seed=6, container="safetensors", dtype="f32", layers=[1], S=9,
         offset=4,
         config={"architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
                 "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 8,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
                 "num_local_experts": 2, "num_experts_per_tok": 1, "rms_norm_eps": 1e-05,
                 "rope_parameters": {"rope_type": "dynamic", "factor": 2.0,
                                     "rope_theta": 1000000.0},
                 "sliding_window": None, "vocab_size": 12}),
]

HELDOUT = [
    dict(name="mistral", seed=105, container="safetensors", dtype="f16", layers=[1], B=1,
         S=11, config={"model_type": "mistral", "hidden_size": 32,
                       "max_position_embeddings": 64, "num_attention_heads": 4,
                       "num_hidden_layers": 2, "num_key_value_heads": 2,
                       "rope_theta": 10000.0, "sliding_window": None}),
    dict(name="mixtral", seed=106, container="shards2", dtype="bf16", layers=[0], B=2, S=9,
         pad="left",
         config={"model_type": "mixtral", "hidden_size": 32, "max_position_embeddings": 64,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
                 "rope_theta": 1e6, "sliding_window": 4}),
]

GGUF = [
    # A Mistral checkpoint: llama.cpp converts it as "llama" (Q/K permuted; its window
    # is not in the file and is longer than the input here).
    dict(name="mistral", arch="llama", writer="by_layout", seed=19, layers=[0],
         types={"attn_q": "BF16", "attn_k": "Q8_0", "attn_v": "F32", "attn_output": "F16"},
         config={"model_type": "mistral", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "num_hidden_layers": 1,
                 "max_position_embeddings": 128, "rms_norm_eps": 1e-5,
                 "rope_theta": 1000000.0, "sliding_window": 4096}),
]

VARIANTS = [  # GQA + sliding window
    dict(name="mistral_window", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 10000.0}, window=3, S=9),
]

"""Llama: modeling_llama.LlamaAttention (q/k/v/o_proj, GQA, rope with every rope_scaling;
attention_bias on all four), configuration_llama.LlamaConfig. Llama ignores a sliding_window in
config.json."""
from .. import hf, plain

MODEL_TYPES = ("llama",)
CLASS_DEFAULTS = {"llama": dict(rope_theta=10000.0, attention_bias=False)}


def settings(cfg, layer):
    mt = cfg["model_type"]
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS[mt])
    a = hf.decoder(cfg, mt, layer, bias_key="attention_bias")
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)))


LLAMA3 = {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
          "original_max_position_embeddings": 32, "rope_type": "llama3"}

FOLDERS = [
    dict(name="llama", seed=4, container="safetensors", dtype="bf16", layers=[0, 1], B=2, S=7,
         pad="left", offset=60,
         config={"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                 "attention_bias": False, "attention_dropout": 0.0, "head_dim": 8,
                 "hidden_act": "silu", "hidden_size": 32, "intermediate_size": 8,
                 "max_position_embeddings": 256, "mlp_bias": False, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-05,
                 "rope_scaling": LLAMA3, "rope_theta": 500000.0,
                 "tie_word_embeddings": True, "torch_dtype": "bfloat16", "vocab_size": 12}),
    # The residual stream in (--residual): input_layernorm (LlamaRMSNorm) first.
    dict(name="llama_residual", seed=40, container="safetensors", dtype="f32", layers=[1], B=2,
         S=6, input_norm=dict(kind="rms", name="input_layernorm.", eps=1e-5, layers=[1]),
         config={"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                 "attention_bias": False, "head_dim": 8, "hidden_size": 32,
                 "intermediate_size": 8, "max_position_embeddings": 256,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
                 "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "vocab_size": 12}),
    # Layer 0 from token ids (--tokens): embed_tokens' bf16 rows, then input_layernorm.
    dict(name="llama_tokens", seed=47, container="safetensors", dtype="bf16", layers=[0], B=2,
         S=6, input_norm=dict(kind="rms", name="input_layernorm.", eps=1e-5, layers=[0]),
         tokens=dict(layers=[0], module="llama", word="model.embed_tokens.weight"),
         config={"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                 "attention_bias": False, "head_dim": 8, "hidden_size": 32,
                 "intermediate_size": 8, "max_position_embeddings": 256,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
                 "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "torch_dtype": "bfloat16",
                 "vocab_size": 12}),
]

HELDOUT = [
    # Llama ignores sliding_window; linear scaling; q/k/v/o bias; no head_dim
    dict(name="llama", seed=104, container="safetensors", dtype="f32", layers=[2], B=2, S=8,
         pad="right", offset=0,
         config={"model_type": "llama", "attention_bias": True, "hidden_size": 48,
                 "max_position_embeddings": 64, "num_attention_heads": 6,
                 "num_hidden_layers": 3, "num_key_value_heads": 3, "rms_norm_eps": 1e-5,
                 "rope_scaling": {"rope_type": "linear", "factor": 4.0}, "rope_theta": 10000.0,
                 "sliding_window": 3}),
]

GGUF = [
    # Llama 3 with its rope_freqs.weight; 32-element block types (rows of C = 32).
    dict(name="llama", arch="llama", writer="by_layout", seed=11, layers=[0, 1],
         types={"attn_q": "Q8_0", "attn_k": "Q4_0", "attn_v": "Q5_1", "attn_output": "IQ4_NL"},
         config={"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 2,
                 "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
                 "rope_theta": 500000.0, "rope_scaling": LLAMA3, "attention_bias": False}),
    # The residual stream in (--residual): blk.N.attn_norm, eps from layer_norm_rms_epsilon.
    dict(name="llama_residual", arch="llama", writer="by_layout", seed=45, layers=[0],
         input_norm=dict(eps=1e-5, layers=[0]),
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "F16"},
         config={"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 1,
                 "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
                 "rope_theta": 10000.0, "attention_bias": False}),
    # Layer 0 from token ids (--tokens): token_embd in Q8_0 (dequantized row by row), then
    # blk.0.attn_norm.
    dict(name="llama_tokens", arch="llama", writer="by_layout", seed=46, layers=[0], S=6,
         input_norm=dict(eps=1e-5, layers=[0]),
         tokens=dict(layers=[0], type="Q8_0",
                     vocab=["<unk>", "<s>", "</s>", "\u2581The", "\u2581quick", "\u2581brown",
                            "\u2581fox", "\u2581jumps", "\u2581over", "\u2581the", "\u2581lazy",
                            "\u2581dog"]),
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "F16"},
         config={"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 1,
                 "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
                 "rope_theta": 10000.0, "attention_bias": False}),
    # The same with token_embd in Q4_K (rows of 256).
    dict(name="llama_tokens_q4k", arch="llama", writer="by_layout", seed=53, layers=[0], S=5,
         input_norm=dict(eps=1e-6, layers=[0]), tokens=dict(layers=[0], type="Q4_K"),
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "Q8_0"},
         config={"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 1,
                 "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
                 "rope_theta": 10000.0}),
    # K-quants need rows of 256: a wider Llama (2), GGUF version 2.
    dict(name="llama_kquants", arch="llama", writer="by_layout", seed=12, layers=[1], version=2,
         types={"attn_q": "Q4_K", "attn_k": "Q6_K", "attn_v": "Q2_K", "attn_output": "Q3_K"},
         config={"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 2,
                 "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
                 "rope_theta": 10000.0}),
    # Head counts per layer (arrays of i32, as OpenELM's converter writes them): layer 1
    # has 2 heads and 1 KV head where layer 0 has 4 and 2; Q/K permuted per layer.
    dict(name="llama_layer_heads", arch="llama", writer="by_layout", seed=28, layers=[0, 1],
         layer_heads=[(4, 2), (2, 1)],
         types={"attn_q": "Q8_0", "attn_k": "F16", "attn_v": "Q8_0", "attn_output": "Q8_0"},
         config={"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 2,
                 "max_position_embeddings": 64, "rms_norm_eps": 1e-5,
                 "rope_theta": 10000.0, "attention_bias": False}),
    # rope_freqs.weight (Llama 3's divisors) with rope.scaling.type linear: ggml divides by
    # both (freq_scale * theta / freq_factors); positions past original 32 via S = 40.
    dict(name="llama_freqs_linear", arch="llama", writer="by_layout", seed=29, layers=[1], S=40,
         rope_freqs=LLAMA3,
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "F16", "attn_output": "F16"},
         config={"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 2,
                 "max_position_embeddings": 256, "rms_norm_eps": 1e-5,
                 "rope_theta": 500000.0, "rope_scaling": {"rope_type": "linear", "factor": 2.0},
                 "attention_bias": False}),
]

# Llama 3: GQA / MQA + llama3 scaling, positions past the original context (original 32).
VARIANT_ROPE = {"theta": 500000.0, "max_position_embeddings": 256,
                "scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                            "high_freq_factor": 4.0, "original_max_position_embeddings": 32}}
VARIANTS = [
    dict(name="llama3_gqa_rope_left", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg=VARIANT_ROPE, offset=100, left=True),
    dict(name="llama3_mqa_rope_right", writer="decoder", C=32, H=4, Hkv=1, D=8,
         rope_cfg=VARIANT_ROPE, offset=40, left=False),
]

PLAIN = [
    dict(name="llama_gqa_bf16", seed=1000, prefix="model.layers.1.self_attn.",
         block="model.layers.1.", C=16, H=4, Hkv=2, D=4, dtype="bf16", causal=True),
    dict(name="llama_mqa_f16_unbatched", seed=1001, prefix="model.layers.1.self_attn.",
         block="model.layers.1.", C=16, H=4, Hkv=1, D=4, dtype="f16", causal=True,
         unbatched=True),
    dict(name="llama_gqa_sharded_f32", seed=1002, prefix="model.layers.1.self_attn.",
         block="model.layers.1.", C=16, H=4, Hkv=2, D=4, dtype="f32", causal=True, shards=True),
]


def write_plain(out, case):
    """LlamaAttention without positions: q/k/v/o_proj without biases, repeat_kv."""
    plain.separate_case(out, case, biases=(False, False, False, False))


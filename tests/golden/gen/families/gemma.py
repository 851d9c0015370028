"""Gemma: modeling_gemma.GemmaAttention (LlamaAttention; head_dim 256 unless given)."""
from .. import hf

MODEL_TYPES = ("gemma",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, head_dim=256, attention_bias=False)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "gemma", layer, bias_key="attention_bias")
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)))


FOLDERS = [
    dict(name="gemma", seed=9, container="safetensors", dtype="f16", layers=[0, 1], S=7,
         config={"architectures": ["GemmaForCausalLM"], "model_type": "gemma",
                 "head_dim": 16, "hidden_act": "gelu_pytorch_tanh", "hidden_size": 32,
                 "intermediate_size": 8, "max_position_embeddings": 64,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
                 "rms_norm_eps": 1e-06, "rope_theta": 10000.0, "vocab_size": 12}),
    # The residual stream in (--residual): GemmaRMSNorm's x * (1 + w) first.
    dict(name="gemma_residual", seed=41, container="safetensors", dtype="f32", layers=[0], S=6,
         input_norm=dict(kind="rms", name="input_layernorm.", eps=1e-6, offset=1, layers=[0]),
         config={"architectures": ["GemmaForCausalLM"], "model_type": "gemma",
                 "head_dim": 16, "hidden_size": 32, "intermediate_size": 8,
                 "max_position_embeddings": 64, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-06,
                 "rope_theta": 10000.0, "vocab_size": 12}),
    # Layer 0 from token ids (--tokens): the bf16 rows times sqrt(hidden_size) in bfloat16
    # (GemmaModel's normalizer), then GemmaRMSNorm's x * (1 + w).
    dict(name="gemma_tokens", seed=48, container="safetensors", dtype="bf16", layers=[0], B=2,
         S=6, input_norm=dict(kind="rms", name="input_layernorm.", eps=1e-6, offset=1, layers=[0]),
         tokens=dict(layers=[0], module="gemma", word="model.embed_tokens.weight"),
         config={"architectures": ["GemmaForCausalLM"], "model_type": "gemma",
                 "head_dim": 16, "hidden_size": 32, "intermediate_size": 8,
                 "max_position_embeddings": 64, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "num_key_value_heads": 1, "rms_norm_eps": 1e-06,
                 "rope_theta": 10000.0, "torch_dtype": "bfloat16", "vocab_size": 12}),
    # The same in float16: the normalizer and the products rounded to half precision.
    dict(name="gemma_tokens_f16", seed=56, container="safetensors", dtype="f16", layers=[0],
         B=1, S=7, input_norm=dict(kind="rms", name="input_layernorm.", eps=1e-6, offset=1,
                                   layers=[0]),
         tokens=dict(layers=[0], module="gemma", word="model.embed_tokens.weight"),
         config={"architectures": ["GemmaForCausalLM"], "model_type": "gemma",
                 "head_dim": 8, "hidden_size": 24, "intermediate_size": 8,
                 "max_position_embeddings": 64, "num_attention_heads": 3,
                 "num_hidden_layers": 1, "num_key_value_heads": 1, "rms_norm_eps": 1e-06,
                 "rope_theta": 10000.0, "torch_dtype": "float16", "vocab_size": 12}),
]

HELDOUT = [
    # Gemma without head_dim: GemmaConfig's default 256
    dict(name="gemma_nohd", seed=109, container="safetensors", dtype="bf16", layers=[0], S=6,
         config={"model_type": "gemma", "hidden_size": 32, "num_attention_heads": 2,
                 "num_hidden_layers": 1, "num_key_value_heads": 1,
                 "max_position_embeddings": 64}),
    dict(name="gemma", seed=119, container="safetensors", dtype="f32", layers=[1], B=2, S=8,
         pad="right",
         config={"model_type": "gemma", "head_dim": 8, "hidden_size": 24,
                 "num_attention_heads": 3, "num_hidden_layers": 2, "num_key_value_heads": 3,
                 "rope_theta": 20000.0, "max_position_embeddings": 64}),
]

GGUF = [
    dict(name="gemma", arch="gemma", writer="by_layout", seed=20, layers=[0],
         types={"attn_q": "Q4_1", "attn_k": "Q5_1"},
         config={"model_type": "gemma", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "head_dim": 16, "num_hidden_layers": 1,
                 "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
                 "rope_theta": 10000.0}),
    # The residual stream in (--residual): attn_norm as the converter stores it (1 + w).
    dict(name="gemma_residual", arch="gemma", writer="by_layout", seed=44, layers=[1],
         input_norm=dict(eps=1e-6, layers=[1]),
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "F16", "attn_output": "Q8_0"},
         config={"model_type": "gemma", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "head_dim": 16, "num_hidden_layers": 2,
                 "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
                 "rope_theta": 10000.0}),
    # Layer 0 from token ids (--tokens): token_embd (F32) times sqrtf(n_embd) in float32, as
    # llama.cpp's Gemma graph scales it, then attn_norm as stored (1 + w).
    dict(name="gemma_tokens", arch="gemma", writer="by_layout", seed=54, layers=[0], S=6,
         input_norm=dict(eps=1e-6, layers=[0]), tokens=dict(layers=[0], scale="sqrt"),
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "F16", "attn_output": "Q8_0"},
         config={"model_type": "gemma", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "head_dim": 16, "num_hidden_layers": 1,
                 "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
                 "rope_theta": 10000.0}),
]

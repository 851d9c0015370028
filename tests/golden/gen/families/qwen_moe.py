"""Qwen2-MoE and Qwen3-MoE: modeling_qwen2_moe.Qwen2MoeAttention (q/k/v_proj with qkv_bias,
default true; o_proj without; a layer slides when Qwen2MoeConfig's layer_types says so: by
default the even layers below max_window_layers when use_sliding_window);
modeling_qwen3_moe.Qwen3MoeAttention (Qwen3's: an RMSNorm per head on q and k, attention_bias;
every layer slides when use_sliding_window; head_dim from config.json, else C // H). llama.cpp
converts them as qwen2moe and qwen3moe (NEOX rope, tensors unchanged)."""
from .. import gguf, hf
from .. import weights as W
from ..reference import QkNorm

MODEL_TYPES = ("qwen2_moe", "qwen3_moe")
CLASS_DEFAULTS = {
    "qwen2_moe": dict(rope_theta=10000.0, qkv_bias=True, use_sliding_window=False,
                      sliding_window=4096, max_window_layers=28, num_key_value_heads=16,
                      max_position_embeddings=32768),
    "qwen3_moe": dict(rope_theta=10000.0, attention_bias=False, use_sliding_window=False,
                      sliding_window=4096, rms_norm_eps=1e-6, num_key_value_heads=4,
                      max_position_embeddings=32768),
}


def settings(cfg, layer):
    mt = cfg["model_type"]
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS[mt])
    rope = lambda a: hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),  # noqa
                             params=hf.v5_params(cfg))
    if mt == "qwen2_moe":
        a = hf.decoder(cfg, mt, layer, qkv_bias=bool(cfg["qkv_bias"]), o_bias=False)
        types = cfg.get("layer_types") or [
            "sliding_attention" if (i + 1) % 2 and i < cfg["max_window_layers"]
            and cfg["use_sliding_window"] else "full_attention"
            for i in range(cfg["num_hidden_layers"])]
        sliding = types[layer] == "sliding_attention"
        return a.replace(rope=rope(a), kind=types[layer],
                         window=cfg["sliding_window"] if sliding else None)
    a = hf.decoder(cfg, mt, layer, bias_key="attention_bias")
    window = cfg["sliding_window"] if cfg["use_sliding_window"] else None
    return a.replace(rope=rope(a), qk_norm=QkNorm("rms", cfg["rms_norm_eps"]), window=window)


def neighbours(s, layer, g, small=4):
    p = f"model.layers.{layer}."
    moe = {p + "mlp.gate.weight": W.small(g, 2, s.C),
           p + "mlp.experts.0.gate_proj.weight": W.small(g, small, s.C)}
    if s.model_type == "qwen2_moe":  # Qwen2MoeSparseMoeBlock's shared expert and its gate
        moe[p + "mlp.shared_expert.gate_proj.weight"] = W.small(g, small, s.C)
        moe[p + "mlp.shared_expert_gate.weight"] = W.small(g, 1, s.C)
    return W.llama_neighbours(s, layer, g, mlp=lambda q: moe)


def gguf_metadata(w, arch, cfg, n_layers):  # Qwen2MoeModel / Qwen3MoeModel: TextModel's keys
    gguf.text_model_metadata(w, arch, cfg, n_layers)
    w.add(arch + ".expert_count", 2)
    w.add(arch + ".expert_used_count", 1)


QWEN2_MOE = {"architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe",
             "attention_dropout": 0.0, "bos_token_id": 151643, "decoder_sparse_step": 1,
             "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 32,
             "initializer_range": 0.02, "intermediate_size": 8, "max_position_embeddings": 128,
             "max_window_layers": 3, "moe_intermediate_size": 4, "norm_topk_prob": False,
             "num_attention_heads": 4, "num_experts": 2, "num_experts_per_tok": 1,
             "num_hidden_layers": 4, "num_key_value_heads": 4, "output_router_logits": False,
             "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001,
             "shared_expert_intermediate_size": 4, "sliding_window": 3,
             "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True,
             "use_sliding_window": True, "vocab_size": 12}

QWEN3_MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
             "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 151643,
             "decoder_sparse_step": 1, "eos_token_id": 151645, "head_dim": 16,
             "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02,
             "intermediate_size": 8, "max_position_embeddings": 128, "max_window_layers": 2,
             "mlp_only_layers": [], "moe_intermediate_size": 4, "norm_topk_prob": True,
             "num_attention_heads": 4, "num_experts": 2, "num_experts_per_tok": 1,
             "num_hidden_layers": 2, "num_key_value_heads": 2, "output_router_logits": False,
             "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000.0,
             "router_aux_loss_coef": 0.001, "sliding_window": None, "tie_word_embeddings": False,
             "torch_dtype": "bfloat16", "use_cache": True, "use_sliding_window": False,
             "vocab_size": 12}

FOLDERS = [
    # Qwen1.5-MoE's spelling with its window on: layer 0 slides (even, below 3), layer 1 not
    dict(name="qwen2_moe", seed=551, container="safetensors", dtype="bf16", layers=[0, 1, 3],
         B=2, S=8, pad="left", config=QWEN2_MOE),
    # Qwen3-30B-A3B's spelling: head_dim 16 (not C // H), q/k norms per head
    dict(name="qwen3_moe", seed=552, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
         S=7, pad="right", config=QWEN3_MOE),
]

HELDOUT = [
    # Qwen2-MoE without q/k/v biases, layer_types spelled out
    dict(name="qwen2_moe_types", seed=651, container="safetensors", dtype="f32", layers=[1, 2],
         B=2, S=9, pad="right",
         config={"model_type": "qwen2_moe", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 3, "qkv_bias": False,
                 "sliding_window": 4, "use_sliding_window": True,
                 "layer_types": ["full_attention", "sliding_attention", "full_attention"]}),
    # Qwen3-MoE with its window on every layer, head_dim left out (C // H)
    dict(name="qwen3_moe_window", seed=652, container="safetensors", dtype="f32", layers=[1],
         B=1, S=9,
         config={"model_type": "qwen3_moe", "hidden_size": 48, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "num_hidden_layers": 2, "sliding_window": 3,
                 "use_sliding_window": True, "attention_bias": True}),
]

GGUF = [
    # Qwen2MoeModel: q/k/v biases (qkv_bias from the file), NEOX
    dict(name="qwen2_moe", arch="qwen2moe", seed=553, layers=[1], metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q5_0", "attn_output": "Q8_0"},
         config=dict(QWEN2_MOE, use_sliding_window=False, num_hidden_layers=2)),
    # Qwen3MoeModel: head_dim as key_length, q/k norms
    dict(name="qwen3_moe", arch="qwen3moe", seed=554, layers=[0, 1], metadata=gguf_metadata,
         types={"attn_q": "Q4_0", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "F16"},
         config=QWEN3_MOE),
]

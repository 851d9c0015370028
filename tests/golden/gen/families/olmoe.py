"""OLMoE (modeling_olmoe.OlmoeAttention): q_proj / k_proj / v_proj / o_proj (attention_bias),
q_norm over all heads' q (H*D) and k_norm over k (Hkv*D), OlmoeRMSNorm x * w, before the head
view (as OLMo 2), then rope; the head size is hidden_size // num_attention_heads. Its clip_qkv
clamps after the norms (refused by attn-run when set; the released checkpoints leave it null).
OlmoeConfig's defaults for the keys a config.json leaves out."""
from .. import hf
from .. import weights as W
from ..reference import QkNorm

MODEL_TYPES = ("olmoe",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, attention_bias=False, rms_norm_eps=1e-5,
                      max_position_embeddings=4096)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "olmoe", layer, bias_key="attention_bias")
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg)),
                     qk_norm=QkNorm("rms", cfg["rms_norm_eps"], scope="all"))


def neighbours(s, layer, g):  # OlmoeDecoderLayer: input_layernorm, the router and an expert
    return W.llama_neighbours(s, layer, g, mlp=lambda p: {
        p + "mlp.gate.weight": W.small(g, 4, s.C),
        p + "mlp.experts.0.up_proj.weight": W.small(g, 4, s.C)})


OLMOE_0924 = {"architectures": ["OlmoeForCausalLM"], "attention_bias": False,
              "attention_dropout": 0.0, "clip_qkv": None, "eos_token_id": 50279,
              "hidden_act": "silu", "hidden_size": 32, "initializer_range": 0.02,
              "intermediate_size": 8, "max_position_embeddings": 4096, "model_type": "olmoe",
              "norm_topk_prob": False, "num_attention_heads": 4, "num_experts": 4,
              "num_experts_per_tok": 2, "num_hidden_layers": 2, "num_key_value_heads": 4,
              "output_router_logits": False, "pad_token_id": 1, "rms_norm_eps": 1e-05,
              "rope_scaling": None, "rope_theta": 10000.0, "router_aux_loss_coef": 0.01,
              "tie_word_embeddings": False, "torch_dtype": "bfloat16",
              "transformers_version": "4.43.0.dev0", "use_cache": True, "vocab_size": 12}

FOLDERS = [
    # OLMoE-1B-7B-0924's spelling, bfloat16; the norms over all heads count
    dict(name="olmoe", seed=711, container="safetensors", dtype="bf16", layers=[0, 1], B=2, S=8,
         pad="right", config=OLMOE_0924,
         input_norm=dict(kind="rms", name="input_layernorm.", eps=1e-5, layers=[1]),
         guards=({"qk_norm": None},)),
]

GGUF = [
    # OlmoeModel: TextModel's keys, NEOX rope, tensors unchanged (q/k norms over all heads)
    dict(name="olmoe", arch="olmoe", seed=713, layers=[0, 1], S=9,
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "F16", "attn_output": "Q8_0"},
         config=dict(OLMOE_0924, num_key_value_heads=2)),
]

HELDOUT = [
    # defaults left out (rms_norm_eps 1e-5), GQA, biases, v5 rope_parameters
    dict(name="olmoe_v5", seed=811, container="shards2", dtype="f32", layers=[1], B=2, S=7,
         pad="left",
         config={"model_type": "olmoe", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 2, "attention_bias": True,
                 "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}),
]

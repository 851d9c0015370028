"""GPT-NeoX: modeling_gpt_neox.GPTNeoXAttention: query_key_value viewed (H, 3, D) per head
[q, k, v], dense, partial rotary (rotary_pct of the head, rotary_emb_base), biases as
attention_bias."""
from .. import hf, plain
from .. import weights as W

MODEL_TYPES = ("gpt_neox",)
CLASS_DEFAULTS = dict(rotary_pct=0.25, rotary_emb_base=10000, attention_bias=True)
NAMES = ("query_key_value", "dense")


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "gpt_neox", layer, prefix="gpt_neox.layers.{}.attention.",
                   bias_key="attention_bias").replace(layout="per_head", names=NAMES)
    return a.replace(rope=hf.rope(cfg, a.D, cfg.get("rope_theta", cfg["rotary_emb_base"]),
                                  cfg["rotary_pct"], hf.get(cfg, "rope_scaling")))


def outside(cfg, s0, g):
    d = W.outside_draws(g, s0.C)
    return {"gpt_neox.embed_in.weight": d["gpt_neox.embed_in"],
            "embed_out.weight": d["gpt_neox.embed_out"]}


def attention_weights(a, g):
    return W.qkv_dense(a, g)


def neighbours(s, layer, g, small=4):
    p = f"gpt_neox.layers.{layer}."
    return {p + "input_layernorm.weight": W.ones(s.C),
            p + "attention.rotary_emb.inv_freq": W.small(g, 2),
            p + "mlp.dense_h_to_4h.weight": W.small(g, small, s.C)}


FOLDERS = [
    dict(name="gpt_neox", seed=13, container="safetensors", dtype="f16", layers=[0, 1], B=2,
         S=7, pad="right",
         config={"architectures": ["GPTNeoXForCausalLM"], "model_type": "gpt_neox",
                 "hidden_size": 32, "intermediate_size": 8, "max_position_embeddings": 64,
                 "num_attention_heads": 2, "num_hidden_layers": 2, "rotary_emb_base": 20000,
                 "rotary_pct": 0.25, "use_parallel_residual": True, "vocab_size": 12}),
]

HELDOUT = [
    dict(name="gpt_neox", seed=113, container="safetensors", dtype="f32", layers=[2], B=2,
         S=9, pad="left",
         config={"model_type": "gpt_neox", "hidden_size": 48, "num_attention_heads": 3,
                 "num_hidden_layers": 3, "rotary_pct": 0.5, "rotary_emb_base": 10000,
                 "attention_bias": False, "max_position_embeddings": 64}),
]

GGUF = [
    dict(name="gpt_neox", arch="gptneox", writer="by_layout", seed=22, layers=[0],
         types={"attn_qkv": "Q8_0", "attn_output": "F16"},
         config={"model_type": "gpt_neox", "hidden_size": 32, "num_attention_heads": 4,
                 "num_hidden_layers": 1, "rotary_pct": 0.5, "rotary_emb_base": 10000,
                 "max_position_embeddings": 64, "layer_norm_eps": 1e-5,
                 "attention_bias": True}),
]

VARIANTS = [  # partial rotary: rotary_pct 0.25 of D = 16 -> 4
    dict(name="neox_partial_rotary", writer="per_head_qkv", C=64, H=4, B=2, S=7, left=False,
         seed=5, prefix="gpt_neox.layers.0.attention.", rope_dim=4,
         cfg={"attention": "causal", "hidden_size": 64, "num_heads": 4, "layout": "neox",
              "weights_prefix": "gpt_neox.layers.0.attention.",
              "rope": {"theta": 10000.0, "rotary_dim": 4},
              "attention_mask": "attention_mask.npy", "positions": "positions.npy"}),
]

PLAIN = [
    dict(name="neox_f16", seed=1007, prefix="gpt_neox.layers.0.attention.",
         block="gpt_neox.layers.0.attention.", C=16, H=4, Hkv=4, D=4, dtype="f16", causal=True,
         layout="neox"),
]



def write_plain(out, case):
    plain.qkv_dense_case(out, case)

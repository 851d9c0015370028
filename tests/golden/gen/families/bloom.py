"""BLOOM: modeling_bloom.BloomAttention: query_key_value per head [q, k, v] with bias, dense;
ALiBi (build_alibi_tensor's slopes, added by baddbmm beside the 1 / sqrt(D) scale); no rope."""
from .. import hf
from .. import weights as W
from ..positions import bloom_slopes
from ..reference import Layer

MODEL_TYPES = ("bloom",)


def settings(cfg, layer):
    C, H = hf.first(cfg, "hidden_size", "n_embed"), hf.first(cfg, "num_attention_heads", "n_head")
    return Layer(C, H, H, C // H, layout="per_head", names=("query_key_value", "dense"),
                 qkv_bias=True, o_bias=True, alibi=bloom_slopes(H), model_type="bloom",
                 prefix=f"h.{layer}.self_attention.")


def outside(cfg, s0, g):
    return {"word_embeddings.weight": W.outside_draws(g, s0.C)["bloom"]}


def attention_weights(a, g):
    return W.qkv_dense(a, g)


def neighbours(s, layer, g, small=4):
    p = f"h.{layer}."
    return {p + "input_layernorm.weight": W.ones(s.C),
            p + "mlp.dense_h_to_4h.weight": W.small(g, small, s.C)}


FOLDERS = [
    # pytorch_model.bin alone (torch.save's zip format), f16
    dict(name="bloom", seed=17, container="bin", dtype="f16", layers=[0, 1], B=2, S=7,
         pad="left",
         config={"architectures": ["BloomForCausalLM"], "model_type": "bloom", "n_embed": 24,
                 "n_head": 6, "n_layer": 2, "layer_norm_epsilon": 1e-05,
                 "apply_residual_connection_post_layernorm": False, "vocab_size": 12}),
]

HELDOUT = [
    dict(name="bloom", seed=116, container="safetensors", dtype="bf16", layers=[1], B=3,
         S=8, pad="right", rename=[("h.", "transformer.h."),
                                   ("word_embeddings", "transformer.word_embeddings")],
         config={"model_type": "bloom", "hidden_size": 40, "n_head": 5, "n_layer": 2}),
    dict(name="bloom_bin", seed=131, container="bin", dtype="f16", layers=[0, 1], B=2, S=8,
         pad="left",
         config={"model_type": "bloom", "n_embed": 24, "n_head": 3, "n_layer": 2}),
]

GGUF = [
    dict(name="bloom", arch="bloom", writer="by_layout", seed=23, layers=[1],
         types={"attn_qkv": "Q4_0", "attn_output": "Q8_0"},
         config={"model_type": "bloom", "hidden_size": 32, "n_head": 4, "n_layer": 2,
                 "layer_norm_epsilon": 1e-5}),
]

VARIANTS = [  # ALiBi with H = 6 (not a power of two), left padding
    dict(name="bloom_alibi_h6", writer="per_head_qkv", C=48, H=6, B=2, S=7, left=True, seed=6,
         prefix="transformer.h.2.self_attention.", alibi=bloom_slopes(6),
         cfg={"attention": "causal", "hidden_size": 48, "num_heads": 6, "layout": "neox",
              "weights_prefix": "transformer.h.2.self_attention.", "alibi": True,
              "attention_mask": "attention_mask.npy", "positions": "positions.npy"}),
]

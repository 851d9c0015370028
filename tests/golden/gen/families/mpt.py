"""MPT: Mosaic's modeling_mpt MultiheadAttention (Wqkv [Q | K | V] rows, out_proj; biases unless
no_bias), ALiBi from attn_config (MptAttentionConfig: alibi true, alibi_bias_max 8) as Mosaic's
own code reads it (transformers' MptModel always uses 8), softmax_scale, clip_qkv (MptAttention
clamps the fused qkv when it is set and not 0)."""
from .. import gguf, hf, plain
from .. import weights as W
from ..positions import mpt_slopes
from ..reference import Layer

MODEL_TYPES = ("mpt",)
NAMES = ("Wqkv", "out_proj")


def settings(cfg, layer):
    a = dict(dict(alibi=True, alibi_bias_max=8, softmax_scale=None),
             **hf.get(cfg, "attn_config", {}))
    b = not hf.get(cfg, "no_bias", True)
    C, H = cfg["d_model"], cfg["n_heads"]
    D = C // H
    return Layer(C, H, H, D, layout="fused", names=NAMES, qkv_bias=b, o_bias=b,
                 scale=a["softmax_scale"] if a["softmax_scale"] is not None else D ** -0.5,
                 alibi=mpt_slopes(H, a["alibi_bias_max"]) if a["alibi"] else None,
                 clip_qkv=a.get("clip_qkv") or None,
                 model_type="mpt", prefix=f"transformer.blocks.{layer}.attn.")


def outside(cfg, s0, g):
    return {"transformer.wte.weight": W.outside_draws(g, s0.C)["mpt"]}


def attention_weights(a, g):
    sd = {}
    W.put(sd, "Wqkv", W.lin(g, (a.H + 2 * a.Hkv) * a.D, a.C, a.qkv_bias))
    W.put(sd, "out_proj", W.lin(g, a.C, a.H * a.D, a.o_bias))
    return sd


def neighbours(s, layer, g, small=4):
    p = f"transformer.blocks.{layer}."
    return {p + "norm_1.weight": W.ones(s.C), p + "ffn.up_proj.weight": W.small(g, small, s.C)}


def gguf_metadata(w, arch, cfg, s, n_layers, spec):
    """MPTModel.set_gguf_parameters: its own few keys (no rope, no head_count_kv), the ALiBi
    bias bound (0.0 without ALiBi)."""
    a = arch + "."
    gguf.general(w, arch)
    w.add(a + "block_count", n_layers)
    w.add(a + "context_length", cfg["max_seq_len"])
    w.add(a + "embedding_length", s.C)
    w.add(a + "feed_forward_length", 4 * s.C)
    w.add(a + "attention.head_count", s.H)
    w.add(a + "attention.layer_norm_epsilon", float(cfg.get("layer_norm_epsilon", 1e-5)))
    ac = cfg["attn_config"]
    w.add(a + "attention.max_alibi_bias", float(ac["alibi_bias_max"]) if ac["alibi"] else 0.0)
    if ac.get("clip_qkv"):
        w.add(a + "attention.clamp_kqv", float(ac["clip_qkv"]))
    w.add("general.file_type", 1)


FOLDERS = [
    dict(name="mpt", seed=18, container="safetensors", dtype="bf16", layers=[0, 1], S=7,
         config={"architectures": ["MPTForCausalLM"], "model_type": "mpt",
                 "attn_config": {"alibi": True, "alibi_bias_max": 8, "attn_impl": "torch",
                                 "attn_pdrop": 0, "attn_type": "multihead_attention",
                                 "attn_uses_sequence_id": False, "clip_qkv": None,
                                 "prefix_lm": False, "qk_ln": False, "softmax_scale": None},
                 "d_model": 24, "expansion_ratio": 4, "max_seq_len": 64, "n_heads": 6,
                 "n_layers": 2, "no_bias": True, "vocab_size": 12}),
]

FOLDERS.append(
    # MPT-7B-StoryWriter's kind of attn_config with clip_qkv set: the fused qkv clamped
    dict(name="mpt_clip_qkv", seed=19, container="safetensors", dtype="bf16", layers=[1], S=7,
         config={"architectures": ["MPTForCausalLM"], "model_type": "mpt",
                 "attn_config": {"alibi": True, "alibi_bias_max": 8, "attn_impl": "torch",
                                 "attn_type": "multihead_attention", "clip_qkv": 0.25,
                                 "qk_ln": False, "softmax_scale": None},
                 "d_model": 24, "expansion_ratio": 4, "max_seq_len": 64, "n_heads": 6,
                 "n_layers": 2, "no_bias": True, "vocab_size": 12}))

HELDOUT = [
    # MPT: attn_config without "alibi" (MptAttentionConfig: True), bias max 16, softmax_scale
    dict(name="mpt", seed=117, container="safetensors", dtype="f32", layers=[1], S=9,
         config={"model_type": "mpt", "attn_config": {"alibi_bias_max": 16,
                                                      "softmax_scale": 0.3},
                 "d_model": 40, "n_heads": 10, "n_layers": 2, "no_bias": True}),
    dict(name="mpt_noattn", seed=127, container="safetensors", dtype="f32", layers=[0], S=6,
         config={"model_type": "mpt", "d_model": 32, "n_heads": 4, "n_layers": 1}),
]

GGUF = [
    # MPT (MPT-7B's kind): Wqkv unchanged as attn_qkv, ALiBi (bias bound 8), no biases.
    dict(name="mpt", arch="mpt", writer="by_layout", seed=32, layers=[1],
         metadata=gguf_metadata, types={"attn_qkv": "Q8_0", "attn_output": "Q5_1"},
         config={"model_type": "mpt", "d_model": 32, "n_heads": 4, "n_layers": 2,
                 "max_seq_len": 64, "no_bias": True,
                 "attn_config": {"alibi": True, "alibi_bias_max": 8, "clip_qkv": None}}),
    # attention.clamp_kqv 0.25: llama.cpp's ggml_clamp of the fused qkv
    dict(name="mpt_clamp_kqv", arch="mpt", writer="by_layout", seed=33, layers=[0],
         metadata=gguf_metadata, types={"attn_qkv": "F16", "attn_output": "F32"},
         config={"model_type": "mpt", "d_model": 32, "n_heads": 4, "n_layers": 1,
                 "max_seq_len": 64, "no_bias": True,
                 "attn_config": {"alibi": True, "alibi_bias_max": 8, "clip_qkv": 0.25}}),
]

VARIANTS = [
    # ALiBi with alibi_bias_max 16, H = 12, fused Wqkv + out_proj: GPT-NeoX's per-head math,
    # its query_key_value re-packed into MPT's q|k|v rows
    dict(name="mpt_alibi_h12", writer="per_head_qkv", C=48, H=12, B=1, S=7, left=False, seed=7,
         prefix="transformer.blocks.0.attn.", alibi=mpt_slopes(12, 16.0), fused=True,
         cfg={"attention": "causal", "hidden_size": 48, "num_heads": 12, "layout": "fused",
              "weights_prefix": "transformer.blocks.0.attn.", "alibi": {"max_bias": 16.0}}),
]

PLAIN = [
    dict(name="mpt_wqkv_f16", seed=1011, prefix="transformer.blocks.0.attn.",
         block="transformer.blocks.0.", C=16, H=4, Hkv=4, D=4, dtype="f16", causal=True),
]


def write_plain(out, case):
    """MptAttention without positions: Wqkv chunked in three (q, k, v), 1 / sqrt(D), out_proj."""
    C, H, D = case["C"], case["H"], case["D"]

    def draw():
        own = {}
        plain.add(own, "Wqkv", plain.plain_linear(3 * H * D, C, False))
        plain.add(own, "out_proj", plain.plain_linear(C, H * D, False))
        return own, {}

    plain.family_case(out, case, draw, Layer(C, H, H, D, layout="fused", names=NAMES))

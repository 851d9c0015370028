"""GPT-2: modeling_gpt2.GPT2Attention (Conv1D c_attn (C, 3C) and c_proj, x @ W + b; scale
1 / sqrt(D) unless scale_attn_weights is false, divided by layer + 1 with
scale_attn_by_inverse_layer_idx; learned positions outside the layer), configuration_gpt2."""
import torch

from .. import hf
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("gpt2",)
CLASS_DEFAULTS = dict(scale_attn_weights=True, scale_attn_by_inverse_layer_idx=False)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H = cfg["n_embd"], cfg["n_head"]
    D = C // H
    scale = D ** -0.5 if cfg["scale_attn_weights"] else 1.0
    if cfg["scale_attn_by_inverse_layer_idx"]:
        scale /= layer + 1
    return Layer(C, H, H, D, layout="conv1d", names=("c_attn", "c_proj"), scale=scale,
                 qkv_bias=True, o_bias=True, model_type="gpt2", prefix=f"h.{layer}.attn.")


def outside(cfg, s0, g):
    return {"wte.weight": W.outside_draws(g, s0.C)["gpt2"], "ln_f.weight": W.ones(s0.C)}


def attention_weights(a, g):  # Conv1D: (in, out)
    C = a.C
    sd = {}
    w, b = W.lin(g, 3 * C, C)
    sd["c_attn.weight"], sd["c_attn.bias"] = w.t().contiguous(), b
    w, b = W.lin(g, C, C)
    sd["c_proj.weight"], sd["c_proj.bias"] = w.t().contiguous(), b
    return sd


def neighbours(s, layer, g, small=4):
    p = f"h.{layer}."
    one = W.ones(s.C)
    return {p + "ln_1.weight": one, p + "ln_1.bias": one * 0,
            p + "mlp.c_fc.weight": W.small(g, s.C, small),
            p + "attn.bias": torch.tril(torch.ones(1, 1, 16, 16)).bool(),  # causal buffer
            p + "attn.masked_bias": torch.tensor(-1e4)}


def gguf_metadata(w, arch, cfg, s, n_layers, spec):
    """GPT2Model.set_gguf_parameters: its own few keys (no rope, no head_count_kv)."""
    a = arch + "."
    w.add("general.architecture", arch)
    w.add("general.name", "attn-run golden " + arch)
    w.add(a + "block_count", n_layers)
    w.add(a + "context_length", cfg["n_ctx"])
    w.add(a + "embedding_length", s.C)
    w.add(a + "feed_forward_length", 4 * s.C)
    w.add(a + "attention.head_count", s.H)
    w.add(a + "attention.layer_norm_epsilon", float(cfg.get("layer_norm_epsilon", 1e-5)))
    w.add("general.file_type", 1)


FOLDERS = [
    # model.safetensors beside pytorch_model.bin, as on the hub (the safetensors file is read)
    dict(name="gpt2", seed=1, container="safetensors+bin", dtype="f32", layers=[0, 2], S=7,
         unbatched=True,
         config={"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 24,
                 "n_head": 4, "n_layer": 3, "n_positions": 64, "n_ctx": 64, "vocab_size": 12,
                 "activation_function": "gelu_new", "layer_norm_epsilon": 1e-05,
                 "scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": True,
                 "reorder_and_upcast_attn": False}),
    # The residual stream in (--residual): ln_1, a LayerNorm with a bias, first.
    dict(name="gpt2_residual", seed=42, container="safetensors", dtype="f32", layers=[1], B=2,
         S=6, input_norm=dict(kind="layer", name="ln_1.", eps=1e-5, bias=True, layers=[1]),
         config={"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 24,
                 "n_head": 4, "n_layer": 2, "n_positions": 64, "n_ctx": 64, "vocab_size": 12,
                 "layer_norm_epsilon": 1e-05}),
    # Layer 0 from token ids (--tokens, an (S,) int32 file): wte + wpe, then ln_1.
    dict(name="gpt2_tokens", seed=49, container="safetensors", dtype="f16", layers=[0], S=7,
         unbatched=True, input_norm=dict(kind="layer", name="ln_1.", eps=1e-5, bias=True,
                                         layers=[0]),
         tokens=dict(layers=[0], module="gpt2", word="wte.weight", positions="wpe.weight",
                     rows=64, dtype="int32"),
         config={"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 24,
                 "n_head": 4, "n_layer": 2, "n_positions": 64, "n_ctx": 64, "vocab_size": 12,
                 "layer_norm_epsilon": 1e-05}),
    # The same at position_ids 5..10 (case.json's positions: wpe's rows 5..10).
    dict(name="gpt2_tokens_offset", seed=55, container="safetensors", dtype="f32", layers=[0],
         B=2, S=6, offset=5,
         input_norm=dict(kind="layer", name="ln_1.", eps=1e-5, bias=True, layers=[0]),
         tokens=dict(layers=[0], module="gpt2", word="wte.weight", positions="wpe.weight",
                     rows=64),
         config={"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 24,
                 "n_head": 4, "n_layer": 2, "n_positions": 64, "n_ctx": 64, "vocab_size": 12,
                 "layer_norm_epsilon": 1e-05}),
]

HELDOUT = [
    # GPT-2 saved from GPT2LMHeadModel ("transformer." prefix), no scale_attn_weights
    dict(name="gpt2", seed=101, container="safetensors", dtype="f16", layers=[3, 1], B=3, S=9,
         pad="left", rename=[("h.", "transformer.h."), ("wte", "transformer.wte"),
                             ("ln_f", "transformer.ln_f")],
         config={"model_type": "gpt2", "n_embd": 40, "n_head": 5, "n_layer": 4,
                 "n_positions": 32, "scale_attn_weights": False,
                 "scale_attn_by_inverse_layer_idx": False}),
    dict(name="gpt2_bin", seed=132, container="bin", dtype="f32", layers=[1], S=6,
         config={"model_type": "gpt2", "n_embd": 16, "n_head": 2, "n_layer": 2}),
]

GGUF = [
    # GPT-2: attn_qkv / attn_output transposed from Conv1D, with biases; no rope.
    dict(name="gpt2", arch="gpt2", writer="by_layout", seed=25, layers=[1],
         metadata=gguf_metadata, types={"attn_qkv": "Q8_0", "attn_output": "F16"},
         config={"model_type": "gpt2", "n_embd": 32, "n_head": 4, "n_layer": 2, "n_ctx": 64,
                 "n_positions": 64, "layer_norm_epsilon": 1e-5}),
]

"""CodeGen: modeling_codegen.CodeGenAttention is GPT-J's attention (rotary_dim of the head rotated
in pairs, rotate_every_two; scores divided by scale_attn, sqrt(head_dim) in float32; no biases)
whose one qkv_proj (3C, C) holds its rows in mp_num = 4 groups, each [q | v | k] of a quarter of
the heads (qkv.reshape(..., 4, -1) split in that order, then _split_heads): attn-run's layout
"codegen". CodeGenBlock's ln_1 is a LayerNorm with bias; CodeGenModel's wte alone (no positions)."""
import torch

from .. import hf
from .. import weights as W
from ..reference import Layer, Rope

MODEL_TYPES = ("codegen",)
CLASS_DEFAULTS = dict(rotary_dim=64)  # CodeGenConfig's


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H, Hkv, D = hf.sizes(cfg)
    return Layer(C, H, Hkv, D, layout="mp_groups", names=("qkv_proj", "out_proj"),
                 scale_divisor=float(torch.sqrt(torch.tensor(float(D), dtype=torch.float32))),
                 rope=Rope(10000.0, cfg["rotary_dim"] or D, None,
                           cfg.get("max_position_embeddings"), "interleaved"),
                 model_type="codegen", prefix=f"transformer.h.{layer}.attn.")


def outside(cfg, s0, g, vocab=12):
    return {"transformer.wte.weight": W.small(g, vocab, s0.C),
            "lm_head.weight": W.small(g, vocab, s0.C), "lm_head.bias": W.small(g, vocab, 1)[:, 0]}


def attention_weights(a, g):
    sd = {}
    W.put(sd, "qkv_proj", W.lin(g, 3 * a.H * a.D, a.C, False))
    W.put(sd, "out_proj", W.lin(g, a.C, a.H * a.D, False))
    return sd


def neighbours(s, layer, g, small=4):
    p = f"transformer.h.{layer}."
    return {p + "ln_1.weight": W.ones(s.C), p + "ln_1.bias": W.ones(s.C) * 0,
            # CodeGenAttention's causal_mask buffer, in the hub's pytorch_model.bin
            p + "attn.causal_mask": torch.tril(torch.ones(1, 1, 16, 16)).bool(),
            p + "mlp.fc_in.weight": W.small(g, small, s.C)}


# Salesforce/codegen-350M-mono's config.json, shrunk (n_embd 1024 -> 32, n_head 16 -> 8,
# rotary_dim 32 -> 2 of the head's 4)
CODEGEN_350M_MONO = {
    "activation_function": "gelu_new", "architectures": ["CodeGenForCausalLM"],
    "attn_pdrop": 0.0, "bos_token_id": 1, "embd_pdrop": 0.0, "eos_token_id": 50256,
    "gradient_checkpointing": False, "initializer_range": 0.02, "layer_norm_epsilon": 1e-05,
    "model_type": "codegen", "n_ctx": 2048, "n_embd": 32, "n_head": 8, "n_inner": None,
    "n_layer": 2, "n_positions": 2048, "resid_pdrop": 0.0, "rotary_dim": 2,
    "scale_attn_weights": True, "summary_activation": None, "summary_first_dropout": 0.1,
    "summary_proj_to_labels": True, "summary_type": "cls_index", "summary_use_proj": True,
    "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50,
                                                 "temperature": 1.0}},
    "tie_word_embeddings": False, "tokenizer_class": "GPT2Tokenizer",
    "torch_dtype": "float16", "transformers_version": "4.21.0.dev0", "use_cache": True,
    "vocab_size": 12}

FOLDERS = [
    # codegen-350M-mono's spelling; qkv_proj's four groups of [q | v | k]: read as [Q | K | V]
    # (layout fused) the context moves far
    dict(name="codegen", seed=761, container="safetensors", dtype="f16", layers=[0, 1], B=2,
         S=8, pad="left", config=CODEGEN_350M_MONO,
         input_norm=dict(kind="layer", name="ln_1.", eps=1e-5, layers=[1]),
         guards=({"layout": "fused"},)),
]

HELDOUT = [
    # CodeGenModel's folder ("h." prefix), 4 heads (one per group), half the head rotated
    dict(name="codegen", seed=861, container="safetensors", dtype="f32", layers=[1], S=7,
         rename=[("transformer.", "")],
         config={"model_type": "codegen", "n_embd": 64, "n_head": 4, "n_layer": 2,
                 "n_positions": 64, "rotary_dim": 8}),
]

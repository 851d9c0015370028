"""GPT-Neo: modeling_gpt_neo.GPTNeoSelfAttention: q/k/v_proj without bias, out_proj with, under
transformer.h.N.attn.attention; no 1 / sqrt(D) (attn_weights = q @ k^T); each layer "global" or
"local" (GPTNeoConfig's attention_layers, expanded from attention_types' runs [[names, n]]), a
local layer keeping the window_size latest keys (bias ^ tril(bias, -window_size)); learned
positions outside the layer. The older checkpoints carry the causal buffers attn.attention.bias
and masked_bias."""
import torch

from .. import hf
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("gpt_neo",)
CLASS_DEFAULTS = dict(hidden_size=2048, num_layers=24, num_heads=16, window_size=256,
                      attention_types=[[["global", "local"], 12]], max_position_embeddings=2048)


def attention_layers(cfg):
    """GPTNeoConfig.expand_attention_types_params (config.json's attention_layers, when written,
    says the same)."""
    out = []
    for names, n in cfg["attention_types"]:
        for _ in range(n):
            out.extend(names)
    return cfg.get("attention_layers") or out


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H = cfg["hidden_size"], cfg["num_heads"]
    local = attention_layers(cfg)[layer] == "local"
    return Layer(C, H, H, C // H, names=("q_proj", "k_proj", "v_proj", "out_proj"), scale=1.0,
                 qkv_bias=False, o_bias=True, window=cfg["window_size"] if local else None,
                 kind="sliding_attention" if local else "full_attention", model_type="gpt_neo",
                 prefix=f"transformer.h.{layer}.attn.attention.")


def outside(cfg, s0, g, vocab=12):
    return {"transformer.wte.weight": W.small(g, vocab, s0.C),
            "transformer.wpe.weight": W.small(g, cfg["max_position_embeddings"], s0.C),
            "transformer.ln_f.weight": W.ones(s0.C), "transformer.ln_f.bias": W.ones(s0.C) * 0}


def attention_weights(a, g):  # GPTNeoSelfAttention's order: k, v, q, out_proj
    sd = {}
    for n in ("k_proj", "v_proj", "q_proj"):
        W.put(sd, n, W.lin(g, a.C, a.C, False))
    W.put(sd, "out_proj", W.lin(g, a.C, a.C))
    return sd


def neighbours(s, layer, g, small=4, positions=16):
    p = f"transformer.h.{layer}."
    bias = torch.tril(torch.ones(positions, positions, dtype=torch.uint8)).view(
        1, 1, positions, positions)
    if s.window:  # the local layers' buffer: bias ^ tril(bias, -window_size)
        bias = bias ^ torch.tril(bias, -s.window)
    return {p + "ln_1.weight": W.ones(s.C), p + "ln_1.bias": W.ones(s.C) * 0,
            p + "attn.attention.bias": bias, p + "attn.attention.masked_bias": torch.tensor(-1e9),
            p + "mlp.c_fc.weight": W.small(g, small, s.C)}


GPT_NEO = {"activation_function": "gelu_new", "architectures": ["GPTNeoForCausalLM"],
           "attention_dropout": 0, "attention_layers": ["global", "local", "global"],
           "attention_types": [[["global", "local"], 1], [["global"], 1]], "bos_token_id": 11,
           "embed_dropout": 0, "eos_token_id": 11, "gradient_checkpointing": False,
           "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": None,
           "layer_norm_epsilon": 1e-05, "max_position_embeddings": 16, "model_type": "gpt_neo",
           "num_heads": 4, "num_layers": 3, "resid_dropout": 0, "summary_activation": None,
           "summary_first_dropout": 0.1, "summary_proj_to_labels": True,
           "summary_type": "cls_index", "summary_use_proj": True, "torch_dtype": "float32",
           "transformers_version": "4.9.0.dev0", "use_cache": True, "vocab_size": 12,
           "window_size": 3}

FOLDERS = [
    # EleutherAI/gpt-neo-125M's spelling (pytorch_model.bin with the causal buffers): a global
    # layer and a local one, scale 1
    dict(name="gpt_neo", seed=571, container="bin", dtype="f32", layers=[0, 1], B=2, S=8,
         pad="left", config=GPT_NEO),
]

HELDOUT = [
    # attention_types only, local first
    dict(name="gpt_neo_types", seed=671, container="safetensors", dtype="f16", layers=[0, 1],
         B=2, S=9, pad="right",
         config={"model_type": "gpt_neo", "hidden_size": 32, "num_heads": 2, "num_layers": 2,
                 "attention_types": [[["local", "global"], 1]], "window_size": 4,
                 "max_position_embeddings": 16}),
]


def num_layers(cfg):
    return cfg["num_layers"]

"""GPT-J: modeling_gptj.GPTJAttention: q/k/v_proj and out_proj without biases, rotary_dim of the
head rotated in pairs (x[2i], x[2i+1]) (rotate_every_two, sin/cos repeat_interleave(2)), theta
10000; its causal buffers saved in the checkpoint."""
import torch

from .. import hf
from .. import weights as W
from ..reference import Layer, Rope

MODEL_TYPES = ("gptj",)
CLASS_DEFAULTS = dict(rotary_dim=64)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H, Hkv, D = hf.sizes(cfg)
    return Layer(C, H, Hkv, D, names=("q_proj", "k_proj", "v_proj", "out_proj"),
                 rope=Rope(10000.0, cfg["rotary_dim"] or D, hf.rope_scaling(cfg),
                           cfg.get("max_position_embeddings"), "interleaved"),
                 model_type="gptj", prefix=f"transformer.h.{layer}.attn.")


def outside(cfg, s0, g, vocab=12):
    return {"transformer.wte.weight": W.small(g, vocab, s0.C),
            "lm_head.weight": W.small(g, vocab, s0.C)}


def attention_weights(a, g):
    return W.decoder_attention(a, g, out="out_proj")


def neighbours(s, layer, g, small=4):
    p = f"transformer.h.{layer}."
    one = W.ones(s.C)
    return {p + "ln_1.weight": one, p + "ln_1.bias": one * 0,
            # GPTJAttention's causal buffers, in the hub's pytorch_model.bin
            p + "attn.bias": torch.tril(torch.ones(1, 1, 16, 16)).bool(),
            p + "attn.masked_bias": torch.tensor(-1e9),
            p + "mlp.fc_in.weight": W.small(g, small, s.C)}


FOLDERS = [
    # GPT-J: rotary_dim of the head rotated in pairs (x[2i], x[2i+1]), causal buffers saved
    dict(name="gptj", seed=306, container="safetensors", dtype="f32", layers=[0, 2], S=9,
         offset=3,
         config={"architectures": ["GPTJForCausalLM"], "model_type": "gptj",
                 "activation_function": "gelu_new", "attn_pdrop": 0.0, "embd_pdrop": 0.0,
                 "layer_norm_epsilon": 1e-05, "n_embd": 48, "n_head": 4, "n_inner": None,
                 "n_layer": 3, "n_positions": 64, "resid_pdrop": 0.0, "rotary": True,
                 "rotary_dim": 8, "tie_word_embeddings": False, "vocab_size": 12}),
]

HELDOUT = [
    # GPTJModel ("h." prefix), the whole head rotated
    dict(name="gptj", seed=406, container="safetensors", dtype="f16", layers=[1], B=2, S=8,
         pad="left", rename=[("transformer.", "")],
         config={"model_type": "gptj", "n_embd": 32, "n_head": 4, "n_layer": 2,
                 "rotary_dim": 8, "n_positions": 64}),
    # pytorch_model.bin as EleutherAI/gpt-j-6b ships it (bool attn.bias buffers inside)
    dict(name="gptj_bin", seed=416, container="bin", dtype="f16", layers=[0], S=7, offset=9,
         config={"model_type": "gptj", "n_embd": 32, "n_head": 2, "n_layer": 1,
                 "rotary_dim": 6, "n_positions": 64}),
]

"""Nemotron-H: modeling_nemotron_h.NemotronHAttention: q_proj, k_proj, v_proj, o_proj (biases as
attention_bias), head_dim from the config (not hidden_size / heads), head_dim^-0.5, no positions,
causal; the block's mixer (NemotronHForCausalLM keeps the model under backbone). The layers'
kinds: hybrid_override_pattern, one letter a layer (M Mamba2, * attention, - MLP, E MoE), or
transformers v5's layers_block_type; their length is the number of layers."""
from collections import OrderedDict

import numpy as np

from .. import gguf, hybrid
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("nemotron_h",)
LETTERS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}
V5 = {"linear_attention": "mamba", "full_attention": "attention"}


def kinds(cfg):
    if cfg.get("layers_block_type"):
        return [V5.get(k, k) for k in cfg["layers_block_type"]]
    return [LETTERS[c] for c in cfg.get("hybrid_override_pattern", "ME*-")]


def num_layers(cfg):
    return len(kinds(cfg))


def settings(cfg, layer):
    C, H = cfg.get("hidden_size", 4096), cfg.get("num_attention_heads", 32)
    Hkv = cfg.get("num_key_value_heads") or H
    D = cfg.get("head_dim") or 128
    b = bool(cfg.get("attention_bias", False))
    k = kinds(cfg)[layer]
    return Layer(C, H, Hkv, D, qkv_bias=b, o_bias=b, model_type="nemotron_h", kind=k,
                 runs=k == "attention", prefix=f"backbone.layers.{layer}.mixer.")


def model(cfg, layers, g):
    def block(i, s):
        p = f"backbone.layers.{i}."
        sd = OrderedDict([(p + "norm.weight", W.ones(s.C))])
        if s.runs:
            sd.update(hybrid.attention(s, g))
        elif s.kind == "mamba":
            sd.update(hybrid.mamba(p + "mixer.", s.C, g))
        elif s.kind == "mlp":
            sd[p + "mixer.up_proj.weight"] = W.small(g, 8, s.C)
            sd[p + "mixer.down_proj.weight"] = W.small(g, s.C, 8)
        else:  # NemotronHMoE
            sd[p + "mixer.gate.weight"] = W.small(g, 2, s.C)
            for e in range(2):
                sd[p + f"mixer.experts.{e}.up_proj.weight"] = W.small(g, 4, s.C)
                sd[p + f"mixer.experts.{e}.down_proj.weight"] = W.small(g, s.C, 4)
        return sd
    return hybrid.model(layers, g, "backbone.", block, embed="embeddings.weight",
                        final="norm_f.weight")


NEMOTRON_H = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
              "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 1,
              "chunk_size": 128, "conv_kernel": 4, "eos_token_id": 2, "expand": 2,
              "hidden_dropout": 0.0, "initializer_range": 0.02, "intermediate_size": 8,
              "layer_norm_epsilon": 1e-05, "mamba_head_dim": 4, "mamba_num_heads": 2,
              "max_position_embeddings": 8192, "mlp_bias": False, "mlp_hidden_act": "relu2",
              "n_groups": 1, "pad_token_id": 0, "rescale_prenorm_residual": True,
              "residual_in_fp32": False, "ssm_state_size": 4, "tie_word_embeddings": False,
              "torch_dtype": "bfloat16", "use_bias": False, "use_cache": True,
              "use_conv_bias": True, "vocab_size": 12}
FOLDERS = [
    # nvidia/NVIDIA-Nemotron-Nano-9B-v2's spelling: hybrid_override_pattern (its
    # num_hidden_layers beside it), head_dim 8 with hidden_size 24 / 4 heads
    dict(name="nemotron_h", seed=811, container="safetensors", dtype="bf16", layers=[2, 5],
         B=2, S=8, pad="left",
         config=dict(NEMOTRON_H, hidden_size=24, num_attention_heads=4, num_key_value_heads=2,
                     head_dim=8, num_hidden_layers=7, hybrid_override_pattern="M-*-M*E")),
    # transformers v5's layers_block_type (linear_attention = Mamba2), bare NemotronHModel
    # keys under model.
    dict(name="nemotron_h_v5", seed=812, container="safetensors", dtype="f32", layers=[1],
         S=9, rename=[("backbone.", "model.")],
         config=dict(NEMOTRON_H, hidden_size=16, num_attention_heads=2, num_key_value_heads=1,
                     head_dim=6, layers_block_type=["linear_attention", "full_attention",
                                                    "moe", "mlp"])),
]

HELDOUT = [
    dict(name="nemotron_h", seed=911, container="bin", dtype="f32", layers=[0, 3], S=12,
         config={"model_type": "nemotron_h", "hidden_size": 16, "num_attention_heads": 4,
                 "num_key_value_heads": 4, "head_dim": 4, "hybrid_override_pattern": "*M-*"}),
]


# ---- GGUF: llama.cpp's nemotron_h (conversion/nemotron.py NemotronHModel, a
# GraniteHybridModel: Q/K rows permuted; src/models/nemotron-h.cpp: no rope) -----------------

def gguf_weights(s, layer, g):
    """An attention layer's Hugging Face tensors; none on the others."""
    return W.decoder_attention(s, g) if s.runs else OrderedDict()


def gguf_other_layer(w, p, s, r):
    """A Mamba2 layer's ssm_* tensors, a MoE layer's router (ffn_gate_inp), an MLP layer's
    nothing more than every block's ffn_up / ffn_down: what tells llama.cpp's loader (and
    attn-run) the kinds apart besides head_count_kv and feed_forward_length."""
    if s.kind == "mamba":
        for name, shape in (("ssm_in", (28, s.C)), ("ssm_out", (s.C, 8))):
            gguf.f32(w, p + name + ".weight", r(*shape).numpy())
        gguf.f32(w, p + "ssm_norm.weight", np.ones(8, np.float32))
    elif s.kind == "moe":
        gguf.f32(w, p + "ffn_gate_inp.weight", r(2, s.C).numpy())


def gguf_metadata(w, arch, cfg, n_layers):
    """TextModel's keys (head_count_kv aside), then the per-layer KV heads (0 but on attention
    layers) and feed-forward lengths (0 but on MLP layers), key_length from head_dim."""
    gguf.text_model_metadata(w, arch, dict(cfg, num_key_value_heads=None), n_layers,
                             llama_model=True)
    a = arch + "."
    k = kinds(cfg)
    w.add(a + "attention.head_count_kv",
          [int(cfg["num_key_value_heads"]) if x == "attention" else 0 for x in k])
    w.add(a + "rope.scaling.finetuned", False)


GGUF = [
    # Nemotron-Nano-9B-v2's pattern kind, shrunk: Mamba, MLP, attention, MLP, Mamba, attention,
    # MoE (head_dim 8, 4 heads, hidden_size 32)
    dict(name="nemotron_h", arch="nemotron_h", seed=851, layers=[2, 5], S=8, permute=True,
         metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "F16", "attn_v": "Q8_0", "attn_output": "Q5_0"},
         config=dict(NEMOTRON_H, hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                     head_dim=8, num_hidden_layers=7, hybrid_override_pattern="M-*-M*E")),
]

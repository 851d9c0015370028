"""Jamba: modeling_jamba.JambaAttention: q_proj, k_proj, v_proj, o_proj without biases,
head_dim = hidden_size / heads, no positions, causal (the sliding_window it reads is
flash-attention's only); attention on the layers where layer % attn_layer_period ==
attn_layer_offset (JambaConfig.layers_block_type), Mamba (JambaMambaMixer) on the others."""
from collections import OrderedDict

import numpy as np

from .. import gguf, hf, hybrid
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("jamba",)
CLASS_DEFAULTS = dict(attn_layer_period=8, attn_layer_offset=4, num_key_value_heads=8)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H, Hkv, D = hf.sizes(cfg)
    runs = layer % cfg["attn_layer_period"] == cfg["attn_layer_offset"]
    return Layer(C, H, Hkv, D, model_type="jamba", kind="attention" if runs else "mamba",
                 runs=runs, prefix=f"model.layers.{layer}.self_attn.")


def model(cfg, layers, g):
    def block(i, s):
        p = f"model.layers.{i}."
        sd = OrderedDict([(p + "input_layernorm.weight", W.ones(s.C))])
        if s.runs:
            sd.update(hybrid.attention(s, g))
        else:  # JambaMambaMixer
            sd[p + "mamba.in_proj.weight"] = W.small(g, 16, s.C)
            sd[p + "mamba.conv1d.weight"] = W.small(g, 8, 1, 4)
            sd[p + "mamba.x_proj.weight"] = W.small(g, 10, 8)
            sd[p + "mamba.dt_proj.weight"] = W.small(g, 8, 2)
            sd[p + "mamba.A_log"] = W.small(g, 8, 4)
            sd[p + "mamba.D"] = W.ones(8)
            sd[p + "mamba.out_proj.weight"] = W.small(g, s.C, 8)
        sd[p + "pre_ff_layernorm.weight"] = W.ones(s.C)
        sd[p + "feed_forward.up_proj.weight"] = W.small(g, 8, s.C)
        return sd
    return hybrid.model(layers, g, "model.", block, final="final_layernorm.weight")


JAMBA = {"architectures": ["JambaForCausalLM"], "model_type": "jamba", "attention_dropout": 0.0,
         "bos_token_id": 1, "eos_token_id": 2, "expert_layer_offset": 1,
         "expert_layer_period": 2, "hidden_act": "silu", "initializer_range": 0.02,
         "intermediate_size": 8, "mamba_conv_bias": True, "mamba_d_conv": 4,
         "mamba_d_state": 4, "mamba_dt_rank": 2, "mamba_expand": 2, "mamba_proj_bias": False,
         "max_position_embeddings": 262144, "num_experts": 2, "num_experts_per_tok": 1,
         "pad_token_id": 0, "rms_norm_eps": 1e-06, "sliding_window": None,
         "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True,
         "use_mamba_kernels": True, "vocab_size": 12}
FOLDERS = [
    # ai21labs/AI21-Jamba-Mini-1.6's spelling, shrunk: attention at layer % 4 == 2
    dict(name="jamba", seed=831, container="safetensors", dtype="bf16", layers=[2, 6], B=2,
         S=8, pad="left",
         config=dict(JAMBA, hidden_size=24, num_attention_heads=4, num_key_value_heads=2,
                     num_hidden_layers=8, attn_layer_period=4, attn_layer_offset=2)),
]

HELDOUT = [
    # the class's period 8 / offset 4 left out
    dict(name="jamba", seed=931, container="bin", dtype="f32", layers=[4], S=13,
         config={"model_type": "jamba", "hidden_size": 16, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "num_hidden_layers": 9}),
]


# ---- GGUF: llama.cpp's jamba (conversion/jamba.py JambaModel, a TextModel: tensors as
# Hugging Face's; src/models/jamba.cpp: no rope, 1/sqrt(D)) ------------------------------------

def gguf_weights(s, layer, g):
    """An attention layer's Hugging Face tensors; none on a Mamba layer."""
    return W.decoder_attention(s, g) if s.runs else OrderedDict()


def gguf_other_layer(w, p, s, r):
    """A Mamba layer's tensors as the converter names them (not read)."""
    for name, shape in (("ssm_in", (16, s.C)), ("ssm_out", (s.C, 8))):
        gguf.f32(w, p + name + ".weight", r(*shape).numpy())
    gguf.f32(w, p + "ssm_d", np.ones(8, np.float32))


def gguf_metadata(w, arch, cfg, n_layers):
    """JambaModel.set_gguf_parameters: the KV heads per layer, 0 on Mamba layers (the period
    and offset themselves are not in the file)."""
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    gguf.text_model_metadata(w, arch, dict(cfg, num_key_value_heads=None), n_layers)
    P, O = cfg["attn_layer_period"], cfg["attn_layer_offset"]
    w.add(arch + ".attention.head_count_kv",
          [int(cfg["num_key_value_heads"]) if i % P == O else 0 for i in range(n_layers)])


GGUF = [
    # AI21-Jamba-Mini's kind, shrunk: attention at layer % 4 == 2, the rest Mamba
    dict(name="jamba", arch="jamba", seed=861, layers=[2, 6], S=9, metadata=gguf_metadata,
         types={"attn_q": "Q4_1", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "F16"},
         config=dict(JAMBA, hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                     num_hidden_layers=8, attn_layer_period=4, attn_layer_offset=2)),
]

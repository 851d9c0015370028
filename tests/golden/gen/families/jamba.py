"""Jamba: modeling_jamba.JambaAttention: q_proj, k_proj, v_proj, o_proj without biases,
head_dim = hidden_size / heads, no positions, causal (the sliding_window it reads is
flash-attention's only); attention on the layers where layer % attn_layer_period ==
attn_layer_offset (JambaConfig.layers_block_type), Mamba (JambaMambaMixer) on the others."""
from collections import OrderedDict

from .. import hf, hybrid
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

"""Falcon-H1: modeling_falcon_h1.FalconH1Attention beside the Mamba2 mixer in every layer:
LlamaAttention (rope, head_dim from the config, no biases: FalconH1Config sets
attention_bias False) whose keys are k_proj's output times key_multiplier, before rope; the same
scores as the scale key_multiplier / sqrt(head_dim). Its input is FalconH1DecoderLayer's
input_layernorm(h) * attention_in_multiplier (what a hook on self_attn sees: the input given);
attention_out_multiplier scales the output after the module."""
from collections import OrderedDict

import numpy as np

from .. import gguf, hf, hybrid
from .. import weights as W
from ..reference import Layer, Rope

MODEL_TYPES = ("falcon_h1",)
CLASS_DEFAULTS = dict(rope_theta=100000.0, key_multiplier=1.0, num_key_value_heads=8,
                      max_position_embeddings=8192)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H, Hkv, _ = hf.sizes(cfg)
    D = cfg.get("head_dim") or C // H
    return Layer(C, H, Hkv, D, scale=cfg["key_multiplier"] * D ** -0.5,
                 rope=Rope(float(cfg["rope_theta"]), D, hf.rope_scaling(cfg),
                           cfg.get("max_position_embeddings")),
                 model_type="falcon_h1", prefix=f"model.layers.{layer}.self_attn.")


def model(cfg, layers, g):
    def block(i, s):
        p = f"model.layers.{i}."
        sd = OrderedDict([(p + "input_layernorm.weight", W.ones(s.C))])
        sd.update(hybrid.mamba(p + "mamba.", s.C, g))
        sd.update(hybrid.attention(s, g))
        sd[p + "pre_ff_layernorm.weight"] = W.ones(s.C)
        sd[p + "feed_forward.up_proj.weight"] = W.small(g, 8, s.C)
        return sd
    return hybrid.model(layers, g, "model.", block, final="final_layernorm.weight")


FALCON_H1 = {"architectures": ["FalconH1ForCausalLM"], "model_type": "falcon_h1",
             "attention_bias": False, "attention_dropout": 0.0, "attention_in_multiplier": 1.0,
             "attention_out_multiplier": 0.9375, "bos_token_id": 1,
             "embedding_multiplier": 5.656854249492381, "eos_token_id": 11, "hidden_act": "silu",
             "lm_head_multiplier": 0.0390625, "mamba_chunk_size": 128, "mamba_conv_bias": True,
             "mamba_d_conv": 4, "mamba_d_head": 4, "mamba_d_ssm": 8, "mamba_d_state": 4,
             "mamba_expand": 2, "mamba_n_groups": 1, "mamba_n_heads": 2,
             "mamba_norm_before_gate": False, "mamba_proj_bias": False, "mamba_rms_norm": False,
             "mamba_use_mlp": True, "mlp_bias": False, "mlp_expansion_factor": 8,
             "mlp_multipliers": [0.8838834764831844, 0.5859375], "pad_token_id": 0,
             "projectors_bias": False, "rms_norm_eps": 1e-05, "rope_scaling": None,
             "ssm_in_multiplier": 1.25, "ssm_multipliers": [0.35, 0.25, 0.5, 0.35, 0.2],
             "ssm_out_multiplier": 0.23570226039551587, "tie_word_embeddings": False,
             "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 12}
FOLDERS = [
    # tiiuae/Falcon-H1-0.5B-Instruct's spelling, shrunk: key_multiplier 0.39 (its own), head_dim
    # 8 with hidden_size 24 / 4 heads, rope_theta 1e11
    dict(name="falcon_h1", seed=821, container="safetensors", dtype="bf16", layers=[0, 2],
         B=2, S=9, pad="right",
         config=dict(FALCON_H1, hidden_size=24, intermediate_size=8, num_attention_heads=4,
                     num_key_value_heads=2, head_dim=8, num_hidden_layers=3,
                     key_multiplier=0.390625, max_position_embeddings=16384,
                     rope_theta=100000000000.0)),
    dict(name="falcon_h1_offset", seed=822, container="safetensors", dtype="f32", layers=[1],
         S=7, offset=5,
         config=dict(FALCON_H1, hidden_size=16, intermediate_size=8, num_attention_heads=2,
                     num_key_value_heads=2, num_hidden_layers=2, key_multiplier=2.5,
                     max_position_embeddings=64, rope_theta=10000.0)),
    # The residual stream in (--residual): input_layernorm (RMS), then times
    # attention_in_multiplier (FalconH1DecoderLayer's self_attn input).
    dict(name="falcon_h1_residual", seed=823, container="safetensors", dtype="f32", layers=[1],
         S=6, input_norm=dict(kind="rms", name="input_layernorm.", eps=1e-5, layers=[1],
                              multiplier=0.7),
         config=dict(FALCON_H1, hidden_size=16, intermediate_size=8, num_attention_heads=2,
                     num_key_value_heads=1, num_hidden_layers=2, key_multiplier=0.75,
                     attention_in_multiplier=0.7, max_position_embeddings=64,
                     rope_theta=10000.0)),
]

HELDOUT = [
    dict(name="falcon_h1", seed=921, container="shards2", dtype="f32", layers=[1], B=2, S=10,
         pad="left",
         config={"model_type": "falcon_h1", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "head_dim": 4, "num_hidden_layers": 2,
                 "key_multiplier": 0.5, "rope_theta": 1000000.0, "mamba_d_ssm": 8,
                 "mamba_n_heads": 2}),
]


# ---- GGUF: llama.cpp's falcon-h1 (conversion/falcon_h1.py FalconH1Model, a Mamba2Model:
# tensors unpermuted, NEOX rope) -------------------------------------------------------------

def gguf_weights(s, layer, g):
    return W.decoder_attention(s, g)


def to_gguf(spec, s, hf_tensors):
    """FalconH1Model.modify_tensors: q and v times attention_in_multiplier, k times
    key_multiplier too, o times attention_out_multiplier (the multipliers folded into the
    weights: llama.cpp runs the file with none)."""
    cfg = spec["config"]
    m_in, m_out = cfg.get("attention_in_multiplier", 1.0), cfg.get("attention_out_multiplier", 1.0)
    times = {"q_proj": m_in, "k_proj": m_in * cfg.get("key_multiplier", 1.0), "v_proj": m_in,
             "o_proj": m_out}
    folded = OrderedDict((n, (t * times[n.rsplit(".", 1)[0]]).astype(t.dtype))
                         for n, t in hf_tensors.items())
    return gguf.to_gguf(spec, s, folded)


def gguf_metadata(w, arch, cfg, n_layers):
    """FalconH1Model.set_gguf_parameters: head counts, key_length / value_length from head_dim,
    rope.freq_base (the Mamba2 keys are not read)."""
    gguf.text_model_metadata(w, arch, cfg, n_layers)
    w.add(arch + ".ssm.inner_size", int(cfg["mamba_d_ssm"]))


GGUF = [
    # Falcon-H1-0.5B's multipliers (key 0.39, out 0.94) and an attention_in_multiplier of 0.8
    # folded into the weights; the expected output runs the folded weights with none, as
    # llama.cpp does (its context includes attention_out_multiplier)
    dict(name="falcon_h1", arch="falcon-h1", seed=871, layers=[0, 2], S=9,
         metadata=gguf_metadata, runs_as={"key_multiplier": 1.0},
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q4_1", "attn_output": "F16"},
         config=dict(FALCON_H1, hidden_size=32, intermediate_size=8, num_attention_heads=4,
                     num_key_value_heads=2, head_dim=8, num_hidden_layers=3,
                     key_multiplier=0.390625, attention_in_multiplier=0.8,
                     max_position_embeddings=16384, rope_theta=1000000.0)),
]

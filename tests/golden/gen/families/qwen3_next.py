"""Qwen3-Next and Qwen3.5: modeling_qwen3_next.Qwen3NextAttention (which Qwen3_5Attention
inherits): q_proj yields per head [query | gate] (torch.chunk of the (B, S, H, 2D) view) and the
output is multiplied by sigmoid(gate) before o_proj; Qwen3NextRMSNorm q/k norms (x * (1 + w),
zero-centred weights) per head before rope; partial rotary (0.25); full attention on every
full_attention_interval-th layer (or layer_types' full_attention ones), the others Gated DeltaNet
linear attention (its tensors present, not run by attn-run). Qwen3_5ForConditionalGeneration
nests the text model (model.language_model.) in text_config beside a vision tower, with v5's
rope_parameters (mrope_section over text positions: plain rope). llama.cpp's converter stores
every *norm.weight as 1 + w."""
import numpy as np

from .. import gguf, hf
from .. import weights as W
from ..reference import Layer, QkNorm, Rope

MODEL_TYPES = ("qwen3_next", "qwen3_5", "qwen3_5_text")
TEXT_DEFAULTS = dict(rope_theta=10000.0, partial_rotary_factor=0.25, attention_bias=False,
                     rms_norm_eps=1e-6, head_dim=256, full_attention_interval=4)


def settings(cfg, layer):
    wrapped = cfg["model_type"] == "qwen3_5"  # Qwen3_5ForConditionalGeneration
    if wrapped:
        cfg = cfg["text_config"]
    mt = cfg["model_type"]
    cfg = hf.with_defaults(cfg, TEXT_DEFAULTS)
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads") or H
    D = cfg.get("head_dim") or C // H
    b = bool(cfg["attention_bias"])
    types = cfg.get("layer_types") or [
        "linear_attention" if (i + 1) % cfg["full_attention_interval"] else "full_attention"
        for i in range(cfg["num_hidden_layers"])]
    p = cfg.get("rope_parameters") or {}  # v5 (Qwen3.5: mrope_section over text positions)
    theta = p.get("rope_theta", cfg["rope_theta"])
    frac = p.get("partial_rotary_factor", cfg["partial_rotary_factor"])
    top = "model.language_model." if mt == "qwen3_5_text" and wrapped else "model."
    return Layer(C, H, Hkv, D, qkv_bias=b, o_bias=b, gate=True,
                 qk_norm=QkNorm("rms", cfg["rms_norm_eps"], offset=1),
                 rope=Rope(float(theta), int(D * frac), None, cfg.get("max_position_embeddings")),
                 model_type=mt, kind=types[layer], runs=types[layer] == "full_attention",
                 prefix=f"{top}layers.{layer}.self_attn.")


def block(s, layer, g):
    def attention(block):
        if s.runs:
            return W.prefixed(W.gated_attention(s, g), s.prefix)
        # Qwen3NextGatedDeltaNet's tensors: recognized as no attention layer
        la, C, D = block + "linear_attn.", s.C, s.D
        return {la + "in_proj_qkvz.weight": W.small(g, 4 * D, C),
                la + "in_proj_ba.weight": W.small(g, 4, C),
                la + "conv1d.weight": W.small(g, 2 * D, 1, 4), la + "dt_bias": W.ones(2),
                la + "A_log": W.small(g, 2), la + "norm.weight": W.ones(D),
                la + "out_proj.weight": W.small(g, C, D)}
    return W.decoder_block(s, g, attention, lambda b: {b + "mlp.up_proj.weight":
                                                       W.small(g, 8, s.C)})


def model(cfg, layers, g):
    sd, top = W.decoder_outside(layers[0], g)
    if "language_model" in top:  # the vision tower
        sd["model.visual.patch_embed.proj.weight"] = W.small(g, 8, 3, 2, 2, 2)
    sd["lm_head.weight"] = W.small(g, 12, layers[0].C)
    for i, s in enumerate(layers):
        sd.update(block(s, i, g))
    return sd


def gguf_weights(s, layer, g):  # the block drawn whole, its attention's tensors kept
    return W.under(block(s, layer, g), s.prefix)


def gguf_other_layer(w, p, s, r):
    """A linear-attention layer's tensors as the converter names them (not read)."""
    C = s.C
    for name, shape in (("attn_qkv", (48, C)), ("attn_gate", (16, C)), ("ssm_out", (C, 16))):
        gguf.f32(w, p + name + ".weight", r(*shape).numpy())
    gguf.f32(w, p + "ssm_norm.weight", np.ones(16, np.float32))


QWEN3_NEXT = {
    "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
    "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "num_hidden_layers": 4, "full_attention_interval": 2, "intermediate_size": 8,
    "vocab_size": 12, "max_position_embeddings": 256, "rope_theta": 10000000,
    "partial_rotary_factor": 0.25, "rms_norm_eps": 1e-06, "attention_bias": False,
    "attention_dropout": 0.0, "hidden_act": "silu", "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_num_key_heads": 1,
    "linear_num_value_heads": 2, "num_experts": 0, "decoder_sparse_step": 1,
    "torch_dtype": "bfloat16", "transformers_version": "4.57.0"}
QWEN3_5 = {
    "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
    "image_token_id": 248056, "video_token_id": 248057, "tie_word_embeddings": False,
    "text_config": {
        "model_type": "qwen3_5_text", "hidden_size": 32, "num_attention_heads": 4,
        "num_key_value_heads": 1, "head_dim": 8, "num_hidden_layers": 3,
        "layer_types": ["linear_attention", "full_attention", "full_attention"],
        "intermediate_size": 8, "vocab_size": 12, "max_position_embeddings": 256,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000000,
                            "partial_rotary_factor": 0.25, "mrope_section": [1, 1, 0],
                            "mrope_interleaved": True},
        "rms_norm_eps": 1e-06, "attention_bias": False, "hidden_act": "silu",
        "linear_num_key_heads": 1, "linear_num_value_heads": 2, "dtype": "bfloat16"},
    "vision_config": {"model_type": "qwen3_5_vision", "depth": 1, "hidden_size": 8},
    "transformers_version": "5.2.0"}

FOLDERS = [
    # full_attention_interval 2: linear-attention layers' tensors present, not run
    dict(name="qwen3_next", seed=101, config=QWEN3_NEXT, container="safetensors", dtype="bf16",
         layers=[1, 3], B=2, S=7, pad="left"),
    # the multimodal wrapper's text_config, layer_types, v5 rope_parameters, two shards
    dict(name="qwen3_5", seed=102, config=QWEN3_5, container="shards2", dtype="bf16",
         layers=[1, 2], B=2, S=6),
]

HELDOUT = [
    # Qwen3-Next with the class defaults: full_attention_interval 4, partial rotary 0.25,
    # head_dim given; attention_bias on (q_proj's bias holds the gate's too).
    dict(name="qwen3_next_defaults", seed=201, container="shards2", dtype="f32",
         layers=[3, 7], B=3, S=9, pad="right",
         config={"model_type": "qwen3_next", "hidden_size": 24, "num_attention_heads": 6,
                 "num_key_value_heads": 3, "head_dim": 8, "num_hidden_layers": 8,
                 "attention_bias": True, "rope_theta": 5000.0}),
    # Qwen3.5 as a text-only checkpoint (Qwen3_5ForCausalLM: model.layers., no wrapper),
    # full_attention_interval 3 and transformers v4's rope_theta.
    dict(name="qwen3_5_text", seed=202, container="safetensors", dtype="bf16", layers=[2],
         B=2, S=8, pad="left",
         config={"model_type": "qwen3_5_text", "hidden_size": 16, "num_attention_heads": 2,
                 "num_key_value_heads": 2, "head_dim": 16, "num_hidden_layers": 3,
                 "full_attention_interval": 3, "rope_theta": 1000000.0,
                 "partial_rotary_factor": 0.5, "rms_norm_eps": 1e-5}),
]

GGUF = [
    # Qwen3-Next: gated q_proj, (1 + w) q/k norms stored with the 1 added, partial rotary,
    # full attention every 2nd layer (the others' tensors are the linear attention's).
    dict(name="qwen3_next", arch="qwen3next", seed=33, layers=[1, 3], norm_plus_one=True,
         extra={"full_attention_interval": 2, "rope.dimension_count": 4,
                "ssm.conv_kernel": 4, "ssm.state_size": 16, "ssm.group_count": 1,
                "ssm.time_step_rank": 2, "ssm.inner_size": 32},
         types={"attn_q": "Q8_0", "attn_k": "Q4_1", "attn_v": "BF16", "attn_output": "Q5_1"},
         config={"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "head_dim": 16, "num_hidden_layers": 4, "full_attention_interval": 2,
                 "intermediate_size": 8, "vocab_size": 12, "max_position_embeddings": 256,
                 "rope_theta": 10000000, "partial_rotary_factor": 0.25,
                 "rms_norm_eps": 1e-06, "attention_bias": False,
                 "linear_conv_kernel_dim": 4, "linear_key_head_dim": 16,
                 "linear_value_head_dim": 16, "linear_num_key_heads": 1,
                 "linear_num_value_heads": 2, "num_experts": 0}),
    # Qwen3.5 (Qwen3_5ForCausalLM): as Qwen3-Next, MRoPE sections written (text positions).
    dict(name="qwen3_5", arch="qwen35", seed=49, layers=[1, 3], S=6, norm_plus_one=True,
         extra={"full_attention_interval": 2, "rope.dimension_count": 2,
                "rope.dimension_sections": [1, 0, 0, 0], "ssm.conv_kernel": 4,
                "ssm.state_size": 16, "ssm.group_count": 1, "ssm.time_step_rank": 2,
                "ssm.inner_size": 32},
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "IQ4_NL", "attn_output": "F16"},
         config={"architectures": ["Qwen3_5ForCausalLM"], "model_type": "qwen3_5_text",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 1,
                 "head_dim": 8, "num_hidden_layers": 4, "full_attention_interval": 2,
                 "layer_types": ["linear_attention", "full_attention"] * 2,
                 "intermediate_size": 8, "vocab_size": 12, "max_position_embeddings": 256,
                 "rope_parameters": {"rope_type": "default", "rope_theta": 10000000,
                                     "partial_rotary_factor": 0.25,
                                     "mrope_section": [1, 0, 0],
                                     "mrope_interleaved": True},
                 "rms_norm_eps": 1e-06, "attention_bias": False,
                 "linear_num_key_heads": 1, "linear_num_value_heads": 2}),
]

VARIANTS = [  # gate per head in q_proj, partial rotary, (1 + w) q/k norms, q bias
    dict(name="qwen3next_gate", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 10000.0, "rotary_dim": 4}, qk_norm=(1e-6, 1), gate=True, bias=True,
         seed=11),
]

"""Gemma 3: modeling_gemma3.Gemma3Attention: Gemma3RMSNorm q/k norms (x * (1 + w)) per head,
query_pre_attn_scalar, 5 local : 1 global layers (sliding_window_pattern, or layer_types), the
local layers with rope_local_base_freq and no scaling, the global ones with rope_theta and
rope_scaling (transformers v5: rope_parameters per layer type); Gemma3ForConditionalGeneration's
config.json nests the text model in text_config."""
from .. import hf
from ..reference import QkNorm

MODEL_TYPES = ("gemma3", "gemma3_text")
CLASS_DEFAULTS = dict(rope_theta=1e6, rope_local_base_freq=10000.0, head_dim=256,
                      num_attention_heads=8, num_key_value_heads=4, query_pre_attn_scalar=256,
                      attn_logit_softcapping=None, sliding_window=4096, sliding_window_pattern=6,
                      rms_norm_eps=1e-6, attention_bias=False)


def settings(cfg, layer):
    if cfg["model_type"] == "gemma3" and "text_config" in cfg:  # the multimodal wrapper
        cfg = cfg["text_config"]
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "gemma3_text", layer, bias_key="attention_bias")
    a = a.replace(scale=cfg["query_pre_attn_scalar"] ** -0.5, softcap=cfg["attn_logit_softcapping"],
                  qk_norm=QkNorm("rms", cfg["rms_norm_eps"], offset=1))
    if hf.sliding(cfg, layer, bool((layer + 1) % cfg["sliding_window_pattern"])):
        p = hf.v5_params(cfg, "sliding_attention")
        return a.replace(window=cfg["sliding_window"], rope=hf.rope(
            cfg, a.D, cfg["rope_local_base_freq"] if p is None else p["rope_theta"]))
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"),
                                  params=hf.v5_params(cfg, "full_attention")))


FOLDERS = [
    dict(name="gemma3", seed=11, container="safetensors", dtype="f32", layers=[0, 2], S=8,
         offset=40,
         config={"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text",
                 "attn_logit_softcapping": None, "head_dim": 8, "hidden_size": 32,
                 "intermediate_size": 8, "max_position_embeddings": 128,
                 "num_attention_heads": 4, "num_hidden_layers": 3, "num_key_value_heads": 2,
                 "query_pre_attn_scalar": 10, "rms_norm_eps": 1e-06,
                 "rope_local_base_freq": 10000.0,
                 "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                 "rope_theta": 1000000.0, "sliding_window": 3, "sliding_window_pattern": 3,
                 "vocab_size": 12}),
]

HELDOUT = [
    # Gemma 3: layer_types and transformers v5 rope_parameters per layer type
    dict(name="gemma3_v5", seed=111, container="safetensors", dtype="f32", layers=[1, 3],
         B=2, S=8, pad="left",
         config={"model_type": "gemma3_text", "head_dim": 8, "hidden_size": 32,
                 "num_attention_heads": 4, "num_hidden_layers": 4, "num_key_value_heads": 1,
                 "query_pre_attn_scalar": 8, "rms_norm_eps": 1e-6, "sliding_window": 3,
                 "max_position_embeddings": 64, "attn_logit_softcapping": None,
                 "layer_types": ["sliding_attention", "sliding_attention",
                                 "sliding_attention", "full_attention"],
                 "rope_parameters": {
                     "full_attention": {"rope_type": "linear", "factor": 4.0,
                                        "rope_theta": 1000000.0},
                     "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}),
    # Gemma 3 multimodal: text_config holds only what differs from Gemma3TextConfig
    dict(name="gemma3_mm", seed=121, container="safetensors", dtype="bf16", layers=[0, 5],
         S=7, rename=[("model.", "language_model.model.")],
         config={"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
                 "text_config": {"hidden_size": 32, "intermediate_size": 8,
                                 "model_type": "gemma3_text", "num_hidden_layers": 6,
                                 "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                                 "sliding_window": 4},
                 "vision_config": {"model_type": "siglip_vision_model"}}),
]

GGUF = [
    dict(name="gemma3", arch="gemma3", writer="by_layout", seed=16, layers=[0, 5],
         types={"attn_q": "Q8_0", "attn_v": "F16"},
         config={"model_type": "gemma3_text", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 6,
                 "query_pre_attn_scalar": 8, "max_position_embeddings": 128,
                 "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                 "rope_local_base_freq": 10000.0, "sliding_window_pattern": 6,
                 "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                 "sliding_window": 3}),
    # Gemma 3 as today's converter writes it: the sliding layers' base (20000 here, not
    # llama.cpp's old 10000) in rope.freq_base_swa; layer 0 slides, layer 5 is global.
    dict(name="gemma3_swa_base", arch="gemma3", writer="by_layout", seed=30, layers=[0, 5],
         swa_base=True, types={"attn_q": "Q8_0", "attn_k": "F16"},
         config={"model_type": "gemma3_text", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 6,
                 "query_pre_attn_scalar": 8, "max_position_embeddings": 128,
                 "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                 "rope_local_base_freq": 20000.0, "sliding_window_pattern": 6,
                 "sliding_window": 4}),
    # Layer types as one bool per layer in attention.sliding_window_pattern (as the
    # converters that read layer_types write it), not Gemma 3's period 6: 1 global, 2 local.
    dict(name="gemma3_swa_layers", arch="gemma3", writer="by_layout", seed=31, layers=[0, 1],
         S=9, types={"attn_q": "Q8_0", "attn_v": "F16"},
         config={"model_type": "gemma3_text", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 3,
                 "query_pre_attn_scalar": 8, "max_position_embeddings": 128,
                 "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
                 "rope_local_base_freq": 10000.0, "sliding_window": 3,
                 "layer_types": ["full_attention", "sliding_attention", "sliding_attention"]}),
]

VARIANTS = [  # qk_norm with Gemma 3's weight offset 1, a window
    dict(name="gemma3_qknorm_offset", writer="decoder", C=32, H=4, Hkv=1, D=8,
         rope_cfg={"theta": 10000.0}, qk_norm=(1e-6, 1), window=4),
]

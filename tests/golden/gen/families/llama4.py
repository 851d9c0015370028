"""Llama 4: modeling_llama4.Llama4TextAttention: no_rope_layers (1 = rope; else every
no_rope_layer_interval-th layer without), its rope layers with interleaved pairs, llama3 scaling,
chunked attention (attention_chunk_size, Llama4TextDecoderLayer.use_chunked_attention) and the
weightless Llama4TextL2Norm on q and k after rope (use_qk_norm); the no-rope layers scale their
queries by attn_temperature_tuning (floor_scale, attn_scale) at cache_position 0..S-1.
Llama4ForConditionalGeneration nests the text model (language_model.model.) in text_config."""
from .. import hf
from .. import weights as W
from ..reference import Layer, QkNorm, Rope

MODEL_TYPES = ("llama4", "llama4_text")
CLASS_DEFAULTS = dict(rope_theta=500000.0, attention_bias=False, rms_norm_eps=1e-5,
                      attention_chunk_size=8192, no_rope_layers=None, no_rope_layer_interval=4,
                      use_qk_norm=True, attn_temperature_tuning=True, floor_scale=8192,
                      attn_scale=0.1, rope_scaling=None)


def settings(cfg, layer):
    wrapped = cfg["model_type"] == "llama4"
    if wrapped:
        cfg = cfg["text_config"]
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads") or H
    D = cfg.get("head_dim") or C // H
    b = bool(cfg["attention_bias"])
    flags = cfg["no_rope_layers"] or [int((i + 1) % cfg["no_rope_layer_interval"] != 0)
                                      for i in range(cfg["num_hidden_layers"])]
    top = "language_model.model." if wrapped else "model."
    a = Layer(C, H, Hkv, D, qkv_bias=b, o_bias=b, model_type="llama4_text", kind="full_attention",
              prefix=f"{top}layers.{layer}.self_attn.")
    if flags[layer]:  # rope, chunked, L2 norm
        a = a.replace(rope=Rope(float(cfg["rope_theta"]), D, cfg["rope_scaling"],
                                cfg.get("max_position_embeddings"), "interleaved"),
                      chunk=cfg["attention_chunk_size"],
                      kind="chunked_attention" if cfg["attention_chunk_size"] else a.kind)
        if cfg["use_qk_norm"]:
            a = a.replace(qk_norm=QkNorm("l2", cfg["rms_norm_eps"], after_rope=True))
        return a
    if cfg["attn_temperature_tuning"]:
        return a.replace(temperature=(cfg["floor_scale"], cfg["attn_scale"]))
    return a


def block(s, layer, g):
    return W.decoder_block(s, g, lambda b: W.prefixed(W.gated_attention(s, g), s.prefix),
                           lambda b: {b + "feed_forward.router.weight": W.small(g, 1, s.C),
                                      b + "feed_forward.experts.gate_up_proj":
                                          W.small(g, 1, s.C, 16)})  # Llama4TextMoe


def model(cfg, layers, g):
    sd, top = W.decoder_outside(layers[0], g)
    if "language_model" in top:  # the vision model beside, the head under language_model.
        sd["vision_model.patch_embedding.linear.weight"] = W.small(g, 8, 12)
        sd["language_model.lm_head.weight"] = W.small(g, 12, layers[0].C)
    else:
        sd["lm_head.weight"] = W.small(g, 12, layers[0].C)
    for i, s in enumerate(layers):
        sd.update(block(s, i, g))
    return sd


def gguf_weights(s, layer, g):
    return W.under(block(s, layer, g), s.prefix)


FOLDERS = [
    # Llama4ForConditionalGeneration: chunked rope layers with L2 norms and llama3 scaling, a
    # no-rope layer with temperature tuning
    dict(name="llama4", seed=104, container="safetensors", dtype="bf16", layers=[1, 3], B=2,
         S=8, pad="left",
         config={"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
                 "image_token_index": 200092, "tie_word_embeddings": False,
                 "text_config": {
                     "model_type": "llama4_text", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 4,
                     "intermediate_size": 16, "intermediate_size_mlp": 16,
                     "num_local_experts": 1, "num_experts_per_tok": 1,
                     "interleave_moe_layer_step": 1, "vocab_size": 12,
                     "max_position_embeddings": 256, "attention_chunk_size": 3,
                     "no_rope_layers": [], "rope_theta": 500000.0,
                     "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                                      "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                      "original_max_position_embeddings": 16},
                     "use_qk_norm": True, "attn_temperature_tuning": True, "floor_scale": 4,
                     "attn_scale": 0.1, "rms_norm_eps": 1e-05, "attention_bias": False,
                     "hidden_act": "silu", "torch_dtype": "bfloat16"},
                 "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 8},
                 "transformers_version": "4.51.0"}),
]

HELDOUT = [
    # Llama 4 text-only (Llama4ForCausalLM): explicit no_rope_layers, no chunking
    # (attention_chunk_size null), temperature tuning written as an int, no qk norm.
    dict(name="llama4_text", seed=206, container="safetensors", dtype="f32",
         layers=[0, 1], B=2, S=9,
         config={"model_type": "llama4_text", "hidden_size": 16, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "head_dim": 4, "num_hidden_layers": 3,
                 "no_rope_layers": [0, 1, 1], "attention_chunk_size": None,
                 "use_qk_norm": False, "attn_temperature_tuning": 4, "floor_scale": 2,
                 "attn_scale": 0.5, "rope_theta": 10000.0}),
    # Llama 4 chunked layers with padding (chunk 4 over 10 tokens) and L2 norms.
    dict(name="llama4_chunked", seed=207, container="safetensors", dtype="bf16",
         layers=[2], B=2, S=10, pad="left",
         config={"model_type": "llama4_text", "hidden_size": 16, "num_attention_heads": 2,
                 "num_key_value_heads": 2, "head_dim": 8, "num_hidden_layers": 4,
                 "attention_chunk_size": 4, "rope_theta": 500000.0}),
]

GGUF = [
    # Llama 4 (Llama4ForCausalLM, chunk and temperature floor as llama.cpp hard-codes them):
    # rope layers with llama3 scaling (rope_freqs.weight) and L2 q/k norms, unpermuted;
    # layer 3 without rope, its queries' temperature 1 below 8192 positions.
    dict(name="llama4", arch="llama4", seed=42, layers=[1, 3], S=8,
         extra={"interleave_moe_layer_step": 1, "expert_feed_forward_length": 16,
                "leading_dense_block_count": 0, "vocab_size": 12},
         types={"attn_q": "Q8_0", "attn_k": "Q5_1", "attn_v": "Q4_1", "attn_output": "BF16"},
         config={"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "head_dim": 8, "num_hidden_layers": 4, "intermediate_size": 16,
                 "intermediate_size_mlp": 16, "num_local_experts": 1,
                 "num_experts_per_tok": 1, "interleave_moe_layer_step": 1,
                 "vocab_size": 12, "max_position_embeddings": 256,
                 "attention_chunk_size": 8192, "no_rope_layers": [1, 1, 1, 0],
                 "rope_theta": 500000.0,
                 "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                                  "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                  "original_max_position_embeddings": 16},
                 "use_qk_norm": True, "attn_temperature_tuning": True, "floor_scale": 8192,
                 "attn_scale": 0.1, "rms_norm_eps": 1e-05, "attention_bias": False}),
    # Llama 4 Maverick: 128 routed experts, use_qk_norm false (llama.cpp tells it by the
    # expert count), interleave_moe_layer_step 2.
    dict(name="llama4_maverick", arch="llama4", seed=52, layers=[1], S=7,
         extra={"interleave_moe_layer_step": 2, "expert_feed_forward_length": 16,
                "expert_count": 128, "expert_used_count": 1,
                "leading_dense_block_count": 0, "vocab_size": 12},
         types={"attn_q": "Q4_0", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "Q4_1"},
         config={"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
                 "head_dim": 8, "num_hidden_layers": 4, "intermediate_size": 16,
                 "intermediate_size_mlp": 16, "num_local_experts": 128,
                 "num_experts_per_tok": 1, "interleave_moe_layer_step": 2,
                 "vocab_size": 12, "max_position_embeddings": 256,
                 "attention_chunk_size": 8192, "no_rope_layers": [1, 1, 1, 0],
                 "rope_theta": 500000.0, "rope_scaling": None, "use_qk_norm": False,
                 "attn_temperature_tuning": True, "floor_scale": 8192, "attn_scale": 0.1,
                 "rms_norm_eps": 1e-05, "attention_bias": False}),
    # MobileLLM-R1 (Llama4ForCausalLM, every layer full attention with rope): the converter
    # writes attention.sliding_window 0, which llama.cpp reads as rope everywhere, unchunked.
    dict(name="llama4_mobilellm", arch="llama4", seed=53, layers=[3], S=9,
         extra={"attention.sliding_window": 0, "interleave_moe_layer_step": 1,
                "expert_feed_forward_length": 16, "leading_dense_block_count": 0,
                "vocab_size": 12},
         types={"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "F16", "attn_output": "Q8_0"},
         config={"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text",
                 "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 1,
                 "head_dim": 8, "num_hidden_layers": 4, "intermediate_size": 16,
                 "intermediate_size_mlp": 16, "num_local_experts": 0,
                 "interleave_moe_layer_step": 1, "vocab_size": 12,
                 "max_position_embeddings": 256, "attention_chunk_size": None,
                 "layer_types": ["full_attention"] * 4, "no_rope_layers": [1, 1, 1, 1],
                 "rope_theta": 500000.0, "rope_scaling": None, "use_qk_norm": True,
                 "rms_norm_eps": 1e-05, "attention_bias": False}),
]
VARIANTS = [
    # chunked layers: attention_chunk, interleaved rope, L2 q/k norm, left padding
    dict(name="llama4_chunked_l2", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 500000.0, "style": "interleaved"},
         qk_norm={"kind": "l2", "eps": 1e-5}, chunk=3, S=8, seed=14),
    # no-rope layers: attn_temperature (floor_scale small enough to bite at S = 8)
    dict(name="llama4_nope_temperature", writer="decoder", C=32, H=4, Hkv=2, D=8,
         temperature=(3, 0.5), S=8, left=False, positions=False, seed=15),
]

"""Phi-MoE (Phi-3.5-MoE): modeling_phimoe.PhimoeAttention is LlamaAttention (q/k/v_proj and
o_proj with attention_bias), every layer sliding when sliding_window is set (MixtralModel's
mask); PhimoeRotaryEmbedding multiplies a longrope rope's cos and sin by rope_scaling's
short_mscale or long_mscale (past original_max_position_embeddings) in place of longrope's
attention factor. attn-run runs the two when equal, as Phi-3.5-MoE ships them."""
from .. import hf

MODEL_TYPES = ("phimoe",)
CLASS_DEFAULTS = dict(rope_theta=1e6, sliding_window=None, attention_bias=False,
                      num_key_value_heads=8, max_position_embeddings=131072, rms_norm_eps=1e-5)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "phimoe", layer, bias_key="attention_bias")
    scaling = hf.rope_scaling(cfg)
    if scaling is not None:
        assert scaling["short_mscale"] == scaling["long_mscale"]
        scaling = {k: v for k, v in scaling.items() if not k.endswith("_mscale")}
        scaling["attention_factor"] = cfg["rope_scaling"]["short_mscale"]
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=scaling),
                     window=cfg["sliding_window"])


PHIMOE = {"architectures": ["PhiMoEForCausalLM"], "model_type": "phimoe",
          "attention_bias": True, "attention_dropout": 0.0, "bos_token_id": 1,
          "eos_token_id": 32000, "hidden_act": "silu", "hidden_size": 32,
          "initializer_range": 0.02, "input_jitter_noise": 0.01, "intermediate_size": 8,
          "lm_head_bias": True, "max_position_embeddings": 64, "num_attention_heads": 4,
          "num_experts_per_tok": 2, "num_hidden_layers": 2, "num_key_value_heads": 2,
          "num_local_experts": 2, "original_max_position_embeddings": 8,
          "rms_norm_eps": 1e-05,
          "rope_scaling": {"long_factor": [1.0, 1.8, 3.5, 6.0], "long_mscale": 1.243163121016122,
                           "original_max_position_embeddings": 8,
                           "short_factor": [1.0, 1.05, 1.1, 1.2],
                           "short_mscale": 1.243163121016122, "type": "longrope"},
          "rope_theta": 10000.0, "router_jitter_noise": 0.01, "sliding_window": 6,
          "tie_word_embeddings": False, "torch_dtype": "bfloat16", "use_cache": True,
          "vocab_size": 12}

FOLDERS = [
    # Phi-3.5-MoE's spelling: biases, longrope with equal mscales, a window; positions past the
    # original 8 (the long factors) on layer 1
    dict(name="phimoe", seed=597, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
         S=9, pad="left", offset=2, config=PHIMOE),
]

HELDOUT = [
    # no rope_scaling (default rope, no mscale), no window, the class defaults left out
    dict(name="phimoe_plain", seed=697, container="safetensors", dtype="f32", layers=[1], B=2,
         S=9, pad="right",
         config={"model_type": "phimoe", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 1, "num_hidden_layers": 2}),
    dict(name="phimoe_short", seed=698, container="safetensors", dtype="f32", layers=[0], B=1,
         S=6, config=dict(PHIMOE, num_hidden_layers=1, sliding_window=None,
                          max_position_embeddings=128, original_max_position_embeddings=32,
                          rope_scaling=dict(PHIMOE["rope_scaling"],
                                            original_max_position_embeddings=32,
                                            short_mscale=1.1, long_mscale=1.1))),
]

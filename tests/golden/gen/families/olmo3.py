"""OLMo 3: modeling_olmo3.Olmo3Attention: OLMo 2's (q/k/v/o_proj with attention_bias, RMSNorms
over all heads' q (H*D) and k (Hkv*D), x * w, before the head view), 3 sliding layers of 4
(Olmo3Config.__post_init__'s layer_types); Olmo3Model gives the sliding layers a default rope
(rotary_embs["sliding_attention"]: rope_type "default", no rope_scaling) and the full layers the
configured one (transformers 4.57, as the models were released; llama.cpp's olmo2 with a window:
rope_freq_scale_train_swa 1). llama.cpp converts it as olmo2 with the window and its pattern."""
from .. import gguf, hf
from ..reference import QkNorm

MODEL_TYPES = ("olmo3",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, attention_bias=False, rms_norm_eps=1e-5,
                      sliding_window=4096, layer_types=None, max_position_embeddings=2048)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "olmo3", layer, bias_key="attention_bias")
    types = cfg["layer_types"] or ["sliding_attention" if (i + 1) % 4 else "full_attention"
                                   for i in range(cfg["num_hidden_layers"])]
    sliding = types[layer] == "sliding_attention"
    p = hf.v5_params(cfg, types[layer])
    if sliding and (p is None or "rope_theta" in (cfg.get("rope_parameters") or {})):
        # the sliding layers' default rope: the base, no scaling
        theta = cfg["rope_theta"] if p is None else p["rope_theta"]
        rope = hf.rope(cfg, a.D, theta)
    else:
        rope = hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling"), params=p)
    return a.replace(qk_norm=QkNorm("rms", cfg["rms_norm_eps"], scope="all"), rope=rope,
                     kind=types[layer], window=cfg["sliding_window"] if sliding else None)


def gguf_metadata(w, arch, cfg, n_layers):
    """Olmo2Model.set_gguf_parameters with an Olmo3 config: TextModel's keys, the window and
    its pattern (layer_types, else every 4th full)."""
    gguf.text_model_metadata(w, arch, cfg, n_layers)
    sc = cfg.get("rope_scaling") or {}
    if sc.get("rope_type") == "linear":
        w.add(arch + ".rope.scaling.type", "linear")
        w.add(arch + ".rope.scaling.factor", float(sc["factor"]))
    w.add(arch + ".attention.sliding_window", cfg["sliding_window"])
    types = cfg.get("layer_types") or [
        "sliding_attention" if (i + 1) % 4 else "full_attention" for i in range(n_layers)]
    w.add(arch + ".attention.sliding_window_pattern", [t == "sliding_attention" for t in types])


YARN = {"attention_factor": 1.2079441541679836, "beta_fast": 32, "beta_slow": 1,
        "factor": 8.0, "original_max_position_embeddings": 16, "rope_type": "yarn"}

OLMO3 = {"architectures": ["Olmo3ForCausalLM"], "model_type": "olmo3", "attention_bias": False,
         "attention_dropout": 0.0, "eos_token_id": 100257, "hidden_act": "silu",
         "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 8,
         "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention",
                         "full_attention"],
         "max_position_embeddings": 128, "num_attention_heads": 4, "num_hidden_layers": 4,
         "num_key_value_heads": 4, "pad_token_id": 100277, "rms_norm_eps": 1e-06,
         "rope_scaling": YARN, "rope_theta": 500000, "sliding_window": 3,
         "tie_word_embeddings": False, "torch_dtype": "bfloat16",
         "transformers_version": "4.57.0", "use_cache": True, "vocab_size": 12}

FOLDERS = [
    # Olmo-3-7B-Think's spelling: yarn on the full layer only, windows of 3 on the sliding ones
    dict(name="olmo3", seed=561, container="safetensors", dtype="bf16", layers=[2, 3], B=2, S=9,
         pad="left", config=OLMO3),
]

HELDOUT = [
    # layer_types left out (every 4th full), GQA, v5 rope_parameters per layer type
    dict(name="olmo3_v5", seed=661, container="safetensors", dtype="f32", layers=[0, 3], B=2,
         S=8, pad="right",
         config={"model_type": "olmo3", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 4, "sliding_window": 4,
                 "max_position_embeddings": 64,
                 "rope_parameters": {
                     "full_attention": {"rope_type": "linear", "factor": 2.0,
                                        "rope_theta": 500000.0},
                     "sliding_attention": {"rope_type": "default", "rope_theta": 500000.0}}}),
]

GGUF = [
    # Olmo2Model with an Olmo3 config: the window and its pattern; linear scaling on the full
    # layer, none on the sliding ones (llama.cpp's rope_freq_scale_train_swa 1)
    dict(name="olmo3", arch="olmo2", seed=563, layers=[0, 3], S=9, metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "F16", "attn_v": "Q8_0", "attn_output": "Q5_1"},
         config=dict(OLMO3, rope_scaling={"rope_type": "linear", "factor": 4.0})),
]

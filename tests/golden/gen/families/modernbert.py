"""ModernBERT: modeling_modernbert.ModernBertAttention (Wqkv viewed (3, H, D): [Q | K | V];
Wo; rope on the whole head; bidirectional). Local layers (layer_id % global_attn_every_n_layers
!= 0) see |i - j| <= local_attention // 2, as its _update_attention_mask builds the window (not
the contract's W), and take local_rope_theta (transformers v5: rope_parameters per layer type of
layer_types) where global layers take global_rope_theta."""
from .. import hf
from .. import weights as W
from ..reference import Layer, Rope
from .bert import gguf_metadata as bert_metadata

MODEL_TYPES = ("modernbert",)
CLASS_DEFAULTS = dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=22,
                      attention_bias=False, global_attn_every_n_layers=3, local_attention=128,
                      global_rope_theta=160000.0, local_rope_theta=10000.0,
                      max_position_embeddings=8192)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    D = C // H
    b = bool(cfg["attention_bias"])
    window = layer % cfg["global_attn_every_n_layers"] != 0  # ModernBertAttention.__init__
    types = cfg.get("layer_types")  # v5: the rope of config.layer_types[layer]
    local = types[layer] == "sliding_attention" if types else window
    p = cfg.get("rope_parameters")
    kind = "sliding_attention" if local else "full_attention"
    if p is not None:
        theta, scaling = p[kind]["rope_theta"], p[kind]
        if scaling.get("rope_type", "default") == "default":
            scaling = None
    else:
        theta = cfg["local_rope_theta"] if local else cfg["global_rope_theta"]
        scaling = None
    return Layer(C, H, H, D, layout="fused", names=("Wqkv", "Wo"), causal=False, qkv_bias=b,
                 o_bias=b, model_type="modernbert", prefix=f"model.layers.{layer}.attn.",
                 rope=Rope(float(theta), D, scaling, cfg["max_position_embeddings"]),
                 local_half=cfg["local_attention"] // 2 if window else None)


def outside(cfg, s0, g, vocab=12):
    C = s0.C
    return {"model.embeddings.tok_embeddings.weight": W.small(g, vocab, C),
            "model.final_norm.weight": W.ones(C), "head.dense.weight": W.small(g, C, C)}


def attention_weights(a, g):
    sd = {}
    W.put(sd, "Wqkv", W.lin(g, 3 * a.H * a.D, a.C, a.qkv_bias))
    W.put(sd, "Wo", W.lin(g, a.C, a.H * a.D, a.o_bias))
    return sd


def neighbours(s, layer, g, small=4):
    p = f"model.layers.{layer}."
    n = {p + "mlp_norm.weight": W.ones(s.C), p + "mlp.Wi.weight": W.small(g, 2 * small, s.C)}
    if layer:  # layer 0's attn_norm is nn.Identity
        n[p + "attn_norm.weight"] = W.ones(s.C)
    return n


def gguf_metadata(w, arch, cfg, n_layers):  # ModernBertModel.set_gguf_parameters
    bert_metadata(w, arch, cfg, n_layers)
    a = arch + "."
    w.add(a + "rope.freq_base", float(cfg["global_rope_theta"]))
    w.add(a + "rope.freq_base_swa", float(cfg["local_rope_theta"]))
    w.add(a + "attention.sliding_window", cfg["local_attention"])
    w.add(a + "attention.sliding_window_pattern", cfg["global_attn_every_n_layers"])
    w.add(a + "rope.scaling.type", "none")
    w.add(a + "vocab_size", cfg["vocab_size"])


FOLDERS = [
    # ModernBertForMaskedLM (answerdotai/ModernBERT-base's spelling): layers 0 and 3 global
    # (global_rope_theta), 1 and 2 local (|i - j| <= 4 // 2, local_rope_theta); padded
    dict(name="modernbert", seed=308, container="safetensors", dtype="f32",
         layers=[0, 1], B=2, S=9, pad="right",
         config={"architectures": ["ModernBertForMaskedLM"], "attention_bias": False,
                 "attention_dropout": 0.0, "bos_token_id": 50281,
                 "classifier_activation": "gelu", "classifier_bias": False,
                 "classifier_dropout": 0.0, "classifier_pooling": "mean",
                 "cls_token_id": 50281, "decoder_bias": True,
                 "deterministic_flash_attn": False, "embedding_dropout": 0.0,
                 "eos_token_id": 50282, "global_attn_every_n_layers": 3,
                 "global_rope_theta": 160000.0, "gradient_checkpointing": False,
                 "hidden_activation": "gelu", "hidden_size": 32,
                 "initializer_cutoff_factor": 2.0, "initializer_range": 0.02,
                 "intermediate_size": 8, "layer_norm_eps": 1e-05, "local_attention": 4,
                 "local_rope_theta": 10000.0, "max_position_embeddings": 8192,
                 "mlp_bias": False, "mlp_dropout": 0.0, "model_type": "modernbert",
                 "norm_bias": False, "norm_eps": 1e-05, "num_attention_heads": 4,
                 "num_hidden_layers": 4, "pad_token_id": 50283,
                 "position_embedding_type": "absolute", "sep_token_id": 50282,
                 "tie_word_embeddings": True, "torch_dtype": "float32",
                 "vocab_size": 12}),
    # ModernBERT as transformers v5 saves it: layer_types and rope_parameters per layer type
    # (an odd local_attention, 5 // 2 = 2 each side), bf16, attention_bias; unpadded, so it
    # also runs as --model DIR --layer N with default positions
    dict(name="modernbert_v5", seed=309, container="safetensors", dtype="bf16",
         layers=[1, 2], B=2, S=10,
         config={"architectures": ["ModernBertForSequenceClassification"],
                 "attention_bias": True, "global_attn_every_n_layers": 2,
                 "hidden_size": 24, "intermediate_size": 8,
                 "layer_types": ["full_attention", "sliding_attention", "full_attention",
                                 "sliding_attention", "full_attention"],
                 "local_attention": 5, "max_position_embeddings": 64,
                 "model_type": "modernbert", "num_attention_heads": 2,
                 "num_hidden_layers": 5,
                 "rope_parameters": {
                     "full_attention": {"rope_theta": 80000.0, "rope_type": "default"},
                     "sliding_attention": {"rope_theta": 5000.0, "rope_type": "default"}},
                 "vocab_size": 12}),
]

HELDOUT = [
    # ModernBertModel saved bare ("layers.N.attn."), attention_bias, global every 2nd layer,
    # local_attention 6 (3 each side), left padding, f16
    dict(name="modernbert_model", seed=412, container="safetensors", dtype="f16",
         layers=[0, 3], B=2, S=11, pad="left", rename=[("model.", "")],
         config={"model_type": "modernbert", "attention_bias": True,
                 "global_attn_every_n_layers": 2, "global_rope_theta": 20000.0,
                 "hidden_size": 32, "local_attention": 6, "local_rope_theta": 500.0,
                 "max_position_embeddings": 128, "num_attention_heads": 2,
                 "num_hidden_layers": 4}),
    # ModernBERT with the class defaults for its pattern and bases (every 3rd global,
    # local_attention 128, thetas 160000 / 10000), sharded
    dict(name="modernbert_defaults", seed=413, container="shards2", dtype="f32",
         layers=[2, 3], S=12,
         config={"model_type": "modernbert", "hidden_size": 48, "num_attention_heads": 4,
                 "num_hidden_layers": 4}),
]

GGUF = [
    # ModernBERT-base's spelling: layer 0 global (160000), 1 local (|i - j| <= 4 // 2).
    dict(name="modernbert", arch="modern-bert", seed=46, layers=[0, 1], S=9,
         metadata=gguf_metadata, types={"attn_qkv": "Q8_0", "attn_output": "Q5_1"},
         config={"architectures": ["ModernBertForMaskedLM"], "model_type": "modernbert",
                 "attention_bias": False, "global_attn_every_n_layers": 3,
                 "global_rope_theta": 160000.0, "hidden_activation": "gelu",
                 "hidden_size": 32, "intermediate_size": 8, "layer_norm_eps": 1e-05,
                 "local_attention": 4, "local_rope_theta": 10000.0,
                 "max_position_embeddings": 8192, "norm_eps": 1e-05,
                 "num_attention_heads": 4, "num_hidden_layers": 3, "vocab_size": 12}),
]

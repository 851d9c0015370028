"""Falcon: modeling_falcon.FalconAttention: query_key_value split by _split_heads: per KV group
[q..., k, v] with new_decoder_architecture (num_kv_heads, or RWConfig's n_head_kv) or
multi_query (one K/V head), else per head [q, k, v]; dense; rope, or BLOOM's ALiBi slopes with
alibi (added after the scale, as its SDPA path does); biases as bias."""
from .. import gguf, hf, plain
from .. import weights as W
from ..positions import bloom_slopes

MODEL_TYPES = ("falcon",)
CLASS_DEFAULTS = dict(new_decoder_architecture=False, multi_query=True, alibi=False, bias=False,
                      rope_theta=10000.0)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    a = hf.decoder(cfg, "falcon", layer, prefix="transformer.h.{}.self_attention.",
                   bias_key="bias").replace(names=("query_key_value", "dense"))
    kv = hf.get(cfg, "num_kv_heads", hf.get(cfg, "n_head_kv"))  # RWConfig's n_head_kv
    if cfg["new_decoder_architecture"]:
        a = a.replace(layout="kv_groups", Hkv=kv or a.H)
    elif cfg["multi_query"]:
        a = a.replace(layout="kv_groups", Hkv=1)
    else:
        a = a.replace(layout="per_head", Hkv=a.H)
    if cfg["alibi"]:  # build_alibi_tensor, added after the scale (SDPA)
        return a.replace(alibi=bloom_slopes(a.H))
    return a.replace(rope=hf.rope(cfg, a.D, cfg["rope_theta"], scaling=hf.get(cfg, "rope_scaling")))


def outside(cfg, s0, g):
    return {"transformer.word_embeddings.weight": W.outside_draws(g, s0.C)["falcon"]}


def attention_weights(a, g):
    return W.qkv_dense(a, g)


def neighbours(s, layer, g, small=4):
    p = f"transformer.h.{layer}."
    return {p + "input_layernorm.weight": W.ones(s.C),
            p + "mlp.dense_h_to_4h.weight": W.small(g, small, s.C)}


def gguf_metadata(w, arch, cfg, s, n_layers, spec):
    """FalconModel.set_gguf_parameters: its own few keys, head_count_kv always (1 when the
    config has none), no rope keys."""
    a = arch + "."
    gguf.general(w, arch)
    w.add(a + "context_length", 2048)
    w.add(a + "tensor_data_layout", "jploski")
    w.add(a + "block_count", n_layers)
    w.add(a + "embedding_length", s.C)
    w.add(a + "feed_forward_length", 4 * s.C)
    w.add(a + "attention.head_count", s.H)
    w.add(a + "attention.head_count_kv", s.Hkv)
    w.add(a + "attention.layer_norm_epsilon", float(cfg.get("layer_norm_epsilon", 1e-5)))
    w.add("general.file_type", 1)


FOLDERS = [
    # new_decoder_architecture with the older n_head / n_head_kv / n_layer spelling
    dict(name="falcon", seed=14, container="safetensors", dtype="f16", layers=[0, 1], S=7,
         config={"architectures": ["FalconForCausalLM"], "model_type": "falcon",
                 "alibi": False, "bias": False, "hidden_size": 32, "n_head": 4,
                 "n_head_kv": 2, "n_layer": 2, "new_decoder_architecture": True,
                 "parallel_attn": True, "vocab_size": 12}),
    dict(name="falcon_mq", seed=15, container="safetensors", dtype="bf16", layers=[1], S=7,
         config={"architectures": ["FalconForCausalLM"], "model_type": "falcon",
                 "alibi": False, "bias": False, "hidden_size": 32, "multi_query": True,
                 "new_decoder_architecture": False, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "parallel_attn": True, "rope_theta": 10000.0,
                 "vocab_size": 12}),
    # Falcon-RW: ALiBi, per head [q, k, v], biases
    dict(name="falcon_rw", seed=16, container="safetensors", dtype="bf16", layers=[0], B=2,
         S=7, pad="left",
         config={"architectures": ["FalconForCausalLM"], "model_type": "falcon",
                 "alibi": True, "bias": True, "hidden_size": 32, "multi_query": False,
                 "new_decoder_architecture": False, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "parallel_attn": False, "vocab_size": 12}),
]

HELDOUT = [
    dict(name="falcon_new", seed=114, container="safetensors", dtype="f32", layers=[1], B=2,
         S=8, pad="left",
         config={"model_type": "falcon", "alibi": False, "bias": True, "hidden_size": 48,
                 "new_decoder_architecture": True, "num_attention_heads": 6,
                 "num_kv_heads": 3, "num_hidden_layers": 2, "rope_theta": 5000.0}),
    dict(name="falcon_mq_alibi", seed=115, container="safetensors", dtype="f32", layers=[0],
         B=2, S=7, pad="right",
         config={"model_type": "falcon", "alibi": True, "bias": False, "hidden_size": 40,
                 "multi_query": True, "new_decoder_architecture": False,
                 "num_attention_heads": 5, "num_hidden_layers": 1}),
    dict(name="falcon_plain", seed=125, container="safetensors", dtype="f32", layers=[0],
         S=7, config={"model_type": "falcon", "hidden_size": 32, "multi_query": False,
                      "num_attention_heads": 4, "num_hidden_layers": 1}),
]

GGUF = [
    # Falcon-40B's shape (new_decoder_architecture, 2 KV groups) and Falcon-7B's
    # (multi-query: one K/V head), attn_qkv reordered to [Q | K | V].
    dict(name="falcon", arch="falcon", writer="by_layout", seed=26, layers=[0, 1],
         metadata=gguf_metadata, types={"attn_qkv": "Q8_0", "attn_output": "Q4_0"},
         config={"model_type": "falcon", "hidden_size": 32, "num_attention_heads": 4,
                 "num_kv_heads": 2, "num_key_value_heads": 2, "num_hidden_layers": 2,
                 "new_decoder_architecture": True, "alibi": False, "bias": False,
                 "rope_theta": 10000.0, "layer_norm_epsilon": 1e-5}),
    dict(name="falcon_mq", arch="falcon", writer="by_layout", seed=27, layers=[1],
         metadata=gguf_metadata, types={"attn_qkv": "BF16", "attn_output": "Q8_0"},
         config={"model_type": "falcon", "hidden_size": 32, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "multi_query": True,
                 "new_decoder_architecture": False, "alibi": False, "bias": False,
                 "rope_theta": 10000.0, "layer_norm_epsilon": 1e-5}),
    # The falcon spec again through llama.cpp's gguf-py with general.alignment 64 (committed;
    # rewritten by generate.py --gguf-py --fixtures, which needs gguf-py).
    dict(name="falcon_gguf_py", arch="falcon", writer="gguf-py", of="falcon", alignment=64,
         layers=[0, 1]),
]

PLAIN = [
    dict(name="falcon_multi_query_bf16", seed=1008, prefix="transformer.h.0.self_attention.",
         block="transformer.h.0.self_attention.", C=16, H=4, Hkv=1, D=4, dtype="bf16",
         causal=True, layout="falcon", bias=False),
    dict(name="falcon_grouped_f32", seed=1009, prefix="transformer.h.0.self_attention.",
         block="transformer.h.0.self_attention.", C=16, H=4, Hkv=2, D=4, dtype="f32",
         causal=True, layout="falcon", bias=True),
]


def write_plain(out, case):
    plain.qkv_dense_case(out, case)

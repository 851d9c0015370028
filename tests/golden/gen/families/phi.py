"""Phi (phi-1, 1.5, 2): modeling_phi.PhiAttention: q/k/v_proj and dense with biases, partial
rotary (partial_rotary_factor, 0.5 unless given); with qk_layernorm an nn.LayerNorm(head_dim)
with a bias on q and on k, before rope; num_key_value_heads null: as many as the query heads.
llama.cpp's Phi2Model writes its own few metadata keys."""
from .. import gguf, hf
from .. import weights as W
from ..reference import Layer, QkNorm, Rope

MODEL_TYPES = ("phi",)
CLASS_DEFAULTS = dict(rope_theta=10000.0, partial_rotary_factor=0.5, qk_layernorm=False)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H, Hkv, D = hf.sizes(cfg)
    norm = QkNorm("layer", cfg["layer_norm_eps"], names=("q_layernorm", "k_layernorm")) \
        if cfg["qk_layernorm"] else None
    return Layer(C, H, Hkv, D, names=("q_proj", "k_proj", "v_proj", "dense"), qkv_bias=True,
                 o_bias=True, qk_norm=norm,
                 rope=Rope(float(cfg["rope_theta"]), int(D * cfg["partial_rotary_factor"]),
                           hf.rope_scaling(cfg), cfg.get("max_position_embeddings")),
                 model_type="phi", prefix=f"model.layers.{layer}.self_attn.")


def outside(cfg, s0, g, vocab=12):
    return {"model.embed_tokens.weight": W.small(g, vocab, s0.C),
            "model.final_layernorm.weight": W.ones(s0.C)}


def attention_weights(a, g):
    """q/k/v_proj and dense, then PhiAttention.q_layernorm / k_layernorm (D) each."""
    sd = W.decoder_attention(a.replace(qk_norm=None), g, out="dense")
    if a.qk_norm:
        for n in ("q_layernorm", "k_layernorm"):
            sd[n + ".weight"] = 1.0 + 0.3 * W.randn(g, a.D)
            sd[n + ".bias"] = 0.2 * W.randn(g, a.D)
    return sd


def neighbours(s, layer, g, small=4):
    p = f"model.layers.{layer}."
    return {p + "input_layernorm.weight": W.ones(s.C), p + "mlp.fc1.weight": W.small(g, small, s.C)}


def phi2_metadata(w, arch, cfg, n_layers):  # Phi2Model.set_gguf_parameters
    a = arch + "."
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    gguf.general(w, arch)
    w.add(a + "context_length", cfg["max_position_embeddings"])
    w.add(a + "embedding_length", C)
    w.add(a + "feed_forward_length", 4 * C)
    w.add(a + "block_count", n_layers)
    w.add(a + "attention.head_count", H)
    w.add(a + "attention.head_count_kv", H)
    w.add(a + "attention.layer_norm_epsilon", float(cfg["layer_norm_eps"]))
    w.add(a + "rope.dimension_count", int(cfg["partial_rotary_factor"] * C) // H)


FOLDERS = [
    # phi-2: num_key_value_heads null, partial rotary 0.4 of the head
    dict(name="phi", seed=305, container="safetensors", dtype="f16", layers=[0, 1], B=2, S=8,
         pad="left", offset=20,
         config={"architectures": ["PhiForCausalLM"], "model_type": "phi",
                 "attention_dropout": 0.0, "embd_pdrop": 0.0, "hidden_act": "gelu_new",
                 "hidden_size": 40, "intermediate_size": 8, "layer_norm_eps": 1e-05,
                 "max_position_embeddings": 64, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "num_key_value_heads": None,
                 "partial_rotary_factor": 0.4, "qk_layernorm": False, "resid_pdrop": 0.1,
                 "rope_scaling": None, "rope_theta": 10000.0, "tie_word_embeddings": False,
                 "torch_dtype": "float16", "vocab_size": 12}),
    # phi with qk_layernorm (as phi-1.5 fine-tunes set it): a LayerNorm with a bias on q and
    # on k per head, before the partial rotary
    dict(name="phi_qk_layernorm", seed=311, container="safetensors", dtype="f32", layers=[0, 1],
         B=2, S=7, pad="right",
         config={"architectures": ["PhiForCausalLM"], "model_type": "phi",
                 "hidden_act": "gelu_new", "hidden_size": 32, "intermediate_size": 8,
                 "layer_norm_eps": 1e-05, "max_position_embeddings": 64,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
                 "partial_rotary_factor": 0.5, "qk_layernorm": True, "rope_theta": 10000.0,
                 "torch_dtype": "float32", "vocab_size": 12}),
]

HELDOUT = [
    # partial_rotary_factor left out (0.5), GQA
    dict(name="phi", seed=405, container="safetensors", dtype="f32", layers=[0], S=7,
         config={"model_type": "phi", "hidden_size": 32, "num_attention_heads": 4,
                 "num_key_value_heads": 2, "num_hidden_layers": 1,
                 "max_position_embeddings": 64}),
    # dynamic NTK on the partial rotary dims past max_position_embeddings
    dict(name="phi_dynamic", seed=415, container="safetensors", dtype="f32", layers=[1], S=9,
         offset=12,
         config={"model_type": "phi", "hidden_size": 48, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "partial_rotary_factor": 0.5,
                 "rope_scaling": {"type": "dynamic", "factor": 2.0},
                 "max_position_embeddings": 16}),
]

GGUF = [
    # phi-2 (PhiForCausalLM): q/k/v_proj and dense with biases, partial rotary 0.4.
    dict(name="phi2", arch="phi2", seed=41, layers=[0, 1], metadata=phi2_metadata,
         types={"attn_q": "Q8_0", "attn_k": "Q4_0", "attn_v": "BF16", "attn_output": "Q5_1"},
         config={"architectures": ["PhiForCausalLM"], "model_type": "phi",
                 "hidden_size": 64, "intermediate_size": 8, "layer_norm_eps": 1e-05,
                 "max_position_embeddings": 64, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "num_key_value_heads": None,
                 "partial_rotary_factor": 0.4, "qk_layernorm": False, "rope_theta": 10000.0,
                 "vocab_size": 12}),
]

VARIANTS = [
    # qk_layernorm: nn.LayerNorm with a bias, shared by the heads; partial rotary; biases
    dict(name="phi_layernorm_bias", writer="decoder", C=32, H=4, Hkv=4, D=8,
         rope_cfg={"theta": 10000.0, "rotary_dim": 4},
         qk_norm={"kind": "layer", "eps": 1e-5, "bias": True}, bias=True, o_bias=True,
         left=False, seed=13),
]

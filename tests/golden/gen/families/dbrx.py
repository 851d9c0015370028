"""DBRX (modeling_dbrx.DbrxAttention): Wqkv (no bias) yields [q (C) | k (Hkv*D) | v (Hkv*D)],
clamped as a whole to [-clip_qkv, clip_qkv] (attn_config.clip_qkv; null: none), then
rotate_half rope of attn_config.rope_theta; out_proj without bias; kv_n_heads from attn_config
(DbrxAttentionConfig's default 1). The layer sits at transformer.blocks.N.norm_attn_norm.attn.,
its block norm norm_attn_norm.norm_1 an nn.LayerNorm without bias."""
from collections import OrderedDict

from .. import gguf
from .. import weights as W
from ..reference import Layer, Rope

MODEL_TYPES = ("dbrx",)
DEFAULTS = dict(d_model=2048, n_heads=16, n_layers=24, max_seq_len=2048)
ATTN_DEFAULTS = dict(clip_qkv=None, kv_n_heads=1, rope_theta=10000.0)


def settings(cfg, layer):
    c = dict(DEFAULTS, **cfg)
    a = dict(ATTN_DEFAULTS, **(c.get("attn_config") or {}))
    C, H = c["d_model"], c["n_heads"]
    D = C // H
    return Layer(C, H, a["kv_n_heads"], D, layout="fused",
                 names=("Wqkv", "", "", "out_proj"), model_type="dbrx",
                 rope=Rope(float(a["rope_theta"]), D, None, c["max_seq_len"]),
                 clip_qkv=a["clip_qkv"],
                 prefix=f"transformer.blocks.{layer}.norm_attn_norm.attn.")


def num_layers(cfg):
    return cfg["n_layers"]


def attention_weights(a, g):
    sd = OrderedDict()
    W.put(sd, "Wqkv", W.lin(g, (a.H + 2 * a.Hkv) * a.D, a.C, False))
    W.put(sd, "out_proj", W.lin(g, a.C, a.H * a.D, False))
    return sd


def outside(cfg, s0, g):  # DbrxModel: wte, norm_f (a LayerNorm without bias)
    return {"transformer.wte.weight": W.outside_draws(g, s0.C)["llama"],
            "transformer.norm_f.weight": W.ones(s0.C)}


def neighbours(s, layer, g):  # DbrxBlock: norm_1, norm_2, the router
    p = f"transformer.blocks.{layer}."
    return OrderedDict([(p + "norm_attn_norm.norm_1.weight", W.ones(s.C)),
                        (p + "norm_attn_norm.norm_2.weight", W.ones(s.C)),
                        (p + "ffn.router.layer.weight", W.small(g, 4, s.C))])


def gguf_metadata(w, arch, cfg, s, n_layers, spec):
    """DbrxModel.set_gguf_parameters: d_model, n_heads, attn_config's KV heads, rope base and
    clip_qkv (always written: attention.clamp_kqv), the experts, layer_norm_eps 1e-5."""
    a, ac, fc = arch + ".", cfg["attn_config"], cfg["ffn_config"]
    gguf.general(w, arch)
    w.add(a + "block_count", n_layers)
    w.add(a + "context_length", cfg["max_seq_len"])
    w.add(a + "embedding_length", s.C)
    w.add(a + "feed_forward_length", fc["ffn_hidden_size"])
    w.add(a + "attention.head_count", s.H)
    w.add(a + "attention.head_count_kv", ac["kv_n_heads"])
    w.add(a + "rope.freq_base", float(ac["rope_theta"]))
    w.add(a + "attention.clamp_kqv", float(ac["clip_qkv"]))
    w.add(a + "expert_count", fc["moe_num_experts"])
    w.add(a + "expert_used_count", fc["moe_top_k"])
    w.add(a + "attention.layer_norm_epsilon", 1e-5)
    w.add("general.file_type", 1)


DBRX_INSTRUCT = {
    "architectures": ["DbrxForCausalLM"],
    "attn_config": {"clip_qkv": 0.5, "kv_n_heads": 2, "model_type": "", "rope_theta": 500000},
    "d_model": 32, "emb_pdrop": 0.0,
    "ffn_config": {"ffn_hidden_size": 8, "model_type": "", "moe_jitter_eps": 0.01,
                   "moe_loss_weight": 0.05, "moe_num_experts": 4, "moe_top_k": 2},
    "initializer_range": 0.02, "max_seq_len": 32768, "model_type": "dbrx", "n_heads": 4,
    "n_layers": 2, "output_router_logits": False, "resid_pdrop": 0.0,
    "router_aux_loss_coef": 0.05, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "transformers_version": "4.38.2", "use_cache": True, "vocab_size": 12}

FOLDERS = [
    # dbrx-instruct's spelling (its clip_qkv 8 here 0.5, below the projections' values),
    # attn_config's KV heads and rope base; dropping the clamp moves the context
    dict(name="dbrx", seed=751, container="shards2", dtype="bf16", layers=[0, 1], B=2, S=8,
         pad="left", config=DBRX_INSTRUCT,
         input_norm=dict(kind="layer", name="norm_1.", eps=1e-5, layers=[1]),
         guards=({"clip_qkv": None},)),
]

HELDOUT = [
    # attn_config left out: DbrxAttentionConfig's one KV head, base 10000, no clamp
    dict(name="dbrx_defaults", seed=851, container="safetensors", dtype="f32", layers=[1],
         B=2, S=7, pad="right",
         config={"model_type": "dbrx", "d_model": 32, "n_heads": 4, "n_layers": 2}),
]

GGUF = [
    # DbrxModel: Wqkv unchanged as attn_qkv (NEOX rope, rows unpermuted), attn_config's KV
    # heads as head_count_kv, its clamp as attention.clamp_kqv, its base as rope.freq_base
    dict(name="dbrx", arch="dbrx", writer="by_layout", seed=753, layers=[0, 1], S=9,
         metadata=gguf_metadata, types={"attn_qkv": "Q8_0", "attn_output": "Q4_0"},
         config=DBRX_INSTRUCT),
]

"""DeBERTa-v2/v3 (modeling_deberta_v2.DisentangledSelfAttention): content-to-position and
position-to-content terms from the model's relative embeddings (encoder.rel_embeddings through
encoder.LayerNorm when norm_rel_ebd says "layer_norm"), log buckets (position_buckets,
max_relative_positions), share_att_key or pos_key_proj / pos_query_proj, scale
sqrt(D * (1 + terms)), and its mask: a padded query row sees no key. Plain-config variants of the
contract's disentangled and mask_padded_queries keys."""
from .. import hf
from .. import weights as W
from ..reference import Disentangled, Layer

MODEL_TYPES = ("deberta-v2",)
# DebertaV2Config's defaults for the keys the attention reads
CLASS_DEFAULTS = dict(hidden_size=1536, num_attention_heads=24, num_hidden_layers=24,
                      max_position_embeddings=512, relative_attention=False,
                      max_relative_positions=-1, position_buckets=-1, pos_att_type=None,
                      share_att_key=False, norm_rel_ebd="none", layer_norm_eps=1e-7)


def settings(cfg, layer):
    """DebertaV2Config read as its class reads it (pos_att_type: "p2c|c2p" lowered and split, or
    a list; max_relative_positions < 1: max_position_embeddings), DebertaV2Encoder's
    norm_rel_ebd."""
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    terms = cfg["pos_att_type"] or []
    if isinstance(terms, str):
        terms = [x.strip() for x in terms.lower().split("|")]
    extra = {}
    if cfg["relative_attention"] and terms:
        mr = cfg["max_relative_positions"]
        mr = cfg["max_position_embeddings"] if mr < 1 else mr
        norm = "layer_norm" in [x.strip() for x in cfg["norm_rel_ebd"].lower().split("|")]
        extra["disentangled"] = Disentangled(tuple(terms), cfg["position_buckets"], mr,
                                             cfg["share_att_key"],
                                             norm="deberta.encoder.LayerNorm" if norm else None,
                                             eps=cfg["layer_norm_eps"])
    return Layer(C, H, H, C // H, causal=False, qkv_bias=True, o_bias=True,
                 model_type="deberta-v2", prefix=f"deberta.encoder.layer.{layer}.attention.",
                 extra=extra)


def outside(cfg, s0, g):
    """The embeddings, then DebertaV2Encoder's rel_embeddings (2 span rows) and its LayerNorm
    (weight and bias away from 1 and 0, so a lost norm shows)."""
    C = s0.C
    sd = {"deberta.embeddings.word_embeddings.weight": W.outside_draws(g, C)["bert"]}
    d = s0.extra.get("disentangled")
    if d is not None:
        sd[d.table] = W.randn(g, 2 * d.span(), C)
        if d.norm is not None:
            sd[d.norm + ".weight"] = 1.0 + 0.3 * W.randn(g, C)
            sd[d.norm + ".bias"] = 0.3 * W.randn(g, C)
    return sd


def attention_weights(a, g):
    """DisentangledSelfAttention's modules in their order, then DebertaV2SelfOutput's."""
    C, H, D = a.C, a.H, a.D
    d = a.extra.get("disentangled")
    sd = {}
    for n in ("query_proj", "key_proj", "value_proj"):
        W.put(sd, "self." + n, W.lin(g, H * D, C))
    if d is not None and not d.share_att_key:
        if "c2p" in d.terms:
            W.put(sd, "self.pos_key_proj", W.lin(g, H * D, C))
        if "p2c" in d.terms:
            W.put(sd, "self.pos_query_proj", W.lin(g, H * D, C))
    W.put(sd, "output.dense", W.lin(g, C, H * D))
    w, b = W.layer_norm_params(a.prefix + "output.LayerNorm.", C)
    sd["output.LayerNorm.weight"], sd["output.LayerNorm.bias"] = w, b
    return sd


def neighbours(s, layer, g, small=4):
    p = f"deberta.encoder.layer.{layer}."
    return {p + "intermediate.dense.weight": W.small(g, small, s.C),
            p + "output.dense.weight": W.small(g, s.C, small)}


def shared_tensors(s, stored, rn):
    """The table and its LayerNorm under their full keys, as reference.deberta_attention reads
    them (get_rel_embedding is the encoder's, outside the layer)."""
    d = s.extra.get("disentangled")
    if d is None:
        return {}
    keys = [d.table] + ([d.norm + ".weight", d.norm + ".bias"] if d.norm else [])
    return {k: stored[rn(k)] for k in keys}


NORM = dict(name="attention.output.LayerNorm.", eps=1e-7)
BASE = {"architectures": ["DebertaV2ForMaskedLM"], "model_type": "deberta-v2",
        "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
        "initializer_range": 0.02, "intermediate_size": 4, "layer_norm_eps": 1e-7,
        "max_position_embeddings": 32, "position_biased_input": False, "type_vocab_size": 0,
        "vocab_size": 12}

FOLDERS = [
    # DeBERTa-v3's config.json (microsoft/deberta-v3-base's keys): relative_attention, 8 buckets
    # over max_position_embeddings 32 (max_relative_positions -1), "p2c|c2p", share_att_key, the
    # table through encoder.LayerNorm; S = 12 padded on the right (the padded query rows masked)
    dict(name="deberta_v3", seed=61, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
         S=12, pad="right", residual_norm=dict(NORM, layers=[1]),
         config=dict(BASE, hidden_size=32, num_attention_heads=4, num_hidden_layers=2,
                     relative_attention=True, position_buckets=8, max_relative_positions=-1,
                     norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type="p2c|c2p")),
    # DeBERTa-v2's kind without buckets: pos_key_proj / pos_query_proj (share_att_key false),
    # pos_att_type as a list, relative positions clamped past max_relative_positions 4, no norm
    dict(name="deberta_v2_own", seed=62, container="safetensors", dtype="f32", layers=[1], B=2,
         S=9, pad="left",
         config=dict(BASE, hidden_size=24, num_attention_heads=3, num_hidden_layers=2,
                     relative_attention=True, max_relative_positions=4,
                     pos_att_type=["c2p", "p2c"], share_att_key=False)),
]

VARIANTS = [
    # DeBERTa-v3's kind: shared keys, both terms, the table through its LayerNorm; 8 buckets up
    # to 16 positions (log buckets from |i - j| > 4 at S = 9), left padding
    dict(name="deberta_v3_shared", writer="deberta", C=32, H=4, terms=("p2c", "c2p"), buckets=8,
         max_relative=16, share=True, seed=51, guards=("c2p", "p2c", "norm")),
    # DeBERTa-v2-xlarge's kind of settings without buckets: pos_key_proj / pos_query_proj, no
    # LayerNorm, relative positions clamped past 3, a table longer than 2 span, right padding
    dict(name="deberta_v2_own_projections", writer="deberta", C=24, H=3, terms=("c2p", "p2c"),
         buckets=-1, max_relative=3, share=False, norm=False, rows=10, left=False, seed=52,
         guards=("c2p", "p2c")),
    # c2p alone: scale sqrt(2 D)
    dict(name="deberta_c2p_only", writer="deberta", C=16, H=2, terms=("c2p",), buckets=4,
         max_relative=12, share=False, norm=True, seed=53, guards=("c2p",)),
]

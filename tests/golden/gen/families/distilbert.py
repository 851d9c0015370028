"""DistilBERT: modeling_distilbert.MultiHeadSelfAttention (q_lin, k_lin, v_lin, out_lin, with
biases; bidirectional), DistilBertConfig's dim / n_heads / n_layers. TransformerBlock's
sa_layer_norm(sa_output + x) is --with-residual-norm's LayerNorm."""
from .. import hf
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("distilbert",)
CLASS_DEFAULTS = dict(dim=768, n_heads=12, n_layers=6)  # attribute_map: hidden_size, ...


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H = cfg["dim"], cfg["n_heads"]
    return Layer(C, H, H, C // H, names=("q_lin", "k_lin", "v_lin", "out_lin"), causal=False,
                 qkv_bias=True, o_bias=True, model_type="distilbert",
                 prefix=f"distilbert.transformer.layer.{layer}.attention.")


def outside(cfg, s0, g, vocab=12):
    return {"distilbert.embeddings.word_embeddings.weight": W.small(g, vocab, s0.C),
            "vocab_projector.weight": W.small(g, vocab, s0.C)}


def attention_weights(a, g):
    sd = {}
    for n in ("q_lin", "k_lin", "v_lin"):
        W.put(sd, n, W.lin(g, a.H * a.D, a.C))
    W.put(sd, "out_lin", W.lin(g, a.C, a.H * a.D))
    return sd


def neighbours(s, layer, g, small=4):
    """TransformerBlock.sa_layer_norm (its own generator: --with-residual-norm's LayerNorm),
    the FFN, the output norm."""
    p = f"distilbert.transformer.layer.{layer}."
    w, b = W.layer_norm_params(p + "sa_layer_norm.", s.C)
    return {p + "sa_layer_norm.weight": w, p + "sa_layer_norm.bias": b,
            p + "ffn.lin1.weight": W.small(g, small, s.C),
            p + "output_layer_norm.weight": W.ones(s.C)}


FOLDERS = [
    # DistilBertForMaskedLM (distilbert-base-uncased's spelling: dim, n_heads, n_layers)
    dict(name="distilbert", seed=303, container="safetensors", dtype="f32", layers=[0, 2],
         B=2, S=8, pad="right",  # TransformerBlock: sa_layer_norm(sa_output + x), eps 1e-12
         residual_norm=dict(layers=[2], name="sa_layer_norm.", eps=1e-12),
         config={"activation": "gelu", "architectures": ["DistilBertForMaskedLM"],
                 "attention_dropout": 0.1, "dim": 32, "dropout": 0.1, "hidden_dim": 8,
                 "initializer_range": 0.02, "max_position_embeddings": 64,
                 "model_type": "distilbert", "n_heads": 4, "n_layers": 3, "pad_token_id": 0,
                 "qa_dropout": 0.1, "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": False,
                 "tie_weights_": True, "vocab_size": 12}),
]

HELDOUT = [
    # DistilBertModel ("transformer.layer.N."), left padding, bf16; six layers
    dict(name="distilbert_model", seed=405, container="safetensors", dtype="bf16",
         layers=[1, 5], B=2, S=9, pad="left", rename=[("distilbert.", "")],
         residual_norm=dict(layers=[5], name="sa_layer_norm.", eps=1e-12),
         config={"model_type": "distilbert", "dim": 24, "n_heads": 3, "n_layers": 6,
                 "hidden_dim": 8}),
    dict(name="distilbert_bin", seed=406, container="bin", dtype="f16", layers=[0], S=6,
         config={"model_type": "distilbert", "dim": 32, "n_heads": 8, "n_layers": 1}),
]

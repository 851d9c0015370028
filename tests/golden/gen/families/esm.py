"""ESM-2: modeling_esm.EsmSelfAttention: query / key / value with bias, the BERT names under
esm.encoder.layer.N.attention.self; q scaled by 1 / sqrt(D) first, then (position_embedding_type
"rotary") RotaryEmbedding's rotate_half at base 10000 over the whole head, on the sequence's own
0..S-1 (_update_cos_sin_tables: arange(seq_len), not position ids), then q @ k^T; bidirectional
with the padding mask (causal only as a decoder); EsmSelfOutput.dense. EsmAttention's LayerNorm
(before) and EsmSelfOutput's residual add lie outside the layer's context."""
import torch

from .. import hf
from .. import reference as R
from .. import weights as W
from ..reference import Layer, Rope

MODEL_TYPES = ("esm",)
CLASS_DEFAULTS = dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=12,
                      position_embedding_type="absolute", is_decoder=False)
NAMES = ("self.query", "self.key", "self.value", "output.dense")
# RotaryEmbedding turns the sequence's own positions, whatever the position ids
SEQUENCE_POSITIONS = True


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    D = C // H
    rope = Rope(10000.0, D) if cfg["position_embedding_type"] == "rotary" else None
    return Layer(C, H, H, D, names=NAMES, causal=bool(cfg["is_decoder"]), qkv_bias=True,
                 o_bias=True, rope=rope, model_type="esm",
                 prefix=f"esm.encoder.layer.{layer}.attention.")


def forward(a, sd, x, keep, pos):
    """EsmSelfAttention.forward in its own order: q * D^-0.5, the rotary, q @ k^T."""
    B, S, _ = x.shape
    q, k, v, _ = R.project(a, sd, x, x)
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    q = q * a.D ** -0.5
    if a.rope is not None:
        seq = torch.arange(S).expand(B, S)
        q, k = R.apply_rope(q, seq, a.rope), R.apply_rope(k, seq, a.rope)
    scores = q @ k.transpose(2, 3)
    probs = R.softmax_rows(scores, R.allowed_keys(B, S, a.causal, None, keep))
    y = (probs @ v).transpose(1, 2).reshape(B, S, a.H * a.D)
    return R.output(a, sd, y), probs


def outside(cfg, s0, g, vocab=12):
    return {"esm.embeddings.word_embeddings.weight": W.small(g, vocab, s0.C),
            "esm.encoder.emb_layer_norm_after.weight": W.ones(s0.C),
            "lm_head.dense.weight": W.small(g, s0.C, s0.C)}


def attention_weights(a, g):
    sd = {}
    for n in NAMES[:3]:
        W.put(sd, n, W.lin(g, a.C, a.C))
    if a.rope is not None:  # RotaryEmbedding's persistent buffer
        sd["self.rotary_embeddings.inv_freq"] = 1.0 / (
            10000 ** (torch.arange(0, a.D, 2, dtype=torch.int64).double() / a.D))
    W.put(sd, "output.dense", W.lin(g, a.C, a.C))
    sd["LayerNorm.weight"], sd["LayerNorm.bias"] = W.ones(a.C), W.ones(a.C) * 0
    return sd


def neighbours(s, layer, g, small=4):
    p = f"esm.encoder.layer.{layer}."
    return {p + "intermediate.dense.weight": W.small(g, small, s.C),
            p + "output.dense.weight": W.small(g, s.C, small),
            p + "LayerNorm.weight": W.ones(s.C)}


ESM2 = {"architectures": ["EsmForMaskedLM"], "attention_probs_dropout_prob": 0.0,
        "classifier_dropout": None, "emb_layer_norm_before": False, "esmfold_config": None,
        "hidden_act": "gelu", "hidden_dropout_prob": 0.0, "hidden_size": 32,
        "initializer_range": 0.02, "intermediate_size": 8, "is_folding_model": False,
        "layer_norm_eps": 1e-05, "mask_token_id": 11, "max_position_embeddings": 1026,
        "model_type": "esm", "num_attention_heads": 4, "num_hidden_layers": 2,
        "pad_token_id": 1, "position_embedding_type": "rotary", "token_dropout": True,
        "torch_dtype": "float32", "transformers_version": "4.25.0.dev0", "use_cache": True,
        "vocab_list": None, "vocab_size": 12}

FOLDERS = [
    # facebook/esm2_t6_8M_UR50D's spelling: rotary, padded on the right as EsmTokenizer pads
    dict(name="esm2", seed=581, container="safetensors", dtype="f32", layers=[0, 1], B=2, S=8,
         pad="right", config=ESM2),
]

HELDOUT = [
    # ESM-1b's "absolute" positions: none inside the attention; EsmModel saved bare
    dict(name="esm1b", seed=681, container="bin", dtype="f32", layers=[1], B=2, S=7,
         pad="right", rename=[("esm.", "")],
         config={"model_type": "esm", "hidden_size": 32, "num_attention_heads": 2,
                 "num_hidden_layers": 2, "position_embedding_type": "absolute"}),
    # ESM-2 in f16, left padding (the rotary still counts 0..S-1)
    dict(name="esm2_left", seed=682, container="safetensors", dtype="f16", layers=[0], B=2,
         S=9, pad="left",
         config={"model_type": "esm", "hidden_size": 48, "num_attention_heads": 4,
                 "num_hidden_layers": 1, "position_embedding_type": "rotary"}),
]

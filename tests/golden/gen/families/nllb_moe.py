"""NLLB-MoE: modeling_nllb_moe.NllbMoeAttention is BartAttention (gen/seq2seq.py); the decoder's
cross-attention is `cross_attention` (with cross_attention_layer_norm); pre-norm layers, each stack
ending in a layer_norm; sinusoidal positions before the first layer."""
from .. import seq2seq

MODEL_TYPES = ("nllb-moe",)
DEFAULTS = {"d_model": 1024, "encoder_layers": 12, "decoder_layers": 12,
            "encoder_attention_heads": 16, "decoder_attention_heads": 16}
CROSS = "cross_attention"
_f = seq2seq.Family(DEFAULTS, cross=CROSS)
read, num_layers, settings = _f.read, _f.num_layers, _f.settings
folder_cases, folder_case_checks, folder_case_dirs = _f.cases()


def model(cfg, layers, g):
    t = read(cfg)
    return seq2seq.model(t, g, cross=CROSS, outside=[("shared.weight", (t["vocab"], t["C"]))])


FOLDERS = [
    # facebook/nllb-moe-54b's spelling (NllbMoeForConditionalGeneration), shrunk
    dict(name="nllb_moe", seed=641, container="shards2", dtype="f32",
         config={"architectures": ["NllbMoeForConditionalGeneration"], "model_type": "nllb-moe",
                 "d_model": 16, "encoder_layers": 2, "decoder_layers": 2,
                 "encoder_attention_heads": 4, "decoder_attention_heads": 2,
                 "encoder_ffn_dim": 8, "decoder_ffn_dim": 8, "encoder_sparse_step": 4,
                 "decoder_sparse_step": 4, "num_experts": 2, "expert_capacity": 8,
                 "router_dtype": "float32", "max_position_embeddings": 16,
                 "scale_embedding": True, "is_encoder_decoder": True, "vocab_size": 12},
         cases=[dict(dir="layer1", kind="encoder", layer=1, B=1, S=8),
                dict(dir="decoder_self0", kind="decoder", layer=0, B=1, S=6),
                dict(dir="decoder_cross1", kind="cross", layer=1, B=1, S=5, T=8),
                dict(dir="decoder_cross0", kind="cross", layer=0, B=1, S=5, T=8,
                     form="prefix")]),
]

"""BART: modeling_bart.BartAttention (gen/seq2seq.py): every projection with a bias; learned
positions at offset 2 added before the first layer (BartLearnedPositionalEmbedding), so the layers
have none. BartEncoderLayer and BartDecoderLayer are post-norm: self_attn_layer_norm(residual +
self_attn(h)), nn.LayerNorm's eps 1e-5 (expected/residual_norm.npy, --with-residual-norm)."""
from .. import seq2seq

MODEL_TYPES = ("bart",)
DEFAULTS = {"d_model": 1024, "encoder_layers": 12, "decoder_layers": 12,
            "encoder_attention_heads": 16, "decoder_attention_heads": 16}
_f = seq2seq.Family(DEFAULTS, post_norm=True)
read, num_layers, settings = _f.read, _f.num_layers, _f.settings
folder_cases, folder_case_checks, folder_case_dirs = _f.cases()


def model(cfg, layers, g):
    t = read(cfg)
    C = t["C"]
    return seq2seq.model(t, g, outside=[("shared.weight", (t["vocab"], C)),
                                        ("encoder.embed_positions.weight", (t["positions"] + 2, C)),
                                        ("decoder.embed_positions.weight", (t["positions"] + 2, C))],
                         final_norm=False, head=("lm_head.weight", "final_logits_bias"))


BART_COMMON = {"activation_dropout": 0.1, "activation_function": "gelu", "add_bias_logits": False,
               "add_final_layer_norm": False, "attention_dropout": 0.1, "bos_token_id": 0,
               "classif_dropout": 0.1, "decoder_layerdrop": 0.0, "decoder_start_token_id": 2,
               "dropout": 0.1, "encoder_layerdrop": 0.0, "eos_token_id": 2, "init_std": 0.02,
               "is_encoder_decoder": True, "normalize_before": False, "normalize_embedding": True,
               "pad_token_id": 1, "scale_embedding": False, "use_cache": True,
               "transformers_version": "4.46.0"}
FOLDERS = [
    # facebook/bart-large-cnn's spelling (BartForConditionalGeneration), shrunk; the decoder's
    # heads differ from the encoder's
    dict(name="bart", seed=601, container="safetensors", dtype="f32",
         config=dict(BART_COMMON, architectures=["BartForConditionalGeneration"],
                     model_type="bart", d_model=24, encoder_layers=2, decoder_layers=2,
                     encoder_attention_heads=4, decoder_attention_heads=3, encoder_ffn_dim=8,
                     decoder_ffn_dim=8, max_position_embeddings=16, num_hidden_layers=2,
                     vocab_size=12),
         cases=[dict(dir="layer0", kind="encoder", layer=0, B=2, S=9, pad="right"),
                dict(dir="layer1", kind="encoder", layer=1, B=1, S=9),
                dict(dir="decoder_self1", kind="decoder", layer=1, B=1, S=8),
                dict(dir="decoder_self0", kind="decoder", layer=0, B=1, S=6, form="prefix"),
                dict(dir="decoder_cross0", kind="cross", layer=0, B=2, S=5, T=9, pad="right"),
                dict(dir="decoder_cross1", kind="cross", layer=1, B=1, S=4, T=7)]),
    # facebook/bart-base's spelling: a bare BartModel (no "model." prefix), bf16
    dict(name="bart_base", seed=602, container="bin", dtype="bf16", rename=[("model.", "")],
         config=dict(BART_COMMON, architectures=["BartModel"], model_type="bart", d_model=16,
                     encoder_layers=1, decoder_layers=2, encoder_attention_heads=2,
                     decoder_attention_heads=4, encoder_ffn_dim=8, decoder_ffn_dim=8,
                     max_position_embeddings=16, vocab_size=12),
         cases=[dict(dir="layer0", kind="encoder", layer=0, B=1, S=7),
                dict(dir="decoder_cross1", kind="cross", layer=1, B=1, S=3, T=6,
                     form="prefix")]),
]

HELDOUT = [
    # the class defaults' keys left out but d_model / heads, f16 shards
    dict(name="bart", seed=701, container="shards2", dtype="f16",
         config={"model_type": "bart", "d_model": 32, "encoder_layers": 2, "decoder_layers": 1,
                 "encoder_attention_heads": 8, "decoder_attention_heads": 2,
                 "encoder_ffn_dim": 8, "vocab_size": 12, "max_position_embeddings": 16},
         cases=[dict(dir="layer1", kind="encoder", layer=1, B=3, S=11, pad="left"),
                dict(dir="decoder_self0", kind="decoder", layer=0, B=2, S=11),
                dict(dir="decoder_cross0", kind="cross", layer=0, B=3, S=4, T=11, pad="left")]),
]

"""Marian (Helsinki-NLP/opus-mt-*): modeling_marian.MarianAttention is BartAttention
(gen/seq2seq.py); MarianEncoderLayer and MarianDecoderLayer are BART's, post-norm
(self_attn_layer_norm(residual + self_attn(h)), eps 1e-5); sinusoidal positions before the
first layer (MarianSinusoidalPositionalEmbedding, stored in the checkpoints)."""
from .. import seq2seq

MODEL_TYPES = ("marian",)
DEFAULTS = {"d_model": 1024, "encoder_layers": 12, "decoder_layers": 12,
            "encoder_attention_heads": 16, "decoder_attention_heads": 16}
_f = seq2seq.Family(DEFAULTS, post_norm=True)
read, num_layers, settings = _f.read, _f.num_layers, _f.settings
folder_cases, folder_case_checks, folder_case_dirs = _f.cases()


def model(cfg, layers, g):
    t = read(cfg)
    C = t["C"]
    return seq2seq.model(t, g, outside=[("shared.weight", (t["vocab"], C)),
                                        ("encoder.embed_positions.weight", (t["positions"], C)),
                                        ("decoder.embed_positions.weight", (t["positions"], C))],
                         final_norm=False, head=("lm_head.weight", "final_logits_bias"))


FOLDERS = [
    # Helsinki-NLP/opus-mt-en-de's spelling (MarianMTModel), shrunk; pytorch_model.bin
    dict(name="marian", seed=621, container="bin", dtype="f32",
         config={"_name_or_path": "Helsinki-NLP/opus-mt-en-de", "activation_dropout": 0.0,
                 "activation_function": "swish", "add_bias_logits": False,
                 "add_final_layer_norm": False, "architectures": ["MarianMTModel"],
                 "attention_dropout": 0.0, "bad_words_ids": [[11]], "bos_token_id": 0,
                 "classif_dropout": 0.0, "d_model": 16, "decoder_attention_heads": 4,
                 "decoder_ffn_dim": 8, "decoder_layerdrop": 0.0, "decoder_layers": 2,
                 "decoder_start_token_id": 11, "decoder_vocab_size": 12, "dropout": 0.1,
                 "encoder_attention_heads": 2, "encoder_ffn_dim": 8, "encoder_layerdrop": 0.0,
                 "encoder_layers": 2, "eos_token_id": 0, "is_encoder_decoder": True,
                 "max_length": 512, "max_position_embeddings": 16, "model_type": "marian",
                 "normalize_before": False, "normalize_embedding": False,
                 "num_hidden_layers": 2, "pad_token_id": 11, "scale_embedding": True,
                 "share_encoder_decoder_embeddings": True, "static_position_embeddings": True,
                 "vocab_size": 12},
         cases=[dict(dir="layer1", kind="encoder", layer=1, B=1, S=10),
                dict(dir="decoder_self1", kind="decoder", layer=1, B=2, S=6, pad="right"),
                dict(dir="decoder_cross0", kind="cross", layer=0, B=1, S=6, T=10)]),
]

HELDOUT = [
    dict(name="marian", seed=721, container="safetensors", dtype="f16",
         config={"model_type": "marian", "d_model": 12, "encoder_layers": 2, "decoder_layers": 1,
                 "encoder_attention_heads": 3, "decoder_attention_heads": 2,
                 "max_position_embeddings": 16, "vocab_size": 12},
         cases=[dict(dir="layer0", kind="encoder", layer=0, B=2, S=12, pad="left"),
                dict(dir="decoder_cross0", kind="cross", layer=0, B=1, S=2, T=12)]),
]

"""M2M-100 and NLLB-200's dense checkpoints (model_type m2m_100): modeling_m2m_100.M2M100Attention
is BartAttention (gen/seq2seq.py); M2M100EncoderLayer and M2M100DecoderLayer are pre-norm, each
stack ends in a layer_norm; sinusoidal positions before the first layer (a buffer, not stored)."""
from .. import seq2seq

MODEL_TYPES = ("m2m_100",)
DEFAULTS = {"d_model": 1024, "encoder_layers": 12, "decoder_layers": 12,
            "encoder_attention_heads": 16, "decoder_attention_heads": 16}
_f = seq2seq.Family(DEFAULTS)
read, num_layers, settings = _f.read, _f.num_layers, _f.settings
folder_cases, folder_case_checks, folder_case_dirs = _f.cases()


def model(cfg, layers, g):
    t = read(cfg)
    return seq2seq.model(t, g, outside=[("shared.weight", (t["vocab"], t["C"]))])


FOLDERS = [
    # facebook/nllb-200-distilled-600M's spelling (M2M100ForConditionalGeneration), shrunk, f16
    dict(name="nllb_200", seed=631, container="safetensors", dtype="f16",
         config={"_name_or_path": "facebook/nllb-200-distilled-600M", "activation_dropout": 0.0,
                 "activation_function": "relu", "architectures": ["M2M100ForConditionalGeneration"],
                 "attention_dropout": 0.1, "bos_token_id": 0, "d_model": 24,
                 "decoder_attention_heads": 6, "decoder_ffn_dim": 8, "decoder_layerdrop": 0,
                 "decoder_layers": 2, "decoder_start_token_id": 2, "dropout": 0.1,
                 "encoder_attention_heads": 4, "encoder_ffn_dim": 8, "encoder_layerdrop": 0,
                 "encoder_layers": 3, "eos_token_id": 2, "init_std": 0.02,
                 "is_encoder_decoder": True, "max_length": 200, "max_position_embeddings": 16,
                 "model_type": "m2m_100", "num_hidden_layers": 3, "pad_token_id": 1,
                 "scale_embedding": True, "tokenizer_class": "NllbTokenizer",
                 "torch_dtype": "float32", "use_cache": True, "vocab_size": 12},
         cases=[dict(dir="layer2", kind="encoder", layer=2, B=1, S=9),
                dict(dir="layer0", kind="encoder", layer=0, B=2, S=9, pad="right"),
                dict(dir="decoder_self1", kind="decoder", layer=1, B=1, S=8),
                dict(dir="decoder_cross0", kind="cross", layer=0, B=2, S=4, T=9, pad="right")]),
]

HELDOUT = [
    # facebook/m2m100_418M's spelling, trimmed
    dict(name="m2m100", seed=731, container="bin", dtype="f32",
         config={"architectures": ["M2M100ForConditionalGeneration"], "model_type": "m2m_100",
                 "d_model": 16, "encoder_layers": 1, "decoder_layers": 1,
                 "encoder_attention_heads": 4, "decoder_attention_heads": 8,
                 "max_position_embeddings": 16, "vocab_size": 12},
         cases=[dict(dir="layer0", kind="encoder", layer=0, B=1, S=15),
                dict(dir="decoder_self0", kind="decoder", layer=0, B=1, S=15),
                dict(dir="decoder_cross0", kind="cross", layer=0, B=2, S=5, T=15, pad="left")]),
]

"""mBART: modeling_mbart.MBartAttention is BartAttention (gen/seq2seq.py); MBartEncoderLayer and
MBartDecoderLayer are pre-norm (self_attn_layer_norm before the attention, so no norm after it),
and each stack ends in a layer_norm; learned positions at offset 2 before the first layer."""
from .. import seq2seq

MODEL_TYPES = ("mbart",)
DEFAULTS = {"d_model": 1024, "encoder_layers": 12, "decoder_layers": 12,
            "encoder_attention_heads": 16, "decoder_attention_heads": 16}
_f = seq2seq.Family(DEFAULTS)
read, num_layers, settings = _f.read, _f.num_layers, _f.settings
folder_cases, folder_case_checks, folder_case_dirs = _f.cases()


def model(cfg, layers, g):
    t = read(cfg)
    C = t["C"]
    return seq2seq.model(t, g, outside=[("shared.weight", (t["vocab"], C)),
                                        ("encoder.embed_positions.weight", (t["positions"] + 2, C)),
                                        ("decoder.embed_positions.weight", (t["positions"] + 2, C))],
                         head=("lm_head.weight", "final_logits_bias"))


FOLDERS = [
    # facebook/mbart-large-50's spelling (MBartForConditionalGeneration), shrunk, bf16
    dict(name="mbart", seed=611, container="safetensors", dtype="bf16",
         config={"_name_or_path": "facebook/mbart-large-50", "activation_dropout": 0.0,
                 "activation_function": "gelu", "add_bias_logits": False,
                 "add_final_layer_norm": True, "architectures": ["MBartForConditionalGeneration"],
                 "attention_dropout": 0.0, "bos_token_id": 0, "d_model": 20,
                 "decoder_attention_heads": 5, "decoder_ffn_dim": 8, "decoder_layerdrop": 0.0,
                 "decoder_layers": 2, "dropout": 0.1, "encoder_attention_heads": 4,
                 "encoder_ffn_dim": 8, "encoder_layerdrop": 0.0, "encoder_layers": 2,
                 "eos_token_id": 2, "is_encoder_decoder": True, "max_position_embeddings": 16,
                 "model_type": "mbart", "normalize_before": True, "normalize_embedding": True,
                 "num_hidden_layers": 2, "pad_token_id": 1, "scale_embedding": True,
                 "vocab_size": 12},
         cases=[dict(dir="layer1", kind="encoder", layer=1, B=2, S=8, pad="left"),
                dict(dir="decoder_self0", kind="decoder", layer=0, B=1, S=7),
                dict(dir="decoder_cross1", kind="cross", layer=1, B=1, S=5, T=8)]),
]

HELDOUT = [
    dict(name="mbart", seed=711, container="bin", dtype="f32",
         config={"model_type": "mbart", "d_model": 24, "encoder_layers": 1, "decoder_layers": 2,
                 "encoder_attention_heads": 6, "decoder_attention_heads": 2,
                 "max_position_embeddings": 16, "vocab_size": 12},
         cases=[dict(dir="layer0", kind="encoder", layer=0, B=1, S=13),
                dict(dir="decoder_self1", kind="decoder", layer=1, B=2, S=9, pad="right"),
                dict(dir="decoder_cross0", kind="cross", layer=0, B=1, S=3, T=13)]),
]

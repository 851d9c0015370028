"""Whisper: modeling_whisper.WhisperAttention (q_proj, v_proj and out_proj with biases, k_proj
without; q scaled before q k^T, the same numbers; gen/seq2seq.py); the encoder's sinusoidal
positions and the decoder's learned ones are added before the first layer, so the layers have
none; WhisperEncoderLayer and WhisperDecoderLayer are pre-norm. A plain case (positions left out)
and model folders of WhisperForConditionalGeneration (convolutions, embed_positions, each stack's
layer_norm; proj_out tied to embed_tokens, not stored)."""
from .. import plain, seq2seq

MODEL_TYPES = ("whisper",)
DEFAULTS = {"d_model": 384, "encoder_layers": 4, "decoder_layers": 4,
            "encoder_attention_heads": 6, "decoder_attention_heads": 6}

PLAIN = [
    dict(name="whisper_encoder_no_k_bias_f32", seed=1005,
         prefix="model.encoder.layers.0.self_attn.", block="model.encoder.layers.0.", C=12, H=3,
         Hkv=3, D=4, dtype="f32", causal=False, out="out_proj", padded=True),
]


def write_plain(out, case):
    plain.separate_case(out, case, biases=(True, False, True, True))


def read(cfg):
    return seq2seq.read(cfg, DEFAULTS)


def num_layers(cfg):
    return read(cfg)["encoder_layers"]


def settings(cfg, layer):
    return seq2seq.layer_of(read(cfg), f"model.encoder.layers.{layer}.self_attn.", "encoder",
                            layer, k_bias=False)


def model(cfg, layers, g):
    t = read(cfg)
    C, mels = t["C"], cfg.get("num_mel_bins", 80)
    return seq2seq.model(
        t, g, k_bias=False, head=(),
        outside=[("encoder.conv1.weight", (C, mels, 3)), ("encoder.conv1.bias", (C,)),
                 ("encoder.conv2.weight", (C, C, 3)), ("encoder.conv2.bias", (C,)),
                 ("encoder.embed_positions.weight", (cfg.get("max_source_positions", 1500), C)),
                 ("decoder.embed_tokens.weight", (t["vocab"], C)),
                 ("decoder.embed_positions.weight", (cfg.get("max_target_positions", 448), C))])


def folder_cases(fam, spec, root, stored, layers, g, rn):
    return seq2seq.folder_cases(read(spec["config"]), spec, root, stored, g, rn, k_bias=False)


def folder_case_checks(spec):
    return seq2seq.folder_case_checks(spec)


def folder_case_dirs(spec):
    return [c["dir"] for c in spec["cases"]]


FOLDERS = [
    # openai/whisper-tiny's spelling (WhisperForConditionalGeneration), shrunk
    dict(name="whisper", seed=651, container="safetensors", dtype="f32",
         config={"_name_or_path": "openai/whisper-tiny", "activation_dropout": 0.0,
                 "activation_function": "gelu", "apply_spec_augment": False,
                 "architectures": ["WhisperForConditionalGeneration"], "attention_dropout": 0.0,
                 "begin_suppress_tokens": [2, 3], "bos_token_id": 3, "d_model": 24,
                 "decoder_attention_heads": 4, "decoder_ffn_dim": 8, "decoder_layerdrop": 0.0,
                 "decoder_layers": 2, "decoder_start_token_id": 3, "dropout": 0.0,
                 "encoder_attention_heads": 6, "encoder_ffn_dim": 8, "encoder_layerdrop": 0.0,
                 "encoder_layers": 2, "eos_token_id": 3, "init_std": 0.02,
                 "is_encoder_decoder": True, "max_length": 448, "max_source_positions": 24,
                 "max_target_positions": 16, "median_filter_width": 7, "model_type": "whisper",
                 "num_hidden_layers": 2, "num_mel_bins": 4, "pad_token_id": 3,
                 "scale_embedding": False, "torch_dtype": "float32", "use_cache": True,
                 "use_weighted_layer_sum": False, "vocab_size": 12},
         cases=[dict(dir="layer1", kind="encoder", layer=1, B=1, S=12),
                dict(dir="layer0", kind="encoder", layer=0, B=2, S=12, pad="right"),
                dict(dir="decoder_self1", kind="decoder", layer=1, B=1, S=7),
                dict(dir="decoder_cross0", kind="cross", layer=0, B=1, S=5, T=12),
                dict(dir="decoder_cross1", kind="cross", layer=1, B=2, S=4, T=12, pad="right",
                     form="prefix")]),
]

HELDOUT = [
    # whisper-base's layout (d_model / heads 64), bf16, the defaults' keys left out
    dict(name="whisper", seed=751, container="safetensors", dtype="bf16",
         config={"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper",
                 "d_model": 16, "encoder_layers": 2, "decoder_layers": 2,
                 "encoder_attention_heads": 2, "decoder_attention_heads": 4, "num_mel_bins": 4,
                 "max_source_positions": 30, "max_target_positions": 16, "vocab_size": 12},
         cases=[dict(dir="layer1", kind="encoder", layer=1, B=1, S=30),
                dict(dir="decoder_self0", kind="decoder", layer=0, B=2, S=9),
                dict(dir="decoder_cross1", kind="cross", layer=1, B=1, S=3, T=30)]),
]

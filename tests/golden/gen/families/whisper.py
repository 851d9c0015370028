"""Whisper's encoder: modeling_whisper.WhisperAttention (q_proj, v_proj and out_proj with
biases, k_proj without; bidirectional; q scaled before q k^T, the same numbers), positions left
out."""
from .. import plain

MODEL_TYPES = ()

PLAIN = [
    dict(name="whisper_encoder_no_k_bias_f32", seed=1005,
         prefix="model.encoder.layers.0.self_attn.", block="model.encoder.layers.0.", C=12, H=3,
         Hkv=3, D=4, dtype="f32", causal=False, out="out_proj", padded=True),
]


def write_plain(out, case):
    plain.separate_case(out, case, biases=(True, False, True, True))

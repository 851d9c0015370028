"""Gemma 3n text (modeling_gemma3n.Gemma3nTextAttention): q_norm and k_norm are Gemma3nRMSNorm
(x / sqrt(mean(x^2) + eps) * w: no Gemma "+1"), v_norm a Gemma3nRMSNorm with with_scale=False (no
weight), all before rope; scaling 1.0. A plain-config variant of the contract's qk_norm
weight_offset 0 beside v_norm."""
from ..reference import QkNorm

MODEL_TYPES = ()

VARIANTS = [
    # a sliding layer: window 4, rope theta 10000 (rope_local_base_freq), scale 1
    dict(name="gemma3n_v_norm_no_offset", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 10000.0}, scale=1.0, qk_norm=(1e-6, 0), v_norm=1e-6, window=4, S=9,
         seed=43, guards=({"v_norm": None}, {"qk_norm": QkNorm("rms", 1e-6, offset=1.0)})),
]

"""Hunyuan (modeling_hunyuan_v1_dense.HunYuanDenseV1Attention with use_qk_norm): q and k through
rope first, then query_layernorm / key_layernorm, RMSNorms over head_dim (x * w, eps
rms_norm_eps). A plain-config variant of the contract's qk_norm order "after_rope"."""
from ..reference import QkNorm

MODEL_TYPES = ()

VARIANTS = [
    # RMS per head after rope, GQA, positions from right padding; dropping the order (the norm
    # before rope) moves the context
    dict(name="hunyuan_qk_norm_after_rope", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 10000.0},
         qk_norm={"kind": "rms", "eps": 1e-5, "order": "after_rope"}, left=False, S=9, seed=42,
         guards=({"qk_norm": QkNorm("rms", 1e-5)},)),
]

"""OLMo (modeling_olmo.OlmoAttention): LlamaAttention whose q, k and v are clamped to
[-clip_qkv, clip_qkv] right after q_proj / k_proj / v_proj, before rope (OLMo 2 and 3 drop the
clamp: Olmo2Config deletes clip_qkv). A plain-config variant of the contract's clip_qkv; no model
row reads OLMo's config.json yet."""
MODEL_TYPES = ()

VARIANTS = [
    # clip_qkv 0.3 (below the projections' largest values), GQA, rope, left padding
    dict(name="olmo_clip_qkv", writer="decoder", C=32, H=4, Hkv=2, D=8,
         rope_cfg={"theta": 10000.0}, clip_qkv=0.3, S=9, seed=41,
         guards=({"clip_qkv": None},)),
]

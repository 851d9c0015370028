"""transformers' float32 rotary embedding (rope.precision "float32", --rope-precision float32):
LlamaRotaryEmbedding.forward and its kin compute inv_freq with modeling_rope_utils'
_compute_*_parameters on float32 tensors, position * inv_freq in float32 and cos/sin in float32
times attention_scaling. At positions near 4,096 that differs from the exact angles by up to
~2.4e-4 (a float32 ulp of the angle), which is what a comparison with transformers' maps sees.

One Llama-shaped layer per rope type at positions 4,088-4,095 (offset 4,088, S = 8), its input
scaled by 4 so the scores are as large as a trained model's, its expectation with
reference.cos_sin's float32 branch (gen/positions.py with dtype float32). Dynamic NTK's
frequencies depend on the batch's largest position, so its case is one sequence (each row of a
batch run alone would see another base)."""

_TYPES = [
    ("default", 1000000.0, 2048, None),
    ("linear", 10000.0, 2048, {"rope_type": "linear", "factor": 4.0}),
    ("dynamic", 10000.0, 2048, {"rope_type": "dynamic", "factor": 2.0}),
    ("yarn", 1000000.0, 32768,
     {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 1024}),
    ("longrope", 10000.0, 131072,
     {"rope_type": "longrope", "original_max_position_embeddings": 2048,
      "long_factor": [1.0 + 0.25 * i for i in range(16)],
      "short_factor": [1.0 + 0.01 * i for i in range(16)]}),
    ("llama3", 500000.0, 131072,
     {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
      "original_max_position_embeddings": 1024}),
]

VARIANTS = [
    dict(name=f"rope_float32_{t}", writer="decoder", C=64, H=2, Hkv=1, D=32, S=8,
         offset=4088, seed=40 + i, x_scale=4.0, B=1 if t == "dynamic" else 2,
         rope_cfg={"theta": theta, "max_position_embeddings": mpe, "precision": "float32",
                   **({"scaling": scaling} if scaling else {})})
    for i, (t, theta, mpe, scaling) in enumerate(_TYPES)
]

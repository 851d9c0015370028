"""DeBERTa-v2/v3 (modeling_deberta_v2.DisentangledSelfAttention): content-to-position and
position-to-content terms from the model's relative embeddings (encoder.rel_embeddings through
encoder.LayerNorm when norm_rel_ebd says "layer_norm"), log buckets (position_buckets,
max_relative_positions), share_att_key or pos_key_proj / pos_query_proj, scale
sqrt(D * (1 + terms)), and its mask: a padded query row sees no key. Plain-config variants of the
contract's disentangled and mask_padded_queries keys."""
MODEL_TYPES = ()

VARIANTS = [
    # DeBERTa-v3's kind: shared keys, both terms, the table through its LayerNorm; 8 buckets up
    # to 16 positions (log buckets from |i - j| > 4 at S = 9), left padding
    dict(name="deberta_v3_shared", writer="deberta", C=32, H=4, terms=("p2c", "c2p"), buckets=8,
         max_relative=16, share=True, seed=51, guards=("c2p", "p2c", "norm")),
    # DeBERTa-v2-xlarge's kind of settings without buckets: pos_key_proj / pos_query_proj, no
    # LayerNorm, relative positions clamped past 3, a table longer than 2 span, right padding
    dict(name="deberta_v2_own_projections", writer="deberta", C=24, H=3, terms=("c2p", "p2c"),
         buckets=-1, max_relative=3, share=False, norm=False, rows=10, left=False, seed=52,
         guards=("c2p", "p2c")),
    # c2p alone: scale sqrt(2 D)
    dict(name="deberta_c2p_only", writer="deberta", C=16, H=2, terms=("c2p",), buckets=4,
         max_relative=12, share=False, norm=True, seed=53, guards=("c2p",)),
]

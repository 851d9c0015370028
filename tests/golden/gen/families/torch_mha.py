"""torch.nn.MultiheadAttention: the module itself is the reference (plain.torch_mha):
kdim/vdim, key padding, bool and float attn_mask, add_bias_kv, add_zero_attn,
batch_first=False, averaged heads."""
MODEL_TYPES = ()

VARIANTS = [
    dict(name="mha_cross_bool_mask", writer="torch_mha", average=False),
    dict(name="mha_cross_float_mask_avg", writer="torch_mha", average=True),
]

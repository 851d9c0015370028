"""ggml tensor types for GGUF in NumPy: the type table, dequantizers that equal
ggml's dequantize_row_* (ggml/src/ggml-quants.c) bit for bit, and a generator
of random valid blocks (random bytes with realistic fp16 scales; no quantizer
is needed to test a dequantizer).

Every float operation is a float32 NumPy operation in the order ggml's C does
it (NumPy never fuses a multiply and an add), e.g. Q6_K is (d * sc) * q and
Q4_K is (d * sc) * q - (dmin * m). check_numpy.py compares these with the C++
gguf_dequant.cpp on the same files; ggml_check/compare_ggml.sh compares the
C++ with ggml itself.
"""
import numpy as np

# id: (name as gguf-py's GGMLQuantizationType spells it, elements per block,
# bytes per block); block size 0: removed from ggml, no longer in files.
TYPES = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    4: ("Q4_2", 0, 0), 5: ("Q4_3", 0, 0), 6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36), 10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144), 13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292), 16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98), 19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18),
    21: ("IQ3_S", 256, 110), 22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136),
    24: ("I8", 1, 1), 25: ("I16", 1, 2), 26: ("I32", 1, 4), 27: ("I64", 1, 8),
    28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56), 30: ("BF16", 1, 2),
    31: ("Q4_0_4_4", 0, 0), 32: ("Q4_0_4_8", 0, 0), 33: ("Q4_0_8_8", 0, 0),
    34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66), 36: ("IQ4_NL_4_4", 0, 0),
    37: ("IQ4_NL_4_8", 0, 0), 38: ("IQ4_NL_8_8", 0, 0), 39: ("MXFP4", 32, 17),
    40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18), 42: ("Q2_0", 64, 18),
}
ID = {name: i for i, (name, _, _) in TYPES.items()}

# Byte offsets of the fp16 scales in a block (set to realistic values by
# random_blocks).
F16_SCALES = {
    "Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0],
    "Q2_K": [80, 82], "Q3_K": [108], "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208],
    "IQ4_NL": [0], "IQ4_XS": [0], "MXFP4": [],
}
DEQUANTIZED = ["F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K",
               "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS", "MXFP4"]

KVALUES_IQ4NL = np.array([-127, -104, -83, -65, -49, -35, -22, -10,
                          1, 13, 25, 38, 53, 69, 89, 113], dtype=np.float32)
KVALUES_MXFP4 = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12],
                         dtype=np.float32)

F32 = np.float32


def row_bytes(type_id, n):
    """Bytes of n elements of the type (n a multiple of its block size)."""
    _, bs, bb = TYPES[type_id]
    assert bs and n % bs == 0, (TYPES[type_id][0], n)
    return n // bs * bb


def fp16_to_fp32(h):
    """uint16 array -> float32 as ggml converts (exact; a signaling NaN made
    quiet, which NumPy's own astype(float32) does not do)."""
    h = np.asarray(h, dtype=np.uint16).astype(np.uint32)
    sign = (h & 0x8000) << 16
    exp = (h >> 10) & 0x1F
    man = h & 0x3FF
    normal = sign | ((exp + 112) << 23) | (man << 13)
    special = sign | 0x7F800000 | (man << 13) | np.where(man != 0, 0x00400000, 0).astype(np.uint32)
    sub = (man.astype(F32) * F32(2.0 ** -24)).view(np.uint32) | sign
    out = np.where(exp == 0, sub, np.where(exp == 31, special, normal)).astype(np.uint32)
    return out.view(np.float32)


def _f16_field(blocks, off):
    return fp16_to_fp32(blocks[:, off].astype(np.uint16) | (blocks[:, off + 1].astype(np.uint16) << 8))


def _scale_min_k4(scales):
    """ggml get_scale_min_k4 for j = 0..7: (nb, 8) scales and mins."""
    s = scales.astype(np.int32)
    sc = np.empty((s.shape[0], 8), np.int32)
    m = np.empty((s.shape[0], 8), np.int32)
    sc[:, :4] = s[:, 0:4] & 63
    m[:, :4] = s[:, 4:8] & 63
    sc[:, 4:] = (s[:, 8:12] & 0xF) | ((s[:, 0:4] >> 6) << 4)
    m[:, 4:] = (s[:, 8:12] >> 4) | ((s[:, 4:8] >> 6) << 4)
    return sc, m


def _nibbles(qs):
    """(nb, 16) bytes -> (nb, 32): low nibbles then high nibbles."""
    return np.concatenate([qs & 0xF, qs >> 4], axis=1).astype(np.int32)


def _dq_q4_0(b):
    d = _f16_field(b, 0)
    return (_nibbles(b[:, 2:18]) - 8).astype(F32) * d[:, None]


def _dq_q4_1(b):
    d, m = _f16_field(b, 0), _f16_field(b, 2)
    return _nibbles(b[:, 4:20]).astype(F32) * d[:, None] + m[:, None]


def _q5_high(qh_bytes):
    qh = qh_bytes.astype(np.uint32)
    qh = qh[:, 0] | (qh[:, 1] << 8) | (qh[:, 2] << 16) | (qh[:, 3] << 24)
    j = np.arange(32, dtype=np.uint32)
    return (((qh[:, None] >> j[None, :]) & 1) << 4).astype(np.int32)  # bit j -> element j


def _dq_q5_0(b):
    d = _f16_field(b, 0)
    q = _nibbles(b[:, 6:22]) | _q5_high(b[:, 2:6])
    return (q - 16).astype(F32) * d[:, None]


def _dq_q5_1(b):
    d, m = _f16_field(b, 0), _f16_field(b, 2)
    q = _nibbles(b[:, 8:24]) | _q5_high(b[:, 4:8])
    return q.astype(F32) * d[:, None] + m[:, None]


def _dq_q8_0(b):
    d = _f16_field(b, 0)
    return b[:, 2:34].view(np.int8).astype(F32) * d[:, None]


def _dq_mxfp4(b):
    e = b[:, 0].astype(np.uint32)
    bits = np.where(e < 2, np.uint32(0x00200000) << e, (e - 1) << 23).astype(np.uint32)
    d = bits.view(np.float32)
    return KVALUES_MXFP4[_nibbles(b[:, 1:17])] * d[:, None]


def _dq_iq4_nl(b):
    d = _f16_field(b, 0)
    return d[:, None] * KVALUES_IQ4NL[_nibbles(b[:, 2:18])]


# Q2_K and Q3_K: 16 groups of 16; group g reads bytes qs[n*32 + half*16 + l]
# at bit 2j (n = g // 8, j = (g % 8) // 2, half = g % 2).
_G = np.arange(16)
_GN, _GJ, _GH = _G // 8, (_G % 8) // 2, _G % 2
_QIDX = (_GN * 32 + _GH * 16)[:, None] + np.arange(16)[None, :]  # (16, 16)
_SHIFT = (2 * _GJ)[None, :, None]


def _dq_q2_k(b):
    sc = b[:, 0:16].astype(np.int32)
    qs = b[:, 16:80].astype(np.int32)
    d, dmin = _f16_field(b, 80), _f16_field(b, 82)
    dl = d[:, None] * (sc & 0xF).astype(F32)
    ml = dmin[:, None] * (sc >> 4).astype(F32)
    q = (qs[:, _QIDX] >> _SHIFT) & 3
    return (dl[:, :, None] * q.astype(F32) - ml[:, :, None]).reshape(len(b), 256)


def _dq_q3_k(b):
    hm = b[:, 0:32].astype(np.int32)
    qs = b[:, 32:96].astype(np.int32)
    s = b[:, 96:108].astype(np.int32)
    d = _f16_field(b, 108)
    j = np.arange(16)
    low = np.where(j < 8, s[:, j % 8] & 0xF, s[:, j % 8] >> 4)
    high = (s[:, 8 + (j & 3)] >> (2 * (j // 4))) & 3
    sc = (low | (high << 4)) - 32
    dl = d[:, None] * sc.astype(F32)
    q = (qs[:, _QIDX] >> _SHIFT) & 3
    hidx = (_GH * 16)[:, None] + np.arange(16)[None, :]
    mask = (1 << (4 * _GN + _GJ))[None, :, None]
    q = q - np.where(hm[:, hidx] & mask, 0, 4)
    return (dl[:, :, None] * q.astype(F32)).reshape(len(b), 256)


def _k4_groups(qs):
    """(nb, 128) bytes -> (nb, 8, 32): group g is chunk g // 2, low nibbles
    for even g, high for odd."""
    c = qs.reshape(len(qs), 4, 32).astype(np.int32)
    return np.stack([c & 0xF, c >> 4], axis=2).reshape(len(qs), 8, 32)


def _dq_q4_k(b):
    d, dmin = _f16_field(b, 0), _f16_field(b, 2)
    sc, m = _scale_min_k4(b[:, 4:16])
    d1 = d[:, None] * sc.astype(F32)
    m1 = dmin[:, None] * m.astype(F32)
    q = _k4_groups(b[:, 16:144])
    return (d1[:, :, None] * q.astype(F32) - m1[:, :, None]).reshape(len(b), 256)


def _dq_q5_k(b):
    d, dmin = _f16_field(b, 0), _f16_field(b, 2)
    sc, m = _scale_min_k4(b[:, 4:16])
    qh = b[:, 16:48].astype(np.int32)
    g = np.arange(8)
    high = np.where((qh[:, None, :] >> g[None, :, None]) & 1, 16, 0)  # bit g of qh[l]
    q = _k4_groups(b[:, 48:176]) + high
    d1 = d[:, None] * sc.astype(F32)
    m1 = dmin[:, None] * m.astype(F32)
    return (d1[:, :, None] * q.astype(F32) - m1[:, :, None]).reshape(len(b), 256)


def _dq_q6_k(b):
    nb = len(b)
    d = _f16_field(b, 208)
    sc = b[:, 192:208].view(np.int8).astype(F32)
    y = np.empty((nb, 256), F32)
    for n in range(2):
        ql = b[:, 64 * n:64 * n + 64].astype(np.int32)
        qh = b[:, 128 + 32 * n:160 + 32 * n].astype(np.int32)
        qs = [(ql[:, :32] & 0xF) | (((qh >> 0) & 3) << 4),
              (ql[:, 32:] & 0xF) | (((qh >> 2) & 3) << 4),
              (ql[:, :32] >> 4) | (((qh >> 4) & 3) << 4),
              (ql[:, 32:] >> 4) | (((qh >> 6) & 3) << 4)]
        for k in range(4):
            s = sc[:, 8 * n + 2 * k + (np.arange(32) // 16)]  # (nb, 32): scale of each l
            y[:, 128 * n + 32 * k:128 * n + 32 * k + 32] = (d[:, None] * s) * (qs[k] - 32).astype(F32)
    return y


def _dq_iq4_xs(b):
    d = _f16_field(b, 0)
    sh = b[:, 2].astype(np.int32) | (b[:, 3].astype(np.int32) << 8)
    sl = b[:, 4:8].astype(np.int32)
    ib = np.arange(8)
    ls = ((sl[:, ib // 2] >> (4 * (ib % 2))) & 0xF) | (((sh[:, None] >> (2 * ib)) & 3) << 4)
    dl = d[:, None] * (ls - 32).astype(F32)
    qs = b[:, 8:136].reshape(len(b), 8, 16)
    q = np.concatenate([qs & 0xF, qs >> 4], axis=2)  # (nb, 8, 32)
    return (dl[:, :, None] * KVALUES_IQ4NL[q]).reshape(len(b), 256)


_BLOCK_FNS = {
    "Q4_0": _dq_q4_0, "Q4_1": _dq_q4_1, "Q5_0": _dq_q5_0, "Q5_1": _dq_q5_1, "Q8_0": _dq_q8_0,
    "Q2_K": _dq_q2_k, "Q3_K": _dq_q3_k, "Q4_K": _dq_q4_k, "Q5_K": _dq_q5_k, "Q6_K": _dq_q6_k,
    "IQ4_NL": _dq_iq4_nl, "IQ4_XS": _dq_iq4_xs, "MXFP4": _dq_mxfp4,
}


def dequantize(type_id, raw, n):
    """n elements of ggml type `type_id` from the bytes `raw` -> float32 (n,)."""
    name, bs, bb = TYPES[type_id]
    buf = np.frombuffer(bytes(raw), dtype=np.uint8)
    assert len(buf) == row_bytes(type_id, n), (name, len(buf), n)
    if name == "F32":
        return buf.view("<f4").astype(F32)
    if name == "F16":
        return fp16_to_fp32(buf.view("<u2"))
    if name == "BF16":
        return (buf.view("<u2").astype(np.uint32) << 16).view(np.float32)
    if name not in _BLOCK_FNS:
        raise ValueError("type %s is not dequantized" % name)
    blocks = buf.reshape(n // bs, bb)
    return np.ascontiguousarray(_BLOCK_FNS[name](blocks), dtype=F32).reshape(n)


def random_scales(rng, count):
    """fp16 bit patterns of realistic scales: 2^-14 .. 2^5 of either sign,
    one in ten an edge case (+0, -0, subnormal, smallest normal, largest)."""
    sign = rng.integers(0, 2, count, dtype=np.uint16) << 15
    exp = rng.integers(1, 21, count, dtype=np.uint16) << 10
    man = rng.integers(0, 1024, count, dtype=np.uint16)
    h = (sign | exp | man).astype(np.uint16)
    edge = rng.integers(0, 10, count) == 0
    choices = np.array([0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x7BFF, 0x8400], np.uint16)
    h[edge] = choices[rng.integers(0, len(choices), int(edge.sum()))]
    return h


def random_blocks(type_id, n, rng):
    """Bytes of n random elements of the type: random bits, with the fp16
    scales of quantized blocks set realistic. F32, F16 and BF16 elements are
    random bits (infinities and NaNs of every payload included)."""
    name, bs, bb = TYPES[type_id]
    if name in ("F32", "F16", "BF16"):
        return rng.integers(0, 256, n * bb, dtype=np.uint8).tobytes()
    nb = n // bs
    b = rng.integers(0, 256, (nb, bb), dtype=np.uint8)
    for off in F16_SCALES[name]:
        h = random_scales(rng, nb)
        b[:, off] = h & 0xFF
        b[:, off + 1] = h >> 8
    return b.tobytes()

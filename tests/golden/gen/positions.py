"""Position schemes, in float64 as CONTRACT.md "Positions" asks (attn-run computes the angles in
float64, so the reference does too), and in float32 as transformers computes them (rope.precision
"float32": the same steps on float32 tensors, each rounded as torch rounds it):

- RoPE's inverse frequencies and attention factor for every rope_scaling type: transformers'
  modeling_rope_utils._compute_{default,linear_scaling,dynamic_ntk,yarn,longrope,llama3,
  proportional}_parameters (yarn as transformers 4.50 / main: `factor` as written, `truncate`
  default true, mscale / mscale_all_dim; longrope switching to long_factor past
  original_max_position_embeddings, as dynamic_rope_update does); a scaling's "freq_factors"
  (GGUF's rope_freqs.weight) divide the result, as ggml_rope_ext does;
- mrope's sections over three rows of position ids (Qwen2-VL contiguous, Qwen3-VL interleaved);
- the two rotations: modeling_llama.rotate_half (style "half") and modeling_gptj.rotate_every_two
  (style "interleaved", also Cohere's and Llama 4's pairs);
- ALiBi slopes: modeling_bloom.build_alibi_tensor and MPT's gen_slopes (alibi_bias_max);
- T5's relative position buckets: modeling_t5.T5Attention._relative_position_bucket (its log part
  in float32, as torch runs it).
"""
import math

import torch


def default_inv_freq(base, dim, dtype=torch.float64):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype) / dim))


def rope_params(theta, dim, mpe, scaling, seq_len, dtype=torch.float64):
    """(inv_freq (dim/2,) in dtype, attention_factor) as modeling_rope_utils computes them
    (its tensors float32; float64 here by default)."""
    if scaling is not None and "freq_factors" in scaling:
        inv, att = rope_params(theta, dim, mpe, {k: v for k, v in scaling.items()
                                                 if k != "freq_factors"}, seq_len, dtype)
        return inv / torch.tensor(scaling["freq_factors"], dtype=dtype), att
    if scaling is None:
        return default_inv_freq(theta, dim, dtype), 1.0
    t = scaling.get("rope_type", scaling.get("type"))
    if t == "linear":
        return default_inv_freq(theta, dim, dtype) / scaling["factor"], 1.0
    if t == "dynamic":
        factor = scaling["factor"]
        seq_len = max(seq_len, mpe)
        base = theta * ((factor * seq_len / mpe) - (factor - 1)) ** (dim / (dim - 2))
        return default_inv_freq(base, dim, dtype), 1.0
    if t == "yarn":
        factor = scaling.get("factor")
        orig = scaling.get("original_max_position_embeddings", mpe)
        if factor is None:
            factor = mpe / orig
        att = scaling.get("attention_factor")
        mscale, mscale_all_dim = scaling.get("mscale"), scaling.get("mscale_all_dim")

        def get_mscale(scale, m=1):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        if att is None:
            if mscale and mscale_all_dim:
                att = float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
            else:
                att = get_mscale(factor)
        beta_fast = scaling.get("beta_fast") or 32
        beta_slow = scaling.get("beta_slow") or 1

        def corr_dim(rot):
            return (dim * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(theta))

        low, high = corr_dim(beta_fast), corr_dim(beta_slow)
        if scaling.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((torch.arange(dim // 2).to(dtype) - low) / (high - low), 0, 1)
        pos_freqs = theta ** (torch.arange(0, dim, 2).to(dtype) / dim)
        extra, inter = 1.0 / pos_freqs, 1.0 / (factor * pos_freqs)
        extra_factor = 1 - ramp
        return inter * (1 - extra_factor) + extra * extra_factor, att
    if t == "llama3":
        inv = default_inv_freq(theta, dim, dtype)
        factor, lff = scaling["factor"], scaling["low_freq_factor"]
        hff = scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        low_wl, high_wl = old / lff, old / hff
        wavelen = 2 * math.pi / inv
        inv_l = torch.where(wavelen > low_wl, inv / factor, inv)
        smooth = (old / wavelen - lff) / (hff - lff)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
        return torch.where(medium, smoothed, inv_l), 1.0
    if t == "longrope":
        orig = scaling.get("original_max_position_embeddings", mpe)
        factor = scaling.get("factor")
        if factor is None:
            factor = mpe / orig
        att = scaling.get("attention_factor")
        if att is None:
            att = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(orig))
        ext = torch.tensor(scaling["long_factor"] if seq_len > orig else scaling["short_factor"],
                           dtype=dtype)
        pos_freqs = theta ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dtype) / dim)
        return 1.0 / (ext * pos_freqs), att
    if t == "proportional":  # _compute_proportional_rope_parameters (Gemma 4's global layers)
        angles = int(scaling.get("partial_rotary_factor", 1.0) * dim // 2)
        rotated = 1.0 / theta ** (torch.arange(0, 2 * angles, 2, dtype=torch.int64).to(dtype) / dim)
        inv = torch.cat((rotated, torch.zeros(dim // 2 - angles, dtype=dtype)))
        return inv / scaling.get("factor", 1.0), 1.0
    raise ValueError(t)


def mrope_freqs(freqs, section, interleaved):
    """Multimodal rope: freqs (3, B, S, R/2), the angles at the time, height and width rows of
    position ids, to (B, S, R/2). Contiguous (modeling_qwen2_vl.apply_multimodal_rotary_pos_emb:
    cos.split(mrope_section * 2), chunk i from row i % 3; the split of cat(freqs, freqs) repeats
    over the second half what it does over the first, so the sections split R/2 once here);
    interleaved (modeling_qwen3_vl.Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope: the time
    row, its frequencies 1, 4, .. < 3h from the height row and 2, 5, .. < 3w from the width row)."""
    if interleaved:
        out = freqs[0].clone()
        for row, offset in ((1, 1), (2, 2)):
            idx = slice(offset, section[row] * 3, 3)
            out[..., idx] = freqs[row, ..., idx]
        return out
    chunks = freqs.split(list(section), dim=-1)
    return torch.cat([c[i % 3] for i, c in enumerate(chunks)], dim=-1)


def rotate_half(x):  # modeling_llama.rotate_half: (x1, x2) -> (-x2, x1) over the two halves
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_every_two(x):  # modeling_gptj.rotate_every_two (modeling_cohere.rotate_half): pairs
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def angles(freqs, style):
    """Each pair's angle laid out as the style rotates: both halves [f, f] (rotate_half) or each
    angle twice in a row (repeat_interleave, rotate_every_two)."""
    if style == "interleaved":
        return torch.repeat_interleave(freqs, 2, dim=-1)
    return torch.cat((freqs, freqs), dim=-1)


def rotate(x, cos, sin, rotary_dim, style):
    """x (..., D): its first rotary_dim dims turned (partial rotary keeps the rest, as GPT-NeoX's
    rotary_ndims); cos, sin broadcast against x[..., :rotary_dim]."""
    turn = rotate_every_two if style == "interleaved" else rotate_half
    rot, rest = x[..., :rotary_dim], x[..., rotary_dim:]
    return torch.cat((rot * cos + turn(rot) * sin, rest), dim=-1)


def bloom_slopes(n):  # modeling_bloom.build_alibi_tensor
    cp2 = 2 ** math.floor(math.log2(n))
    base = 2 ** (-(2 ** -(math.log2(cp2) - 3)))
    slopes = [base ** p for p in range(1, 1 + cp2)]
    if cp2 != n:
        extra_base = 2 ** (-(2 ** -(math.log2(2 * cp2) - 3)))
        rem = min(cp2, n - cp2)
        slopes += [extra_base ** p for p in range(1, 1 + 2 * rem, 2)]
    return slopes


def mpt_slopes(n, bias_max=8):  # MPT's gen_slopes
    n2 = 2 ** math.ceil(math.log2(n))
    m = torch.arange(1, n2 + 1).double() * bias_max / n2
    s = 1.0 / torch.pow(2, m)
    if n2 != n:
        s = torch.cat([s[1::2], s[::2]])[:n]
    return s.tolist()


def t5_bucket(relative_position, bidirectional, num_buckets, max_distance):
    """modeling_t5.T5Attention._relative_position_bucket (int64 tensor in, int64 buckets out)."""
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
    return relative_buckets + torch.where(is_small, relative_position, if_large)


def deberta_bucket(relative_pos, bucket_size, max_position):
    """modeling_deberta_v2.make_log_bucket_position (int64 tensor in, buckets out), then
    build_relative_position's .to(torch.long); no buckets when either size is <= 0."""
    if bucket_size <= 0 or max_position <= 0:
        return relative_pos
    sign = torch.sign(relative_pos)
    mid = bucket_size // 2
    abs_pos = torch.where((relative_pos < mid) & (relative_pos > -mid),
                          torch.tensor(mid - 1).type_as(relative_pos), torch.abs(relative_pos))
    log_pos = (torch.ceil(torch.log(abs_pos / mid) / torch.log(torch.tensor((max_position - 1) / mid))
                          * (mid - 1)) + mid)
    bucket_pos = torch.where(abs_pos <= mid, relative_pos.type_as(log_pos), log_pos * sign)
    return bucket_pos.to(torch.long)

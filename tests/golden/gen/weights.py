"""Drawing a model's tensors: every generator draws from a torch.Generator seeded by its spec, in
float64, in a fixed order (the order is part of the fixtures: a new draw in the middle changes
every value after it, so a family's draws stay in its own file, in the order written there)."""
import math
import zlib
from collections import OrderedDict

import torch


def randn(g, *shape):
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def lin(g, out_f, in_f, bias=True):
    """An nn.Linear's (weight (out, in), bias (out,) or None) at realistic scales."""
    w = randn(g, out_f, in_f) / math.sqrt(in_f)
    b = randn(g, out_f) * 0.3 if bias else None
    return w, b


def put(sd, name, wb):
    sd[name + ".weight"] = wb[0]
    if wb[1] is not None:
        sd[name + ".bias"] = wb[1]


def ones(n):
    return torch.ones(n, dtype=torch.float64)


def layer_norm_params(name, C):
    """A LayerNorm's weight and bias, drawn from a generator of their own (seeded by the norm's
    name), so adding or changing them leaves every other tensor's values as they were."""
    g = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    w = 1.0 + 0.3 * randn(g, C)
    return w, 0.3 * randn(g, C)


def decoder_attention(a, g, out="o_proj"):
    """q_proj, k_proj, v_proj, o_proj (biases as the layer says), then q_norm / k_norm near 1
    (one weight per head dim, or over all heads for the "all" scope) and gpt-oss's sinks: the
    tensors of LlamaAttention and the families built on it, names relative to the prefix."""
    C, H, Hkv, D = a.C, a.H, a.Hkv, a.D
    sd = OrderedDict()
    put(sd, "q_proj", lin(g, H * D, C, a.qkv_bias))
    put(sd, "k_proj", lin(g, Hkv * D, C, a.qkv_bias))
    put(sd, "v_proj", lin(g, Hkv * D, C, a.qkv_bias))
    put(sd, out, lin(g, C, H * D, a.o_bias))
    if a.qk_norm:
        whole = a.qk_norm.scope == "all"
        sd["q_norm.weight"] = 1.0 + 0.3 * randn(g, H * D if whole else D)
        sd["k_norm.weight"] = 1.0 + 0.3 * randn(g, Hkv * D if whole else D)
    if a.sinks:
        sd["sinks"] = randn(g, H)
    return sd


def qkv_dense(a, g):
    """query_key_value ((H + 2 Hkv) D rows) and dense: GPT-NeoX's, BLOOM's and Falcon's."""
    sd = OrderedDict()
    put(sd, "query_key_value", lin(g, (a.H + 2 * a.Hkv) * a.D, a.C, a.qkv_bias))
    put(sd, "dense", lin(g, a.C, a.H * a.D, a.o_bias))
    return sd


def gated_attention(a, g):
    """q_proj (twice as wide with Qwen3-Next's gate), k_proj, v_proj, o_proj, then the q/k norm
    weights (one per head dim, or (H, D) per head; Qwen3-Next's zero-centred 1 + w weights start
    near 0, the others near 1): the attention tensors of the feature families' blocks."""
    C, H, Hkv, D = a.C, a.H, a.Hkv, a.D
    w = OrderedDict()
    put(w, "q_proj", lin(g, H * D * (2 if a.gate else 1), C, a.qkv_bias))
    put(w, "k_proj", lin(g, Hkv * D, C, a.qkv_bias))
    put(w, "v_proj", lin(g, Hkv * D, C, a.qkv_bias))
    put(w, "o_proj", lin(g, C, H * D, a.o_bias))
    n = a.qk_norm
    if n and n.kind != "l2":
        norm_base = 0.0 if n.offset else 1.0
        w["q_norm.weight"] = norm_base + 0.3 * randn(g, *((H, D) if n.per_head else (D,)))
        w["k_norm.weight"] = norm_base + 0.3 * randn(g, *((Hkv, D) if n.per_head else (D,)))
    return w


def small(g, *shape):  # a neighbour tensor: values near 0.1
    return randn(g, *shape) * 0.1


# The embedding tensors drawn outside the blocks of most model folders: one (vocab, C) draw per
# slot, in this order, every time, the folder keeping its family's slot(s). (These folders were
# first written by one generator that drew every family's embeddings and kept its own; the draws
# stay, so the values drawn after them stay too.)
OUTSIDE_SLOTS = ("gpt2", "bert", "roberta", "gpt_neox.embed_in", "gpt_neox.embed_out", "falcon",
                 "bloom", "mpt", "opt", "llama")


def outside_draws(g, C, vocab=12):
    return dict(zip(OUTSIDE_SLOTS, [small(g, vocab, C) for _ in OUTSIDE_SLOTS]))


def llama_outside(s0, g):
    """Outside the blocks of a LlamaForCausalLM-like model: embeddings and the final norm."""
    return {"model.embed_tokens.weight": outside_draws(g, s0.C)["llama"],
            "model.norm.weight": ones(s0.C)}


def llama_neighbours(s, layer, g, mlp=None, n=4):
    """A decoder block's keys beside its attention: input_layernorm, then the MLP's (default
    mlp.up_proj.weight; `mlp`: the family's own, drawn by the function)."""
    p = f"model.layers.{layer}."
    out = {p + "input_layernorm.weight": ones(s.C)}
    if mlp is None:
        out[p + "mlp.up_proj.weight"] = small(g, n, s.C)
    else:
        out.update(mlp(p))
    return out


def decoder_outside(s0, g, vocab=12):
    """embed_tokens and norm under the text model's top (the prefix before "layers."), and the
    top (a wrapper's extras and the head go after)."""
    top = s0.prefix[:s0.prefix.index("layers.")]
    return OrderedDict([(top + "embed_tokens.weight", small(g, vocab, s0.C)),
                        (top + "norm.weight", ones(s0.C))]), top


def decoder_block(s, g, attention, mlp):
    """A decoder block's tensors: input_layernorm, attention(block) (full names), then
    post_attention_layernorm and mlp(block)."""
    block = s.prefix[:-len("self_attn.")]
    sd = OrderedDict([(block + "input_layernorm.weight", ones(s.C))])
    sd.update(attention(block))
    sd[block + "post_attention_layernorm.weight"] = ones(s.C)
    sd.update(mlp(block))
    return sd


def prefixed(sd, prefix):
    return OrderedDict((prefix + k, v) for k, v in sd.items())


def under(sd, prefix):
    """The tensors under prefix, the prefix taken off."""
    return OrderedDict((k[len(prefix):], v) for k, v in sd.items() if k.startswith(prefix))

"""Hybrid models' folders (Granite 4.0-H, Nemotron-H, Falcon-H1, Jamba): whole tiny models whose
layers are attention, Mamba (Mamba2 mixers: in_proj, conv1d, dt_bias, A_log, D, norm, out_proj),
MLP-only or MoE blocks, as each family's modeling code names them. attn-run runs the attention
layers; the cases are those (folder.layer_cases)."""
from collections import OrderedDict

from . import weights as W


def mamba(prefix, C, g, inner=8, heads=2, state=4):
    """A Mamba2 mixer's tensors under prefix (modeling_mamba2.Mamba2Mixer's names)."""
    conv = inner + 2 * state
    return OrderedDict([(prefix + "A_log", W.small(g, heads)), (prefix + "D", W.ones(heads)),
                        (prefix + "conv1d.weight", W.small(g, conv, 1, 4)),
                        (prefix + "conv1d.bias", W.small(g, conv)),
                        (prefix + "dt_bias", W.ones(heads)),
                        (prefix + "in_proj.weight", W.small(g, inner + conv + heads, C)),
                        (prefix + "norm.weight", W.ones(inner)),
                        (prefix + "out_proj.weight", W.small(g, C, inner))])


def attention(s, g):
    return W.prefixed(W.decoder_attention(s, g), s.prefix)


def model(layers, g, top, block, embed="embed_tokens.weight", final="norm.weight",
          head="lm_head.weight"):
    """top + embed, each layer's block(i, s) (full names), top + final, the head."""
    C = layers[0].C
    sd = OrderedDict([(top + embed, W.small(g, 12, C))])
    for i, s in enumerate(layers):
        sd.update(block(i, s))
    sd[top + final] = W.ones(C)
    sd[head] = W.small(g, 12, C)
    return sd

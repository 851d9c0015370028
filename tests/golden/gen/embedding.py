"""Layer 0's input from token ids (what attn-run's --tokens builds), as each family's embedding
module computes it, one function per module. A folder spec's `tokens` names the module and its
tensors (full state_dict keys):

  tokens=dict(layers=[0], module="llama" | "gemma" | "gpt2" | "opt" | "bert" | "roberta",
              word=KEY, positions=KEY, rows=P, token_types=KEY, types=T, norm=PREFIX, eps=...,
              padding=ID (RoBERTa's padding_idx), dtype="int64" | "int32" (tokens.npy's))

The tables the tiny models do not hold already (learned positions, token types, the embedding
LayerNorm) are drawn by `tables` from a generator of their own, and the ids by `draw_ids`, so
the other tensors keep their draws. The values are the stored ones (float64 of the stored
dtype); a module whose arithmetic depends on the model's dtype (Gemma's normalizer) runs in it.
"""
import torch
import torch.nn.functional as F

from . import weights as W


def tables(spec, sd):
    """The spec's embedding tables added to the state dict `sd` (an OrderedDict), unless present."""
    t = spec.get("tokens")
    if not t:
        return sd
    g = torch.Generator().manual_seed(spec["seed"] + 8000)
    C = sd[t["word"]].shape[1]
    if t.get("positions") and t["positions"] not in sd:
        sd[t["positions"]] = 0.5 * W.randn(g, t["rows"], C)
    if t.get("token_types") and t["token_types"] not in sd:
        sd[t["token_types"]] = 0.5 * W.randn(g, t["types"], C)
    if t.get("norm"):
        sd[t["norm"] + "weight"] = 1.0 + 0.3 * W.randn(g, C)
        sd[t["norm"] + "bias"] = 0.1 * W.randn(g, C)
    return sd


def draw_ids(spec, vocab, B, S):
    """(B, S) int64 token ids in [0, vocab), from the spec's own generator."""
    g = torch.Generator().manual_seed(spec["seed"] + 9000)
    return torch.randint(vocab, (B, S), generator=g)


def llama(t, sd, ids, dtype, pos=None):
    """LlamaModel.forward: inputs_embeds = self.embed_tokens(input_ids) (nn.Embedding)."""
    return F.embedding(ids, sd[t["word"]])


def gemma(t, sd, ids, dtype, pos=None):
    """GemmaModel.forward, in the model's dtype: hidden_states = inputs_embeds; normalizer =
    torch.tensor(self.config.hidden_size**0.5, dtype=hidden_states.dtype); hidden_states =
    hidden_states * normalizer (Gemma3TextScaledWordEmbedding: embed_scale.to(weight.dtype))."""
    h = F.embedding(ids, sd[t["word"]].to(dtype))
    normalizer = torch.tensor(h.shape[-1] ** 0.5, dtype=h.dtype)
    return (h * normalizer).double()


def gpt2(t, sd, ids, dtype, pos=None):
    """GPT2Model.forward: hidden_states = inputs_embeds + position_embeds, wte(input_ids) and
    wpe(position_ids), position_ids as given, else arange(S)."""
    pos = torch.arange(ids.shape[-1]).expand_as(ids) if pos is None else pos
    return F.embedding(ids, sd[t["word"]]) + F.embedding(pos, sd[t["positions"]])


def opt(t, sd, ids, dtype, pos=None):
    """OPTDecoder.forward: inputs_embeds + pos_embeds, OPTLearnedPositionalEmbedding of the
    all-ones attention_mask: positions cumsum(mask) * mask - 1, looked up at positions + 2."""
    mask = torch.ones_like(ids)
    pos = torch.cumsum(mask, dim=1) * mask - 1
    return F.embedding(ids, sd[t["word"]]) + F.embedding(pos + 2, sd[t["positions"]])


def bert(t, sd, ids, dtype, pos=None):
    """BertEmbeddings.forward (absolute positions): embeddings = inputs_embeds +
    token_type_embeddings (token_type_ids zeros); embeddings += position_embeddings; then
    LayerNorm (layer_norm_eps)."""
    pos = torch.arange(ids.shape[-1]).expand_as(ids)
    h = F.embedding(ids, sd[t["word"]]) + F.embedding(torch.zeros_like(ids), sd[t["token_types"]])
    h = h + F.embedding(pos, sd[t["positions"]])
    C = h.shape[-1]
    return F.layer_norm(h, (C,), sd[t["norm"] + "weight"], sd[t["norm"] + "bias"], t["eps"])


def roberta(t, sd, ids, dtype, pos=None):
    """RobertaEmbeddings.forward: BertEmbeddings' sums and LayerNorm at the positions of
    create_position_ids_from_input_ids: mask = ids != padding_idx; cumsum(mask) * mask +
    padding_idx (the first token at padding_idx + 1, a padding token at padding_idx)."""
    mask = ids.ne(t["padding"]).long()
    pos = torch.cumsum(mask, dim=1) * mask + t["padding"]
    h = F.embedding(ids, sd[t["word"]]) + F.embedding(torch.zeros_like(ids), sd[t["token_types"]])
    h = h + F.embedding(pos, sd[t["positions"]])
    C = h.shape[-1]
    return F.layer_norm(h, (C,), sd[t["norm"] + "weight"], sd[t["norm"] + "bias"], t["eps"])


MODULES = {"llama": llama, "gemma": gemma, "gpt2": gpt2, "opt": opt, "bert": bert,
           "roberta": roberta}


def embed(t, sd, ids, dtype, pos=None):
    """The residual stream entering layer 0 (float64) for token ids (B, S); `pos` (B, S): the
    position_ids given to the model (the case's positions.npy), for the modules that take them."""
    with torch.no_grad():
        if pos is None:
            return MODULES[t["module"]](t, sd, ids, dtype).double()
        return MODULES[t["module"]](t, sd, ids, dtype, pos).double()

"""BERT and the families whose attention is BertSelfAttention (query / key / value, scores /
sqrt(D) + the extended mask, softmax; BertSelfOutput.dense; absolute positions live in the
embeddings; is_decoder makes it causal): bert, roberta, xlm-roberta (XLMRobertaSelfAttention),
electra (ElectraSelfAttention, embedding_size < hidden_size projected outside). Their LayerNorm
after the attention (BertSelfOutput: LayerNorm(dense(h) + input)) is --with-residual-norm's."""
import torch

from .. import gguf, hf, plain
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("bert", "roberta", "xlm-roberta", "electra")
# configuration_<type>.py's defaults for the keys the attention reads (bert and roberta's
# folders give them all)
CLASS_DEFAULTS = {
    "bert": {}, "roberta": {},
    "xlm-roberta": dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=12,
                        position_embedding_type="absolute", is_decoder=False),
    "electra": dict(hidden_size=256, num_attention_heads=4, num_hidden_layers=12,
                    position_embedding_type="absolute", is_decoder=False),
}
NAMES = ("self.query", "self.key", "self.value", "output.dense")
BASE = {"bert": "bert", "roberta": "roberta", "xlm-roberta": "roberta", "electra": "electra"}


def settings(cfg, layer):
    mt = cfg["model_type"]
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS[mt])
    if mt in ("xlm-roberta", "electra"):
        assert cfg["position_embedding_type"] == "absolute"
    C, H = cfg["hidden_size"], cfg["num_attention_heads"]
    D = hf.get(cfg, "head_dim") or C // H
    return Layer(C, H, H, D, names=NAMES, causal=bool(hf.get(cfg, "is_decoder")), qkv_bias=True,
                 o_bias=True, model_type=mt,
                 prefix=f"{BASE[mt]}.encoder.layer.{layer}.attention.")  # base_model_prefix


def outside(cfg, s0, g, vocab=12):
    r = lambda *shape: W.small(g, *shape)  # noqa: E731
    C, mt = s0.C, s0.model_type
    if mt == "xlm-roberta":
        return {"roberta.embeddings.word_embeddings.weight": r(vocab, C),
                "lm_head.dense.weight": r(C, C)}
    if mt == "electra":  # embedding_size < hidden_size: embeddings_project
        return {"electra.embeddings.word_embeddings.weight": r(vocab, 8),
                "electra.embeddings_project.weight": r(C, 8),
                "discriminator_predictions.dense.weight": r(C, C)}
    return {f"{mt}.embeddings.word_embeddings.weight": W.outside_draws(g, C)[mt]}


def attention_weights(a, g):
    """query, key, value, output.dense, then BertSelfOutput's LayerNorm (from a generator of
    its own, seeded by its name under the layer's prefix)."""
    C, H, D = a.C, a.H, a.D
    sd = {}
    for n in ("query", "key", "value"):
        W.put(sd, "self." + n, W.lin(g, H * D, C))
    W.put(sd, "output.dense", W.lin(g, C, H * D))
    w, b = W.layer_norm_params(a.prefix + "output.LayerNorm.", C)
    sd["output.LayerNorm.weight"], sd["output.LayerNorm.bias"] = w, b
    return sd


def neighbours(s, layer, g, small=4):
    p = f"{BASE[s.model_type]}.encoder.layer.{layer}."
    n = {p + "intermediate.dense.weight": W.small(g, small, s.C),
         p + "output.dense.weight": W.small(g, s.C, small)}
    if s.model_type in ("xlm-roberta", "electra"):
        n[p + "output.LayerNorm.weight"] = W.ones(s.C)
    return n


def gguf_metadata(w, arch, cfg, n_layers):  # BertModel.set_gguf_parameters
    gguf.text_model_metadata(w, arch, cfg, n_layers)
    w.add(arch + ".attention.causal", False)
    w.add(arch + ".pooling_type", 2)  # CLS (sentence-transformers' modules.json)


NORM = dict(name="attention.output.LayerNorm.", eps=1e-12)
FOLDERS = [
    dict(name="bert", seed=2, container="safetensors", dtype="f16", layers=[0, 1], B=2, S=7,
         pad="right", residual_norm=dict(NORM, layers=[0]),
         input_norm=dict(kind="none", layers=[1]),  # post-norm: --residual runs the input as is
         config={"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 32,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 8,
                 "hidden_act": "gelu", "max_position_embeddings": 64,
                 "position_embedding_type": "absolute", "type_vocab_size": 2,
                 "vocab_size": 12, "layer_norm_eps": 1e-12}),
    dict(name="roberta", seed=3, container="safetensors", dtype="f16", layers=[1], S=6,
         residual_norm=dict(NORM, layers=[1]),  # RobertaConfig's layer_norm_eps
         config={"architectures": ["RobertaForMaskedLM"], "model_type": "roberta",
                 "hidden_size": 32, "num_attention_heads": 2, "num_hidden_layers": 2,
                 "intermediate_size": 8, "max_position_embeddings": 66, "pad_token_id": 1,
                 "position_embedding_type": "absolute", "vocab_size": 12}),
    # XLMRobertaForMaskedLM (FacebookAI/xlm-roberta-base's spelling), padded on the right
    dict(name="xlm_roberta", seed=301, container="safetensors", dtype="f32", layers=[0, 1],
         B=2, S=7, pad="right", residual_norm=dict(NORM, layers=[0], eps=1e-05),
         config={"architectures": ["XLMRobertaForMaskedLM"], "model_type": "xlm-roberta",
                 "attention_probs_dropout_prob": 0.1, "bos_token_id": 0, "eos_token_id": 2,
                 "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 32,
                 "initializer_range": 0.02, "intermediate_size": 8, "layer_norm_eps": 1e-05,
                 "max_position_embeddings": 66, "num_attention_heads": 4,
                 "num_hidden_layers": 2, "output_past": True, "pad_token_id": 1,
                 "position_embedding_type": "absolute", "type_vocab_size": 1,
                 "vocab_size": 12}),
    # ElectraForPreTraining (google/electra-small-discriminator's spelling): embedding_size
    dict(name="electra", seed=302, container="bin", dtype="f32", layers=[1, 2], B=2, S=6,
         residual_norm=dict(NORM, layers=[2]),
         config={"architectures": ["ElectraForPreTraining"], "model_type": "electra",
                 "attention_probs_dropout_prob": 0.1, "embedding_size": 8,
                 "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "hidden_size": 24,
                 "initializer_range": 0.02, "intermediate_size": 8, "layer_norm_eps": 1e-12,
                 "max_position_embeddings": 64, "num_attention_heads": 4,
                 "num_hidden_layers": 3, "pad_token_id": 0, "type_vocab_size": 2,
                 "vocab_size": 12}),
    # Layer 0 from token ids (--tokens): BertEmbeddings (word + token type 0 + position, then
    # its LayerNorm); post-norm, so that is the layer's input as is.
    dict(name="bert_tokens", seed=51, container="safetensors", dtype="f32", layers=[0], B=2,
         S=6, input_norm=dict(kind="none", layers=[0]),
         tokens=dict(layers=[0], module="bert", word="bert.embeddings.word_embeddings.weight",
                     positions="bert.embeddings.position_embeddings.weight", rows=64,
                     token_types="bert.embeddings.token_type_embeddings.weight", types=2,
                     norm="bert.embeddings.LayerNorm.", eps=1e-12),
         config={"architectures": ["BertForMaskedLM"], "model_type": "bert", "hidden_size": 32,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 8,
                 "hidden_act": "gelu", "max_position_embeddings": 64,
                 "position_embedding_type": "absolute", "type_vocab_size": 2,
                 "vocab_size": 12, "layer_norm_eps": 1e-12}),
    # RobertaEmbeddings: positions count the non-padding ids from pad_token_id + 1 (the drawn
    # ids hold some 1s, which sit at position 1).
    dict(name="roberta_tokens", seed=52, container="safetensors", dtype="f32", layers=[0], B=2,
         S=7, input_norm=dict(kind="none", layers=[0]),
         tokens=dict(layers=[0], module="roberta",
                     word="roberta.embeddings.word_embeddings.weight",
                     positions="roberta.embeddings.position_embeddings.weight", rows=66,
                     token_types="roberta.embeddings.token_type_embeddings.weight", types=1,
                     norm="roberta.embeddings.LayerNorm.", eps=1e-5, padding=1),
         config={"architectures": ["RobertaForMaskedLM"], "model_type": "roberta",
                 "hidden_size": 32, "num_attention_heads": 2, "num_hidden_layers": 2,
                 "intermediate_size": 8, "layer_norm_eps": 1e-05, "max_position_embeddings": 66,
                 "pad_token_id": 1, "position_embedding_type": "absolute", "type_vocab_size": 1,
                 "vocab_size": 12}),
]

HELDOUT = [
    # BertModel (no "bert." prefix), a decoder BERT (BertLMHeadModel) is causal
    dict(name="bert", seed=102, container="safetensors", dtype="f32", layers=[2], B=2, S=6,
         pad="right", rename=[("bert.", "")], residual_norm=dict(NORM, layers=[2]),
         config={"model_type": "bert", "hidden_size": 48, "num_attention_heads": 3,
                 "num_hidden_layers": 3, "position_embedding_type": "absolute"}),
    dict(name="bert_decoder", seed=112, container="safetensors", dtype="f32", layers=[0], B=2,
         S=6, pad="right",
         config={"model_type": "bert", "hidden_size": 32, "num_attention_heads": 4,
                 "num_hidden_layers": 1, "is_decoder": True}),
    dict(name="roberta", seed=103, container="shards2", dtype="bf16", layers=[0, 2], B=2,
         S=10, pad="left", residual_norm=dict(NORM, layers=[0, 2]),
         config={"model_type": "roberta", "hidden_size": 64, "num_attention_heads": 8,
                 "num_hidden_layers": 3}),
    # XLMRobertaModel (no "roberta." prefix), key padding on the left, bf16, two shards
    dict(name="xlm_roberta_model", seed=401, container="shards2", dtype="bf16", layers=[2],
         B=3, S=9, pad="left", rename=[("roberta.", "")], residual_norm=dict(NORM, layers=[2]),
         config={"model_type": "xlm-roberta", "hidden_size": 48, "num_attention_heads": 6,
                 "num_hidden_layers": 3, "max_position_embeddings": 514}),
    # XLMRobertaForCausalLM: is_decoder makes the self-attention causal
    dict(name="xlm_roberta_decoder", seed=402, container="safetensors", dtype="f32",
         layers=[0], B=2, S=8, pad="right",
         config={"architectures": ["XLMRobertaForCausalLM"], "model_type": "xlm-roberta",
                 "hidden_size": 32, "is_decoder": True, "num_attention_heads": 2,
                 "num_hidden_layers": 1}),
    # ELECTRA generator (ElectraForMaskedLM), f16, left padding; no position_embedding_type
    dict(name="electra_generator", seed=403, container="safetensors", dtype="f16",
         layers=[0, 1], B=2, S=7, pad="left",
         config={"architectures": ["ElectraForMaskedLM"], "model_type": "electra",
                 "embedding_size": 8, "hidden_size": 16, "intermediate_size": 8,
                 "num_attention_heads": 1, "num_hidden_layers": 2}),
    # ElectraModel saved bare ("encoder.layer.N."), pytorch_model.bin
    dict(name="electra_model", seed=404, container="bin", dtype="f32", layers=[1], S=10,
         rename=[("electra.", "")], residual_norm=dict(NORM, layers=[1]),
         config={"model_type": "electra", "hidden_size": 40, "num_attention_heads": 5,
                 "num_hidden_layers": 2}),
]

GGUF = [
    # BERT (BertModel as sentence-transformers ship it): biases, bidirectional.
    dict(name="bert", arch="bert", seed=45, layers=[0, 1], S=7, metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "F16", "attn_v": "Q4_0", "attn_output": "Q8_0"},
         config={"architectures": ["BertModel"], "model_type": "bert", "hidden_size": 32,
                 "num_attention_heads": 4, "num_hidden_layers": 2, "intermediate_size": 8,
                 "max_position_embeddings": 512, "layer_norm_eps": 1e-12,
                 "position_embedding_type": "absolute", "type_vocab_size": 2,
                 "vocab_size": 12}),
]

PLAIN = [
    dict(name="bert_padded_f32", seed=1006, prefix="bert.encoder.layer.0.attention.",
         block="bert.encoder.layer.0.attention.", C=12, H=3, Hkv=3, D=4, dtype="f32",
         causal=False, padded=True),
]


def write_plain(out, case):
    """BertSelfAttention without positions, its output.LayerNorm beside it."""
    C, H, D = case["C"], case["H"], case["D"]

    def draw():
        own = {}
        for n in ("self.query", "self.key", "self.value"):
            plain.add(own, n, plain.plain_linear(H * D, C))
        plain.add(own, "output.dense", plain.plain_linear(C, H * D))
        return own, {"output.LayerNorm.weight": torch.ones(C, dtype=torch.float64),
                     "output.LayerNorm.bias": torch.zeros(C, dtype=torch.float64)}

    plain.family_case(out, case, draw, Layer(C, H, H, D, names=NAMES, causal=False))

"""GPTBigCode (SantaCoder, StarCoder): modeling_gpt_bigcode.GPTBigCodeAttention: c_attn an
nn.Linear, split (C, D, D) with multi_query (one K/V head for every query head: [Q | K | V]),
else viewed (H, 3D) per head [q, k, v]; c_proj; biases; scale 1 / sqrt(D) unless
scale_attn_weights is false; learned positions outside."""
from .. import gguf, hf
from .. import weights as W
from ..reference import Layer

MODEL_TYPES = ("gpt_bigcode",)
CLASS_DEFAULTS = dict(multi_query=True, scale_attn_weights=True)


def settings(cfg, layer):
    cfg = hf.with_defaults(cfg, CLASS_DEFAULTS)
    C, H, _, D = hf.sizes(cfg)
    mq = cfg["multi_query"]
    return Layer(C, H, 1 if mq else H, D, layout="fused" if mq else "per_head",
                 names=("c_attn", "c_proj"), scale=D ** -0.5 if cfg["scale_attn_weights"] else 1.0,
                 qkv_bias=True, o_bias=True, model_type="gpt_bigcode",
                 prefix=f"transformer.h.{layer}.attn.")


def outside(cfg, s0, g, vocab=12):
    return {"transformer.wte.weight": W.small(g, vocab, s0.C),
            "transformer.wpe.weight": W.small(g, 64, s0.C)}


def attention_weights(a, g):  # c_attn (C + 2 * Hkv * D, C), c_proj
    sd = {}
    W.put(sd, "c_attn", W.lin(g, (a.H + 2 * a.Hkv) * a.D, a.C, True))
    W.put(sd, "c_proj", W.lin(g, a.C, a.C, True))
    return sd


def neighbours(s, layer, g, small=4):
    p = f"transformer.h.{layer}."
    one = W.ones(s.C)
    return {p + "ln_1.weight": one, p + "ln_1.bias": one * 0,
            p + "mlp.c_fc.weight": W.small(g, small, s.C)}


def starcoder_metadata(w, arch, cfg, n_layers):  # StarCoderModel.set_gguf_parameters
    a = arch + "."
    gguf.general(w, arch)
    w.add(a + "context_length", cfg["n_positions"])
    w.add(a + "embedding_length", cfg["n_embd"])
    w.add(a + "feed_forward_length", 4 * cfg["n_embd"])
    w.add(a + "block_count", n_layers)
    w.add(a + "attention.head_count", cfg["n_head"])
    w.add(a + "attention.head_count_kv", 1)  # whatever multi_query says
    w.add(a + "attention.layer_norm_epsilon", float(cfg.get("layer_norm_epsilon", 1e-5)))


FOLDERS = [
    # SantaCoder / StarCoder: multi_query (one K/V head), fp32 softmax flags as on the hub
    dict(name="gpt_bigcode", seed=301, container="safetensors", dtype="f16", layers=[0, 1],
         B=2, S=8, pad="left",
         config={"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode",
                 "activation_function": "gelu_pytorch_tanh", "attention_softmax_in_fp32": True,
                 "attn_pdrop": 0.1, "embd_pdrop": 0.1, "layer_norm_epsilon": 1e-05,
                 "multi_query": True, "n_embd": 32, "n_head": 4, "n_inner": 8, "n_layer": 2,
                 "n_positions": 64, "resid_pdrop": 0.1, "scale_attention_softmax_in_fp32": True,
                 "scale_attn_weights": True, "torch_dtype": "float16", "vocab_size": 12}),
    # GPT-BigCode without multi_query: c_attn per head [q, k, v]
    dict(name="gpt_bigcode_mha", seed=302, container="safetensors", dtype="f32", layers=[1],
         S=7,
         config={"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode",
                 "multi_query": False, "n_embd": 24, "n_head": 3, "n_inner": 8, "n_layer": 2,
                 "n_positions": 64, "scale_attn_weights": True, "vocab_size": 12}),
]

HELDOUT = [
    # GPTBigCodeModel (no "transformer." prefix), multi_query and scale_attn_weights left out
    dict(name="gpt_bigcode", seed=401, container="safetensors", dtype="f32", layers=[2], B=2,
         S=9, pad="right", rename=[("transformer.", "")],
         config={"model_type": "gpt_bigcode", "n_embd": 40, "n_head": 5, "n_layer": 3}),
    dict(name="gpt_bigcode_mha_noscale", seed=402, container="safetensors", dtype="bf16",
         layers=[0], S=6,
         config={"model_type": "gpt_bigcode", "n_embd": 32, "n_head": 2, "n_layer": 1,
                 "multi_query": False, "scale_attn_weights": False}),
]

GGUF = [
    # SantaCoder / StarCoder (GPT-BigCode, multi_query): c_attn as attn_qkv.
    dict(name="starcoder", arch="starcoder", seed=39, layers=[0, 1],
         metadata=starcoder_metadata, types={"attn_qkv": "Q8_0", "attn_output": "Q4_0"},
         config={"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode",
                 "layer_norm_epsilon": 1e-05, "multi_query": True, "n_embd": 32, "n_head": 4,
                 "n_inner": 8, "n_layer": 2, "n_positions": 64, "scale_attn_weights": True,
                 "vocab_size": 12}),
    # GPT-BigCode without multi_query: c_attn per head [q, k, v] (head_count_kv still 1).
    dict(name="starcoder_mha", arch="starcoder", seed=40, layers=[1],
         metadata=starcoder_metadata, types={"attn_qkv": "F16", "attn_output": "Q8_0"},
         config={"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode",
                 "multi_query": False, "n_embd": 32, "n_head": 2, "n_inner": 8,
                 "n_layer": 2, "n_positions": 64, "scale_attn_weights": True,
                 "vocab_size": 12}),
]

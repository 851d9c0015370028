"""T5, mT5, UMT5: modeling_t5.T5Attention (modeling_mt5 and modeling_umt5 are the same
attention): q, k, v, o without bias, inner dim num_heads * d_kv (not d_model), no 1/sqrt(d_kv)
scale (Mesh TensorFlow's init folds it in); compute_bias looks the bucket of (memory - context)
position (_relative_position_bucket, bidirectional = not is_decoder) up in
relative_attention_bias, which T5Stack gives block 0 only (has_relative_attention_bias =
bool(i == 0)) and passes on to every later block as position_bias; UMT5 gives every
self-attention its own table. The cross-attention (EncDecAttention) has no table: position_bias
is zeros. Masked keys get no weight (T5 adds finfo.min).

Its model folders hold a whole tiny T5ForConditionalGeneration (shared, encoder.block.N.layer.0
.SelfAttention.{q,k,v,o}, layer norms, DenseReluDense, decoder.block.N.layer.1.EncDecAttention,
lm_head) and, besides encoder layer<N>/ cases (--model DIR --layer N), decoder_self<N>/ and
decoder_cross<N>/ cases that run the decoder's modules as the README says: case.json names the
module by weights_prefix, with causal and block 0's table as relative_bias.table for the
self-attention, and kv_input (encoder states) with "relative_bias": null for the
cross-attention."""
import os
from collections import OrderedDict

import torch

from .. import folder, gguf, reference
from ..reference import Layer

MODEL_TYPES = ("t5", "mt5", "umt5")
DEFAULTS = {  # the configuration classes' defaults for the keys the attention reads
    "t5": {"d_model": 512, "d_kv": 64, "num_heads": 8, "num_layers": 6,
           "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128},
    "mt5": {"d_model": 512, "d_kv": 64, "num_heads": 6, "num_layers": 8,
            "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128},
    "umt5": {"d_model": 512, "d_kv": 64, "num_heads": 6, "num_layers": 8,
             "relative_attention_num_buckets": 32, "relative_attention_max_distance": 128},
}
TABLE = "relative_attention_bias.weight"


def read(cfg):
    """config.json as T5Config / MT5Config / UMT5Config read it."""
    mt = cfg["model_type"]
    get = lambda k: cfg.get(k, DEFAULTS[mt][k])  # noqa: E731
    enc = get("num_layers")
    dec = cfg.get("num_decoder_layers") or enc  # T5Config: num_decoder_layers or num_layers
    return {"model_type": mt, "C": get("d_model"), "D": get("d_kv"), "H": get("num_heads"),
            "encoder_layers": enc, "decoder_layers": dec,
            "buckets": get("relative_attention_num_buckets"),
            "max_distance": get("relative_attention_max_distance"),
            "gated": cfg.get("feed_forward_proj", "relu").startswith("gated-"),
            "d_ff": cfg.get("d_ff", 2048), "vocab": cfg.get("vocab_size", 32128),
            "every_layer_table": mt == "umt5"}


def layer_of(t, prefix, kind, layer):
    """The Layer of an encoder or decoder ("decoder") self-attention, or the cross-attention
    ("cross"); its table (self-attention) under TABLE beside the module's own tensors."""
    rb = None if kind == "cross" else {"table": TABLE, "buckets": t["buckets"],
                                       "max_distance": t["max_distance"],
                                       "bidirectional": kind == "encoder"}
    return Layer(t["C"], t["H"], t["H"], t["D"], names=("q", "k", "v", "o"), scale=1.0,
                 causal=kind == "decoder", relative_bias=rb, model_type=t["model_type"],
                 prefix=prefix, extra=dict(t, layer=layer))


def self_prefix(stack, i):
    return f"{stack}.block.{i}.layer.0.SelfAttention."


def num_layers(cfg):
    return read(cfg)["encoder_layers"]


def settings(cfg, layer):
    """Encoder block `layer`'s self-attention."""
    return layer_of(read(cfg), self_prefix("encoder", layer), "encoder", layer)


def attention_weights(a, g, table=None):
    """q, k, v, o at T5's init scales, then the relative_attention_bias table (block 0, or every
    self-attention of UMT5)."""
    t = a.extra
    C, H, D = t["C"], t["H"], t["D"]
    r = lambda *shape, k=1.0: torch.randn(*shape, generator=g, dtype=torch.float64) * k  # noqa
    sd = OrderedDict((n + ".weight", r(H * D, C, k=C ** -0.5)) for n in ("q", "k", "v"))
    sd["o.weight"] = r(C, H * D, k=(H * D) ** -0.5)
    if (t["layer"] == 0 or t["every_layer_table"]) if table is None else table:
        sd[TABLE] = r(t["buckets"], H)
    return sd


def model(cfg, layers, g):
    """A whole T5ForConditionalGeneration's state_dict."""
    t = read(cfg)
    r = lambda *shape, k=1.0: torch.randn(*shape, generator=g, dtype=torch.float64) * k  # noqa
    C, F = t["C"], t["d_ff"]
    sd = OrderedDict()
    sd["shared.weight"] = r(t["vocab"], C)

    def ff(prefix):
        if t["gated"]:
            sd[prefix + "DenseReluDense.wi_0.weight"] = r(F, C, k=0.1)
            sd[prefix + "DenseReluDense.wi_1.weight"] = r(F, C, k=0.1)
        else:
            sd[prefix + "DenseReluDense.wi.weight"] = r(F, C, k=0.1)
        sd[prefix + "DenseReluDense.wo.weight"] = r(C, F, k=0.1)
        sd[prefix + "layer_norm.weight"] = 1.0 + r(C, k=0.1)

    for stack, n in (("encoder", t["encoder_layers"]), ("decoder", t["decoder_layers"])):
        for i in range(n):
            b = f"{stack}.block.{i}."
            a = layer_of(t, b + "layer.0.SelfAttention.", "encoder", i)
            sd.update((a.prefix + k, v) for k, v in attention_weights(a, g).items())
            sd[b + "layer.0.layer_norm.weight"] = 1.0 + r(C, k=0.1)
            if stack == "decoder":
                sd.update((b + "layer.1.EncDecAttention." + k, v)
                          for k, v in attention_weights(a, g, table=False).items())
                sd[b + "layer.1.layer_norm.weight"] = 1.0 + r(C, k=0.1)
            ff(b + f"layer.{2 if stack == 'decoder' else 1}.")
        sd[f"{stack}.final_layer_norm.weight"] = 1.0 + r(C, k=0.1)
    sd["lm_head.weight"] = r(t["vocab"], C)
    return sd


def folder_cases(fam, spec, root, stored, layers, g, rn):
    """spec["cases"]: encoder layers, the decoder's self-attention and its cross-attention."""
    t = read(spec["config"])

    def table_of(stack, i):
        return self_prefix(stack, i if t["every_layer_table"] else 0) + TABLE

    def module(prefix, table=None):
        lsd = {k[len(prefix):]: v for k, v in stored.items() if k.startswith(prefix)}
        if table:
            lsd[TABLE] = stored[table]
        return lsd

    lines = []
    for case in spec["cases"]:
        kind, layer = case["kind"], case["layer"]
        B, S = case.get("B", 1), case.get("S", 7)
        x = torch.randn(B, S, t["C"], generator=g, dtype=torch.float64).float().double()
        keep = folder.keep_mask(B, S, case["pad"]) if case.get("pad") else None
        cj = {"model": "../model", "layer": layer if kind == "encoder" else 0,
              "input": "input.npy"}
        extra, kv = {}, None
        if kind == "encoder":  # --model DIR --layer N
            prefix = self_prefix("encoder", layer)
            lsd = module(prefix, table_of("encoder", layer))
        elif kind == "decoder":  # the decoder's causal self-attention, by weights_prefix
            prefix = self_prefix("decoder", layer)
            lsd = module(prefix, table_of("decoder", layer))
            cj.update({"weights_prefix": prefix, "causal": True})
            if not t["every_layer_table"]:  # the table is block 0's
                cj["relative_bias"] = {"table": table_of("decoder", layer)}
        else:  # cross-attention over the encoder's states: no table, keys from kv_input
            kv = torch.randn(B, case["T"], t["C"], generator=g, dtype=torch.float64)
            kv = kv.float().double()
            keep = folder.keep_mask(B, case["T"], case["pad"]) if case.get("pad") else None
            prefix = f"decoder.block.{layer}.layer.1.EncDecAttention."
            lsd = module(prefix)
            extra["encoder_states.npy"] = kv.float().numpy()
            cj.update({"weights_prefix": prefix, "relative_bias": None,
                       "kv_input": "encoder_states.npy"})
        a = layer_of(t, prefix, kind, layer)
        with torch.no_grad():
            ctx, maps = reference.attention(a, lsd, x, keep, None, kv)
        if keep is not None:
            extra["attention_mask.npy"] = keep.numpy()
            cj["attention_mask"] = "attention_mask.npy"
        folder.write_case(os.path.join(root, case["dir"]), cj, x, ctx, maps, extra)
        lines.append(f"{case['dir']}: {kind} block {layer}, B {B} S {S}" +
                     (f" T {case['T']}" if kind == "cross" else "") +
                     (f", padded {case['pad']}" if case.get("pad") else ""))
    return lines


def folder_case_checks(spec):
    return [(c["dir"], c["layer"], ["config"] + (["model"] if c["kind"] == "encoder" and
                                                 not c.get("pad") else []))
            for c in spec["cases"]]


def gguf_metadata(w, arch, cfg, n_layers):  # T5Model.set_gguf_parameters
    a = arch + "."
    gguf.general(w, arch)
    w.add(a + "context_length", cfg.get("n_positions", 512))
    w.add(a + "embedding_length", cfg["d_model"])
    w.add(a + "feed_forward_length", cfg["d_ff"])
    w.add(a + "block_count", n_layers)
    w.add(a + "decoder_block_count", cfg.get("num_decoder_layers") or n_layers)
    w.add(a + "attention.head_count", cfg["num_heads"])
    w.add(a + "attention.key_length", cfg["d_kv"])
    w.add(a + "attention.value_length", cfg["d_kv"])
    w.add(a + "attention.layer_norm_epsilon", float(cfg["layer_norm_epsilon"]))
    w.add(a + "attention.relative_buckets_count", cfg["relative_attention_num_buckets"])
    w.add(a + "attention.layer_norm_rms_epsilon", float(cfg["layer_norm_epsilon"]))
    w.add(a + "decoder_start_token_id", 0)


def gguf_after_layers(w, s0, per_layer, r):
    """T5Stack: block 0's table serves every block (UMT5: each its own); the decoder's first
    block's tensors after the encoder's."""
    table = per_layer[0][1][TABLE]
    for layer, (s, lsd) in per_layer.items():
        lsd.setdefault(TABLE, table)
    C = s0.C
    for tn, shape in (("attn_q", (C, C)), ("attn_o", (C, C)), ("cross_attn_q", (C, C)),
                      ("attn_rel_b", (s0.extra["buckets"], s0.H))):
        gguf.f32(w, "dec.blk.0." + tn + ".weight", r(*shape).numpy())


T5_COMMON = {"dropout_rate": 0.1, "initializer_factor": 1.0, "layer_norm_epsilon": 1e-06,
             "is_encoder_decoder": True, "pad_token_id": 0, "eos_token_id": 1,
             "decoder_start_token_id": 0, "use_cache": True, "transformers_version": "4.46.0"}
FOLDERS = [
    # google-t5/t5-small's spelling (no relative_attention_max_distance: the default 128),
    # shrunk; a small bucket table so 16 tokens reach its log part and saturation.
    dict(name="t5", seed=51, container="safetensors", dtype="f32",
         config=dict(T5_COMMON, architectures=["T5ForConditionalGeneration"], model_type="t5",
                     d_model=24, d_kv=6, d_ff=16, num_heads=4, num_layers=3,
                     num_decoder_layers=3, relative_attention_num_buckets=8,
                     feed_forward_proj="relu", vocab_size=12, n_positions=512,
                     output_past=True),
         cases=[dict(dir="layer0", kind="encoder", layer=0, B=2, S=16, pad="right"),
                dict(dir="layer2", kind="encoder", layer=2, B=1, S=16),
                dict(dir="decoder_self2", kind="decoder", layer=2, B=1, S=16),
                dict(dir="decoder_cross1", kind="cross", layer=1, B=2, S=6, T=9,
                     pad="right")]),
    # google/flan-t5-small's spelling (T5 v1.1: gated-gelu, untied lm_head, d_kv * heads
    # != d_model, both relative_attention keys); T5's 32 buckets up to 128, 40 tokens.
    dict(name="flan_t5", seed=52, container="safetensors", dtype="f32",
         config=dict(T5_COMMON, architectures=["T5ForConditionalGeneration"], model_type="t5",
                     d_model=16, d_kv=8, d_ff=12, num_heads=3, num_layers=2,
                     num_decoder_layers=3, relative_attention_num_buckets=32,
                     relative_attention_max_distance=128, feed_forward_proj="gated-gelu",
                     dense_act_fn="gelu_new", is_gated_act=True, tie_word_embeddings=False,
                     vocab_size=12, n_positions=512, task_specific_params={}),
         cases=[dict(dir="layer1", kind="encoder", layer=1, B=1, S=40),
                dict(dir="decoder_self1", kind="decoder", layer=1, B=1, S=40)]),
    # google/mt5-small's spelling (MT5ForConditionalGeneration, pytorch_model.bin, no
    # relative_attention_max_distance); the same attention as T5.
    dict(name="mt5", seed=53, container="bin", dtype="f32",
         config=dict(T5_COMMON, architectures=["MT5ForConditionalGeneration"],
                     model_type="mt5", d_model=20, d_kv=4, d_ff=12, num_heads=5,
                     num_layers=2, num_decoder_layers=2, relative_attention_num_buckets=10,
                     feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                     tokenizer_class="T5Tokenizer", vocab_size=12),
         cases=[dict(dir="layer1", kind="encoder", layer=1, B=2, S=9, pad="left"),
                dict(dir="decoder_cross0", kind="cross", layer=0, B=1, S=5, T=8)]),
    # google/umt5-small's spelling (UMT5ForConditionalGeneration): every self-attention
    # holds its own relative_attention_bias; bf16 in two shards.
    dict(name="umt5", seed=54, container="shards2", dtype="bf16",
         config=dict(T5_COMMON, architectures=["UMT5ForConditionalGeneration"],
                     model_type="umt5", d_model=16, d_kv=4, d_ff=12, num_heads=4,
                     num_layers=3, num_decoder_layers=2, relative_attention_num_buckets=12,
                     relative_attention_max_distance=20, feed_forward_proj="gated-gelu",
                     tie_word_embeddings=False, scalable_attention=True,
                     tokenizer_class="T5Tokenizer", vocab_size=12),
         cases=[dict(dir="layer2", kind="encoder", layer=2, B=1, S=24),
                dict(dir="decoder_self1", kind="decoder", layer=1, B=2, S=12)]),
]

HELDOUT = [
    # t5-base's older spelling: no relative_attention_* keys at all (32 buckets up to 128),
    # 70 tokens (past the exact buckets both ways), pytorch_model.bin in f16.
    dict(name="t5_defaults", seed=201, container="bin", dtype="f16",
         config={"architectures": ["T5WithLMHeadModel"], "model_type": "t5", "d_model": 32,
                 "d_kv": 8, "d_ff": 16, "num_heads": 4, "num_layers": 2, "vocab_size": 12,
                 "n_positions": 512, "feed_forward_proj": "relu"},
         cases=[dict(dir="layer1", kind="encoder", layer=1, B=1, S=70),
                dict(dir="layer0", kind="encoder", layer=0, B=3, S=21, pad="left"),
                dict(dir="decoder_self1", kind="decoder", layer=1, B=2, S=70),
                dict(dir="decoder_cross0", kind="cross", layer=0, B=3, S=4, T=21,
                     pad="left")]),
    # a large table (64 buckets up to 256) with num_decoder_layers null, bf16 safetensors
    dict(name="t5_large_table", seed=202, container="safetensors", dtype="bf16",
         config={"model_type": "t5", "d_model": 12, "d_kv": 5, "num_heads": 2,
                 "num_layers": 4, "num_decoder_layers": None, "d_ff": 8, "vocab_size": 12,
                 "relative_attention_num_buckets": 64,
                 "relative_attention_max_distance": 256, "feed_forward_proj": "gated-gelu"},
         cases=[dict(dir="layer3", kind="encoder", layer=3, B=1, S=300),
                dict(dir="decoder_self3", kind="decoder", layer=3, B=1, S=290)]),
    dict(name="mt5_shards", seed=203, container="shards3", dtype="f32",
         config={"architectures": ["MT5ForConditionalGeneration"], "model_type": "mt5",
                 "d_model": 18, "d_kv": 3, "num_heads": 6, "num_layers": 3,
                 "num_decoder_layers": 2, "d_ff": 8, "vocab_size": 12,
                 "relative_attention_num_buckets": 16, "relative_attention_max_distance": 40,
                 "feed_forward_proj": "gated-gelu"},
         cases=[dict(dir="layer2", kind="encoder", layer=2, B=2, S=33, pad="right"),
                dict(dir="decoder_self1", kind="decoder", layer=1, B=1, S=45)]),
    dict(name="umt5", seed=204, container="safetensors", dtype="f32",
         config={"architectures": ["UMT5EncoderModel"], "model_type": "umt5", "d_model": 16,
                 "d_kv": 8, "num_heads": 2, "num_layers": 2, "d_ff": 8, "vocab_size": 12,
                 "relative_attention_num_buckets": 20, "relative_attention_max_distance": 30},
         cases=[dict(dir="layer1", kind="encoder", layer=1, B=1, S=50),
                dict(dir="decoder_self1", kind="decoder", layer=1, B=1, S=50),
                dict(dir="decoder_cross1", kind="cross", layer=1, B=1, S=3, T=50)]),
]

GGUF = [
    # T5 (T5ForConditionalGeneration): encoder blocks as enc.blk.N., block 0's table.
    dict(name="t5", arch="t5", seed=47, layers=[0, 1], S=9, blk="enc.blk.",
         metadata=gguf_metadata,
         types={"attn_q": "Q8_0", "attn_k": "Q4_1", "attn_v": "F16", "attn_o": "Q8_0"},
         config={"architectures": ["T5ForConditionalGeneration"], "model_type": "t5",
                 "d_model": 32, "d_kv": 8, "d_ff": 8, "num_heads": 4, "num_layers": 2,
                 "num_decoder_layers": 1, "relative_attention_num_buckets": 8,
                 "relative_attention_max_distance": 128, "layer_norm_epsilon": 1e-06,
                 "feed_forward_proj": "relu", "vocab_size": 12}),
    # UMT5: a table in every block.
    dict(name="umt5", arch="t5", seed=48, layers=[1], S=8, blk="enc.blk.",
         metadata=gguf_metadata,
         types={"attn_q": "BF16", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_o": "F16"},
         config={"architectures": ["UMT5ForConditionalGeneration"], "model_type": "umt5",
                 "d_model": 32, "d_kv": 8, "d_ff": 8, "num_heads": 4, "num_layers": 2,
                 "num_decoder_layers": 1, "relative_attention_num_buckets": 16,
                 "relative_attention_max_distance": 128, "layer_norm_epsilon": 1e-06,
                 "feed_forward_proj": "gated-gelu", "vocab_size": 12}),
]

VARIANTS = [
    # the encoder, bidirectional, with T5's 32 buckets up to 128 (40 tokens reach the
    # log-spaced buckets) and padding; the decoder's self-attention, causal and
    # one-directional, with a small table that 30 tokens take past max_distance
    dict(name="t5_encoder_relative_bias", writer="t5", causal=False, buckets=32,
         max_distance=128, B=2, S=40, layer=2, seed=9),
    dict(name="t5_decoder_relative_bias", writer="t5", causal=True, buckets=16, max_distance=24,
         B=1, S=30, layer=1, seed=10),
]

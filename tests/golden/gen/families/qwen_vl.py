"""Qwen2.5-VL's and Qwen3-VL's text towers. Qwen2.5-VL (modeling_qwen2_5_vl.Qwen2_5_VLAttention):
Qwen2's attention (q/k/v with bias, o_proj without, a window from use_sliding_window and
max_window_layers); Qwen3-VL (modeling_qwen3_vl.Qwen3VLTextAttention): Qwen3's (Qwen3VLTextRMSNorm
q/k norms per head, x * w, before rope; attention_bias). Their multimodal rope splits the
frequencies among three position rows (Qwen2.5-VL: chunks of mrope_section; Qwen3-VL: interleaved,
default [24, 20, 20]); text's three rows are the same 1-D positions, which is the plain rope; the
"image" specs give the rows of a sequence with an image (image_rows, as get_rope_index numbers
it), which differ, as (3, B, S) positions. The released Qwen2.5-VL
config.json keeps the text keys at the top and the layers under model.layers (the checkpoints) or
model.language_model.layers (saved by transformers 4.52 on, with text_config); Qwen3-VL nests
text_config, its layers under model.language_model.layers."""
import dataclasses

import torch

from .. import hf
from .. import weights as W
from ..reference import QkNorm

MODEL_TYPES = ("qwen2_5_vl", "qwen2_5_vl_text", "qwen3_vl", "qwen3_vl_text")
QWEN2_5_VL_DEFAULTS = dict(rope_theta=1000000.0, use_sliding_window=False, sliding_window=4096,
                           max_window_layers=80, rms_norm_eps=1e-5)
QWEN3_VL_DEFAULTS = dict(rope_theta=5000000.0, attention_bias=False, rms_norm_eps=1e-6,
                         head_dim=128)


def text_of(cfg):
    """The text model's keys: text_config when the file nests one, else the top."""
    return cfg["text_config"] if "text_config" in cfg else cfg


def prefix_of(cfg):
    """model.layers. under the released (flat) Qwen2.5-VL files, model.language_model.layers.
    when text_config is nested (Qwen3-VL always)."""
    return ("model.language_model" if "text_config" in cfg else "model") + \
        ".layers.{}.self_attn."


def settings(cfg, layer):
    qwen3 = cfg["model_type"].startswith("qwen3_vl")
    t = hf.with_defaults(text_of(cfg), QWEN3_VL_DEFAULTS if qwen3 else QWEN2_5_VL_DEFAULTS)
    mt = "qwen3_vl_text" if qwen3 else (
        "qwen2_5_vl_text" if "text_config" in cfg else "qwen2_5_vl")
    if qwen3:
        a = hf.decoder(t, mt, layer, prefix=prefix_of(cfg), bias_key="attention_bias")
        a = a.replace(qk_norm=QkNorm("rms", t["rms_norm_eps"]))
        window = None
    else:
        a = hf.decoder(t, mt, layer, prefix=prefix_of(cfg), qkv_bias=True, o_bias=False)
        sliding = bool(t["use_sliding_window"]) and layer >= t["max_window_layers"]
        window = t["sliding_window"] if hf.sliding(t, layer, sliding) else None
    scaling = hf.get(t, "rope_scaling")
    # Qwen2_5_VLTextConfig renames "mrope" to "default"; the sections stay in the object
    holder = hf.v5_params(t) or scaling or {}
    if scaling is not None and scaling.get("rope_type", scaling.get("type")) in ("mrope",
                                                                                  "default"):
        scaling = None
    rope = hf.rope(t, a.D, t["rope_theta"], scaling=scaling, params=hf.v5_params(t))
    # Qwen3VLTextRotaryEmbedding: mrope_section (default [24, 20, 20]), always interleaved;
    # Qwen2_5_VLAttention: rope_scaling["mrope_section"] in chunks
    section = holder.get("mrope_section", [24, 20, 20] if qwen3 else None)
    if section is not None:
        rope = dataclasses.replace(rope, mrope_section=tuple(section), mrope_interleaved=qwen3)
    return a.replace(rope=rope, window=window)


def position_rows(spec, keep, pos):
    """Position ids (3, B, S) of time, height and width as get_rope_index numbers a row of text
    with one image (spec["image"] = (h, w) merged patches, after spec["image_at"] text tokens):
    text tokens count on in all three rows; the image's tokens at st = the text before it,
    time st, height st + row, width st + column; the text after at the image's max + 1.
    Padded tokens keep position 1 (position_ids starts as ones). Without spec["image"]: pos."""
    if "image" not in spec:
        return pos
    h, w = spec["image"]
    B, S = keep.shape
    rows = torch.ones(3, B, S, dtype=torch.int64)
    for b in range(B):
        real = [i for i in range(S) if keep[b, i]]
        ids, nxt = [], 0
        for n, _ in enumerate(real):
            if spec["image_at"] <= n < spec["image_at"] + h * w:
                r, c = divmod(n - spec["image_at"], w)
                st = spec["image_at"]
                ids.append((st, st + r, st + c))
                nxt = st + max(h, w)
            else:
                ids.append((nxt,) * 3)
                nxt += 1
        for i, t in zip(real, ids):
            rows[:, b, i] = torch.tensor(t)
    return rows


def without_mrope(s):  # the guard: the time row alone turns every frequency
    return {"rope": dataclasses.replace(s.rope, mrope_section=None)}


def other_layout(s):  # the guard: the sections laid out the other way
    return {"rope": dataclasses.replace(s.rope, mrope_interleaved=not s.rope.mrope_interleaved)}


def num_layers(cfg):
    return text_of(cfg)["num_hidden_layers"]


def model(cfg, layers, g):
    """The VL model's tensors: a few of the vision tower's, the language model, lm_head."""
    s0 = layers[0]
    wrapped = "text_config" in cfg
    sd = {("model.visual." if wrapped else "visual.") + "patch_embed.proj.weight":
          W.small(g, 8, 3, 2, 2),
          ("model.visual." if wrapped else "visual.") + "blocks.0.attn.qkv.weight":
          W.small(g, 24, 8)}
    lm, _ = W.decoder_outside(s0, g)
    sd.update(lm)
    for s in layers:
        sd.update(W.decoder_block(s, g, lambda b: W.prefixed(W.decoder_attention(s, g), s.prefix),
                                  lambda b: {b + "mlp.up_proj.weight": W.small(g, 4, s.C)}))
    sd["lm_head.weight"] = W.small(g, 12, s0.C)
    return sd


QWEN2_5_VL_7B = {
    "architectures": ["Qwen2_5_VLForConditionalGeneration"], "attention_dropout": 0.0,
    "bos_token_id": 151643, "eos_token_id": 151645, "vision_start_token_id": 151652,
    "vision_end_token_id": 151653, "vision_token_id": 151654, "image_token_id": 151655,
    "video_token_id": 151656, "hidden_act": "silu", "hidden_size": 32,
    "initializer_range": 0.02, "intermediate_size": 8, "max_position_embeddings": 128000,
    "max_window_layers": 28, "model_type": "qwen2_5_vl", "num_attention_heads": 4,
    "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "transformers_version": "4.41.2", "use_cache": True,
    "use_sliding_window": False,
    "vision_config": {"depth": 1, "hidden_act": "silu", "hidden_size": 8,
                      "intermediate_size": 8, "num_heads": 2, "in_chans": 3,
                      "out_hidden_size": 32, "patch_size": 2, "spatial_merge_size": 2,
                      "spatial_patch_size": 2, "window_size": 112,
                      "fullatt_block_indexes": [0], "tokens_per_second": 2,
                      "temporal_patch_size": 2},
    "rope_scaling": {"type": "mrope", "mrope_section": [2, 1, 1]}, "vocab_size": 12}

QWEN3_VL_TEXT = {
    "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 151643,
    "dtype": "bfloat16", "eos_token_id": 151645, "head_dim": 8, "hidden_act": "silu",
    "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 8,
    "max_position_embeddings": 262144, "model_type": "qwen3_vl_text", "num_attention_heads": 4,
    "num_hidden_layers": 2, "num_key_value_heads": 2, "rms_norm_eps": 1e-06,
    "rope_scaling": {"mrope_interleaved": True, "mrope_section": [2, 1, 1],
                     "rope_type": "default"},
    "rope_theta": 5000000, "use_cache": True, "vocab_size": 12}

QWEN3_VL_8B = {
    "architectures": ["Qwen3VLForConditionalGeneration"], "image_token_id": 151655,
    "model_type": "qwen3_vl", "text_config": QWEN3_VL_TEXT, "tie_word_embeddings": False,
    "transformers_version": "4.57.0.dev0", "video_token_id": 151656,
    "vision_config": {"deepstack_visual_indexes": [0], "depth": 1, "hidden_act": "gelu_pytorch_tanh",
                      "hidden_size": 8, "in_channels": 3, "intermediate_size": 8,
                      "model_type": "qwen3_vl", "num_heads": 2, "num_position_embeddings": 16,
                      "out_hidden_size": 32, "patch_size": 2, "spatial_merge_size": 2,
                      "temporal_patch_size": 2},
    "vision_end_token_id": 151653, "vision_start_token_id": 151652}

FOLDERS = [
    # Qwen2.5-VL-7B-Instruct's spelling: the text keys at the top, mrope sections, the layers
    # under model.layers as its checkpoint has them
    dict(name="qwen2_5_vl", seed=741, container="shards2", dtype="bf16", layers=[0, 1], B=2,
         S=8, pad="left", config=QWEN2_5_VL_7B,
         input_norm=dict(kind="rms", name="input_layernorm.", eps=1e-6, layers=[1])),
    # Qwen3-VL-8B-Instruct's: text_config, interleaved mrope, q/k norms per head
    dict(name="qwen3_vl", seed=742, container="safetensors", dtype="bf16", layers=[0, 1], B=2,
         S=8, pad="right", config=QWEN3_VL_8B,
         guards=({"qk_norm": None},)),
    # saved by transformers 4.52 on: text_config nested (model_type qwen2_5_vl_text), the layers
    # under model.language_model, a window on layer 1
    dict(name="qwen2_5_vl_nested", seed=841, container="safetensors", dtype="f32",
         layers=[0, 1], B=2, S=7, pad="right",
         config={"architectures": ["Qwen2_5_VLForConditionalGeneration"],
                 "model_type": "qwen2_5_vl",
                 "text_config": {"model_type": "qwen2_5_vl_text", "hidden_size": 32,
                                 "num_attention_heads": 4, "num_key_value_heads": 1,
                                 "num_hidden_layers": 2, "use_sliding_window": True,
                                 "sliding_window": 3, "max_window_layers": 1,
                                 "rope_scaling": {"rope_type": "mrope",
                                                  "mrope_section": [2, 1, 1]}},
                 "vision_config": {"model_type": "qwen2_5_vl"}}),
    # an image in the text (get_rope_index's three rows differ): Qwen2.5-VL's sections in
    # chunks, right padding, rope_theta low enough that the height and width chunks (the low
    # frequencies) turn measurably over an image's few rows
    dict(name="qwen2_5_vl_image", seed=941, container="safetensors", dtype="bf16", layers=[1],
         B=2, S=12, pad="right", image=(2, 4), image_at=2,
         config=dict(QWEN2_5_VL_7B, rope_theta=100.0, hidden_size=64,
                     rope_scaling={"type": "mrope", "mrope_section": [4, 2, 2]}),
         guards=(without_mrope, other_layout)),
    # Qwen3-VL's interleaved sections, left padding, an image of 3 x 3 after one text token
    dict(name="qwen3_vl_image", seed=942, container="safetensors", dtype="f32", layers=[0],
         B=2, S=12, pad="left", image=(3, 3), image_at=1,
         config=dict(QWEN3_VL_8B, text_config=dict(QWEN3_VL_TEXT, rope_theta=10000.0)),
         guards=(without_mrope, other_layout)),
]

HELDOUT = [
    # transformers v5's rope_parameters with the mrope sections, GQA 4:1, biases on
    dict(name="qwen3_vl_v5", seed=842, container="shards2", dtype="f32", layers=[1], B=2, S=7,
         pad="left",
         config={"model_type": "qwen3_vl",
                 "text_config": {"model_type": "qwen3_vl_text", "hidden_size": 32,
                                 "num_attention_heads": 4, "num_key_value_heads": 1,
                                 "head_dim": 8, "num_hidden_layers": 2, "attention_bias": True,
                                 "rope_parameters": {"rope_type": "default",
                                                     "rope_theta": 1000000.0,
                                                     "mrope_section": [2, 1, 1],
                                                     "mrope_interleaved": True}}}),
]



def plain_rows(keep, pos):
    """The plain config's rows: an image of 2 x 3 after two text tokens (position_rows)."""
    return position_rows({"image": (2, 3), "image_at": 2}, keep, pos)


VARIANTS = [
    # mrope from a plain --config: rope.mrope_section over positions (3, B, S), the sections in
    # chunks (with q/k norms) and interleaved, GQA; --save's q and k after the rotation
    dict(name="mrope_sections", writer="decoder", C=32, H=4, Hkv=2, D=16, S=10,
         rope_cfg={"theta": 30.0, "mrope_section": [4, 2, 2]}, qk_norm=(1e-6, 0), save=True,
         position_rows=plain_rows, guards=(without_mrope, other_layout)),
    dict(name="mrope_interleaved", writer="decoder", C=32, H=4, Hkv=2, D=16, S=10, left=False,
         rope_cfg={"theta": 1000.0, "mrope_section": [2, 3, 3], "mrope_interleaved": True},
         save=True, position_rows=plain_rows, guards=(without_mrope, other_layout)),
]

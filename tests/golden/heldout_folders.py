#!/usr/bin/python3
"""Held-out check, run by hand (not in ctest, whose fixtures it must not resemble): model
folders of every family with other seeds, shapes, layers, padding, containers and config
spellings than tests/golden/folders, written by make_folders.py, run through the built
attn-run (--config case.json, and --model/--layer when unpadded) and compared with
make_folders' torch reference. Prints the worst relative error per family; fails above 1e-5.
Needs python3-torch. Usage: /usr/bin/python3 tests/golden/heldout_folders.py
(ATTN_BIN=path/to/attn-run, default build/attn-run; HELDOUT_DIR=where the folders go,
default a temporary folder)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

WT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(WT, "tests", "golden"))
import make_folders as mf  # noqa: E402

BIN = os.environ.get("ATTN_BIN", os.path.join(WT, "build", "attn-run"))
OUT = os.environ.get("HELDOUT_DIR") or os.path.join(tempfile.mkdtemp(), "folders")


def specs():
    llama_lin = {"rope_type": "linear", "factor": 4.0}
    return [
        # GPT-2 saved from GPT2LMHeadModel ("transformer." prefix), no scale_attn_weights
        dict(name="gpt2", seed=101, container="safetensors", dtype="f16", layers=[3, 1], B=3, S=9,
             pad="left", rename=[("h.", "transformer.h."), ("wte", "transformer.wte"),
                                 ("ln_f", "transformer.ln_f")],
             config={"model_type": "gpt2", "n_embd": 40, "n_head": 5, "n_layer": 4,
                     "n_positions": 32, "scale_attn_weights": False,
                     "scale_attn_by_inverse_layer_idx": False}),
        # BertModel (no "bert." prefix), a decoder BERT (BertLMHeadModel) is causal
        dict(name="bert", seed=102, container="safetensors", dtype="f32", layers=[2], B=2, S=6,
             pad="right", rename=[("bert.", "")],
             residual_norm=dict(layers=[2], name="attention.output.LayerNorm.", eps=1e-12),
             config={"model_type": "bert", "hidden_size": 48, "num_attention_heads": 3,
                     "num_hidden_layers": 3, "position_embedding_type": "absolute"}),
        dict(name="bert_decoder", seed=112, container="safetensors", dtype="f32", layers=[0], B=2,
             S=6, pad="right",
             config={"model_type": "bert", "hidden_size": 32, "num_attention_heads": 4,
                     "num_hidden_layers": 1, "is_decoder": True}),
        dict(name="roberta", seed=103, container="shards2", dtype="bf16", layers=[0, 2], B=2,
             S=10, pad="left",
             residual_norm=dict(layers=[0, 2], name="attention.output.LayerNorm.", eps=1e-12),
             config={"model_type": "roberta", "hidden_size": 64, "num_attention_heads": 8,
                     "num_hidden_layers": 3}),
        # Llama ignores sliding_window; linear scaling; q/k/v/o bias; no head_dim
        dict(name="llama", seed=104, container="safetensors", dtype="f32", layers=[2], B=2, S=8,
             pad="right", offset=0,
             config={"model_type": "llama", "attention_bias": True, "hidden_size": 48,
                     "max_position_embeddings": 64, "num_attention_heads": 6,
                     "num_hidden_layers": 3, "num_key_value_heads": 3, "rms_norm_eps": 1e-5,
                     "rope_scaling": llama_lin, "rope_theta": 10000.0, "sliding_window": 3}),
        dict(name="mistral", seed=105, container="safetensors", dtype="f16", layers=[1], B=1,
             S=11, config={"model_type": "mistral", "hidden_size": 32,
                           "max_position_embeddings": 64, "num_attention_heads": 4,
                           "num_hidden_layers": 2, "num_key_value_heads": 2,
                           "rope_theta": 10000.0, "sliding_window": None}),
        dict(name="mixtral", seed=106, container="shards2", dtype="bf16", layers=[0], B=2, S=9,
             pad="left",
             config={"model_type": "mixtral", "hidden_size": 32, "max_position_embeddings": 64,
                     "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
                     "rope_theta": 1e6, "sliding_window": 4}),
        # Qwen2: a window in config.json but use_sliding_window false; newer layer_types spelling
        dict(name="qwen2_off", seed=107, container="safetensors", dtype="f32", layers=[1], S=8,
             config={"model_type": "qwen2", "hidden_size": 32, "max_position_embeddings": 64,
                     "max_window_layers": 0, "num_attention_heads": 4, "num_hidden_layers": 2,
                     "num_key_value_heads": 4, "rope_theta": 10000.0, "sliding_window": 2,
                     "use_sliding_window": False}),
        dict(name="qwen2_types", seed=117, container="safetensors", dtype="f32", layers=[0, 3],
             B=2, S=9, pad="right",
             config={"model_type": "qwen2", "hidden_size": 32, "max_position_embeddings": 64,
                     "max_window_layers": 2, "num_attention_heads": 4, "num_hidden_layers": 4,
                     "num_key_value_heads": 2, "rope_theta": 10000.0, "sliding_window": 4,
                     "use_sliding_window": True,
                     "layer_types": ["full_attention", "full_attention", "sliding_attention",
                                     "sliding_attention"]}),
        dict(name="qwen3", seed=108, container="safetensors", dtype="f32", layers=[0, 1], B=2,
             S=7, pad="left",
             config={"model_type": "qwen3", "attention_bias": True, "head_dim": 8,
                     "hidden_size": 48, "max_position_embeddings": 64, "max_window_layers": 1,
                     "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 1,
                     "rms_norm_eps": 1e-5, "rope_theta": 10000, "sliding_window": 3,
                     "use_sliding_window": True}),
        # Gemma without head_dim: GemmaConfig's default 256
        dict(name="gemma_nohd", seed=109, container="safetensors", dtype="bf16", layers=[0], S=6,
             config={"model_type": "gemma", "hidden_size": 32, "num_attention_heads": 2,
                     "num_hidden_layers": 1, "num_key_value_heads": 1,
                     "max_position_embeddings": 64}),
        dict(name="gemma", seed=119, container="safetensors", dtype="f32", layers=[1], B=2, S=8,
             pad="right",
             config={"model_type": "gemma", "head_dim": 8, "hidden_size": 24,
                     "num_attention_heads": 3, "num_hidden_layers": 2, "num_key_value_heads": 3,
                     "rope_theta": 20000.0, "max_position_embeddings": 64}),
        # Gemma 2 without attn_logit_softcapping (Gemma2Config: 50.0); layer_types
        dict(name="gemma2", seed=110, container="safetensors", dtype="f32", layers=[2, 3], B=2,
             S=9, pad="right",
             config={"model_type": "gemma2", "head_dim": 8, "hidden_size": 32,
                     "num_attention_heads": 2, "num_hidden_layers": 4, "num_key_value_heads": 1,
                     "query_pre_attn_scalar": 32, "rope_theta": 10000.0, "sliding_window": 2,
                     "max_position_embeddings": 64,
                     "layer_types": ["sliding_attention", "full_attention",
                                     "sliding_attention", "full_attention"]}),
        dict(name="gemma2_cap", seed=120, container="safetensors", dtype="f32", layers=[0], S=7,
             config={"model_type": "gemma2", "head_dim": 8, "hidden_size": 32,
                     "attn_logit_softcapping": 1.5, "num_attention_heads": 4,
                     "num_hidden_layers": 2, "num_key_value_heads": 2,
                     "query_pre_attn_scalar": 8, "rope_theta": 10000.0, "sliding_window": 5,
                     "max_position_embeddings": 64}),
        # Gemma 3: layer_types and transformers v5 rope_parameters per layer type
        dict(name="gemma3_v5", seed=111, container="safetensors", dtype="f32", layers=[1, 3],
             B=2, S=8, pad="left",
             config={"model_type": "gemma3_text", "head_dim": 8, "hidden_size": 32,
                     "num_attention_heads": 4, "num_hidden_layers": 4, "num_key_value_heads": 1,
                     "query_pre_attn_scalar": 8, "rms_norm_eps": 1e-6, "sliding_window": 3,
                     "max_position_embeddings": 64, "attn_logit_softcapping": None,
                     "layer_types": ["sliding_attention", "sliding_attention",
                                     "sliding_attention", "full_attention"],
                     "rope_parameters": {
                         "full_attention": {"rope_type": "linear", "factor": 4.0,
                                            "rope_theta": 1000000.0},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}),
        # Gemma 3 multimodal: text_config holds only what differs from Gemma3TextConfig
        dict(name="gemma3_mm", seed=121, container="safetensors", dtype="bf16", layers=[0, 5],
             S=7, rename=[("model.", "language_model.model.")],
             config={"model_type": "gemma3", "architectures": ["Gemma3ForConditionalGeneration"],
                     "text_config": {"hidden_size": 32, "intermediate_size": 8,
                                     "model_type": "gemma3_text", "num_hidden_layers": 6,
                                     "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                                     "sliding_window": 4},
                     "vision_config": {"model_type": "siglip_vision_model"}}),
        dict(name="phi3", seed=112, container="safetensors", dtype="f16", layers=[1], B=2, S=7,
             pad="right",
             config={"model_type": "phi3", "hidden_size": 48, "max_position_embeddings": 64,
                     "num_attention_heads": 6, "num_hidden_layers": 2, "num_key_value_heads": 6,
                     "rope_scaling": None, "rope_theta": 10000.0, "sliding_window": None}),
        dict(name="phi3_long", seed=122, container="safetensors", dtype="f32", layers=[0], S=6,
             offset=30,
             config={"model_type": "phi3", "hidden_size": 32, "max_position_embeddings": 128,
                     "num_attention_heads": 2, "num_hidden_layers": 1, "num_key_value_heads": 1,
                     "original_max_position_embeddings": 32, "rope_theta": 10000.0,
                     "rope_scaling": {"type": "longrope", "long_factor": [1.0 + i for i in range(8)],
                                      "short_factor": [1.0] * 8},
                     "sliding_window": 4}),
        dict(name="phi3_su", seed=142, container="safetensors", dtype="f32", layers=[0], S=6,
             offset=3,
             config={"model_type": "phi3", "hidden_size": 32, "max_position_embeddings": 32,
                     "num_attention_heads": 2, "num_hidden_layers": 1, "num_key_value_heads": 2,
                     "original_max_position_embeddings": 4, "rope_theta": 10000.0,
                     "rope_scaling": {"type": "su", "long_factor": [1.0 + i for i in range(8)],
                                      "short_factor": [1.0] * 8}}),
        dict(name="gpt_neox", seed=113, container="safetensors", dtype="f32", layers=[2], B=2,
             S=9, pad="left",
             config={"model_type": "gpt_neox", "hidden_size": 48, "num_attention_heads": 3,
                     "num_hidden_layers": 3, "rotary_pct": 0.5, "rotary_emb_base": 10000,
                     "attention_bias": False, "max_position_embeddings": 64}),
        dict(name="falcon_new", seed=114, container="safetensors", dtype="f32", layers=[1], B=2,
             S=8, pad="left",
             config={"model_type": "falcon", "alibi": False, "bias": True, "hidden_size": 48,
                     "new_decoder_architecture": True, "num_attention_heads": 6,
                     "num_kv_heads": 3, "num_hidden_layers": 2, "rope_theta": 5000.0}),
        dict(name="falcon_mq_alibi", seed=115, container="safetensors", dtype="f32", layers=[0],
             B=2, S=7, pad="right",
             config={"model_type": "falcon", "alibi": True, "bias": False, "hidden_size": 40,
                     "multi_query": True, "new_decoder_architecture": False,
                     "num_attention_heads": 5, "num_hidden_layers": 1}),
        dict(name="falcon_plain", seed=125, container="safetensors", dtype="f32", layers=[0],
             S=7, config={"model_type": "falcon", "hidden_size": 32, "multi_query": False,
                          "num_attention_heads": 4, "num_hidden_layers": 1}),
        dict(name="bloom", seed=116, container="safetensors", dtype="bf16", layers=[1], B=3,
             S=8, pad="right", rename=[("h.", "transformer.h."),
                                        ("word_embeddings", "transformer.word_embeddings")],
             config={"model_type": "bloom", "hidden_size": 40, "n_head": 5, "n_layer": 2}),
        # MPT: attn_config without "alibi" (MptAttentionConfig: True), bias max 16, softmax_scale
        dict(name="mpt", seed=117, container="safetensors", dtype="f32", layers=[1], S=9,
             config={"model_type": "mpt", "attn_config": {"alibi_bias_max": 16,
                                                          "softmax_scale": 0.3},
                     "d_model": 40, "n_heads": 10, "n_layers": 2, "no_bias": True}),
        dict(name="mpt_noattn", seed=127, container="safetensors", dtype="f32", layers=[0], S=6,
             config={"model_type": "mpt", "d_model": 32, "n_heads": 4, "n_layers": 1}),
        dict(name="opt", seed=118, container="safetensors", dtype="f32", layers=[1], B=2, S=9,
             pad="left", rename=[("model.decoder.", "decoder.")],
             config={"model_type": "opt", "enable_bias": False, "hidden_size": 48,
                     "num_attention_heads": 3, "num_hidden_layers": 2}),
        # OPTModel ("decoder." prefix) with OPT-350m's post-norm: do_layer_norm_before false
        dict(name="opt_350m", seed=128, container="safetensors", dtype="f16", layers=[0, 2], B=2,
             S=7, rename=[("model.decoder.", "decoder.")],
             residual_norm=dict(layers=[0, 2], name="self_attn_layer_norm.", eps=1e-5),
             config={"model_type": "opt", "do_layer_norm_before": False, "hidden_size": 40,
                     "num_attention_heads": 5, "num_hidden_layers": 3}),
        dict(name="olmo2", seed=119, container="safetensors", dtype="bf16", layers=[1], B=2, S=8,
             pad="right",
             config={"model_type": "olmo2", "hidden_size": 48, "max_position_embeddings": 64,
                     "num_attention_heads": 6, "num_hidden_layers": 2, "num_key_value_heads": 6,
                     "rms_norm_eps": 1e-6, "rope_theta": 10000,
                     "rope_scaling": {"rope_type": "dynamic", "factor": 3.0}}),
        # gpt-oss without layer_types: even layers slide (GptOssConfig's default)
        dict(name="gpt_oss", seed=120, container="safetensors", dtype="f32", layers=[2, 3], B=2,
             S=9, pad="right",
             config={"model_type": "gpt_oss", "attention_bias": True, "head_dim": 8,
                     "hidden_size": 24, "max_position_embeddings": 64, "num_attention_heads": 4,
                     "num_hidden_layers": 4, "num_key_value_heads": 1, "rope_theta": 10000,
                     "rope_scaling": None, "sliding_window": 2}),
        # pytorch_model.bin (torch.save's zip) folders
        # pytorch_model.bin (torch.save) folders, once the reader is in the binary
        dict(name="bloom_bin", seed=131, container="bin", dtype="f16", layers=[0, 1], B=2, S=8,
             pad="left",
             config={"model_type": "bloom", "n_embed": 24, "n_head": 3, "n_layer": 2}),
        dict(name="gpt2_bin", seed=132, container="bin", dtype="f32", layers=[1], S=6,
             config={"model_type": "gpt2", "n_embd": 16, "n_head": 2, "n_layer": 2}),
        dict(name="qwen2_bin", seed=133, container="bin", dtype="bf16", layers=[0], B=2, S=7,
             pad="left",
             config={"model_type": "qwen2", "hidden_size": 32, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "num_hidden_layers": 1, "rope_theta": 10000.0,
                     "use_sliding_window": False, "max_position_embeddings": 64}),
    ]


def rel(a, b):
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30)) if a.shape == b.shape else float("inf")


def check_runs(worst, name, label, d, runs):
    """Runs attn-run with each argument list into d/out and compares its context and maps with
    d/expected; worst[name] keeps the largest relative error (inf for a failed run). With
    d/expected/residual_norm.npy, each runs again with --with-residual-norm against it."""
    norm = os.path.join(d, "expected", "residual_norm.npy")
    if os.path.exists(norm):
        runs = runs + [args + ["--with-residual-norm"] for args in runs]
    for args in runs:
        o = os.path.join(d, "out")
        shutil.rmtree(o, ignore_errors=True)
        r = subprocess.run([BIN] + args + ["-o", o, "-q"], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name} {label} {args[0]}: exit {r.returncode}: {r.stderr.strip()}")
            worst[name] = float("inf")
            continue
        want = norm if "--with-residual-norm" in args else \
            os.path.join(d, "expected", "context.npy")
        e = max(rel(np.load(os.path.join(o, "context.npy")), np.load(want)),
                rel(np.load(os.path.join(o, "attention.npy")),
                    np.load(os.path.join(d, "expected", "attention.npy"))))
        worst[name] = max(worst.get(name, 0.0), e)
        if e > 1e-5:
            print(f"{name} {label} {args[0]}: relative error {e:.2e}")


def report(worst):
    """Prints each folder's worst error and exits 1 when one is past 1e-5."""
    for name, e in worst.items():
        print(f"{name:20s} worst {e:.2e}")
    bad = [n for n, e in worst.items() if not e <= 1e-5]
    print("FAILED:" if bad else "all within 1e-5", " ".join(bad))
    sys.exit(1 if bad else 0)


def fresh_out():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)


def main():
    fresh_out()
    worst = {}
    for spec in specs():
        mf.make_folder(spec, OUT, verbose=False)
        fam = spec["name"]
        for layer in spec["layers"]:
            d = os.path.join(OUT, fam, f"layer{layer}")
            runs = [["--config", os.path.join(d, "case.json")]]
            if not os.path.exists(os.path.join(d, "attention_mask.npy")) and \
                    not os.path.exists(os.path.join(d, "positions.npy")):
                runs.append(["--model", os.path.join(OUT, fam, "model"), "--layer", str(layer),
                             "--input", os.path.join(d, "input.npy")])
            check_runs(worst, fam, f"layer {layer}", d, runs)
    report(worst)


if __name__ == "__main__":
    main()

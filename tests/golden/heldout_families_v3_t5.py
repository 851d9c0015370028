#!/usr/bin/python3
"""Held-out check of T5's family, run by hand (not in ctest): t5 / mt5 / umt5 model folders with
other seeds, shapes, bucket tables, containers, dtypes and config spellings than
tests/golden/folders (written by make_families_v3_t5.py's make_t5_folder), run through the built
attn-run (--config case.json; --model/--layer too for unpadded encoder layers) and compared
with its torch reference. Prints the worst relative error per folder; fails above 1e-5.
Needs python3-torch. Usage: /usr/bin/python3 tests/golden/heldout_families_v3_t5.py
(ATTN_BIN=path/to/attn-run, default build/attn-run; HELDOUT_DIR=where the folders go, default a
temporary folder)."""
import os
import sys

WT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(WT, "tests", "golden"))
import heldout_folders as ho  # noqa: E402  (its runner: ATTN_BIN, HELDOUT_DIR)
import make_families_v3_t5 as t5  # noqa: E402


def specs():
    return [
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


def main():
    ho.fresh_out()
    worst = {}
    for spec in specs():
        t5.make_t5_folder(spec, ho.OUT, verbose=False)
        name = spec["name"]
        for case in spec["cases"]:
            d = os.path.join(ho.OUT, name, case["dir"])
            runs = [["--config", os.path.join(d, "case.json")]]
            if case["kind"] == "encoder" and not case.get("pad"):
                runs.append(["--model", os.path.join(ho.OUT, name, "model"), "--layer",
                             str(case["layer"]), "--input", os.path.join(d, "input.npy")])
            ho.check_runs(worst, name, case["dir"], d, runs)
    ho.report(worst)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Held-out check of Gemma 4's text layers, run by hand (not in ctest, whose fixtures it must not
resemble): folders with other seeds, shapes, layers, padding, containers and config spellings than
make_families_v3_gemma4.py's (a text-only gemma4_text with k_eq_v and biases, the class's
default layer pattern and sliding window, a proportional rope with a factor and another fraction;
a gemma4 wrapper whose global_head_dim is null, so the full layers keep head_dim), written by that
script's writer, run through the built attn-run (--config case.json, and --model/--layer when
unpadded) and compared with its torch reference. Prints the worst relative error per folder;
fails above 1e-5. Usage: /usr/bin/python3 tests/golden/heldout_families_v3_gemma4.py
(ATTN_BIN=path/to/attn-run, default build/attn-run; HELDOUT_DIR=where the folders go)."""
import os
import sys

WT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(WT, "tests", "golden"))
import heldout_folders as ho  # noqa: E402  (its runner: ATTN_BIN, HELDOUT_DIR)
import make_families_v3_gemma4 as g4  # noqa: E402


def specs():
    return [
        # Gemma4ForCausalLM with k_eq_v and attention_bias, 6 layers of the default pattern
        # (layer 5 full), sliding_window left out (512), proportional rope with factor 2, p 0.5.
        dict(name="gemma4_text_k_eq_v", seed=301, container="bin", dtype="f16", layers=[2, 5],
             B=2, S=10, pad="left",
             config={"model_type": "gemma4_text", "hidden_size": 24, "num_attention_heads": 6,
                     "num_key_value_heads": 3, "num_global_key_value_heads": 2, "head_dim": 4,
                     "global_head_dim": 12, "num_hidden_layers": 6, "attention_k_eq_v": True,
                     "attention_bias": True, "rms_norm_eps": 1e-5,
                     "rope_parameters": {
                         "sliding_attention": {"rope_type": "default", "rope_theta": 5000.0},
                         "full_attention": {"rope_type": "proportional", "rope_theta": 50000.0,
                                            "partial_rotary_factor": 0.5, "factor": 2.0}}}),
        # Gemma 4's wrapper with global_head_dim null (the full layer keeps head_dim 8), no
        # k_eq_v, unpadded (also run as --model DIR --layer N), a window of 2.
        dict(name="gemma4_head_dim", seed=302, container="shards3", dtype="bf16", layers=[0, 2],
             B=1, S=7,
             config={"model_type": "gemma4", "architectures": ["Gemma4ForConditionalGeneration"],
                     "text_config": {
                         "model_type": "gemma4_text", "hidden_size": 16, "num_attention_heads": 2,
                         "num_key_value_heads": 1, "head_dim": 8, "global_head_dim": None,
                         "num_hidden_layers": 3, "sliding_window": 2,
                         "layer_types": ["sliding_attention", "sliding_attention",
                                         "full_attention"]},
                     "vision_config": {"model_type": "gemma4_vision"}}),
    ]


def main():
    ho.fresh_out()
    worst = {}
    for spec in specs():
        g4.write_folder(spec, ho.OUT, verbose=False)
        name = spec["name"]
        for layer in spec["layers"]:
            d = os.path.join(ho.OUT, name, f"layer{layer}")
            runs = [["--config", os.path.join(d, "case.json")]]
            if not os.path.exists(os.path.join(d, "attention_mask.npy")):
                runs.append(["--model", os.path.join(ho.OUT, name, "model"), "--layer", str(layer),
                             "--input", os.path.join(d, "input.npy")])
            ho.check_runs(worst, name, f"layer {layer}", d, runs)
    ho.report(worst)


if __name__ == "__main__":
    main()

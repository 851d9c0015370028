#!/usr/bin/python3
"""Held-out check of the GGUF architectures of CONTRACT.md v3's families, run by hand (not in
ctest, whose fixtures it must not resemble): every make_gguf_v3.py spec again with another seed,
longer inputs, other ggml types of the same block size and every layer that runs attention,
written by make_gguf_v3.make_v3 to a temporary folder, run through the built attn-run (--model
FILE.gguf --layer N) and compared with the family's torch reference. Prints the worst relative
error per file; fails above 1e-5.

Needs python3-torch. Usage: /usr/bin/python3 tests/golden/heldout_gguf.py
(ATTN_BIN=path/to/attn-run, default build/attn-run; HELDOUT_DIR=where the files go, default a
temporary folder)."""
import copy
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

WT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(WT, "tests", "golden"))
import make_gguf_v3 as mg  # noqa: E402

BIN = os.environ.get("ATTN_BIN", os.path.join(WT, "build", "attn-run"))
OUT = os.environ.get("HELDOUT_DIR") or os.path.join(tempfile.mkdtemp(), "gguf")

# Another ggml type of the same block size for each (32-value blocks, 256-value K-quants).
OTHER = {"Q8_0": "Q5_1", "Q5_1": "Q4_0", "Q4_0": "IQ4_NL", "IQ4_NL": "Q8_0", "Q4_1": "Q5_0",
         "Q5_0": "Q4_1", "F16": "BF16", "BF16": "F16", "F32": "F16", "Q4_K": "Q5_K",
         "Q5_K": "Q6_K", "Q6_K": "Q3_K", "Q3_K": "Q2_K", "Q2_K": "Q4_K", "IQ4_XS": "Q4_K"}


def heldout_specs():
    out = []
    for spec in mg.specs_v3():
        s = copy.deepcopy(spec)
        s["name"] += "_heldout"
        s["seed"] += 500
        s["S"] = s.get("S", 7) + 3
        s["types"] = {k: OTHER.get(v, v) for k, v in s["types"].items()}
        cfg = s["config"]
        n = next(cfg[k] for k in ("num_hidden_layers", "n_layer", "num_layers") if k in cfg)
        settings, _ = mg.family_of(cfg)
        # the layers that run: not Qwen3-Next's linear ones, not Gemma 4's shared-K/V ones
        s["layers"] = [i for i in range(n) if settings(cfg, i).get("runs", True)
                       and not settings(cfg, i).get("shared", False)]
        out.append(s)
    return out


def rel(a, b):
    return float(np.abs(a.astype(np.float64) - b).max() / max(np.abs(b).max(), 1e-30))


def check_file(root, spec, failed):
    """Runs attn-run on each of spec's layers of root/model.gguf; the worst relative error of
    context and maps against root/layer<N>/expected (a run that fails goes to `failed`)."""
    worst = 0.0
    for layer in spec["layers"]:
        d = os.path.join(root, f"layer{layer}")
        o = os.path.join(d, "out")
        r = subprocess.run([BIN, "--model", os.path.join(root, "model.gguf"), "--layer",
                            str(layer), "--input", os.path.join(d, "input.npy"), "-o", o],
                           capture_output=True, text=True)
        if r.returncode != 0:
            failed.append(f"{spec['name']} layer {layer}: exit {r.returncode}: {r.stderr}")
            continue
        for what in ("context", "attention"):
            got = np.load(os.path.join(o, what + ".npy"))
            want = np.load(os.path.join(d, "expected", what + ".npy"))
            worst = max(worst, rel(got, want))
    return worst


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    mg.OUT = OUT
    mg.dec.install()
    worst_all, failed = 0.0, []
    for spec in heldout_specs():
        mg.make_v3(spec)
        worst = check_file(os.path.join(OUT, spec["name"]), spec, failed)
        print(f"  {spec['name']:28s} layers {spec['layers']}: worst {worst:.2e}")
        if worst > 1e-5:
            failed.append(f"{spec['name']}: {worst:.2e} > 1e-5")
        worst_all = max(worst_all, worst)
    print(f"worst {worst_all:.2e} over {len(heldout_specs())} files")
    if failed:
        print("FAILED:\n  " + "\n  ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()

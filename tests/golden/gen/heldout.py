"""The modes run by hand (not in ctest, whose fixtures they must not resemble).

--heldout   every family's HELDOUT folder specs (other seeds, shapes, layers, padding,
            containers, prefixes and config spellings than its FOLDERS; class defaults left
            out) and every "by_family" GGUF spec again (seed + 500, 3 more tokens, another ggml
            type of the same block size, every layer that runs attention), written to a
            temporary folder by the same writers, run through the built attn-run (--config
            case.json, and --model DIR --layer N when unpadded; --with-residual-norm where a
            case has expected/residual_norm.npy; GGUF files as --model FILE.gguf --layer N) and
            compared with the family's torch reference. Prints the worst relative error per
            folder or file; fails above 1e-5.
--gguf-py   every GGUF spec written again through llama.cpp's own gguf-py (its GGUFWriter, not
            scripts/gguf_write.py: metadata and tensors handed to it the way
            convert_hf_to_gguf.py hands them: integers through add_uint32, floats add_float32,
            lists add_array of i32; F32 / F16 tensors as float arrays, block types as uint8
            rows with raw_dtype; general.architecture from the writer itself, tensor data padded
            by gguf-py) and run through attn-run, so a byte-level difference between the two
            writers that attn-run reads differently shows. Needs gguf-py on PYTHONPATH
            (PYTHONPATH=/path/to/llama.cpp/gguf-py; its __init__ imports vocab.py, which needs
            sentencepiece: drop that import if it is missing).
--gguf-py --fixtures
            rewrites the committed gguf-py fixtures instead: the specs of writer "gguf-py"
            (gguf/gemma4_gguf_py: i32 arrays; gguf/falcon_gguf_py: general.alignment 64) and
            tests/golden/gguf_py_big_endian.gguf (gpt2 by gguf-py's big-endian writer: refused by
            attn-run, test_cli_gguf).

ATTN_BIN = attn-run (default build/attn-run); HELDOUT_DIR = where the files go (default a
temporary folder).
"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from . import folder, gguf, manifest
from .util import GOLDEN, ROOT

BIN = os.environ.get("ATTN_BIN", os.path.join(ROOT, "build", "attn-run"))

# Another ggml type of the same block size for each (32-value blocks, 256-value K-quants).
OTHER = {"Q8_0": "Q5_1", "Q5_1": "Q4_0", "Q4_0": "IQ4_NL", "IQ4_NL": "Q8_0", "Q4_1": "Q5_0",
         "Q5_0": "Q4_1", "F16": "BF16", "BF16": "F16", "F32": "F16", "Q4_K": "Q5_K",
         "Q5_K": "Q6_K", "Q6_K": "Q3_K", "Q3_K": "Q2_K", "Q2_K": "Q4_K", "IQ4_XS": "Q4_K"}


def rel(a, b):
    a = a.astype(np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30)) if a.shape == b.shape \
        else float("inf")


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


def folder_runs(out, fam, spec):
    """(label, case folder, runs) of a written folder spec, as test_golden_folders runs them."""
    root = os.path.join(out, spec["name"])
    cases = fam.folder_case_checks(spec) if hasattr(fam, "folder_case_checks") else \
        [(f"layer{n}", n, None) for n in spec["layers"]]
    for d, layer, _ in cases:
        case = os.path.join(root, d)
        runs = [["--config", os.path.join(case, "case.json")]]
        with open(os.path.join(case, "case.json")) as f:
            cj = json.load(f)
        if any(k in cj for k in ("attention_mask", "positions", "weights_prefix")):
            pass
        elif "decoder_layer" in cj:  # an encoder-decoder's decoder module, by the flags
            runs.append(["--model", os.path.join(root, "model"), "--decoder-layer", str(layer),
                         "--input", os.path.join(case, "input.npy")] +
                        (["--cross", "--encoder-output", os.path.join(case, cj["kv_input"])]
                         if cj.get("cross_attention") else []))
        else:
            runs.append(["--model", os.path.join(root, "model"), "--layer", str(layer),
                         "--input", os.path.join(case, "input.npy")] +
                        (["--model-type", cj["model_type"]] if "model_type" in cj else []))
        yield d, case, runs


def gguf_heldout(spec, fam):
    s = copy.deepcopy(spec)
    s["name"] += "_heldout"
    s["seed"] += 500
    s["S"] = s.get("S", 7) + 3
    s["types"] = {k: OTHER.get(v, v) for k, v in s["types"].items()}
    cfg = s["config"]
    n = gguf.n_layers_of(cfg)
    s["layers"] = [i for i in range(n) if fam.settings(cfg, i).runs]  # not linear / shared K/V
    return s


def check_gguf(root, spec, failed):
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
            worst = max(worst, rel(np.load(os.path.join(o, what + ".npy")),
                                   np.load(os.path.join(d, "expected", what + ".npy"))))
    return worst


def heldout(fams, out):
    worst, failed = {}, []
    for fam in fams:
        for spec in getattr(fam, "HELDOUT", []):
            folder.write_folder(fam, spec, os.path.join(out, "folders"), verbose=False)
            name = f"{manifest.family_name(fam)}/{spec['name']}"
            for d, case, runs in folder_runs(os.path.join(out, "folders"), fam, spec):
                check_runs(worst, name, d, case, runs)
    for fam in fams:
        for spec in getattr(fam, "GGUF", []):
            if spec.get("writer", "by_family") != "by_family":
                continue
            s = gguf_heldout(spec, fam)
            gguf.write_gguf(fam, s, os.path.join(out, "gguf"), verbose=False)
            worst["gguf/" + s["name"]] = check_gguf(os.path.join(out, "gguf", s["name"]), s,
                                                    failed)
    for name, e in worst.items():
        print(f"{name:40s} worst {e:.2e}")
    bad = [n for n, e in worst.items() if not e <= 1e-5] + failed
    print("FAILED:\n  " + "\n  ".join(bad) if bad else "all within 1e-5")
    return 1 if bad else 0


# ---- gguf-py ---------------------------------------------------------------------------------

def gguf_py_writer(alignment=None, big_endian=False):
    """gguf_write.GGUFWriter's interface (add, add_tensor, write) over gguf-py's GGUFWriter."""
    import gguf as gp  # llama.cpp's gguf-py, from PYTHONPATH

    types = {"u8": gp.GGUFValueType.UINT8, "i8": gp.GGUFValueType.INT8,
             "u16": gp.GGUFValueType.UINT16, "i16": gp.GGUFValueType.INT16,
             "u32": gp.GGUFValueType.UINT32, "i32": gp.GGUFValueType.INT32,
             "f32": gp.GGUFValueType.FLOAT32, "bool": gp.GGUFValueType.BOOL,
             "string": gp.GGUFValueType.STRING, "u64": gp.GGUFValueType.UINT64,
             "i64": gp.GGUFValueType.INT64, "f64": gp.GGUFValueType.FLOAT64}

    def plain(v):
        if isinstance(v, gguf.Value):
            return [plain(x) for x in v.value] if v.type == "array" else v.value
        return v

    class Writer:
        def __init__(self, version=3):
            self.kv, self.tensors = [], []

        def add(self, key, value):
            self.kv.append((key, value))

        def add_tensor(self, name, shape, type_id, raw=None, values=None):
            self.tensors.append((name, tuple(shape), type_id, raw))

        def write(self, path):
            arch = plain(dict(self.kv)["general.architecture"])
            endian = gp.GGUFEndian.BIG if big_endian else gp.GGUFEndian.LITTLE
            w = gp.GGUFWriter(path, arch, endianess=endian)
            if alignment:
                w.add_custom_alignment(alignment)
            for key, value in self.kv:
                if key == "general.architecture":
                    continue  # the writer's own first key
                if isinstance(value, gguf.Value) and value.type != "array":
                    w.add_key_value(key, value.value, types[value.type])
                elif isinstance(value, bool):
                    w.add_bool(key, value)
                elif isinstance(value, int):
                    w.add_uint32(key, value)  # the converters' add_* of counts and sizes
                elif isinstance(value, float):
                    w.add_float32(key, value)
                elif isinstance(value, str):
                    w.add_string(key, value)
                else:
                    w.add_array(key, plain(value))  # ints as i32, as gguf-py infers them
            for name, shape, type_id, raw in self.tensors:
                t = gp.GGMLQuantizationType(type_id)
                if t == gp.GGMLQuantizationType.F32:
                    w.add_tensor(name, np.frombuffer(raw, np.float32).reshape(shape).copy())
                elif t == gp.GGMLQuantizationType.F16:
                    w.add_tensor(name, np.frombuffer(raw, np.float16).reshape(shape).copy())
                else:  # quantized rows (and BF16) as bytes, as gguf.quants.quantize returns them
                    rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
                    data = np.frombuffer(raw, np.uint8).reshape(rows, -1).copy()
                    w.add_tensor(name, data.reshape(*shape[:-1], -1), raw_dtype=t)
            w.write_header_to_file()
            w.write_kv_data_to_file()
            w.write_tensors_to_file()
            w.close()
    return Writer


def spec_named(fams, name):
    for fam in fams:
        for spec in getattr(fam, "GGUF", []):
            if spec["name"] == name:
                return fam, spec
    raise KeyError(name)


def run_gguf_py(fams, out, fixtures):
    if fixtures:
        gold = os.path.join(GOLDEN, "gguf")
        for fam in fams:
            for spec in getattr(fam, "GGUF", []):
                if spec.get("writer") == "gguf-py":
                    base_fam, base = spec_named(fams, spec["of"])
                    writer = gguf_py_writer(alignment=spec.get("alignment"))
                    gguf.write_gguf(base_fam, dict(base, name=spec["name"]), gold, writer)
        fam, spec = spec_named(fams, "gpt2")
        gguf.write_gguf(fam, spec, out, gguf_py_writer(big_endian=True))
        shutil.copy(os.path.join(out, "gpt2", "model.gguf"),
                    os.path.join(GOLDEN, "gguf_py_big_endian.gguf"))
        return 0
    worst_all, failed, n = 0.0, [], 0
    for fam in fams:
        for spec in getattr(fam, "GGUF", []):
            if spec.get("writer") == "gguf-py":
                continue
            gguf.write_gguf(fam, spec, out, gguf_py_writer(), verbose=False)
            worst = check_gguf(os.path.join(out, spec["name"]), spec, failed)
            print(f"  {spec['name']:28s} layers {spec['layers']}: worst {worst:.2e}")
            worst_all, n = max(worst_all, worst), n + 1
    for f in failed:
        print("FAILED " + f.strip())
    print(f"{n} gguf-py files, worst relative error {worst_all:.2e}")
    return 0 if not failed and worst_all <= 1e-5 else 1


def main(fams, gguf_py=False, fixtures=False):
    out = os.environ.get("HELDOUT_DIR") or tempfile.mkdtemp()
    os.makedirs(out, exist_ok=True)
    if gguf_py:
        return run_gguf_py(fams, os.path.join(out, "gguf_py"), fixtures)
    if not os.path.exists(BIN):
        sys.exit(f"heldout: no attn-run at {BIN} (build it, or set ATTN_BIN)")
    return heldout(fams, out)


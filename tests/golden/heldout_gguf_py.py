#!/usr/bin/python3
"""GGUF files written by llama.cpp's own gguf-py (its GGUFWriter, not scripts/gguf_write.py), run
through attn-run and compared with torch: every make_gguf.py / make_gguf_v3.py spec, its metadata
and tensors handed to gguf-py the way convert_hf_to_gguf.py hands them (integers through
add_uint32, floats add_float32, lists add_array: arrays of i32; F32 / F16 tensors as float
arrays, block types as uint8 rows with raw_dtype; general.architecture from the writer itself,
tensor data padded by gguf-py). So a byte-level difference between the two writers that attn-run
reads differently shows here. Run by hand (needs python3-torch and gguf-py; CI has neither):

    PYTHONPATH=/path/to/llama.cpp/gguf-py /usr/bin/python3 tests/golden/heldout_gguf_py.py

(gguf-py's __init__ imports vocab.py, which needs sentencepiece: drop that import if it is
missing.) ATTN_BIN = attn-run (default build/attn-run); HELDOUT_DIR = where the files go (default
a temporary folder). Prints the worst relative error per file; fails above 1e-5.

With FIXTURES=1 it rewrites the committed gguf-py fixtures instead (FIXTURES below, under
tests/golden/gguf/<name>_gguf_py/, checked by test_golden_gguf) and
tests/golden/gguf_py_big_endian.gguf (gpt2 by gguf-py's big-endian writer: refused by attn-run,
test_cli_gguf).
"""
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
WT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(WT, "scripts"))
import gguf  # noqa: E402  (llama.cpp's gguf-py, from PYTHONPATH)
import make_gguf as mg  # noqa: E402
import make_gguf_v3 as mg3  # noqa: E402
import heldout_gguf  # noqa: E402  (its check_file, with ATTN_BIN)

# gguf_write.Value type names as gguf-py's value types.
VALUE_TYPES = {"u8": gguf.GGUFValueType.UINT8, "i8": gguf.GGUFValueType.INT8,
               "u16": gguf.GGUFValueType.UINT16, "i16": gguf.GGUFValueType.INT16,
               "u32": gguf.GGUFValueType.UINT32, "i32": gguf.GGUFValueType.INT32,
               "f32": gguf.GGUFValueType.FLOAT32, "bool": gguf.GGUFValueType.BOOL,
               "string": gguf.GGUFValueType.STRING, "u64": gguf.GGUFValueType.UINT64,
               "i64": gguf.GGUFValueType.INT64, "f64": gguf.GGUFValueType.FLOAT64}


def plain(v):
    """A gguf_write.Value's Python value (arrays: their elements' values)."""
    if isinstance(v, mg.Value):
        return [plain(x) for x in v.value] if v.type == "array" else v.value
    return v


class GgufPyWriter:
    """gguf_write.GGUFWriter's interface (add, add_tensor, write) over gguf-py's GGUFWriter:
    the generators' files written again by llama.cpp's writer."""

    def __init__(self, version=3, alignment=None, big_endian=False):
        self.kv, self.tensors = [], []
        self.alignment, self.big_endian = alignment, big_endian

    def add(self, key, value):
        self.kv.append((key, value))

    def add_tensor(self, name, shape, type_id, raw=None, values=None):
        self.tensors.append((name, tuple(shape), type_id, raw))

    def write(self, path):
        arch = plain(dict(self.kv)["general.architecture"])
        endian = gguf.GGUFEndian.BIG if self.big_endian else gguf.GGUFEndian.LITTLE
        w = gguf.GGUFWriter(path, arch, endianess=endian)
        if self.alignment:
            w.add_custom_alignment(self.alignment)
        for key, value in self.kv:
            if key == "general.architecture":
                continue  # the writer's own first key
            if isinstance(value, mg.Value) and value.type != "array":
                w.add_key_value(key, value.value, VALUE_TYPES[value.type])
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
            t = gguf.GGMLQuantizationType(type_id)
            if t == gguf.GGMLQuantizationType.F32:
                w.add_tensor(name, np.frombuffer(raw, np.float32).reshape(shape).copy())
            elif t == gguf.GGMLQuantizationType.F16:
                w.add_tensor(name, np.frombuffer(raw, np.float16).reshape(shape).copy())
            else:  # quantized rows (and BF16) as bytes, as gguf.quants.quantize returns them
                rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
                data = np.frombuffer(raw, np.uint8).reshape(rows, -1).copy()
                w.add_tensor(name, data.reshape(*shape[:-1], -1), raw_dtype=t)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()


def all_specs():
    """(writer module, make function, spec) of every file the generators write."""
    return ([(mg, mg.make, s) for s in mg.specs()] +
            [(mg3, mg3.make_v3, s) for s in mg3.specs_v3()])


def write(out, names=None, writer=GgufPyWriter):
    """Every spec (or those named), under out/<name>, written by `writer`."""
    mg.OUT = mg3.OUT = out
    mg.GGUFWriter = mg3.GGUFWriter = writer
    done = []
    for module, make, spec in all_specs():
        if module is mg3 and not installed:  # as make_gguf.main: the v3 references after
            mg3.dec.install()
            installed.append(True)
        if names is None or spec["name"] in names:
            make(spec)
            done.append(spec)
    return done


installed = []  # make_gguf_v3's decoders installed (once: they replace make_folders' lookups)


def check(out, specs):
    worst_all, failed = 0.0, []
    for spec in specs:
        worst = heldout_gguf.check_file(os.path.join(out, spec["name"]), spec, failed)
        print(f"  {spec['name']:28s} layers {spec['layers']}: worst {worst:.2e}")
        worst_all = max(worst_all, worst)
    for f in failed:
        print("FAILED " + f.strip())
    print(f"{len(specs)} gguf-py files, worst relative error {worst_all:.2e}")
    return not failed and worst_all <= 1e-5


# The committed fixtures (suffix _gguf_py): only where gguf-py's bytes differ from
# scripts/gguf_write.py's (40 of the 44 files come out byte for byte the same): gemma4's
# per-layer head_count_kv as gguf-py's i32 array (ours: u32), falcon with general.alignment 64.
FIXTURES = ["gemma4", "falcon"]


def fixtures():
    gold = os.path.join(HERE, "gguf")
    tmp = tempfile.mkdtemp()

    class Aligned64(GgufPyWriter):  # general.alignment 64 (gguf-py's add_custom_alignment)
        def __init__(self, version=3):
            super().__init__(version, alignment=64)

    for name in FIXTURES:
        writer = Aligned64 if name == "falcon" else GgufPyWriter
        write(tmp, [name], writer)
        dest = os.path.join(gold, name + "_gguf_py")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.move(os.path.join(tmp, name), dest)

    class BigEndian(GgufPyWriter):  # gguf-py's big-endian writer (gguf_convert_endian's output)
        def __init__(self, version=3):
            super().__init__(version, big_endian=True)

    write(tmp, ["gpt2"], BigEndian)
    shutil.copy(os.path.join(tmp, "gpt2", "model.gguf"), os.path.join(gold, "..",
                                                                      "gguf_py_big_endian.gguf"))
    shutil.rmtree(tmp)


def main():
    if os.environ.get("FIXTURES"):
        fixtures()
        return
    out = os.environ.get("HELDOUT_DIR") or os.path.join(tempfile.mkdtemp(), "gguf_py")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    sys.exit(0 if check(out, write(out)) else 1)


if __name__ == "__main__":
    main()

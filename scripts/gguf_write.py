"""A GGUF writer (NumPy only), from the format description in ggml's
docs/gguf.md, for test files: versions 2 and 3, metadata of every value type
(nested arrays and arrays of strings included), tensor infos, alignment
padding, and tensors of any ggml type given as raw block bytes (see
gguf_quants.random_blocks) or as float32/float16 arrays.

    w = GGUFWriter(version=3, alignment=None)      # None: no key, 32 applies
    w.add("general.architecture", "llama")          # str -> string
    w.add("llama.attention.head_count", 32)         # int -> u32 (as gguf-py's writers)
    w.add("llama.rope.freq_base", 1e6)              # float -> f32
    w.add("k", Value("i64", -5))                    # any explicit type
    w.add("k.arr", Value("array", [Value("u8", 1)]))   # typed arrays, nested too
    w.add_tensor("blk.0.attn_q.weight", shape=(out, in), type_id=12, raw=bytes)
    w.write("model.gguf")

Tensors are written in the order added, each offset aligned, with zero
padding after each, as gguf-py's GGUFWriter lays them out. `shape` is NumPy
order; the file stores it reversed (ne[0] = the last dimension).
"""
import struct

import numpy as np

from gguf_quants import TYPES, row_bytes

VALUE_TYPES = {"u8": 0, "i8": 1, "u16": 2, "i16": 3, "u32": 4, "i32": 5, "f32": 6, "bool": 7,
               "string": 8, "array": 9, "u64": 10, "i64": 11, "f64": 12}
_PACK = {"u8": "<B", "i8": "<b", "u16": "<H", "i16": "<h", "u32": "<I", "i32": "<i", "f32": "<f",
         "bool": "<B", "u64": "<Q", "i64": "<q", "f64": "<d"}


class Value:
    """A metadata value of an explicit type; arrays hold a list of Values
    (all of one type) or plain Python values with `elem` naming their type."""

    def __init__(self, type_name, value, elem=None):
        assert type_name in VALUE_TYPES, type_name
        self.type, self.value, self.elem = type_name, value, elem


def _infer(v):
    if isinstance(v, Value):
        return v
    if isinstance(v, bool):
        return Value("bool", v)
    if isinstance(v, int):
        return Value("u32" if 0 <= v < 2 ** 32 else "i64", v)
    if isinstance(v, float):
        return Value("f32", v)
    if isinstance(v, str):
        return Value("string", v)
    if isinstance(v, (list, tuple)):
        items = [_infer(x) for x in v]
        elem = items[0].type if items else "u32"
        assert all(x.type == elem for x in items), "array elements of mixed types"
        return Value("array", items, elem)
    raise TypeError("cannot infer a GGUF type for %r" % (v,))


def _string(s):
    b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(b)) + b


def encode_value(v):
    """The bytes of a value (without its type tag)."""
    v = _infer(v)
    if v.type == "string":
        return _string(v.value)
    if v.type == "array":
        items = [x if isinstance(x, Value) else Value(v.elem, x) for x in v.value]
        elem = v.elem or (items[0].type if items else "u32")
        out = struct.pack("<IQ", VALUE_TYPES[elem], len(items))
        for x in items:
            assert x.type == elem, (x.type, elem)
            out += encode_value(x)
        return out
    return struct.pack(_PACK[v.type], v.value)


class GGUFWriter:
    def __init__(self, version=3, alignment=None):
        assert version in (2, 3)
        self.version = version
        self.alignment = alignment or 32
        self.kv = []  # (key bytes, type, value bytes)
        self.tensors = []  # (name, ne, type_id, raw)
        if alignment is not None:
            self.add("general.alignment", Value("u32", alignment))

    def add(self, key, value):
        v = _infer(value)
        self.kv.append((key, v.type, encode_value(v)))

    def add_raw_kv(self, key, type_code, value_bytes):
        """A key with any type code and value bytes (for hostile files)."""
        self.kv.append((key, type_code, value_bytes))

    def add_tensor(self, name, shape, type_id, raw=None, values=None):
        """A tensor of NumPy shape `shape`: `raw` bytes of its ggml type, or
        `values` (float32 for F32, float16 for F16) converted here."""
        ne = [int(x) for x in reversed(shape)]
        if values is not None:
            dtype = {0: "<f4", 1: "<f2"}[type_id]
            raw = np.ascontiguousarray(values, dtype=dtype).tobytes()
        n = int(np.prod(ne)) if ne else 1
        assert len(raw) == row_bytes(type_id, n), (name, TYPES[type_id][0], len(raw), n)
        self.tensors.append((name, ne, type_id, bytes(raw)))

    def to_bytes(self):
        out = bytearray(b"GGUF")
        out += struct.pack("<IQQ", self.version, len(self.tensors), len(self.kv))
        for key, vtype, vbytes in self.kv:
            code = VALUE_TYPES[vtype] if isinstance(vtype, str) else vtype
            out += _string(key) + struct.pack("<I", code) + vbytes
        offset = 0
        offsets = []
        for name, ne, type_id, raw in self.tensors:
            offsets.append(offset)
            offset += _pad(len(raw), self.alignment)
        for (name, ne, type_id, raw), off in zip(self.tensors, offsets):
            out += _string(name) + struct.pack("<I", len(ne))
            out += b"".join(struct.pack("<Q", n) for n in ne)
            out += struct.pack("<IQ", type_id, off)
        if self.tensors:
            out += bytes(_pad(len(out), self.alignment) - len(out))
        for name, ne, type_id, raw in self.tensors:
            out += raw + bytes(_pad(len(raw), self.alignment) - len(raw))
        return bytes(out)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.to_bytes())


def _pad(n, align):
    return (n + align - 1) // align * align

#!/usr/bin/python3
"""Seed corpora for the fuzz targets (fuzz/corpus/<target>/), small real files.

npy and npz: written by NumPy itself (np.save, np.lib.format.write_array with
every header version, np.savez, np.savez_compressed), so the fuzzer starts
from exactly what users have. safetensors: the safetensors package is not
installed here, so the files are laid out per its format spec
(huggingface/safetensors README: u64 little-endian header length, JSON header
{name: {dtype, shape, data_offsets}}, then the data), as its Python
serializer does (keys sorted, header padded with spaces to 8 bytes).
index: *.safetensors.index.json files over the two shards the target writes.
config: every config under configs/ and an even spread of tests/golden/cases/*/.

Run: /usr/bin/python3 fuzz/make_corpus.py   (from the repository root)
"""
import io
import json
import os
import shutil
import struct
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
rng = np.random.default_rng(20261122)


def fresh(target):
    d = os.path.join(CORPUS, target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def npy_bytes(arr, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, arr)
    else:
        np.lib.format.write_array(buf, arr, version=version)
    return buf.getvalue()


def small_arrays():
    """(name, array) pairs covering every dtype, byte order and layout attn-run reads."""
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    yield "f4_bsc", x
    yield "f4_sc", rng.standard_normal((5, 8)).astype(np.float32)
    yield "f4_be", x.astype(">f4")
    yield "f8_le", x.astype(np.float64)
    yield "f8_be", x.astype(">f8")
    yield "f2_le", x.astype(np.float16)
    yield "f2_be", x.astype(">f2")
    yield "f4_fortran", np.asfortranarray(rng.standard_normal((4, 6)).astype(np.float32))
    yield "f8_fortran_be", np.asfortranarray(rng.standard_normal((3, 5))).astype(">f8", order="F")
    yield "f4_scalar", np.array(1.5, dtype=np.float32)
    yield "f4_empty", np.zeros((0, 4), dtype=np.float32)
    yield "f4_vector", np.arange(7, dtype=np.float32)
    yield "f4_nonfinite", np.array([1.0, np.nan, np.inf, -np.inf], dtype=np.float32)
    yield "f2_special", np.array([0.0, -0.0, 6.1e-5, 5.96e-8, 65504, np.inf, np.nan], dtype=np.float16)
    mask = np.array([[False, True, False], [True, False, False]])
    yield "b1_mask", mask
    yield "u1_mask", mask.astype(np.uint8)
    yield "i1_mask", mask.astype(np.int8)
    yield "i2_be_mask", mask.astype(">i2")
    yield "i4_mask", mask.astype(np.int32)
    yield "i8_mask", mask.astype(np.int64)
    yield "u2_mask", mask.astype(np.uint16)
    yield "u4_be_mask", mask.astype(">u4")
    yield "u8_mask", mask.astype(np.uint64)
    yield "f4_mask", mask.astype(np.float32)


def make_npy():
    d = fresh("npy")
    for name, arr in small_arrays():
        with open(os.path.join(d, name + ".npy"), "wb") as f:
            f.write(npy_bytes(arr))
    x = rng.standard_normal((2, 3)).astype(np.float32)
    for v in [(1, 0), (2, 0), (3, 0)]:
        with open(os.path.join(d, "version_%d_%d.npy" % v), "wb") as f:
            f.write(npy_bytes(x, version=v))
    # A shape long enough that the header length's low byte is >= 0x80.
    long_shape = np.zeros((1,) * 30 + (2,), dtype=np.float32)
    with open(os.path.join(d, "header_len_ge_0x80.npy"), "wb") as f:
        f.write(npy_bytes(long_shape))
    # Refused dtypes, as NumPy writes them (the reader must say no, never unpickle).
    refused = {
        "refused_object": np.array([1, "a"], dtype=object),
        "refused_unicode": np.array(["ab", "c"]),
        "refused_structured": np.zeros(2, dtype=[("a", "<f4"), ("b", "<i2")]),
        "refused_complex": np.zeros(2, dtype=np.complex64),
    }
    for name, arr in refused.items():
        buf = io.BytesIO()
        np.lib.format.write_array(buf, arr, allow_pickle=True)
        with open(os.path.join(d, name + ".npy"), "wb") as f:
            f.write(buf.getvalue())


def info(z, name):
    """A member entry with a fixed timestamp, so regenerating gives the same bytes."""
    zi = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    zi.compress_type = z.compression
    return zi


def make_npz():
    d = fresh("npz")
    w = {"Wqkv.weight": rng.standard_normal((12, 4)).astype(np.float32),
         "Wqkv.bias": rng.standard_normal(12).astype(np.float32),
         "Wo.weight": rng.standard_normal((4, 4)).astype(np.float32),
         "Wo.bias": rng.standard_normal(4).astype(np.float32)}
    np.savez(os.path.join(d, "fused_stored.npz"), **w)
    np.savez_compressed(os.path.join(d, "fused_deflated.npz"), **w)
    np.savez(os.path.join(d, "one_f2.npz"), a=w["Wo.weight"].astype(np.float16))
    np.savez_compressed(os.path.join(d, "one_f8_be.npz"), a=w["Wo.weight"].astype(">f8"))
    np.savez(os.path.join(d, "mask_b1.npz"), mask=np.array([[0, 1], [1, 0]], dtype=bool))
    np.savez_compressed(os.path.join(d, "zeros_compressible.npz"), z=np.zeros((64, 32), np.float32))
    np.savez(os.path.join(d, "fortran.npz"), f=np.asfortranarray(w["Wqkv.weight"]))
    np.savez(os.path.join(d, "positional.npz"), w["Wo.bias"], w["Wo.weight"])  # arr_0, arr_1
    np.savez(os.path.join(d, "empty_member.npz"), e=np.zeros((0,), np.float32))
    # A zip archive with a comment and a non-.npy member: valid ZIP, refused as .npz.
    with zipfile.ZipFile(os.path.join(d, "zip_with_text.npz"), "w") as z:
        z.comment = b"not numpy"
        z.writestr(info(z, "README.txt"), "hello")
    with zipfile.ZipFile(os.path.join(d, "zip_forced64.npz"), "w", zipfile.ZIP_DEFLATED) as z:
        with z.open(info(z, "x.npy"), "w", force_zip64=True) as f:
            f.write(npy_bytes(w["Wo.bias"]))


ST_DTYPES = {np.dtype("<f4"): "F32", np.dtype("<f2"): "F16", np.dtype("<f8"): "F64",
             np.dtype("bool"): "BOOL", np.dtype("u1"): "U8", np.dtype("i1"): "I8",
             np.dtype("<i2"): "I16", np.dtype("<i4"): "I32", np.dtype("<i8"): "I64"}


def safetensors_bytes(tensors, metadata=None):
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    blobs = []
    for name in sorted(tensors):
        arr = np.ascontiguousarray(tensors[name])
        raw = arr.tobytes()
        header[name] = {"dtype": ST_DTYPES[arr.dtype], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def make_safetensors():
    d = fresh("safetensors")
    w = {"c_attn.weight": rng.standard_normal((4, 12)).astype(np.float32),
         "c_attn.bias": rng.standard_normal(12).astype(np.float32),
         "c_proj.weight": rng.standard_normal((4, 4)).astype(np.float32),
         "c_proj.bias": rng.standard_normal(4).astype(np.float32)}
    files = {
        "gpt2_f32": (w, None),
        "gpt2_f16_meta": ({k: v.astype(np.float16) for k, v in w.items()}, {"format": "pt"}),
        "one_f64": ({"x": w["c_proj.weight"].astype(np.float64)}, None),
        "masks": ({"b": np.array([True, False]), "u": np.array([0, 1], np.uint8),
                   "i": np.array([1, 0], np.int64)}, None),
        "scalar_and_empty": ({"s": np.array(2.0, np.float32), "e": np.zeros((0, 3), np.float32)}, None),
        "ints": ({"a": np.arange(6, dtype=np.int16).reshape(2, 3),
                  "b": np.arange(3, dtype=np.int32), "c": np.arange(2, dtype=np.int8)}, None),
    }
    for name, (tensors, meta) in files.items():
        with open(os.path.join(d, name + ".safetensors"), "wb") as f:
            f.write(safetensors_bytes(tensors, meta))


def make_index():
    """Sharded-checkpoint indexes naming the two shards the target writes beside
    them (fuzz/targets.h index_folder: a.safetensors h.0.w; b.safetensors h.1.w, h.1.b)."""
    d = fresh("index")
    good = {"h.0.w": "a.safetensors", "h.1.w": "b.safetensors", "h.1.b": "b.safetensors"}
    seeds = {
        "both_shards": {"metadata": {"total_size": 18}, "weight_map": good},
        "reversed_order": {"weight_map": dict(reversed(list(good.items())))},
        "one_shard_listed_short": {"weight_map": {"h.1.w": "b.safetensors"}},
        "missing_shard": {"weight_map": dict(good, **{"h.2.w": "c.safetensors"})},
        "outside_folder": {"weight_map": dict(good, **{"x": "../a.safetensors"})},
        "absolute": {"weight_map": {"h.0.w": "/tmp/a.safetensors"}},
        "wrong_shard": {"weight_map": {"h.0.w": "b.safetensors", "h.1.w": "a.safetensors"}},
        "not_a_name": {"weight_map": {"h.0.w": 3}},
        "empty_map": {"weight_map": {}},
    }
    for name, j in seeds.items():
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump(j, f, indent=2)

# Inline config seeds: every key of the scores, masks and cross-attention, with values the parser accepts.
INLINE_CONFIG_SEEDS = {
    "inline_rope_scaling": {
        "attention": "causal", "hidden_size": 8, "num_heads": 2, "num_kv_heads": 1,
        "rope": {"theta": 500000, "rotary_dim": 4, "style": "interleaved",
                 "max_position_embeddings": 64,
                 "scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1,
                             "high_freq_factor": 4, "original_max_position_embeddings": 16}},
        "positions": [[3, 4, 5]], "sliding_window": 2, "softcap": 30.0,
        "qk_norm": {"eps": 1e-5, "scope": "all", "weight_offset": 1}, "sinks": True,
        "attention_mask": [[1, 1, 0]],
        "input": [[[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]] * 3],
        "labels": ["a", "b", "c"], "output": {"average_heads": True}},
    "inline_longrope_alibi_slopes": {
        "attention": "multi", "hidden_size": 8, "num_heads": 2,
        "rope": {"max_position_embeddings": 128,
                 "scaling": {"type": "longrope", "short_factor": [1, 1], "long_factor": [2, 3],
                             "original_max_position_embeddings": 32}},
        "alibi": {"slopes": [0.5, 0.25]},
        "attn_mask": [[0.0, -1e9], [0.0, 0.0]],
        "input": [[1, 2, 3, 4, 5, 6, 7, 8], [8, 7, 6, 5, 4, 3, 2, 1]]},
    "inline_torch_mha_cross": {
        "attention": "multi", "hidden_size": 4, "num_heads": 2, "layout": "torch_mha",
        "key_input": [[[1, 2, 3]], [[4, 5, 6]]], "value_input": [[[1, 2]], [[3, 4]]],
        "kdim": 3, "vdim": 2, "add_bias_kv": True, "add_zero_attn": True, "batch_first": False,
        "padding_mask": [[False, True]], "attn_mask": [[True, False], [False, False]],
        "kv_labels": ["k0", "k1"],
        "input": [[[1, 2, 3, 4]], [[4, 3, 2, 1]]]},
    "inline_kv_input_alibi_max_bias": {
        "attention": "multi", "hidden_size": 4, "num_heads": 4, "kv_input": [[1, 2, 3, 4, 5]],
        "kdim": 5, "input": [[1, 2, 3, 4]]},
}


def make_config():
    d = fresh("config")
    sources = [os.path.join(ROOT, "configs", n) for n in sorted(os.listdir(os.path.join(ROOT, "configs")))]
    cases = os.path.join(ROOT, "tests", "golden", "cases")
    golden = [os.path.join(cases, c, "config.json") for c in sorted(os.listdir(cases))]
    # At most ~40 seeds: every shipped config, then an even spread of the golden cases.
    room = max(0, 40 - len(sources))
    stride = max(1, -(-len(golden) // room)) if room else len(golden) + 1
    sources += golden[::stride]
    # The golden variants' configs: rope, alibi, windows, masks, cross-attention.
    variants = os.path.join(ROOT, "tests", "golden", "variants")
    sources += [os.path.join(variants, c, "config.json") for c in sorted(os.listdir(variants))]
    for src in sources:
        if not src.endswith(".json") or not os.path.isfile(src):
            continue
        parts = os.path.relpath(src, ROOT).split(os.sep)
        name = parts[-2] if parts[-1] == "config.json" else parts[-1][:-5]
        shutil.copyfile(src, os.path.join(d, name + ".json"))
    # Inline seeds that reach the readers' deep paths without files.
    for name, j in INLINE_CONFIG_SEEDS.items():
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump(j, f, indent=1)


def make_pt():
    """pt: small torch.save files that tests/fixtures/pt/make_pt.py wrote with torch itself
    (torch is not needed here): plain, views of shared storages, bf16 and masks, checkpoint
    dicts, modules, a shard, the hostile os.system checkpoint."""
    d = fresh("pt")
    src = os.path.join(ROOT, "tests", "fixtures", "pt")
    for rel in ["linear.pt", "views.pt", "bf16.pt", "lightning.pt", "nested.pt", "expanded.pt",
                "protocol4.pt", "parameter.pt", "hostile_os_system.pt", "modules/torch_mha_kdim.pt",
                "modules/bf16_warner_causal.pt",
                "golden/sharded/pytorch_model-00001-of-00002.bin"]:
        shutil.copy(os.path.join(src, rel), os.path.join(d, os.path.basename(rel)))


if __name__ == "__main__":
    make_npy()
    make_npz()
    make_safetensors()
    make_index()
    make_config()
    make_pt()

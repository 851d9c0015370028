#!/usr/bin/python3
"""Writes the seed corpus of valid GGUF files (fuzz/corpus/, each under 16 KiB
so libFuzzer's -max_len covers it) with gguf_write.py:

  <type>.gguf         one per dequantized type: a llama-like layer 0 whose
                      attn_q / attn_k weights are of that type (v3)
  v2_<type>.gguf      the same in GGUF version 2 for K-quants and Q8_0
  unsupported.gguf    one tensor of every other sizable ggml type (IQ2_XXS...)
  metadata.gguf       every value type, nested arrays, arrays of strings and
                      bools, empty arrays and strings (v2)
  align64.gguf        general.alignment 64
  no_tensors.gguf     metadata only
  odd_shapes.gguf     a 0-d scalar, a zero-sized dimension, a 4-d tensor
  deepseek2.gguf      DeepSeek's MLA with kv_b_proj split into attn_k_b / attn_v_b
  t5.gguf             T5's encoder blocks (enc.blk.N.) and block 0's relative table
  starcoder.gguf      GPT-BigCode with a per-head [q, k, v] attn_qkv (3C rows)

    /usr/bin/python3 make_corpus.py [OUT_DIR]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))

from gguf_quants import DEQUANTIZED, ID, TYPES, random_blocks
from gguf_write import GGUFWriter, Value


def llama_meta(w, layers=1):
    w.add("general.architecture", "llama")
    w.add("general.name", "corpus")
    w.add("llama.block_count", layers)
    w.add("llama.embedding_length", 256)
    w.add("llama.attention.head_count", 4)
    w.add("llama.attention.head_count_kv", 2)
    w.add("llama.rope.freq_base", 500000.0)
    w.add("llama.rope.dimension_count", 64)
    w.add("llama.attention.layer_norm_rms_epsilon", 1e-5)


def layer_file(type_id, rng, version=3):
    w = GGUFWriter(version=version)
    llama_meta(w)
    bs = TYPES[type_id][1]
    cols = 256 if bs <= 256 else bs
    w.add_tensor("blk.0.attn_q.weight", (4, cols), type_id, random_blocks(type_id, 4 * cols, rng))
    w.add_tensor("blk.0.attn_k.weight", (2, cols), type_id, random_blocks(type_id, 2 * cols, rng))
    w.add_tensor("blk.0.attn_norm.weight", (cols,), ID["F32"], random_blocks(ID["F32"], cols, rng))
    return w


def finite(rng, n, dtype):
    return rng.uniform(-1, 1, n).astype(dtype)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "gguf")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(2024)
    files = {}
    for name in DEQUANTIZED:
        files[name.lower() + ".gguf"] = layer_file(ID[name], rng)
    for name in ["Q8_0", "Q4_K", "Q6_K"]:
        files["v2_" + name.lower() + ".gguf"] = layer_file(ID[name], rng, version=2)

    w = GGUFWriter()
    for tid, (name, bs, bb) in TYPES.items():
        if bs and name not in DEQUANTIZED:
            n = max(bs, 32)
            w.add_tensor("t." + name.lower(), (n,), tid, rng.integers(0, 256, n // bs * bb, dtype=np.uint8).tobytes())
    files["unsupported.gguf"] = w

    w = GGUFWriter(version=2)
    w.add("general.architecture", "test")
    for t, v in [("u8", 200), ("i8", -2), ("u16", 60000), ("i16", -300), ("u32", 4000000000),
                 ("i32", -7), ("f32", 0.1), ("bool", True), ("u64", 2 ** 60), ("i64", -2 ** 60),
                 ("f64", 1e-300)]:
        w.add("test." + t, Value(t, v))
    w.add("test.string", "héllo\nworld")
    w.add("test.empty_string", "")
    w.add("test.strings", ["a", "", "ccc"])
    w.add("test.bools", Value("array", [True, False, True], elem="bool"))
    w.add("test.empty_array", Value("array", [], elem="f32"))
    w.add("test.per_layer", Value("array", [8, 8, 4], elem="i32"))
    w.add("test.nested", Value("array", [Value("array", [1, 2], elem="u8"),
                                         Value("array", [], elem="u8"),
                                         Value("array", [Value("array", ["x"], elem="string")], elem="array")],
                               elem="array"))
    w.add_tensor("t", (3,), ID["F32"], values=np.array([1, 2, 3], np.float32))
    files["metadata.gguf"] = w

    w = GGUFWriter(alignment=64)
    llama_meta(w)
    w.add_tensor("blk.0.attn_v.weight", (2, 256), ID["Q6_K"], random_blocks(ID["Q6_K"], 512, rng))
    w.add_tensor("blk.0.attn_output.weight", (3,), ID["F16"], values=np.array([1, -2, 0.5], np.float16))
    files["align64.gguf"] = w

    w = GGUFWriter()
    llama_meta(w)
    files["no_tensors.gguf"] = w

    w = GGUFWriter()
    w.add_tensor("scalar", (), ID["F32"], values=np.array(2.5, np.float32))
    w.add_tensor("empty", (0, 32), ID["Q8_0"], b"")
    w.add_tensor("four_d", (2, 1, 2, 32), ID["Q8_0"], random_blocks(ID["Q8_0"], 128, rng))
    files["odd_shapes.gguf"] = w

    # CONTRACT.md v3's architectures whose tensors gguf_arch.cpp changes: DeepSeek's
    # attn_k_b / attn_v_b rejoined as kv_b_proj (F16 and Q8_0 halves), T5's enc.blk with the
    # relative table, GPT-BigCode's attn_qkv whose rows decide multi_query.
    w = GGUFWriter()
    w.add("general.architecture", "deepseek2")
    for k, v in [("block_count", 1), ("embedding_length", 32), ("attention.head_count", 2),
                 ("attention.head_count_kv", 1), ("attention.kv_lora_rank", 32),
                 ("attention.key_length", 36), ("attention.value_length", 32),
                 ("attention.key_length_mla", 12), ("attention.value_length_mla", 8),
                 ("rope.dimension_count", 4), ("attention.layer_norm_rms_epsilon", 1e-6)]:
        w.add("deepseek2." + k, v)
    w.add_tensor("blk.0.attn_q.weight", (24, 32), ID["Q8_0"], random_blocks(ID["Q8_0"], 768, rng))
    w.add_tensor("blk.0.attn_kv_a_mqa.weight", (36, 32), ID["Q8_0"],
                 random_blocks(ID["Q8_0"], 1152, rng))
    w.add_tensor("blk.0.attn_kv_a_norm.weight", (32,), ID["F32"], values=finite(rng, 32, np.float32))
    w.add_tensor("blk.0.attn_k_b.weight", (2, 32, 8), ID["F16"],
                 values=finite(rng, 512, np.float16).reshape(2, 32, 8))
    w.add_tensor("blk.0.attn_v_b.weight", (2, 8, 32), ID["Q8_0"], random_blocks(ID["Q8_0"], 512, rng))
    w.add_tensor("blk.0.attn_output.weight", (32, 16), ID["F16"],
                 values=finite(rng, 512, np.float16).reshape(32, 16))
    files["deepseek2.gguf"] = w

    w = GGUFWriter()
    w.add("general.architecture", "t5")
    for k, v in [("block_count", 2), ("embedding_length", 32), ("attention.head_count", 2),
                 ("attention.key_length", 16), ("attention.value_length", 16),
                 ("attention.relative_buckets_count", 8)]:
        w.add("t5." + k, v)
    for i in range(2):
        for t in ("attn_q", "attn_k", "attn_v", "attn_o"):
            w.add_tensor(f"enc.blk.{i}.{t}.weight", (32, 32), ID["Q8_0"],
                         random_blocks(ID["Q8_0"], 1024, rng))
    w.add_tensor("enc.blk.0.attn_rel_b.weight", (8, 2), ID["F32"],
                 values=finite(rng, 16, np.float32).reshape(8, 2))
    w.add_tensor("dec.blk.0.attn_rel_b.weight", (8, 2), ID["F32"],
                 values=finite(rng, 16, np.float32).reshape(8, 2))
    files["t5.gguf"] = w

    w = GGUFWriter()
    w.add("general.architecture", "starcoder")
    for k, v in [("block_count", 1), ("embedding_length", 32), ("attention.head_count", 2),
                 ("attention.head_count_kv", 1), ("attention.layer_norm_epsilon", 1e-5)]:
        w.add("starcoder." + k, v)
    w.add_tensor("blk.0.attn_qkv.weight", (96, 32), ID["Q4_0"], random_blocks(ID["Q4_0"], 3072, rng))
    w.add_tensor("blk.0.attn_qkv.bias", (96,), ID["F32"], values=finite(rng, 96, np.float32))
    w.add_tensor("blk.0.attn_output.weight", (32, 32), ID["Q8_0"], random_blocks(ID["Q8_0"], 1024, rng))
    files["starcoder.gguf"] = w

    for name, w in files.items():
        data = w.to_bytes()
        assert len(data) <= 16384, (name, len(data))
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("wrote %d files to %s" % (len(files), out))


if __name__ == "__main__":
    main()

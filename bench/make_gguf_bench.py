#!/usr/bin/python3
"""A Llama-3-8B-shaped Q4_K_M GGUF as a sparse file: the header and tensor infos of the real
model (32 layers, C 4096, 32 heads, 8 KV heads, Q4_K / Q6_K as llama-quantize mixes them), the
data section a hole (zero blocks). Usage: bench/make_gguf_bench.py OUT.gguf"""
import struct, sys, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from gguf_write import GGUFWriter
from gguf_quants import ID, row_bytes

path = sys.argv[1]
C, H, Hkv, D, F, V, L = 4096, 32, 8, 128, 14336, 128256, 32
w = GGUFWriter(version=3)
for k, v in [("general.architecture", "llama"), ("llama.block_count", L), ("llama.context_length", 8192),
             ("llama.embedding_length", C), ("llama.feed_forward_length", F),
             ("llama.attention.head_count", H), ("llama.attention.head_count_kv", Hkv),
             ("llama.rope.freq_base", 500000.0), ("llama.attention.layer_norm_rms_epsilon", 1e-5),
             ("llama.rope.dimension_count", D), ("general.file_type", 15)]:
    w.add(k, v)
tensors = [("token_embd.weight", (V, C), "Q4_K")]
for l in range(L):
    p = f"blk.{l}."
    tensors += [(p + "attn_norm.weight", (C,), "F32"), (p + "attn_q.weight", (H * D, C), "Q4_K"),
                (p + "attn_k.weight", (Hkv * D, C), "Q4_K"), (p + "attn_v.weight", (Hkv * D, C), "Q6_K"),
                (p + "attn_output.weight", (C, H * D), "Q4_K"), (p + "ffn_norm.weight", (C,), "F32"),
                (p + "ffn_gate.weight", (F, C), "Q4_K"), (p + "ffn_up.weight", (F, C), "Q4_K"),
                (p + "ffn_down.weight", (C, F), "Q6_K")]
tensors += [("output_norm.weight", (C,), "F32"), ("output.weight", (V, C), "Q6_K")]
# header only: tensor infos with offsets; then the file extended sparsely
hdr = bytearray()
def u32(v): hdr.extend(struct.pack("<I", v))
def u64(v): hdr.extend(struct.pack("<Q", v))
def s(x): b = x.encode(); u64(len(b)); hdr.extend(b)
meta = w.to_bytes()  # metadata-only file: header + kv, 0 tensors
n_kv = struct.unpack_from("<Q", meta, 16)[0]
hdr.extend(b"GGUF"); u32(3); u64(len(tensors)); u64(n_kv)
hdr.extend(meta[24:])
off = 0
for name, shape, t in tensors:
    n = 1
    for d in shape: n *= d
    s(name); u32(len(shape))
    for d in reversed(shape): u64(d)
    u32(ID[t]); u64(off)
    nb = row_bytes(ID[t], n) if t != "F32" else 4 * n
    off = (off + nb + 31) // 32 * 32
data_start = (len(hdr) + 31) // 32 * 32
with open(path, "wb") as f:
    f.write(hdr); f.write(b"\0" * (data_start - len(hdr)))
    f.truncate(data_start + off)
print(path, (data_start + off) / 1e9, "GB")

#!/usr/bin/python3
"""An ONNX graph of a Llama attention layer (no biases, RoPE, GQA, causal) for ONNX Runtime,
from the float32 weights and cos/sin that bench/make_llama_bench.py --peers writes:

  gqa.onnx: MatMul x [Wq | Wk | Wv]^T (one packed Q|K|V product), then
            com.microsoft.GroupQueryAttention with packed QKV, do_rotary=1 (half style, the
            given cos_cache / sin_cache (S, D/2)), no past, seqlens_k = S - 1,
            total_sequence_length = S (a prompt: causal), then MatMul Wo^T.
Input x (1, S, C) float32; output y (1, S, C). The graph is made for one S.
Usage: make_llama_graph.py PEERS_DIR NUM_HEADS NUM_KV_HEADS OUT.onnx   (Debian's python3-onnx)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    peers, H, Hkv, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    w = {k: np.load(os.path.join(peers, k + ".npy")) for k in ("q_proj", "k_proj", "v_proj", "o_proj")}
    cos, sin = np.load(os.path.join(peers, "cos.npy")), np.load(os.path.join(peers, "sin.npy"))
    C, S = w["o_proj"].shape[0], cos.shape[0]
    w_qkv = np.ascontiguousarray(np.concatenate([w["q_proj"], w["k_proj"], w["v_proj"]]).T)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, S, C])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, S, C])
    init = [numpy_helper.from_array(w_qkv, "w_qkv"),
            numpy_helper.from_array(np.ascontiguousarray(w["o_proj"].T), "w_out"),
            numpy_helper.from_array(np.array([S - 1], np.int32), "seqlens_k"),
            numpy_helper.from_array(np.array(S, np.int32), "total_len"),
            numpy_helper.from_array(cos, "cos_cache"), numpy_helper.from_array(sin, "sin_cache")]
    nodes = [helper.make_node("MatMul", ["x", "w_qkv"], ["qkv"]),
             helper.make_node("GroupQueryAttention",
                              ["qkv", "", "", "", "", "seqlens_k", "total_len", "cos_cache",
                               "sin_cache"], ["ctx", "present_k", "present_v"],
                              domain="com.microsoft", num_heads=H, kv_num_heads=Hkv, do_rotary=1,
                              rotary_interleaved=0),
             helper.make_node("MatMul", ["ctx", "w_out"], ["y"])]
    g = helper.make_graph(nodes, "llama_gqa", [x], [y], init)
    model = helper.make_model(g, opset_imports=[helper.make_operatorsetid("", 17),
                                                helper.make_operatorsetid("com.microsoft", 1)])
    onnx.save(model, out, save_as_external_data=False)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""ONNX graphs of one attention layer for ONNX Runtime, from torch_mha weights (.npy folder:
in_proj_weight (3E, E), in_proj_bias (3E), out_proj.weight (E, E), out_proj.bias (E)).

  attention.onnx: com.microsoft.Attention (packed QKV weight (E, 3E), bias, num_heads,
                  unidirectional for causal), then MatMul + Add for the output projection.
  mha.onnx:       MatMul + Add for Q|K|V, Split, com.microsoft.MultiHeadAttention (ORT's MLAS
                  flash path on CPU; unidirectional for causal), then MatMul + Add.
Inputs x (B, S, E) float32 with symbolic B and S; output y (B, S, E).
Usage: make_graphs.py WEIGHTS_DIR NUM_HEADS CAUSAL(0|1) OUT_DIR   (Debian's python3-onnx)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    wdir, heads, causal, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    w_in = np.load(os.path.join(wdir, "in_proj_weight.npy")).astype(np.float32)
    b_in = np.load(os.path.join(wdir, "in_proj_bias.npy")).astype(np.float32)
    w_out = np.load(os.path.join(wdir, "out_proj.weight.npy")).astype(np.float32)
    b_out = np.load(os.path.join(wdir, "out_proj.bias.npy")).astype(np.float32)
    E = w_out.shape[0]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", E])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "S", E])
    out_init = [numpy_helper.from_array(np.ascontiguousarray(w_out.T), "w_out"),
                numpy_helper.from_array(b_out, "b_out")]
    out_nodes = [helper.make_node("MatMul", ["ctx", "w_out"], ["proj"]),
                 helper.make_node("Add", ["proj", "b_out"], ["y"])]
    ms = helper.make_operatorsetid("com.microsoft", 1)
    onnx_ops = helper.make_operatorsetid("", 17)

    att = helper.make_node("Attention", ["x", "w_qkv", "b_qkv"], ["ctx"], domain="com.microsoft",
                           num_heads=heads, unidirectional=causal)
    g1 = helper.make_graph([att] + out_nodes, "attention", [x], [y],
                           [numpy_helper.from_array(np.ascontiguousarray(w_in.T), "w_qkv"),
                            numpy_helper.from_array(b_in, "b_qkv")] + out_init)
    onnx.save(helper.make_model(g1, opset_imports=[onnx_ops, ms]), os.path.join(out, "attention.onnx"))

    nodes = [helper.make_node("MatMul", ["x", "w_qkv"], ["qkv0"]),
             helper.make_node("Add", ["qkv0", "b_qkv"], ["qkv"]),
             helper.make_node("Split", ["qkv", "split"], ["q", "k", "v"], axis=2),
             helper.make_node("MultiHeadAttention", ["q", "k", "v"], ["ctx"], domain="com.microsoft",
                              num_heads=heads, unidirectional=causal)]
    g2 = helper.make_graph(nodes + out_nodes, "mha", [x], [y],
                           [numpy_helper.from_array(np.ascontiguousarray(w_in.T), "w_qkv"),
                            numpy_helper.from_array(b_in, "b_qkv"),
                            numpy_helper.from_array(np.array([E, E, E], np.int64), "split")] + out_init)
    onnx.save(helper.make_model(g2, opset_imports=[onnx_ops, ms]), os.path.join(out, "mha.onnx"))


if __name__ == "__main__":
    main()

// Whole weights containers as bytes, for --dump-weights FILE.safetensors /
// FILE.npz (CONTRACT.md "Outputs"): float32 tensors under their state_dict
// keys, in a file every reader of the format opens (the Python and Rust
// safetensors packages, np.load) and open_state_dict reads back bit for bit.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "attn/tensor.h"

namespace attn {

// One tensor to write: its key and values (float32, C order).
struct NamedTensor {
  std::string key;
  const Tensor* tensor;
};

// A .safetensors image as the reference (Rust) writer lays it out: u64
// little-endian header length N, N bytes of compact JSON
//   {"__metadata__": {k: v, ...}, "<key>": {"dtype": "F32", "shape": [...],
//    "data_offsets": [begin, end]}, ...}
// padded with spaces to a multiple of 8, then the data. Tensors are ordered
// as the reference orders them (by dtype, then by name: here all F32, so by
// name); `metadata` keeps its order. Exit::data for a key listed twice.
std::string encode_safetensors(const std::vector<NamedTensor>& tensors,
                               const std::vector<std::pair<std::string, std::string>>& metadata);

// An .npz image as np.savez writes it: a stored (uncompressed) zip of
// "<key>.npy" members (version 1.0 .npy, little-endian float32), in the given
// order; ZIP64 records where a size or offset needs them. Exit::data for a
// key listed twice.
std::string encode_npz(const std::vector<NamedTensor>& tensors);

}  // namespace attn

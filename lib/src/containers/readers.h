// The containers' readers (private to lib/src): each checks its container's
// structure (headers, spans, directory), reads no tensor data, and returns the
// tensors it holds in file order. The StateDict index (state_dict.cpp,
// index/shards.cpp) is built from these entries; the readers know
// nothing of it. Errors name the file and member: Exit::no_input (missing),
// Exit::data (malformed).
#pragma once

#include <string>

#include "containers/stored.h"

namespace attn::detail {

StoredEntries npy_folder_entries(const std::string& dir);  // "<dir>/<key>.npy" -> key
StoredEntries npz_entries(const std::string& path);
StoredEntries safetensors_entries(const std::string& path);
// torch.save's zip format (PyTorch >= 1.6), data.pkl read by a pickle reader
// that executes nothing; the legacy format is Exit::data saying how to re-save.
StoredEntries torch_save_entries(const std::string& path);
// A GGUF file (versions 2 and 3, containers/gguf.h): every tensor under its
// name, F32/F16/BF16 as those dtypes, the quantized types as float32 read
// through ggml's dequantization; another ggml type is listed and refused
// when read, naming the tensor and its type.
StoredEntries gguf_entries(const std::string& path);
class GgufFile;
StoredEntries gguf_entries(const GgufFile& file);

}  // namespace attn::detail

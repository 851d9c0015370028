// Where weights come from: a folder of <key>.npy files, an .npz archive or a
// .safetensors file; each gives the same key -> typed array map.
#pragma once

#include <map>
#include <string>

#include "attn/npy.h"

namespace attn {

using StateDict = std::map<std::string, RawArray>;

// Load every array of a weights source (folder, .npz or .safetensors chosen by
// what `path` is). Keys are state_dict names ("Wqkv.weight"). Errors name the
// file and member: Exit::no_input (missing), Exit::data (malformed).
StateDict read_state_dict(const std::string& path);

// Each .npy in a folder: "<dir>/<key>.npy" -> key.
StateDict read_npy_folder(const std::string& dir);
StateDict read_npz(const std::string& path);
StateDict read_safetensors(const std::string& path);

// Write a state dict as a folder of <key>.npy (float32). Used by --dump-weights.
// Files are staged and renamed by the caller's OutputDir.

}  // namespace attn

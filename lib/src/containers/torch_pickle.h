// The restricted pickle reader behind .pt/.pth/.bin checkpoints written by
// torch.save (CONTRACT.md "Containers"). It interprets only the opcodes
// torch.save emits and rebuilds only tensors, parameters, typed storages and
// (Ordered)dicts: nothing of the file is ever executed, any other global is an
// error naming it. What it returns is an index: each tensor's name, dtype,
// shape, strides and where its elements live (a storage of the zip archive);
// no tensor data is read here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/npy.h"

namespace attn::detail {

struct TorchTensorRecord {
  std::string name;                 // state_dict key, nested dict keys joined by '.'
  std::string storage_key;          // archive member "<archive>/data/<storage_key>"
  DType dtype = DType::f4;          // from the storage type (torch.FloatStorage, ...)
  std::uint64_t storage_numel = 0;  // elements the storage declares
  std::uint64_t offset = 0;         // storage_offset, in elements
  std::vector<std::size_t> shape;
  std::vector<std::int64_t> stride;  // in elements
  bool contiguous() const;           // C order: the elements are one span of the storage
};

// Limits: the largest data.pkl accepted, the deepest container nesting walked,
// and the most objects one pickle may build.
constexpr std::size_t kMaxPickleBytes = 64u << 20;
constexpr std::size_t kMaxPickleDepth = 64;
constexpr std::size_t kMaxPickleObjects = 8u << 20;

// Parses the bytes of data.pkl. The checkpoint's tensors in pickle order: of
// the top-level dict, or of its "state_dict" / "model" entry when it holds
// one (Lightning-style and training checkpoints); nested string-keyed dicts
// give dotted names. `name` (the file) starts every message. Exit::data for an
// opcode torch.save does not write, a global other than the allowed ones (its
// dotted name in the message), a malformed stream, a tensor view outside its
// storage, or a limit exceeded.
std::vector<TorchTensorRecord> parse_torch_pickle(const std::uint8_t* data, std::size_t size,
                                                  const std::string& name);

// True when `head` (the first bytes of a file) starts the legacy (pre-1.6,
// non-zip) torch.save format: a pickled magic number.
bool is_legacy_torch_save(const std::uint8_t* head, std::size_t size);

}  // namespace attn::detail

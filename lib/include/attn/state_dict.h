// Where weights come from: a folder of <key>.npy files, an .npz archive, a
// .safetensors file, a sharded *.safetensors.index.json or *.bin.index.json,
// or a torch.save checkpoint (.pt, .pth, .bin). Each opens as a
// StateDict: an index of name -> dtype, shape and where the bytes are, in
// file order. Opening checks the container's structure (headers, spans,
// directory) and reads no tensor data; tensors are read when asked for,
// converted straight into the caller's float32 buffer.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attn/npy.h"
#include "attn/tensor.h"
#include "attn/tensor_info.h"

namespace attn {

namespace detail {
struct Stored;     // one tensor's bytes and byte layout (lib/src/containers/stored.h)
class ShardTable;  // the shards of an index, opened on demand (lib/src/index/shards.h)
}  // namespace detail

class StateDict {
 public:
  StateDict() = default;
  explicit StateDict(std::string source) : source_(std::move(source)) {}

  const std::string& source() const { return source_; }           // file/folder/index, for messages
  const std::vector<std::string>& keys() const { return keys_; }  // in file order
  // nullptr when absent. A tensor whose header entry is malformed (it fails
  // only when used): Exit::data naming "<source>:<key>". Of a sharded index,
  // the first use of a key opens its shard (header only).
  const TensorInfo* find(const std::string& key) const;
  bool contains(const std::string& key) const { return entries_.count(key) != 0; }
  // The key as the file names it ("blk.1.attn_q.weight" for a GGUF layer's
  // "q_proj.weight", the prefix put back): what messages quote. `key` when absent.
  const std::string& file_key(const std::string& key) const;
  std::size_t size() const { return keys_.size(); }
  bool empty() const { return keys_.empty(); }

  // Rows [row0, row0 + rows) as float32 into dst (rows * K floats, dense). A
  // 2-D (R, K) tensor has rows of K elements (an N-D one rows of its trailing
  // dimensions); a 1-D (N) tensor rows of one element. transposed: the stored
  // tensor is (K, R) (GPT-2's Conv1D, (in, out)) and "row r" means its column
  // r. Converts dtype (f16, bf16, f32, f64), byte order and Fortran order in
  // the same pass, straight into dst. Non-finite values: Exit::data naming
  // "<source>:<key>" and the first index, unless allow_nonfinite. A missing
  // key, rows out of range, a non-float dtype: Exit::data.
  void read_rows(const std::string& key, std::size_t row0, std::size_t rows, bool transposed,
                 float* dst, bool allow_nonfinite) const;
  // Rows ids[0..n) (each < R) one after the other into dst (n, K), as read_rows
  // of each: an embedding's rows for token ids, read with the file opened once
  // per batch of rows where they need no mapping, the batches on `threads`
  // workers (0 = the CPUs this process may use).
  void read_row_list(const std::string& key, const std::size_t* ids, std::size_t n, float* dst,
                     bool allow_nonfinite, int threads = 1) const;
  Tensor read_f32(const std::string& key, bool allow_nonfinite) const;  // the whole tensor
  RawArray read_raw(const std::string& key) const;  // typed copy, native byte and C order

  // The keys under `prefix`, prefix stripped, file order kept; shares the
  // open files; reads nothing. Messages keep naming the full key.
  StateDict select(const std::string& prefix) const;
  // The same keys, where one starting with a pair's first part starts with its
  // second instead (the first pair that matches); messages keep naming the
  // file's key. Two keys renamed to one name: Exit::data naming both.
  StateDict renamed(const std::vector<std::pair<std::string, std::string>>& renames) const;

  // Reads may run on several threads at once: the caches of a source (the
  // shards opened, an .npz member's CRC checked) are guarded.

  // In-memory entries (export_weights, tests): takes ownership. A key that
  // exists is replaced.
  void add(std::string key, Tensor t);
  void add(std::string key, RawArray a);
  void erase(const std::string& key);  // nothing when absent

  // The index is built from the containers' entries (lib/src/containers/readers.h) with these.
  void add_stored(std::string key, std::shared_ptr<const detail::Stored> s);
  void add_sharded(std::string key, std::shared_ptr<detail::ShardTable> shards);

 private:
  struct Entry {
    std::string full_key;                          // the key in the file (messages)
    std::shared_ptr<const detail::Stored> stored;  // null for a key of a sharded index
    std::shared_ptr<detail::ShardTable> shards;    // sharded index only (owns its shards)
  };
  const Entry& entry(const std::string& key) const;  // Exit::data when absent
  const detail::Stored& stored(const Entry& e) const;
  std::string name_of(const Entry& e) const { return source_ + ":" + e.full_key; }
  void put(std::string key, Entry e);

  std::string source_;
  std::vector<std::string> keys_;
  std::map<std::string, Entry> entries_;
};

// Open a weights source: a folder of <key>.npy files, .npz, .safetensors, a
// *.safetensors.index.json or *.bin.index.json, or a torch.save checkpoint
// (chosen by what `path` is: a folder, its extension, else its first bytes,
// so a pytorch_model.bin or a .ckpt is recognized as torch.save's zip).
// Errors name the file and member: Exit::no_input (missing), Exit::data
// (malformed).
StateDict open_state_dict(const std::string& path);

// The readers behind it.
StateDict read_npy_folder(const std::string& dir);  // "<dir>/<key>.npy" -> key
StateDict read_npz(const std::string& path);
StateDict read_safetensors(const std::string& path);
// A sharded index (weight_map of key -> shard file); its shards are
// .safetensors or torch.save files, opened when first used.
StateDict read_safetensors_index(const std::string& path);
// torch.save's zip format (PyTorch >= 1.6), data.pkl read by a pickle reader
// that executes nothing; the legacy format is Exit::data saying how to re-save.
StateDict read_torch_save(const std::string& path);
// A GGUF file (versions 2 and 3): every tensor under its name in the file
// ("blk.5.attn_q.weight"), in NumPy order (ggml's ne reversed); quantized
// types read as float32 dequantized as ggml does, TensorInfo::gguf_type
// naming the stored type. The rows are as stored (--model FILE.gguf
// un-permutes llama-family Q/K rows: model_folder.h).
StateDict read_gguf_tensors(const std::string& path);

// The files a weights source reads from: the file itself; a sharded index
// and every shard it names; a folder's <key>.npy files. Each with the length
// of the header it starts with (what describes its tensors: a .safetensors'
// 8 + JSON header, a GGUF's metadata and tensor table, a .npy's header; 0
// for a zip archive, whose directory is at its end). Reads headers only; a
// batch's manifest fingerprints these, so other weights are never mistaken
// for the ones its results were made with.
struct SourceFile {
  std::string path;
  std::size_t header_bytes = 0;
};
std::vector<SourceFile> weight_source_files(const std::string& path);

}  // namespace attn

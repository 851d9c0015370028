// The shards of a *.safetensors.index.json or *.bin.index.json (private to
// lib/src): each shard is opened (its header read and checked) the first
// time one of its keys is used, so a layer of a sharded checkpoint opens only
// the shards holding it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "containers/stored.h"

namespace attn::detail {

class ShardTable {
 public:
  ShardTable(std::string index_path, std::string folder)
      : index_(std::move(index_path)), folder_(std::move(folder)) {}

  // weight_map: key -> shard file name (checked: relative, inside the folder).
  void map(const std::string& key, const std::string& file) { shard_of_[key] = file; }

  // The key's tensor, opening its shard on first use. The shard must exist
  // (Exit::no_input naming it) and its header must list exactly the keys the
  // index maps to it (Exit::data). Safe to call from several threads.
  std::shared_ptr<const Stored> lookup(const std::string& key);

 private:
  std::string index_, folder_;
  std::map<std::string, std::string> shard_of_;
  // The shards opened so far: file -> (key -> its tensor).
  std::map<std::string, std::map<std::string, std::shared_ptr<const Stored>>> open_;
  std::mutex mutex_;
};

}  // namespace attn::detail

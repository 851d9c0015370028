// --compare with --layer all|3-7|0,5: the other maps of each layer run, read
// when that layer runs (memory holds one layer's): a folder of layer_N.npy or
// a (layers, ...) .npy stack whose first axis is the model's layers (indexed
// by layer number) or exactly the layers run (by position).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "attn/tensor.h"

namespace app {

class LayerMaps {
 public:
  // Exit::no_input for a missing layer_N.npy or file, Exit::data for a stack
  // of another length, naming --compare and the file.
  LayerMaps(const std::string& path, std::size_t model_layers,
            const std::vector<std::size_t>& layers);
  // The maps of layers[position] as stored (the run checks their shape).
  attn::Tensor at(std::size_t position, bool allow_nonfinite) const;
  // "maps.npy[5]" or "DIR/layer_5.npy".
  std::string source(std::size_t position) const;

 private:
  std::string path_;
  std::vector<std::size_t> layers_;
  bool by_layer_number_ = true;
  std::optional<attn::NpyStack> stack_;  // empty: a folder
};

}  // namespace app

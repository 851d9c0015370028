// --compare's maps per layer (layer_maps.h).
#include "modes/layer_maps.h"

#include <filesystem>

#include "attn/error.h"
#include "attn/files.h"
#include "modes/layer_inputs.h"

namespace app {

LayerMaps::LayerMaps(const std::string& path, std::size_t model_layers,
                     const std::vector<std::size_t>& layers)
    : path_(path), layers_(layers) {
  if (attn::is_directory(path)) {
    for (std::size_t l : layers)
      if (!std::filesystem::exists(layer_file(path, l)))
        throw attn::Error(attn::Exit::no_input,
                          "--compare: " + layer_file(path, l) +
                              ": missing (a folder of maps needs one layer_N.npy per layer run)");
    return;
  }
  stack_.emplace(path);  // Exit::no_input / Exit::data naming the file
  const std::size_t n = stack_->shape().empty() ? 0 : stack_->shape()[0];
  if (n == model_layers) return;
  if (n == layers.size()) {
    by_layer_number_ = false;
    return;
  }
  throw attn::Error(attn::Exit::data, "--compare: " + path + ": a stack of " + std::to_string(n) +
                                          " maps; expected one per model layer (" +
                                          std::to_string(model_layers) + ") or per layer run (" +
                                          std::to_string(layers.size()) +
                                          "), or a folder of layer_N.npy");
}

attn::Tensor LayerMaps::at(std::size_t position, bool allow_nonfinite) const {
  const std::size_t layer = layers_.at(position);
  if (!stack_) return attn::read_npy_f32(layer_file(path_, layer), allow_nonfinite);
  return stack_->at(by_layer_number_ ? layer : position, allow_nonfinite);
}

std::string LayerMaps::source(std::size_t position) const {
  const std::size_t layer = layers_.at(position);
  if (!stack_) return layer_file(path_, layer);
  return path_ + "[" + std::to_string(by_layer_number_ ? layer : position) + "]";
}

}  // namespace app

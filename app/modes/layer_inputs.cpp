// LayerInputs (layer_inputs.h).
#include "modes/layer_inputs.h"

#include <spdlog/spdlog.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "attn/error.h"
#include "attn/files.h"
#include "attn/run.h"

namespace app {

std::string layer_file(const std::string& dir, std::size_t layer) {
  return (dir.empty() || dir.back() == '/' ? dir : dir + "/") + "layer_" + std::to_string(layer) +
         ".npy";
}

namespace {

// True when a regular file starts as a .npy does (a JSON input starts with
// '['). A FIFO is not probed: its bytes can be read once.
bool looks_like_npy(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream f(path, std::ios::binary);
  char head[6] = {};
  return f.read(head, 6) && std::memcmp(head, "\x93NUMPY", 6) == 0;
}

// One entry of an in-memory (N, ...) stack.
attn::Tensor slab(const attn::Tensor& t, std::size_t i) {
  attn::Tensor out(std::vector<std::size_t>(t.shape.begin() + 1, t.shape.end()));
  std::memcpy(out.ptr(), t.ptr() + i * out.size(), out.size() * sizeof(float));
  return out;
}

// Whether a stack of `n` entries is indexed by layer number (L entries, or
// L + 1: transformers' output_hidden_states, entry i enters block i, the last
// is after the final norm, ignored), else by position among the `runs`
// layers run. Exit::data naming `path` when it is neither.
bool stack_by_layer_number(const std::string& path, std::size_t n, std::size_t model_layers,
                           std::size_t runs) {
  if (n == model_layers || n == model_layers + 1) return true;
  if (n == runs) return false;
  throw attn::Error(attn::Exit::data,
                    path +
                        ": a stack of per-layer inputs (layers, B, S, C) holds one entry per "
                        "layer of the model (" +
                        std::to_string(model_layers) + ", or " + std::to_string(model_layers + 1) +
                        " as output_hidden_states gives them, the last ignored) or per layer "
                        "run (" +
                        std::to_string(runs) + "), found " + std::to_string(n));
}

}  // namespace

std::optional<LayerInput> one_layer_input(const std::string& path,
                                          const std::vector<std::uint8_t>& stdin_bytes,
                                          const std::function<std::size_t()>& model_layers,
                                          std::size_t layer, bool allow_nonfinite) {
  const std::string at = "[" + std::to_string(layer) + "]";
  if (path == "-") {  // parsed here once: a stack or the one input
    attn::Tensor t = attn::parse_input_bytes(stdin_bytes, "-", allow_nonfinite);
    if (t.ndim() != 4) return LayerInput{std::move(t), "-"};
    const bool by_number = stack_by_layer_number("-", t.shape[0], model_layers(), 1);
    return LayerInput{slab(t, by_number ? layer : 0), "-" + at};
  }
  if (attn::is_directory(path)) {
    const std::string file = layer_file(path, layer);
    if (!std::filesystem::exists(file))
      throw attn::Error(attn::Exit::no_input, file + ": missing (--input " + path +
                                                  " is a folder: --layer " + std::to_string(layer) +
                                                  " reads its layer_" + std::to_string(layer) +
                                                  ".npy)");
    return LayerInput{attn::read_input_file(file, allow_nonfinite), file};
  }
  if (!looks_like_npy(path)) return std::nullopt;
  attn::NpyStack s(path);
  if (s.shape().size() != 4) return std::nullopt;
  const bool by_number = stack_by_layer_number(path, s.shape()[0], model_layers(), 1);
  return LayerInput{s.at(by_number ? layer : 0, allow_nonfinite), path + at};
}

LayerInputs::LayerInputs(const std::string& path, std::vector<std::uint8_t> stdin_bytes,
                         std::size_t model_layers, const std::vector<std::size_t>& layers,
                         bool allow_nonfinite)
    : path_(path), layers_(layers), allow_nonfinite_(allow_nonfinite) {
  if (path != "-" && attn::is_directory(path)) {
    folder_ = true;
    for (std::size_t l : layers)
      if (!std::filesystem::exists(layer_file(path, l)))
        throw attn::Error(attn::Exit::no_input,
                          layer_file(path, l) + ": missing (--input " + path +
                              " is a folder: it needs one layer_N.npy per layer run)");
    return;
  }
  std::size_t n = 0;  // a stack's length (its first axis), 0 for one shared input
  if (path != "-" && looks_like_npy(path)) {
    attn::NpyStack s(path);
    if (s.shape().size() == 4) {
      n = s.shape()[0];
      stack_.emplace(std::move(s));
    }
  }
  if (!stack_) {
    attn::Tensor t = path == "-" ? attn::parse_input_bytes(stdin_bytes, "-", allow_nonfinite)
                                 : attn::read_input_file(path, allow_nonfinite);
    if (t.ndim() == 4) n = t.shape[0];
    whole_ = std::move(t);
  }
  if (whole_ && (whole_->ndim() < 2 || whole_->ndim() > 4))
    throw attn::Error(attn::Exit::data,
                      path +
                          ": expected a stack of each layer's hidden states (layers, B, S, C), "
                          "or one input (S, C) or (B, S, C) for every layer, found " +
                          attn::shape_str(whole_->shape));
  if (n == 0) {
    const std::vector<std::size_t>& shape = whole_->shape;
    // (layers, S, C) reads as (B, S, C): say so when its first axis could be the layers.
    const bool maybe_layers = shape.size() == 3 && shape[0] > 1 &&
                              (shape[0] == model_layers || shape[0] == layers.size());
    spdlog::warn(
        "{}: one input for every layer run, {} (a stack of each layer's hidden states is "
        "(layers, B, S, C), or a folder of layer_N.npy){}",
        path, attn::shape_str(shape),
        maybe_layers ? "; if its first axis is the layers, save it as (layers, 1, S, C)" : "");
    return;
  }
  by_layer_number_ = stack_by_layer_number(path, n, model_layers, layers.size());
}

attn::Tensor LayerInputs::at(std::size_t position) const {
  const std::size_t i = by_layer_number_ ? layers_.at(position) : position;
  if (folder_)
    return attn::read_input_file(layer_file(path_, layers_.at(position)), allow_nonfinite_);
  if (stack_) return stack_->at(i, allow_nonfinite_);
  if (whole_->ndim() == 4) return slab(*whole_, i);
  return *whole_;
}

std::string LayerInputs::source(std::size_t position) const {
  if (folder_) return layer_file(path_, layers_.at(position));
  const bool stacked = stack_ || whole_->ndim() == 4;
  if (!stacked) return path_;
  return path_ + "[" + std::to_string(by_layer_number_ ? layers_.at(position) : position) + "]";
}

std::string LayerInputs::file(std::size_t position) const {
  if (folder_) return layer_file(path_, layers_.at(position));
  return path_ == "-" ? "" : path_;
}

const char* LayerInputs::kind() const {
  if (folder_) return "folder";
  return stack_ || whole_->ndim() == 4 ? "stack" : "shared";
}

}  // namespace app

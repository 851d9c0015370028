// The inputs of a run over several layers (--layer all|3-7|0,5; CONTRACT.md
// "(v3) Many layers"): each layer's hidden states, read when that layer runs
// so memory holds one layer's.
//
// Letters: N layers, B batch, S sequence, C hidden.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/npy.h"
#include "attn/tensor.h"

namespace app {

// A per-layer folder's file: DIR/layer_N.npy.
std::string layer_file(const std::string& dir, std::size_t layer);

// The input of one layer (--layer N) when --input may be a stack: entry N of
// a (layers, B, S, C) .npy (or of one on standard input), or DIR/layer_N.npy
// of a folder; `source` says which ("h.npy[3]"). A stack holds the model's
// `model_layers()` entries (asked only for a stack), L + 1 (output_hidden_states, the last
// ignored), or one (this layer's). Standard input is parsed here whatever it holds (it can be read
// once); nullopt for a file that is not a 4-D .npy (the run reads it as one input). Exit::no_input
// for a missing layer_N.npy, Exit::data for a stack of another length.
struct LayerInput {
  attn::Tensor x;
  std::string source;
};
std::optional<LayerInput> one_layer_input(const std::string& path,
                                          const std::vector<std::uint8_t>& stdin_bytes,
                                          const std::function<std::size_t()>& model_layers,
                                          std::size_t layer, bool allow_nonfinite);

class LayerInputs {
 public:
  // `path`: a folder of layer_N.npy (every one checked to exist now); a
  // (N, B, S, C) .npy stack (or JSON, or "-" with `stdin_bytes`) whose first
  // axis is the model's `model_layers` (indexed by layer number) or exactly
  // the layers run (by position); or one (B, S, C) / (S, C) input that every
  // layer gets, with a warning. Exit::no_input for a missing layer_N.npy,
  // Exit::data for a stack of another length.
  LayerInputs(const std::string& path, std::vector<std::uint8_t> stdin_bytes,
              std::size_t model_layers, const std::vector<std::size_t>& layers,
              bool allow_nonfinite);

  // The input of layers[position] as given ((B, S, C) or (S, C)), and where
  // it came from ("h.npy[5]", "DIR/layer_5.npy").
  attn::Tensor at(std::size_t position) const;
  std::string source(std::size_t position) const;
  // The file that input is read from ("" for standard input).
  std::string file(std::size_t position) const;
  // "stack", "folder" or "shared" (one input for every layer), for run.json.
  const char* kind() const;

 private:
  std::string path_;
  std::vector<std::size_t> layers_;
  bool allow_nonfinite_;
  bool by_layer_number_ = true;          // a stack indexed by layer number
  std::optional<attn::NpyStack> stack_;  // a .npy stack, read lazily
  std::optional<attn::Tensor> whole_;    // a stack or shared input in memory
  bool folder_ = false;
};

}  // namespace app

// The torch.save targets, shared by fuzz/fuzz_pickle.cpp,
// fuzz/fuzz_pt.cpp and the replay test: data.pkl bytes straight into the
// restricted interpreter, and whole .pt files through the container reader
// (zip directory, data.pkl, storages, views, every tensor read).
#pragma once

#include <cstddef>
#include <cstdint>

#include "attn/error.h"
#include "containers/torch_pickle.h"
#include "targets.h"

inline int fuzz_pickle(const std::uint8_t* data, std::size_t size) {
  try {
    for (const auto& r : attn::detail::parse_torch_pickle(data, size, "fuzz.pt"))
      (void)r.contiguous();
  } catch (const attn::Error&) {
  }
  return 0;
}

// A whole torch.save file: open_state_dict of a .pt, every tensor read both ways.
inline int fuzz_pt(const std::uint8_t* data, std::size_t size) {
  attn::fuzz::fuzz_state_dict_file(data, size, ".pt", attn::read_torch_save);
  return 0;
}

// The torch.save pickle target (issue 11): data.pkl bytes straight into the
// restricted interpreter; shared by fuzz/fuzz_pickle.cpp and the replay test.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../lib/src/torch_pickle.h"
#include "attn/error.h"

inline int fuzz_pickle(const std::uint8_t* data, std::size_t size) {
  try {
    for (const auto& r : attn::detail::parse_torch_pickle(data, size, "fuzz.pt"))
      (void)r.contiguous();
  } catch (const attn::Error&) {
  }
  return 0;
}

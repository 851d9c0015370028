// libFuzzer entry point for the GGUF target; the body is fuzz_gguf() in targets_gguf.h,
// shared with the replay test (tests/hostile/test_fuzz_replay.cpp).
#include "targets_gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_gguf(data, size);
}

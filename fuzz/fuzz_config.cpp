// libFuzzer entry point for the config target; the body is fuzz_config() in targets.h,
// shared with the replay test (tests/hostile/test_fuzz_replay.cpp).
#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_config(data, size);
}

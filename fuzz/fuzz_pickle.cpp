// libFuzzer entry point for the torch.save pickle target; the body is
// fuzz_pickle() in targets_pickle.h, shared with tests/hostile/test_fuzz_replay.cpp.
#include "targets_pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_pickle(data, size);
}

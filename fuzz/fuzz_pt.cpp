// libFuzzer entry point for the whole torch.save container target; the body
// is fuzz_pt() in targets_pickle.h, shared with tests/hostile/test_fuzz_replay.cpp.
#include "targets_pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_pt(data, size);
}

// Wall-clock milliseconds for run.json's timings.
#pragma once

#include <chrono>

namespace app {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace app

// A progress bar on stderr for long runs: only when stderr is a terminal and
// not -q, and only once the run has taken more than half a second (short runs
// never flicker). At most ~10 redraws a second, one line redrawn in place that
// fits the terminal's width, with rate and time left once it can be estimated.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace app {

// Time left is shown only after this much time and this share of the work:
// before, the rate of the first rows says little about the rest.
constexpr double kEstimateSeconds = 1.0, kEstimateFraction = 0.05;

// The bar's line for a terminal `columns` wide: at most columns - 1 columns
// (never wraps), dropping the bar, the rate, the count and the time left in
// that order as the width shrinks; the percentage always stays.
std::string progress_line(std::uint64_t done, std::uint64_t total, double elapsed,
                          const std::string& unit, int columns);

class Progress {
 public:
  // `unit`: "rows", "inputs". Disabled when !enabled or total == 0.
  Progress(std::string unit, std::uint64_t total, bool enabled);
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Thread-safe: called from the forward pass's worker threads.
  void advance(std::uint64_t n);
  // Draws the final state and ends the line, if anything was drawn.
  void finish();

  // stderr is a terminal and the user did not ask for quiet.
  static bool wanted(bool quiet);

 private:
  using Clock = std::chrono::steady_clock;
  std::string unit_;
  std::uint64_t total_;
  bool enabled_;
  std::atomic<std::uint64_t> done_{0};
  std::mutex draw_;
  Clock::time_point start_, last_draw_;
  bool drawn_ = false, finished_ = false;
  void draw(std::uint64_t done);
};

}  // namespace app

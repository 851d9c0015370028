// The progress bar on stderr (progress.h).
#include "cli/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cli/term.h"

namespace app {
namespace {

constexpr double kQuietSeconds = 0.5;   // nothing before this: short runs stay silent
constexpr double kRedrawSeconds = 0.1;  // at most ~10 updates a second
constexpr std::size_t kMaxBarWidth = 30;

std::string clock_str(double seconds) {
  if (!(seconds >= 0) || seconds > 359999) return "--:--";
  const long s = long(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

std::string rate_str(double per_second) {
  char buf[32];
  if (per_second >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1fM", per_second / 1e6);
  else if (per_second >= 1e3)
    std::snprintf(buf, sizeof buf, "%.1fk", per_second / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.1f", per_second);
  return buf;
}

}  // namespace

std::string progress_line(std::uint64_t done, std::uint64_t total, double elapsed,
                          const std::string& unit, int columns) {
  done = std::min(done, total);
  const double frac = total ? double(done) / double(total) : 1.0;
  const bool all = done == total;
  const double rate = elapsed > 0 ? double(done) / elapsed : 0.0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%3d%%", int(100.0 * frac));
  const std::string pct = buf;
  std::string eta;
  if (all)
    eta = "done in " + clock_str(elapsed);
  else if (elapsed >= kEstimateSeconds && frac >= kEstimateFraction && rate > 0)
    eta = clock_str(double(total - done) / rate) + " left";
  else
    eta = "estimating time left";  // too early: the first rows say little about the rest
  const std::string count = std::to_string(done) + "/" + std::to_string(total) + " " + unit;
  const std::string speed = rate_str(rate) + " " + unit + "/s";

  // Never the last column: a line that fills the terminal wraps on some
  // terminals, and the next "\r" would then redraw only its second half.
  const std::size_t room = columns > 1 ? std::size_t(columns - 1) : 0;
  std::size_t used = pct.size();
  auto fits = [&](const std::string& s) {
    if (used + 2 + s.size() > room) return false;
    used += 2 + s.size();
    return true;
  };
  const bool with_eta = fits(eta), with_count = fits(count), with_speed = fits(speed);
  std::string line;
  if (room >= used + 3 + 5) {  // the bar takes what is left (5 to kMaxBarWidth)
    const std::size_t w = std::min(kMaxBarWidth, room - used - 3);
    std::string bar(std::size_t(double(w) * frac), '#');
    bar.resize(w, '.');
    line = "[" + bar + "] ";
  }
  line += pct;
  if (with_count) line += "  " + count;
  if (with_speed) line += "  " + speed;
  if (with_eta) line += "  " + eta;
  return line.size() <= room ? line : line.substr(0, room);
}

Progress::Progress(std::string unit, std::uint64_t total, bool enabled)
    : unit_(std::move(unit)), total_(total), enabled_(enabled && total > 0) {
  start_ = last_draw_ = Clock::now();
}

bool Progress::wanted(bool quiet) { return !quiet && stderr_is_terminal(); }

void Progress::advance(std::uint64_t n) {
  if (!enabled_) return;
  const std::uint64_t done = done_.fetch_add(n) + n;
  std::unique_lock<std::mutex> lock(draw_, std::try_to_lock);
  if (!lock.owns_lock() || finished_) return;  // another thread is drawing
  const auto now = Clock::now();
  const double since_start = std::chrono::duration<double>(now - start_).count();
  const double since_draw = std::chrono::duration<double>(now - last_draw_).count();
  if (since_start < kQuietSeconds || (drawn_ && since_draw < kRedrawSeconds)) return;
  last_draw_ = now;
  draw(done);
}

void Progress::draw(std::uint64_t done) {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  // The width is read at every redraw: a resized terminal gets a line that fits.
  const std::string line =
      progress_line(done, total_, elapsed, unit_, terminal_columns(STDERR_FILENO));
  std::fprintf(stderr, "\r%s%s", line.c_str(), kEraseLine);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(draw_);
  if (finished_) return;
  finished_ = true;
  if (!drawn_) return;
  draw(done_.load());
  std::fputc('\n', stderr);
  std::fflush(stderr);
}

}  // namespace app

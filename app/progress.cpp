// The progress bar on stderr (progress.h).
#include "progress.h"

#include <unistd.h>

#include <cstdio>

namespace app {
namespace {

constexpr double kQuietSeconds = 0.5;   // nothing before this: short runs stay silent
constexpr double kRedrawSeconds = 0.1;  // at most ~10 updates a second
constexpr int kBarWidth = 30;

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

Progress::Progress(std::string unit, std::uint64_t total, bool enabled)
    : unit_(std::move(unit)), total_(total), enabled_(enabled && total > 0) {
  start_ = last_draw_ = Clock::now();
}

bool Progress::wanted(bool quiet) { return !quiet && isatty(STDERR_FILENO); }

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
  if (done > total_) done = total_;
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const double rate = elapsed > 0 ? double(done) / elapsed : 0.0;
  const double left = rate > 0 ? double(total_ - done) / rate : -1.0;
  const int filled = int(double(kBarWidth) * double(done) / double(total_));
  std::string bar(std::size_t(filled), '#');
  bar.resize(kBarWidth, '.');
  const bool all = done == total_;
  std::fprintf(stderr, "\r[%s] %3d%% %llu/%llu %s  %s %s/s  %s%s%s\033[K", bar.c_str(),
               int(100.0 * double(done) / double(total_)), (unsigned long long)done,
               (unsigned long long)total_, unit_.c_str(), rate_str(rate).c_str(), unit_.c_str(),
               all ? "done in " : "", clock_str(all ? elapsed : left).c_str(), all ? "" : " left");
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

// The inputs of an --input-list read ahead (input_prefetch.h).
#include "modes/input_prefetch.h"

#include <sys/stat.h>

#include <stdexcept>
#include <system_error>
#include <utility>

#include "cli/timing.h"

namespace app {
namespace {

// Whether `path` may be read ahead: a regular file of at most `limit` bytes,
// or one stat cannot see (its load then gives the error, as in place).
bool may_read_ahead(const std::string& path, std::uint64_t limit) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return true;
  return S_ISREG(st.st_mode) && std::uint64_t(st.st_size) <= limit;
}

}  // namespace

SessionInput load_list_entry(const attn::Config& cfg, const attn::LoadOptions& lo,
                             bool allow_nonfinite, const ListEntry& e) {
  const auto t_load = Clock::now();
  SessionInput in;
  static_cast<attn::RunInputs&>(in) =
      attn::load_inputs(cfg, lo, attn::read_input_file(e.path, allow_nonfinite), e.path);
  in.load_ms = ms_since(t_load);
  return in;
}

InputPrefetch::InputPrefetch(const std::vector<const ListEntry*>& entries, const Done& done,
                             Load load)
    : load_(std::move(load)) {
  for (const ListEntry* e : entries) {
    turn_of_.push_back(done(*e) ? kSkipped : order_.size());
    if (!skipped(turn_of_.size() - 1)) order_.push_back(e);
  }
  if (order_.empty()) return;
  try {
    helper_ = std::thread([this] { read_ahead(); });
  } catch (const std::system_error&) {
    // No thread to spare (ulimit -u): every entry read at its turn, as before.
  }
}

InputPrefetch::~InputPrefetch() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (helper_.joinable()) helper_.join();
}

void InputPrefetch::read_ahead() {
  for (std::size_t i = 0; i < order_.size(); ++i) {
    {
      // Entry i once i - 1 is handed out: one input computing, one read ahead.
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || (taken_ == i && !ready_); });
      if (stop_) return;
    }
    std::optional<SessionInput> loaded;
    std::exception_ptr error;
    const bool ahead = may_read_ahead(order_[i]->path, kAheadBytes);
    if (ahead) {
      try {
        loaded.emplace(load_(*order_[i]));
      } catch (...) {
        error = std::current_exception();
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ready_ = true;
      in_place_ = !ahead;
      loaded_ = std::move(loaded);
      error_ = std::move(error);  // the helper keeps no reference to it
    }
    changed_.notify_all();
  }
}

SessionInput InputPrefetch::take(std::size_t i) {
  std::optional<SessionInput> loaded;
  std::exception_ptr error;
  bool in_place = false;
  const ListEntry* e = nullptr;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (i >= turn_of_.size() || turn_of_[i] != taken_)
      throw std::logic_error("InputPrefetch::take: an entry skipped or out of turn");
    e = order_[taken_];
    if (!helper_.joinable()) {
      ++taken_;
      lock.unlock();
      return load_(*e);
    }
    changed_.wait(lock, [&] { return ready_; });
    in_place = in_place_;
    loaded = std::move(loaded_);
    error = std::exchange(error_, nullptr);
    loaded_.reset();
    ready_ = false;
    ++taken_;
  }
  changed_.notify_all();  // the helper goes on to entry i + 1
  if (error) std::rethrow_exception(error);
  if (in_place) return load_(*e);
  return std::move(*loaded);
}

}  // namespace app

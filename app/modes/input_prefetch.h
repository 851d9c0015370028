// The inputs of an --input-list read ahead: while input i computes, a helper
// thread reads and checks input i + 1, so the loop does not wait for a file
// between passes (a list of GPT-2-sized inputs of S = 128 spent 0.4-2 ms a
// file, from the page cache or the disk, beside about 2 ms of compute).
//
// Only regular files of up to kAheadBytes go ahead. A larger one would hold two
// inputs' memory at once; a FIFO or a device may block until a writer comes,
// which a run stopping on an error could not wait out. Those are read when
// their turn comes, on the caller's thread, as every input once was.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "attn/config.h"
#include "attn/run.h"
#include "modes/input_list_file.h"
#include "modes/run_session.h"

namespace app {

// One entry's inputs as the list's loop takes them (read, checked, its masks
// and positions beside it), with the time that took.
SessionInput load_list_entry(const attn::Config& cfg, const attn::LoadOptions& lo,
                             bool allow_nonfinite, const ListEntry& e);

class InputPrefetch {
 public:
  using Done = std::function<bool(const ListEntry&)>;
  using Load = std::function<SessionInput(const ListEntry&)>;
  static constexpr std::uint64_t kAheadBytes = std::uint64_t(64) << 20;

  // entries[i] for which done() holds now (committed by an earlier run) are
  // skipped; the others are loaded in turn, at most one ahead of take().
  InputPrefetch(const std::vector<const ListEntry*>& entries, const Done& done, Load load);
  // Waits for a read under way (a regular file's, bounded), then stops.
  ~InputPrefetch();
  InputPrefetch(const InputPrefetch&) = delete;
  InputPrefetch& operator=(const InputPrefetch&) = delete;

  bool skipped(std::size_t i) const { return turn_of_[i] == kSkipped; }
  // entries[i]'s inputs, for the entries not skipped in turn: what
  // load(*entries[i]) returns, or its error thrown here.
  SessionInput take(std::size_t i);

 private:
  static constexpr std::size_t kSkipped = std::size_t(-1);
  void read_ahead();  // the helper thread

  std::vector<std::size_t> turn_of_;     // entries[i]'s place in order_, or kSkipped
  std::vector<const ListEntry*> order_;  // the entries not skipped
  Load load_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::size_t taken_ = 0;  // entries of order_ take() has handed out (or is loading itself)
  // order_[taken_]'s load, once the helper has done it (or left it to take()).
  bool ready_ = false;
  bool in_place_ = false;  // ready_: take() loads it itself
  std::optional<SessionInput> loaded_;
  std::exception_ptr error_;
  bool stop_ = false;
  std::thread helper_;  // last: started once the fields above exist
};

}  // namespace app

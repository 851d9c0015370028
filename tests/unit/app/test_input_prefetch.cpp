// The --input-list's read-ahead (app/modes/input_prefetch.h): each entry's
// inputs handed out in turn, read on the helper thread while the one before
// it is out, never more than one ahead; a load's error at its own turn with
// the entries after it still delivered; a FIFO and a file past kAheadBytes
// read on the caller's thread when their turn comes; a run that stops early
// (an error) is not held up.
//
// Letters: S tokens, C = 8 (configs/warner_multi.json's hidden size).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attn/config.h"
#include "attn/error.h"
#include "attn/npy.h"
#include "modes/input_prefetch.h"
#include "test_util.h"

using namespace attn::test;
using app::InputPrefetch;
using app::ListEntry;
using app::SessionInput;

namespace {

// A (S, 8) input whose values start at `first`.
std::string input_bytes(std::size_t S, float first) {
  attn::Tensor t;
  t.shape = {S, 8};
  t.data.resize(S * 8);
  for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = first + float(i);
  return attn::encode_npy(t);
}

ListEntry entry(const std::string& path, std::size_t index) {
  ListEntry e;
  e.path = e.written = path;
  e.index = index;
  e.line = index + 1;
  e.name = "x" + std::to_string(index);
  return e;
}

// A list of these files in `dir`, in order, and the pointers InputPrefetch takes.
struct List {
  std::vector<ListEntry> entries;
  std::vector<const ListEntry*> order;
};
List list_of(const TempDir& dir, const std::vector<std::string>& names) {
  List list;
  for (const std::string& name : names)
    list.entries.push_back(entry(dir / name, list.entries.size()));
  for (const ListEntry& e : list.entries) list.order.push_back(&e);
  return list;
}

// The list's real load, with where and when each entry was read.
struct RecordedLoads {
  attn::Config cfg = attn::load_config(source_path("configs/warner_multi.json"));
  attn::LoadOptions lo;
  std::mutex mutex;
  std::map<std::size_t, std::thread::id> thread_of;  // entry index -> the thread that read it
  std::atomic<int> started{0};

  InputPrefetch::Load load() {
    return [this](const ListEntry& e) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        thread_of[e.index] = std::this_thread::get_id();
      }
      ++started;
      return app::load_list_entry(cfg, lo, false, e);
    };
  }
  std::thread::id reader(std::size_t index) {
    std::lock_guard<std::mutex> lock(mutex);
    return thread_of.at(index);
  }
};

// take(i) throws attn::Error `code` naming `file`.
void check_error_at_turn(InputPrefetch& inputs, std::size_t i, attn::Exit code,
                         const std::string& file) {
  try {
    inputs.take(i);
    FAIL("entry " << i << " (" << file << ") was handed out");
  } catch (const attn::Error& e) {
    CHECK(e.code() == code);
    CHECK(std::string(e.what()).find(file) != std::string::npos);
  }
}

const InputPrefetch::Done nothing_done = [](const ListEntry&) { return false; };

// Waits (up to a minute: never on a healthy run) until `done` holds.
template <class F>
bool eventually(F&& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace

TEST_CASE("input prefetch: every entry in turn, read ahead on the helper, errors at their turn") {
  TempDir dir;
  write_text(dir / "a.npy", input_bytes(3, 0.0f));
  write_text(dir / "b.npy", input_bytes(5, 100.0f));
  write_text(dir / "bad.npy", "\x93NUMPY not a header");
  write_text(dir / "c.npy", input_bytes(2, -7.0f));
  const List list = list_of(dir, {"a.npy", "b.npy", "missing.npy", "bad.npy", "c.npy"});
  RecordedLoads loads;
  InputPrefetch inputs(list.order, nothing_done, loads.load());

  const SessionInput a = inputs.take(0);
  CHECK(a.x.shape == std::vector<std::size_t>{1, 3, 8});  // batched as the forward pass takes it
  CHECK(a.x.data[0] == 0.0f);
  CHECK(a.input_source == dir / "a.npy");
  CHECK(a.load_ms >= 0.0);
  // b is read while a is out, on the helper thread; nothing past it yet.
  REQUIRE(eventually([&] { return loads.started >= 2; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(loads.started == 2);
  CHECK(loads.reader(0) != std::this_thread::get_id());
  CHECK(loads.reader(1) != std::this_thread::get_id());

  const SessionInput b = inputs.take(1);
  CHECK(b.x.shape == std::vector<std::size_t>{1, 5, 8});
  CHECK(b.x.data[39] == 139.0f);
  // The missing and the malformed file: each its own error, at its turn, as a
  // load in place gives it (66 naming the file; 65 naming it).
  check_error_at_turn(inputs, 2, attn::Exit::no_input, "missing.npy");
  check_error_at_turn(inputs, 3, attn::Exit::data, "bad.npy");
  const SessionInput c = inputs.take(4);  // the run goes on past them (--keep-going)
  CHECK(c.x.shape == std::vector<std::size_t>{1, 2, 8});
  CHECK(c.x.data[15] == 8.0f);
  CHECK(loads.started == 5);
  CHECK_THROWS_AS(inputs.take(4), std::logic_error);  // out of turn: a bug, never a wrong input
}

TEST_CASE(
    "input prefetch: a FIFO and a file past the bound are read at their turn, by the caller") {
  TempDir dir;
  write_text(dir / "a.npy", input_bytes(3, 0.0f));
  // Past kAheadBytes: a header for its real size, the rows sparse (zeros).
  const std::size_t S = (InputPrefetch::kAheadBytes / (8 * sizeof(float))) + 16;
  {
    std::ofstream big(dir / "big.npy", std::ios::binary);
    big << attn::npy_header_f32({S, 8});
  }
  const std::string header = attn::npy_header_f32({S, 8});
  REQUIRE(::truncate((dir / "big.npy").c_str(), off_t(header.size() + S * 8 * sizeof(float))) == 0);
  REQUIRE(::mkfifo((dir / "fifo.npy").c_str(), 0600) == 0);
  write_text(dir / "c.npy", input_bytes(2, 1.0f));
  const List list = list_of(dir, {"a.npy", "big.npy", "fifo.npy", "c.npy"});
  RecordedLoads loads;
  InputPrefetch inputs(list.order, nothing_done, loads.load());

  inputs.take(0);
  const SessionInput big = inputs.take(1);
  CHECK(big.x.shape == std::vector<std::size_t>{1, S, 8});
  CHECK(loads.reader(1) == std::this_thread::get_id());
  // The FIFO's writer comes only now: read ahead, the helper would have been
  // waiting on it; read in place it is this thread that opens it.
  std::thread writer([&] {
    std::ofstream fifo(dir / "fifo.npy", std::ios::binary);
    fifo << input_bytes(4, 9.0f);
  });
  const SessionInput streamed = inputs.take(2);
  writer.join();
  CHECK(streamed.x.shape == std::vector<std::size_t>{1, 4, 8});
  CHECK(streamed.x.data[0] == 9.0f);
  CHECK(loads.reader(2) == std::this_thread::get_id());
  const SessionInput c = inputs.take(3);
  CHECK(c.x.data[0] == 1.0f);
  CHECK(loads.reader(3) != std::this_thread::get_id());
}

TEST_CASE("input prefetch: a run that stops early is not held up by what lies ahead") {
  TempDir dir;
  write_text(dir / "a.npy", input_bytes(3, 0.0f));
  write_text(dir / "b.npy", input_bytes(3, 0.0f));
  REQUIRE(::mkfifo((dir / "fifo.npy").c_str(), 0600) == 0);  // no writer ever comes
  const List list = list_of(dir, {"a.npy", "b.npy", "fifo.npy"});
  RecordedLoads loads;
  {
    InputPrefetch inputs(list.order, nothing_done, loads.load());
    inputs.take(0);
    inputs.take(1);  // the FIFO is next: left to its turn, which never comes
    // Time for a helper that would read the FIFO ahead to block opening it.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(loads.started == 2);
    if (loads.started > 2) std::ofstream(dir / "fifo.npy");  // released: a failure, not a hang
  }  // stopped here: returns (a helper blocked opening the FIFO would hang it)
  {
    InputPrefetch unused(list.order, nothing_done,
                         loads.load());  // never taken from: stops as well
  }
  // Every entry done before (a rerun): nothing read, no helper to stop.
  const int before = loads.started;
  InputPrefetch none(
      list.order, [](const ListEntry&) { return true; }, loads.load());
  CHECK(none.skipped(0));
  CHECK(none.skipped(2));
  CHECK_THROWS_AS(none.take(0), std::logic_error);
  CHECK(loads.started == before);
}

TEST_CASE("input prefetch: entries done by an earlier run are skipped, the rest read in turn") {
  TempDir dir;
  write_text(dir / "a.npy", input_bytes(3, 0.0f));
  write_text(dir / "c.npy", input_bytes(2, 5.0f));
  // b and d are done (their files are gone: only a skip keeps them from an error).
  const List list = list_of(dir, {"a.npy", "b.npy", "c.npy", "d.npy"});
  RecordedLoads loads;
  InputPrefetch inputs(
      list.order, [](const ListEntry& e) { return e.index % 2 == 1; }, loads.load());
  CHECK(!inputs.skipped(0));
  CHECK(inputs.skipped(1));
  CHECK(!inputs.skipped(2));
  CHECK(inputs.skipped(3));
  CHECK(inputs.take(0).x.data[0] == 0.0f);
  CHECK_THROWS_AS(inputs.take(1), std::logic_error);  // a skipped entry is never handed out
  CHECK(inputs.take(2).x.data[0] == 5.0f);
  CHECK(loads.started == 2);
}

// The process-wide half of the output folders' safety (CONTRACT.md "Output
// safety rules"): the list of live temporaries and the signal handlers that
// remove them before the process ends. outputs/output.cpp registers each
// temporary here; nothing else in a run touches signals.
#include "outputs/cleanup.h"

#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "attn/output.h"

namespace attn {
namespace {

// Temporaries alive right now, for the signal handler: a list of slots that
// only grows (a slot is reused once free), so any number of files is covered
// and the handler only reads it (async-signal-safe: unlink, _exit).
// Slot states: 0 free, 1 being filled, 2 live.
struct LiveSlot {
  std::atomic<int> state{0};
  char path[PATH_MAX];
  LiveSlot* next = nullptr;
};
std::atomic<LiveSlot*> g_live_head{nullptr};

// Every signal that ends the process by default and that a user or the
// system sends to stop a run (CONTRACT.md "Output safety rules").
constexpr int kCleanupSignals[] = {SIGHUP,  SIGINT,  SIGQUIT,   SIGTERM, SIGUSR1,
                                   SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU};

// The thread that installed the handlers (main's). A process-directed signal
// may land on any thread; a worker hands it to this one, so the signal is
// handled where commit() blocks it (old set or new set, never a mix).
pthread_t g_main_thread;
std::atomic<bool> g_signal_seen{false};  // for test_pause_point

extern "C" void cleanup_and_exit(int sig) {
  if (!pthread_equal(pthread_self(), g_main_thread)) {
    ::pthread_kill(g_main_thread, sig);  // async-signal-safe (signal-safety(7))
    g_signal_seen.store(true);           // after: the signal is pending on main now
    return;
  }
  // Files first, then the hidden staging folders they were in (rmdir of
  // a file and unlink of a folder fail harmlessly).
  for (LiveSlot* s = g_live_head.load(); s; s = s->next)
    if (s->state.load() == 2) ::unlink(s->path);
  for (LiveSlot* s = g_live_head.load(); s; s = s->next)
    if (s->state.load() == 2) ::rmdir(s->path);
  ::_exit(128 + sig);
}

}  // namespace

void* live_add(const std::string& path) {
  if (path.size() >= PATH_MAX) return nullptr;
  LiveSlot* slot = nullptr;
  for (LiveSlot* s = g_live_head.load(); s && !slot; s = s->next) {
    int expected = 0;
    if (s->state.compare_exchange_strong(expected, 1)) slot = s;
  }
  if (!slot) {
    slot = new LiveSlot;  // never freed: the handler may walk it at any time
    slot->state.store(1);
    slot->next = g_live_head.load();
    while (!g_live_head.compare_exchange_weak(slot->next, slot)) {
    }
  }
  std::memcpy(slot->path, path.c_str(), path.size() + 1);
  slot->state.store(2);
  return slot;
}

void live_remove(void* slot) {
  if (slot) static_cast<LiveSlot*>(slot)->state.store(0);
}

void block_cleanup_signals(sigset_t* previous) {
  sigset_t block;
  sigemptyset(&block);
  for (int sig : kCleanupSignals) sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, previous);
}

void test_pause_point(const char* where) {
  const char* at = std::getenv("ATTN_TEST_PAUSE_AT");
  if (!at) return;
  // "<where>" stops at the first time the run gets there, "<where>:N" at the Nth.
  const std::size_t len = std::strlen(where);
  if (std::strncmp(at, where, len) != 0 || (at[len] != '\0' && at[len] != ':')) return;
  static std::atomic<long> times{0};
  const long nth = at[len] == ':' ? std::strtol(at + len + 1, nullptr, 10) : 1;
  if (++times != nth) return;
  ::raise(SIGSTOP);
  // Continued: a signal sent while stopped may have landed on another thread
  // (OpenBLAS's, say), which hands it to this one. Wait for that hand-over
  // (at most 5 s), so the signal takes effect here, at the known point.
  for (int i = 0; i < 5000 && !g_signal_seen.load(); ++i) {
    const struct timespec ms = {0, 1000000};
    ::nanosleep(&ms, nullptr);
  }
}

void install_cleanup_signal_handlers() {
  g_main_thread = pthread_self();
  struct sigaction sa {};
  sa.sa_handler = cleanup_and_exit;
  sigemptyset(&sa.sa_mask);
  for (int sig : kCleanupSignals) sigaddset(&sa.sa_mask, sig);
  for (int sig : kCleanupSignals) sigaction(sig, &sa, nullptr);
  // A file-size limit makes write() fail with EFBIG (exit 74) instead of
  // killing the run with its temporaries in place.
  std::signal(SIGXFSZ, SIG_IGN);
  // `ulimit -t N` sets the soft and the hard CPU limit alike, and at the hard
  // limit the kernel sends SIGKILL, which no handler sees (setrlimit(2)). A
  // soft limit one second lower makes the handled SIGXCPU arrive first. (A
  // hard limit of 1 s leaves no room: soft 0 would stop the run at once.)
  struct rlimit cpu {};
  if (::getrlimit(RLIMIT_CPU, &cpu) == 0 && cpu.rlim_max != RLIM_INFINITY && cpu.rlim_max >= 2 &&
      cpu.rlim_cur >= cpu.rlim_max) {
    cpu.rlim_cur = cpu.rlim_max - 1;
    ::setrlimit(RLIMIT_CPU, &cpu);
  }
}

}  // namespace attn

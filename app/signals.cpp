// The signal handlers (app/signals.hpp). Everything a handler does is async-signal-safe:
// lock-free atomics, kill, unlink (remove_temporary_files), signal and raise.
#include "signals.hpp"

#include <signal.h>

#include "headspec/atomic_file.hpp"

namespace headspec::app {
namespace {

std::atomic<bool> g_graceful{false};     // a checkpointing run is in progress
std::atomic<bool> g_stop{false};         // it was asked to stop
std::atomic<pid_t> g_child{0};           // figure's driver
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free);

extern "C" void on_signal(int sig) {
  if (const pid_t child = g_child.load(); child > 0) {
    ::kill(child, sig);
    return;
  }
  if (g_graceful.load() && !g_stop.exchange(true)) return;
  remove_temporary_files();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void install_signal_handlers() {
  // A closed pipe on standard output is a failed write, reported on one line with status 1
  // (docs/cli.md "Errors"), not a silent death by SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, sig);  // one handler at a time
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // A signal ignored when headspec started (nohup, a background job) stays ignored.
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &sa, nullptr);
  }
}

std::atomic<bool>* request_graceful_stop() {
  g_graceful.store(true);
  return &g_stop;
}

void forward_signals_to(pid_t child) { g_child.store(child); }

}  // namespace headspec::app

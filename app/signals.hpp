#pragma once
// SIGINT, SIGTERM and SIGHUP (docs/cli.md "Signals"). By default they remove this process's
// uncommitted temporary files and then end it as the signal would (status 128 + n). A run
// that checkpoints turns the first SIGINT/SIGTERM into a request to stop at the next step
// boundary; `figure` forwards them to its driver and waits for it.
#include <atomic>
#include <sys/types.h>

namespace headspec::app {

/// Installs the handlers (once, at start-up).
void install_signal_handlers();

/// From now on the first SIGINT or SIGTERM sets the returned flag, which the drivers poll,
/// instead of ending the process; a second one ends it (its temporary files removed).
std::atomic<bool>* request_graceful_stop();

/// From now on SIGINT, SIGTERM and SIGHUP are sent on to `child` (0: no longer).
void forward_signals_to(pid_t child);

}  // namespace headspec::app

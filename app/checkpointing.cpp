#include "checkpointing.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "headspec/errors.hpp"
#include "headspec/io.hpp"

namespace headspec::app {
namespace {

// Set by the handler, read by the drivers between steps: a lock-free atomic store is
// async-signal-safe, nothing else is done in the handler.
std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_interrupt(int) { g_interrupt.store(true, std::memory_order_relaxed); }

void install_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  // A second SIGINT or SIGTERM takes the default action: kills at once.
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

}  // namespace

CliCheckpointing::CliCheckpointing(const CheckpointOptions& o, nlohmann::json params)
    : o_(o), params_(std::move(params)) {
  if (!(std::isfinite(o_.checkpoint_every) && o_.checkpoint_every >= 0))
    throw UsageError(fmt::format("--checkpoint-every: must be > 0, got {}", o_.checkpoint_every));
  if (o_.checkpoint.empty()) o_.checkpoint = o_.resume;
  if (o_.checkpoint_every > 0 && o_.checkpoint.empty()) throw UsageError("--checkpoint-every: needs --checkpoint FILE");
  if (o_.checkpoint.empty()) return;
  check_output_path(o_.checkpoint, "--checkpoint");
  if (!o_.resume.empty()) c_.resume = decode_checkpoint(o_.resume, params_);
  c_.every = o_.checkpoint_every;
  c_.interrupt = &g_interrupt;
  c_.save = [this](const std::string& state) { write_file_atomic(o_.checkpoint, encode_checkpoint(params_, state)); };
  active_ = true;
  install_handler();
}

void CliCheckpointing::annotate(nlohmann::json& sidecar) const {
  if (resumed()) sidecar["resumed_from"] = o_.resume;
}

void CliCheckpointing::completed() const {
  if (active_) std::remove(o_.checkpoint.c_str());
}

int CliCheckpointing::interrupted() const {
  std::cerr << fmt::format("headspec: interrupted; checkpoint written to '{}'; continue with --resume {}\n", o_.checkpoint,
                           o_.checkpoint);
  return kInterruptedStatus;
}

}  // namespace headspec::app

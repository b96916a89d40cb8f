#include "checkpointing.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "signals.hpp"

namespace headspec::app {
CliCheckpointing::CliCheckpointing(const CheckpointOptions& o, nlohmann::json params)
    : o_(o), params_(std::move(params)) {
  if (!(std::isfinite(o_.checkpoint_every) && o_.checkpoint_every >= 0))
    throw UsageError(fmt::format("--checkpoint-every: must be >= 0 (0, the default: only when interrupted), got {}",
                                 o_.checkpoint_every));
  if (o_.checkpoint.empty()) o_.checkpoint = o_.resume;
  if (o_.checkpoint_every > 0 && o_.checkpoint.empty()) throw UsageError("--checkpoint-every: needs --checkpoint FILE");
  if (o_.checkpoint.empty()) return;
  if (!o_.resume.empty()) c_.resume = decode_checkpoint(o_.resume, params_);
  c_.every = o_.checkpoint_every;
  c_.interrupt = request_graceful_stop();
  c_.save = [this](const std::string& state) {
    write_file_atomic(o_.checkpoint, encode_checkpoint(params_, state));
    wrote_ = true;
  };
  active_ = true;
}

void declare_checkpoint_files(const CheckpointOptions& o, RunFiles& files) {
  const std::string& checkpoint = o.checkpoint.empty() ? o.resume : o.checkpoint;
  files.output("--checkpoint", checkpoint);
  if (o.resume != checkpoint) files.input("--resume", o.resume);
}

void CliCheckpointing::declare(RunFiles& files) const { declare_checkpoint_files(o_, files); }

void CliCheckpointing::annotate(nlohmann::json& sidecar) const {
  if (resumed()) sidecar["resumed_from"] = o_.resume;
}

void CliCheckpointing::completed() const {
  // Only our own checkpoint goes: one this run wrote or resumed from, and only if the file
  // still is a checkpoint (docs/checkpoints.md). A --checkpoint naming some other file that
  // was never written is left alone.
  const bool ours = wrote_ || (!o_.resume.empty() && o_.resume == o_.checkpoint);
  if (active_ && ours && is_checkpoint_file(o_.checkpoint)) std::remove(o_.checkpoint.c_str());
}

int CliCheckpointing::interrupted() const {
  std::cerr << fmt::format("headspec: interrupted; checkpoint written to '{}'; continue with --resume {}\n", o_.checkpoint,
                           o_.checkpoint);
  return kInterruptedStatus;
}

}  // namespace headspec::app

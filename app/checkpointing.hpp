#pragma once
// --checkpoint, --checkpoint-every and --resume for simulate, theory and mnist
// (docs/checkpoints.md): the flags, the checks of a checkpoint against the flags, the
// graceful stop on SIGINT/SIGTERM (app/signals.hpp) and the atomic writes.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "headspec/checkpoint.hpp"
#include "headspec/command_settings.hpp"
#include "headspec/run_files.hpp"

namespace headspec::app {

/// --checkpoint, --checkpoint-every, --resume: declared in the parameter table.
using CheckpointOptions = CheckpointSettings;

/// Exit status of a run stopped by SIGINT or SIGTERM after writing its checkpoint.
inline constexpr int kInterruptedStatus = 130;

/// Declares --checkpoint (or --resume's file, which it defaults to) as an output and --resume,
/// when it is another file, as an input: what CliCheckpointing::declare does, before the
/// parameters that construct it are known (mnist: before the digits are read).
void declare_checkpoint_files(const CheckpointOptions& o, RunFiles& files);

class CliCheckpointing {
 public:
  /// Checks the flags and, with --resume, reads the checkpoint and checks it against
  /// `params` (the parameters of the sidecar that decide the numbers): throws UsageError
  /// naming the flag. Then, if checkpointing, SIGINT and SIGTERM ask the run to stop.
  CliCheckpointing(const CheckpointOptions& o, nlohmann::json params);
  CliCheckpointing(const CliCheckpointing&) = delete;
  CliCheckpointing& operator=(const CliCheckpointing&) = delete;

  /// Declares --checkpoint as an output and --resume (when it is another file) as an input.
  void declare(RunFiles& files) const;
  /// What the driver takes; null when neither --checkpoint nor --resume was given.
  const Checkpointing* driver() const { return active_ ? &c_ : nullptr; }
  bool resumed() const { return !o_.resume.empty(); }
  /// Records the resume in the sidecar (the only field, besides argv, in which a resumed
  /// run's sidecar differs from an uninterrupted one's).
  void annotate(nlohmann::json& sidecar) const;
  /// After the final output is written: the checkpoint is spent and removed.
  void completed() const;
  /// After the drivers returned interrupted: says where the checkpoint is; returns 130.
  int interrupted() const;

 private:
  CheckpointOptions o_;
  nlohmann::json params_;
  Checkpointing c_;
  bool active_ = false;
  mutable bool wrote_ = false;  ///< a checkpoint was written by this run (set by c_.save)
};

}  // namespace headspec::app

#pragma once
// One run's slot in a checkpoint (docs/checkpoints.md "The slots"), in the one format every
// driver uses: a finished run is its trajectory plus what its driver adds (theory: the stop
// rule and the evaluation count; MNIST: the final keys); an unfinished run is its records so
// far plus its driver's state (SGD: steps done, next record, engine; theory: the ODE state).
#include <cstdint>
#include <string>

#include "headspec/simulation.hpp"

namespace headspec::run_slot {

enum class Kind : uint64_t { InProgress = 1, Finished = 2 };

/// The slot of a finished run.
std::string finished(const Trajectory& trajectory, const std::string& extra = {});
/// The slot of a run in progress.
std::string in_progress(const std::vector<Record>& records, const std::string& state);

struct Slot {
  Kind kind = Kind::InProgress;
  Trajectory trajectory;  ///< finished: the whole trajectory; in progress: the records so far
  std::string payload;    ///< finished: the driver's extra; in progress: the driver's state
};

/// Reads a slot written by finished() or in_progress(); throws UsageError naming --resume
/// for anything else.
Slot read(const std::string& bytes);

}  // namespace headspec::run_slot

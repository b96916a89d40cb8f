#pragma once
// The processes of one `headspec sweep`: a single process, or the ranks of an MPI job
// (docs/cluster.md) when headspec is built with MPI and started by an MPI launcher.
#include <functional>
#include <string>
#include <vector>

#include "headspec/simulation.hpp"
#include "headspec/sweep_plan.hpp"

namespace headspec::app {

class SweepRanks {
 public:
  /// Joins the MPI job when the environment says an MPI launcher started this process
  /// (OpenMPI, PMI or PMIx variables); otherwise a world of one. Throws UsageError when
  /// started by a launcher with several processes but built without MPI.
  SweepRanks();
  ~SweepRanks();
  SweepRanks(const SweepRanks&) = delete;
  SweepRanks& operator=(const SweepRanks&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  /// Collective: the lowest rank whose `failed` is true, or size() when none is.
  int first_failure(bool failed) const;
  /// Collective: rank 0's value, on every rank.
  int broadcast(int value) const;
  /// Collective: returns once every rank has called it.
  void barrier() const;

  /// A task's work, run on any rank and thread.
  using RunTask = SweepRunTask;
  /// Rank 0's receipt of a finished task: called once per task of `todo`, from any thread
  /// of rank 0 (concurrently for different tasks), with the rank that computed it.
  using TaskDone = SweepTaskDone;

  /// Collective: runs the tasks `todo` (read on rank 0 only) over every rank and thread,
  /// handing them out one at a time in the order given, so that ranks with long runs take
  /// fewer. Throws std::runtime_error on rank 0 when a task failed anywhere.
  void run_tasks(const std::vector<int>& todo, const RunTask& run, const TaskDone& done) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  bool mpi_ = false;
  int thread_level_ = 0;
};

}  // namespace headspec::app

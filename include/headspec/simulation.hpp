#pragma once
// Finite-D online SGD: the engine interface and the one trajectory driver of the dense,
// reduced and MNIST engines (src/drivers/sgd_driver.cpp). The driver owns time (t = n·B/D,
// from the integer step count, never accumulated), recording, the stop rule, checkpoints
// and divergence detection; an engine steps and reports its own error.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "headspec/model.hpp"
#include "headspec/order_parameters.hpp"
#include "headspec/parallel_mean.hpp"

namespace headspec {

class StateWriter;
class StateReader;
struct Checkpointing;
class RunSlots;

struct SimulationSpec {
  int64_t D = 10000;         ///< token dimension
  double T = 20;             ///< horizon in t = n/D
  double record_every = 1;   ///< recording interval in t
  int test_samples = 2000;   ///< fresh samples per error estimate
  uint32_t seed = 1;         ///< run k uses seed + k
  int runs = 1;
  /// > 0: a run stops at the first record at which every direction whose prior mean is
  /// zero has specialised, i.e. its heads' spread has exceeded this δ (docs/model.md §10).
  double stop_when_specialised = 0;

  /// Throws UsageError naming the flag of the first invalid value.
  void validate() const;
  /// Number of recorded points after t = 0.
  int64_t records() const;
  /// SGD steps done when record k is taken: round(k · record_every · D / B).
  int64_t steps_at(int64_t k, int batch) const;
};

/// One online-SGD engine: a step consumes B fresh samples drawn from the stream of its
/// step index n, so the trajectory depends only on (seed, flags).
class SgdEngine {
 public:
  virtual ~SgdEngine() = default;
  virtual void step(uint64_t n) = 0;
  virtual OrderParameters order_parameters() const = 0;
  /// The error recorded with the order parameters `op` of the current keys: the population
  /// error ε from `test_samples` fresh samples (docs/model.md §5), or the task's own (MNIST:
  /// on test digits, docs/model.md §11), with its standard error over those samples.
  virtual MeanEstimate recorded_error(const OrderParameters& op, int test_samples) const = 0;
  /// What a finished run keeps besides its trajectory, as bytes (MNIST: the final keys);
  /// nothing by default.
  virtual std::string final_state() const { return {}; }
  /// True once a step met a non-finite residual (NaN or overflow); checked after every step.
  virtual bool diverged() const { return false; }
  /// Writes everything a step changes, bit for bit (docs/checkpoints.md): an engine made by
  /// the same factory and seed that loads it continues exactly as this one would.
  /// The defaults throw std::logic_error (an engine that cannot be checkpointed).
  virtual void save_state(StateWriter& out) const;
  virtual void load_state(StateReader& in);
};

/// Makes the engine of one run from its effective seed (seed + run).
using EngineFactory = std::function<std::unique_ptr<SgdEngine>(uint32_t seed)>;

struct Trajectory {
  std::vector<Record> records;
  bool diverged = false;
  double diverged_at = 0;  ///< time of the step that diverged (or of the first non-finite record)
  /// Why, when an engine said (the theory's exploded states, docs/model.md §6 "Divergence");
  /// empty for NaN or overflow. For messages only: not kept in checkpoints.
  std::string diverged_because;
  bool interrupted = false;  ///< stopped by Checkpointing::interrupt; its state is in the checkpoint
};

/// Called after every record (from any thread); for progress display only.
using ProgressFn = std::function<void(int run, double t)>;

/// Runs one trajectory: records at t = 0 and every record_every up to T (or up to the
/// record at which it specialised, with sim.stop_when_specialised).
/// With `checkpointing` (and `slots` for its state), as one run of run_sgd_runs.
Trajectory run_sgd(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim, int run,
                   const ProgressFn& progress = {}, RunSlots* slots = nullptr,
                   const Checkpointing* checkpointing = nullptr);

/// Runs sim.runs trajectories over the available threads; result k is run k. The same
/// numbers whatever the number of threads. With `checkpointing`, the runs continue from
/// its resume state, save their states when asked, and stop at the next step once its
/// interrupt flag is set (those trajectories have `interrupted` set); the trajectories of
/// a resumed set of runs are bit for bit those of an uninterrupted one.
std::vector<Trajectory> run_sgd_runs(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim,
                                     const ProgressFn& progress = {}, const Checkpointing* checkpointing = nullptr);

/// A run and what its engine keeps at the end (SgdEngine::final_state).
struct SgdRunResult {
  Trajectory trajectory;
  std::string final_state;
};

/// run_sgd_runs with each run's final state; `tag` names the driver in the checkpoint
/// ("simulate", "mnist"), so that a checkpoint of one is refused by the other.
std::vector<SgdRunResult> run_sgd_runs_with_state(const EngineFactory& make, const ModelSpec& model,
                                                  const SimulationSpec& sim, std::string_view tag,
                                                  const ProgressFn& progress = {},
                                                  const Checkpointing* checkpointing = nullptr);

}  // namespace headspec

#pragma once
// Finite-D online SGD: the engine interface and the trajectory driver shared by the
// dense and reduced engines. The driver owns time (t = n·B/D, from the integer step
// count, never accumulated), recording and divergence detection; an engine only steps.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "headspec/model.hpp"
#include "headspec/order_parameters.hpp"

namespace headspec {

struct SimulationSpec {
  int64_t D = 10000;         ///< token dimension
  double T = 20;             ///< horizon in t = n/D
  double record_every = 1;   ///< recording interval in t
  int test_samples = 2000;   ///< fresh samples per error estimate
  uint32_t seed = 1;         ///< run k uses seed + k
  int runs = 1;
  /// > 0: a run stops at the first record at which every direction whose prior mean is
  /// zero has specialised, i.e. its heads' spread has exceeded this δ (MODEL.md §10).
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
  /// True once a step met a non-finite residual (NaN or overflow); checked after every step.
  virtual bool diverged() const { return false; }
};

/// Makes the engine of one run from its effective seed (seed + run).
using EngineFactory = std::function<std::unique_ptr<SgdEngine>(uint32_t seed)>;

struct Trajectory {
  std::vector<Record> records;
  bool diverged = false;
  double diverged_at = 0;  ///< time of the step that diverged (or of the first non-finite record)
};

/// Called after every record (from any thread); for progress display only.
using ProgressFn = std::function<void(int run, double t)>;

/// Runs one trajectory: records at t = 0 and every record_every up to T (or up to the
/// record at which it specialised, with sim.stop_when_specialised).
Trajectory run_sgd(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim, int run,
                   const ProgressFn& progress = {});

/// Runs sim.runs trajectories over the available threads; result k is run k. The same
/// numbers whatever the number of threads.
std::vector<Trajectory> run_sgd_runs(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim,
                                     const ProgressFn& progress = {});

}  // namespace headspec

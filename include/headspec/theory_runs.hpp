#pragma once
// K independent runs of the theory (docs/model.md §6), each from the initial state of a finite-D
// engine with the same seed: what `headspec theory` and the Python module's `theory` run.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "headspec/errors.hpp"
#include "headspec/model.hpp"
#include "headspec/simulation.hpp"
#include "headspec/theory_config.hpp"
#include "headspec/theory_engine.hpp"
#include "headspec/theory_integrator.hpp"

namespace headspec {

/// What `headspec theory` runs besides the model (docs/cli.md): the theory's flags
/// (TheoryFlags, resolved by TheoryConfig) and the runs'.
struct TheoryRunsSpec : TheoryFlags {
  double T = 20;
  double record_every = 1;
  int runs = 1;                       ///< run k uses seed + k (initial keys and Monte Carlo)
  uint32_t seed = 1;
  bool mc_error = false;              ///< also integrate each Sobol randomisation alone (laplace: a coarser rule): TheoryResult::mc_error
  bool sde = false;                   ///< the stochastic theory at D = init_D (docs/model.md §12)
  std::optional<uint32_t> init_seed;  ///< --init-seed: every run's initial state; absent: run k uses seed + k
  bool stop_when_specialised = false;
  double delta = 0.2;                 ///< specialisation threshold δ (docs/model.md §10)

  TheoryHorizon horizon() const { return {T, record_every, delta, stop_when_specialised}; }
};

/// The factory of the finite-D engine whose initial state (same seed, D) starts the ODE:
/// `simulate --engine engine --D D`; errors name --init-engine and --init-D.
EngineFactory initial_state_factory(const std::string& engine, const ModelSpec& model, int64_t D);

/// --init-seed: absent (−1: --seed + k) or a seed in [0, 2^32).
inline std::optional<uint32_t> checked_init_seed(int64_t init_seed) {
  return checked_seed("init-seed", init_seed, "--seed + k");
}

class TheoryRuns {
 public:
  /// Checks every value first; throws UsageError naming the flag of the first bad one.
  TheoryRuns(const ModelSpec& model, const TheoryRunsSpec& spec);

  const TheoryConfig& config() const { return config_; }
  const IntegrationSpec& integration() const { return config_.integration(); }
  /// The Monte Carlo samples of every evaluation (--mc rounded up by the symmetric methods).
  int64_t samples_used() const;
  /// The method the runs use (--mc-method auto resolved for the model: resolved_method).
  SamplingMethod sampling_method() const;
  const TheoryRunsSpec& spec() const { return spec_; }

  /// Result k is run k: its initial state is that of `simulate --engine init_engine --D init_D
  /// --seed seed+k` (R(0) set to 0 unless keep_R), its Monte Carlo seed is mc_seed or seed + k.
  /// `checkpointing` as for run_sgd_runs; an interrupted run
  /// has trajectory.interrupted set, and the runs after it are not started.
  std::vector<TheoryResult> run(const ProgressFn& progress = {}, const Checkpointing* checkpointing = nullptr) const;

 private:
  // What every run of one call shares.
  struct RunContext {
    const TheoryOptions& mc;
    const IntegrationSpec& integration;
    std::optional<uint32_t> samples_seed;
    const ProgressFn& progress;
    RunSlots& slots;
    const Checkpointing* checkpointing;
  };
  // The Monte Carlo of every run (its seed set by run_theory).
  TheoryOptions monte_carlo_options() const { return config_.expectations_for(model_); }
  // integration_ with the reference path of --sde-reference-mc when a run needs it.
  IntegrationSpec integration_of_runs(const TheoryOptions& mc, std::optional<uint32_t> samples_seed,
                                      const RunSlots& slots) const;
  // Several runs whose evaluations are too small to start threads themselves.
  bool runs_in_parallel() const;
  // Run k into r (from the checkpoint, or integrated, then its slot updated).
  void run_one(int k, const RunContext& c, bool& interrupted, TheoryResult& r) const;
  // --mc-error: run k integrated with each Sobol randomisation alone, or with laplace's coarser
  // rule (TheoryResult::mc_error).
  std::vector<std::vector<double>> randomisation_errors(const TheoryOptions& mc, int k,
                                                        const TheoryResult& pooled) const;

  ModelSpec model_;
  TheoryRunsSpec spec_;
  TheoryConfig config_;
  EngineFactory initial_engine_;
};

}  // namespace headspec

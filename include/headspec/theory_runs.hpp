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
#include "headspec/theory_engine.hpp"
#include "headspec/theory_integrator.hpp"

namespace headspec {

/// The flags of `headspec theory` besides the model's (docs/cli.md).
struct TheoryRunsSpec {
  int64_t mc = 10000;              ///< Monte Carlo samples N
  bool mc_resample = false;        ///< fresh samples at every step
  SamplingMethod mc_method = SamplingMethod::Plain;
  std::optional<uint32_t> mc_seed; ///< --mc-seed: every run's samples; absent: run k uses seed + k
  std::string integrator;          ///< empty: rk4, or euler with mc_resample
  double dt = 0.05;
  double T = 20;
  double record_every = 1;
  double until_converged = 0;
  double until_error_settled = 0;  ///< IntegrationSpec::until_error_settled
  double error_window = 20;
  int64_t init_D = 10000;          ///< D of the finite-D initialisation
  std::string init_engine = "dense";
  int runs = 1;                    ///< run k uses seed + k (initial keys and Monte Carlo)
  uint32_t seed = 1;
  bool keep_R = false;             ///< keep R(0) and sample the value channel (docs/model.md §7 otherwise)
  bool mc_error = false;           ///< also integrate each Sobol randomisation alone (laplace: a coarser rule): TheoryResult::mc_error
  bool sde = false;                ///< the stochastic theory at D = init_D (docs/model.md §12)
  int64_t sde_mc = 0;              ///< --sde-mc: the plain samples of Σ; 0: as many as the drift's
  int64_t sde_reference_mc = 0;    ///< --sde-reference-mc: N° of the reference path; 0: none
  bool flow = false;               ///< gradient flow: no η² term, time τ = ηt (docs/model.md §6)
  std::optional<uint32_t> init_seed;  ///< --init-seed: every run's initial state; absent: run k uses seed + k
  bool stop_when_specialised = false;
  double delta = 0.2;              ///< specialisation threshold δ (docs/model.md §10)
};

/// The factory of the finite-D engine whose initial state (same seed, D) starts the ODE:
/// `simulate --engine engine --D D`; errors name --init-engine and --init-D.
EngineFactory initial_state_factory(const std::string& engine, const ModelSpec& model, int64_t D);

/// --mc-method for the stochastic theory (docs/model.md §12): auto is sobol there, whose many
/// runs would each take laplace's ≈ 8 ms per evaluation against ≈ 0.1 ms for sobol at
/// N = 2048 (docs/theory.md §2); a method named stays itself.
inline SamplingMethod stochastic_theory_method(SamplingMethod method) {
  return method == SamplingMethod::Auto ? SamplingMethod::Sobol : method;
}

/// The Monte Carlo mode of --mc-resample.
inline MonteCarloMode monte_carlo_mode(bool resample) { return resample ? MonteCarloMode::Resample : MonteCarloMode::Fixed; }

/// A seed flag: absent (−1) or a seed in [0, 2^32); throws ParameterError naming `flag`.
/// `absent` says what −1 means ("--seed + k"), or is empty where −1 is only the default.
inline std::optional<uint32_t> checked_seed(const char* flag, int64_t seed, const char* absent) {
  if (seed == -1) return std::nullopt;
  if (seed < 0 || seed > 0xFFFFFFFFLL)
    throw ParameterError(flag, fmt::format("must be in [0, 2^32){}, got {}",
                                           *absent ? fmt::format(" (or -1: {})", absent) : "", seed));
  return static_cast<uint32_t>(seed);
}

/// --mc-seed of theory and sweep: absent (−1: --seed + k) or a seed in [0, 2^32).
inline std::optional<uint32_t> checked_mc_seed(int64_t mc_seed) { return checked_seed("mc-seed", mc_seed, "--seed + k"); }

/// --init-seed: absent (−1: --seed + k) or a seed in [0, 2^32).
inline std::optional<uint32_t> checked_init_seed(int64_t init_seed) {
  return checked_seed("init-seed", init_seed, "--seed + k");
}

/// The integration that the theory flags of `theory` and `sweep --engine theory|sde` ask for
/// (docs/cli.md): the integrator named or its default (rk4; euler with --mc-resample), the
/// step, horizon, records and stop rules, and with finite_D > 0 the stochastic theory at that D
/// (docs/model.md §12), checked for the Monte Carlo mode; throws ParameterError naming the
/// flag. `S` is either command's settings.
template <class S>
IntegrationSpec theory_integration(const S& o, double finite_D = 0) {
  IntegrationSpec integration;
  integration.method = parse_integrator(o.integrator.empty() ? (o.mc_resample ? "euler" : "rk4") : o.integrator);
  integration.dt = o.dt;
  integration.T = o.T;
  integration.record_every = o.record_every;
  integration.until_converged = o.until_converged;
  integration.until_error_settled = o.until_error_settled;
  integration.error_window = o.error_window;
  if (!(std::isfinite(o.delta) && o.delta > 0)) throw ParameterError("delta", fmt::format("must be > 0, got {}", o.delta));
  integration.stop_when_specialised = o.stop_when_specialised ? o.delta : 0;
  integration.finite_D = finite_D;
  integration.diffusion_samples = o.sde_mc;
  integration.reference_samples = o.sde_reference_mc;
  if (o.flow && finite_D > 0)
    throw ParameterError(
        "flow", "not with the stochastic theory: gradient flow is the limit η → 0, where the SGD noise vanishes");
  integration.validate(monte_carlo_mode(o.mc_resample));
  return integration;
}

/// --flow with the model: time is τ = ηt (docs/model.md §6), in which a schedule would change only
/// the clock, not the path; throws ParameterError naming --flow.
inline void check_flow(const ModelSpec& model, bool flow) {
  if (flow && !model.lr_schedule.constant())
    throw ParameterError("flow",
                         "not with --lr-schedule: under gradient flow time is τ = ∫η dt, and a schedule only "
                         "relabels it");
}

/// The Monte Carlo seed of every run: --mc-seed if given; else, for the stochastic theory,
/// `seed` for all runs (its runs are realisations of one process, whose drift and Σ must be one
/// function of the state, docs/model.md §12: samples per run would add their Monte Carlo
/// error as a spread over runs that SGD does not have); else none (run k uses seed + k).
inline std::optional<uint32_t> runs_samples_seed(std::optional<uint32_t> mc_seed, bool sde, uint32_t seed) {
  if (mc_seed || !sde) return mc_seed;
  return seed;
}

class TheoryRuns {
 public:
  /// Checks every value first; throws UsageError naming the flag of the first bad one.
  TheoryRuns(const ModelSpec& model, const TheoryRunsSpec& spec);

  const IntegrationSpec& integration() const { return integration_; }
  /// The Monte Carlo samples of every evaluation (--mc rounded up by the symmetric methods).
  int64_t samples_used() const;
  /// The method the runs use (--mc-method auto resolved for the model: resolved_method).
  SamplingMethod sampling_method() const;
  MonteCarloMode mode() const { return mode_; }
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
  TheoryOptions monte_carlo_options() const;
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
  IntegrationSpec integration_;
  MonteCarloMode mode_;
  EngineFactory initial_engine_;
};

}  // namespace headspec

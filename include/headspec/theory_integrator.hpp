#pragma once
// Integrating the theory's ODE (docs/model.md §6) in odeint's three roles: the system is
// TheoryEngine::evaluate (it knows nothing of integration), the steppers below know
// nothing of attention, and the observer records Records in the columns of `simulate`.
// Time is always t0 + k·dt (or t0 + k·record_every), never accumulated.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "headspec/simulation.hpp"
#include "headspec/theory_engine.hpp"

namespace headspec {

class RunSlots;
class ReferencePath;

enum class Integrator {
  RK4,     ///< classical fixed-step Runge–Kutta (order 4)
  Dopri5,  ///< adaptive Dormand–Prince 5(4) with error control (boost odeint), Fixed samples only
  Euler,   ///< fixed-step Euler (order 1)
  Heun,    ///< fixed-step Heun (order 2); both stages use the same samples
};

/// A Monte Carlo sample count (--mc, --sde-mc) in [2, 2^32); throws ParameterError naming
/// `flag`, its message saying `alternative` (e.g. "0 (as --mc) or ") before the range.
void check_sample_count(const char* flag, int64_t n, const char* alternative = "");

/// rk4 | dopri5 | euler | heun; throws UsageError naming --integrator otherwise.
Integrator parse_integrator(const std::string& name);
const char* to_string(Integrator i);

struct IntegrationSpec {
  Integrator method = Integrator::RK4;
  double dt = 0.05;              ///< fixed step (initial step for dopri5)
  double T = 20;                 ///< horizon
  double record_every = 1;       ///< a multiple of dt for the fixed-step methods
  double until_converged = 0;    ///< > 0: stop once every |derivative| < this
  /// > 0: stop once the recorded error ε has settled: the means of ε over the records of the
  /// four quarters of the last error_window of time differ (largest minus smallest) by less
  /// than this, relative to the last quarter's mean (docs/theory.md §3).
  double until_error_settled = 0;
  double error_window = 20;      ///< W of until_error_settled: a whole multiple of 4 record intervals
  double tolerance = 1e-8;       ///< dopri5: absolute and relative error per step
  /// > 0: stop at the first record at which every direction of prior mean zero has
  /// specialised, with this threshold δ (--stop-when-specialised, docs/model.md §10).
  double stop_when_specialised = 0;
  /// > 0: the stochastic theory at this D (--sde, docs/model.md §12): each fixed step adds
  /// the Brownian increment of finite-D SGD (ode::StochasticStepper). 0: the ODE.
  double finite_D = 0;
  /// With finite_D > 0: the plain samples of Σ (--sde-mc); 0: as many as the drift's engine uses.
  int64_t diffusion_samples = 0;
  /// With finite_D > 0: N° > 0 corrects the drift along the unspecialised path computed with
  /// N° samples (--sde-reference-mc, theory_reference.hpp); 0: no correction.
  int64_t reference_samples = 0;
  /// The path itself, made once for all runs by make_reference_path (null: none).
  std::shared_ptr<const ReferencePath> reference;

  /// Steps of dt between records (fixed-step methods).
  int64_t steps_per_record() const;
  /// Records in each quarter of the error window (until_error_settled).
  int64_t records_per_quarter_window() const;
  /// The time of the last scheduled record, ⌊T / record_every⌋ · record_every: the stop rules
  /// are tested before it only, so a run "converged" exactly when it stopped before it.
  double last_record_time() const;
  /// Throws UsageError naming the flag of the first inconsistent value (method, dt, record
  /// interval, tolerance) for Monte Carlo mode `mode`.
  void validate(MonteCarloMode mode) const;
};

/// Which stop rule ended a run.
enum class StopRule : uint64_t { None = 0, Derivatives = 1, ErrorSettled = 2 };
const char* to_string(StopRule rule);  ///< "", "derivatives", "error"

struct TheoryResult {
  Trajectory trajectory;     ///< records at t = 0, record_every, … (and at convergence)
  bool converged = false;    ///< a stop rule (until_converged, until_error_settled) fired before T
  double converged_at = 0;
  StopRule converged_by = StopRule::None;
  int64_t evaluations = 0;   ///< right-hand-side evaluations
  /// With TheoryRunsSpec::mc_error: per record, the Monte Carlo standard error of every CSV
  /// value (append_csv_values' order: loss, M, …): the spread of the trajectories that each
  /// randomisation of the Sobol method gives alone, over √(randomisations). NaN past the
  /// records every one of them reached.
  std::vector<std::vector<double>> mc_error;
};

/// Integrates from `initial` (run index `run` is written into the records). In Resample
/// mode, step k of a fixed-step method draws its samples with draw index k. With
/// spec.finite_D > 0 (the stochastic theory), Σ comes from plain samples of the engine's
/// Monte Carlo seed, spec.diffusion_samples of them (0: as many as the engine uses), and step
/// k's increment from the stream
/// (noise_seed, Diffusion, 0, k).
/// With `checkpointing` (and its `slots`, docs/checkpoints.md), the run continues
/// from its slot in `slots` if it has one, saves its state there when asked, and stops
/// before the next step once the interrupt flag is set (trajectory.interrupted).
TheoryResult integrate_theory(const TheoryEngine& engine, const OrderParameters& initial, const IntegrationSpec& spec,
                              int run, const ProgressFn& progress = {}, RunSlots* slots = nullptr,
                              const Checkpointing* checkpointing = nullptr, uint32_t noise_seed = 0);

/// Whether the recorded errors of `records` (the last one at time t) meet spec's
/// until_error_settled rule at t: false while fewer than four quarter windows are recorded.
bool error_settled(const std::vector<Record>& records, const IntegrationSpec& spec);

/// Whether a trajectory integrated with `spec` was stopped by a stop rule, and when (the time
/// of its last record): it did exactly when it is not diverged and its last record is before
/// spec.last_record_time(). What `sweep` reports, from the trajectory alone.
bool stopped_by_rule(const Trajectory& trajectory, const IntegrationSpec& spec, double* at = nullptr);

/// The slot of a finished run, and the run it holds (for TheoryRuns's checkpoints);
/// read_finished_theory returns false for a slot that is not a finished run.
std::string finished_theory_slot(const TheoryResult& r);
bool read_finished_theory(const std::string& slot, TheoryResult& r);

/// Run `run` of `headspec theory`: seed = base_seed + run drives both the initial state,
/// that of the finite-D engine made by `initial_engine(seed)` (R set to 0 when the value
/// channel is integrated, docs/model.md §7), and the Monte Carlo samples (mc.seed is ignored)
/// unless mc_seed is given (--mc-seed): then every run uses the samples of mc_seed. The
/// stochastic theory's increments (spec.finite_D > 0) are those of seed base_seed + run.
TheoryResult run_theory(const ModelSpec& model, const EngineFactory& initial_engine, TheoryOptions mc,
                        const IntegrationSpec& spec, uint32_t base_seed, int run,
                        std::optional<uint32_t> mc_seed = std::nullopt, const ProgressFn& progress = {},
                        RunSlots* slots = nullptr, const Checkpointing* checkpointing = nullptr);

}  // namespace headspec

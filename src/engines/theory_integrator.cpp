#include "headspec/theory_integrator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "headspec/checkpoint.hpp"
#include "headspec/errors.hpp"
#include "headspec/name_table.hpp"
#include "headspec/run_slot.hpp"
#include "headspec/specialisation.hpp"
#include "headspec/theory_ode.hpp"
#include "theory_observers.hpp"

namespace headspec {

namespace {
constexpr NameTable<Integrator, 4> kIntegrators{
    {{{Integrator::RK4, "rk4"}, {Integrator::Dopri5, "dopri5"}, {Integrator::Euler, "euler"}, {Integrator::Heun, "heun"}}},
    "--integrator",
    "integrator"};
}  // namespace

Integrator parse_integrator(const std::string& name) { return kIntegrators.parse(name); }

const char* to_string(StopRule rule) {
  switch (rule) {
    case StopRule::None: return "";
    case StopRule::Derivatives: return "derivatives";
    case StopRule::ErrorSettled: return "error";
  }
  return "?";
}

const char* to_string(Integrator i) { return kIntegrators.name(i); }

int64_t IntegrationSpec::steps_per_record() const { return std::llround(record_every / dt); }

int64_t IntegrationSpec::records_per_quarter_window() const { return std::llround(error_window / (4 * record_every)); }

// Computed as the integrator computes the record's time, so that the comparison in
// stopped_by_rule is exact.
double IntegrationSpec::last_record_time() const {
  if (method == Integrator::Dopri5)
    return static_cast<double>(static_cast<int64_t>(std::floor(T / record_every + 1e-9))) * record_every;
  const int64_t n_steps = static_cast<int64_t>(std::floor(T / dt + 1e-9));
  const int64_t per_record = steps_per_record();
  return static_cast<double>(n_steps / per_record * per_record) * dt;
}

void check_sample_count(const char* flag, int64_t n, const char* alternative) {
  if (n < 2 || n > 0xFFFFFFFFLL) throw ParameterError(flag, fmt::format("must be {}in [2, 2^32), got {}", alternative, n));
}

// What the stochastic theory (finite_D > 0) needs of the integration: a fixed-step stepper, fixed
// samples, and --sde-mc only with it.
static void check_stochastic_theory(const IntegrationSpec& spec, MonteCarloMode mode) {
  const bool sde = spec.finite_D > 0;
  if (sde && spec.method == Integrator::Dopri5)
    throw ParameterError("integrator", "dopri5 is not a stepper of the stochastic theory (--sde); use rk4, heun or euler");
  if (spec.diffusion_samples != 0 && !sde)
    throw ParameterError("sde-mc", "only with the stochastic theory (--sde, or sweep --engine sde)");
  if (spec.diffusion_samples != 0) check_sample_count("sde-mc", spec.diffusion_samples, "0 (as --mc) or ");
  if (spec.reference_samples != 0 && !sde)
    throw ParameterError("sde-reference-mc", "only with the stochastic theory (--sde, or sweep --engine sde)");
  if (spec.reference_samples != 0) check_sample_count("sde-reference-mc", spec.reference_samples, "0 (none) or ");
  if (sde && mode == MonteCarloMode::Resample)
    throw ParameterError("mc-resample", "not with --sde (the stochastic theory's drift and Σ use fixed samples)");
}

void IntegrationSpec::validate(MonteCarloMode mode) const {
  if (!(std::isfinite(dt) && dt > 0)) throw ParameterError("dt", fmt::format("must be > 0, got {}", dt));
  if (!(std::isfinite(until_converged) && until_converged >= 0))
    throw ParameterError("until-converged", fmt::format("must be > 0, got {}", until_converged));
  if (!(std::isfinite(until_error_settled) && until_error_settled >= 0))
    throw ParameterError("until-error-settled", fmt::format("must be > 0, got {}", until_error_settled));
  if (!(std::isfinite(error_window) && error_window > 0))
    throw ParameterError("error-window", fmt::format("must be > 0, got {}", error_window));
  if (until_error_settled > 0) {
    const int64_t m = records_per_quarter_window();
    if (m < 1 || std::abs(static_cast<double>(4 * m) * record_every - error_window) > 1e-9 * error_window)
      throw ParameterError("error-window", fmt::format("{} is not a whole multiple of 4 record intervals (--record-every {})",
                                                       error_window, record_every));
  }
  check_delta(stop_when_specialised, true);
  check_stochastic_theory(*this, mode);
  if (mode == MonteCarloMode::Resample && (method == Integrator::RK4 || method == Integrator::Dopri5))
    throw ParameterError("integrator", fmt::format("{} needs a smooth right-hand side; with --mc-resample use euler or heun",
                                                   to_string(method)));
  if (method != Integrator::Dopri5) {
    const int64_t k = steps_per_record();
    if (k < 1 || std::abs(static_cast<double>(k) * dt - record_every) > 1e-9 * record_every)
      throw ParameterError("record-every", fmt::format("{} is not a whole number of steps --dt {}", record_every, dt));
    if (T / dt > 1e9) throw ParameterError("dt", fmt::format("more than 10^9 steps up to T = {}", T));
  }
}

using theory_observers::StopIntegration;

bool error_settled(const std::vector<Record>& records, const IntegrationSpec& spec) {
  const auto m = static_cast<std::size_t>(spec.records_per_quarter_window());
  if (spec.until_error_settled <= 0 || m < 1 || records.size() < 4 * m) return false;
  // Four quarters, not two halves: two halves' means are equal at a minimum or maximum of ε
  // in the window's middle, which is not a settled error (docs/theory.md §3).
  double lowest = INFINITY, highest = -INFINITY, last = 0;
  for (std::size_t q = 0; q < 4; ++q) {
    double mean = 0;
    for (std::size_t i = records.size() - (4 - q) * m; i < records.size() - (3 - q) * m; ++i) mean += records[i].loss;
    mean /= static_cast<double>(m);
    if (!std::isfinite(mean)) return false;
    lowest = std::min(lowest, mean);
    highest = std::max(highest, mean);
    last = mean;
  }
  // Relative: one tolerance serves errors from 0.1 to 10 (a readout `sum` with many heads),
  // and the Monte Carlo error of ε is itself roughly proportional to ε (docs/theory.md §3).
  return highest - lowest < spec.until_error_settled * std::abs(last);
}

bool stopped_by_rule(const Trajectory& trajectory, const IntegrationSpec& spec, double* at) {
  if (spec.until_converged <= 0 && spec.until_error_settled <= 0) return false;
  if (trajectory.diverged || trajectory.records.empty()) return false;
  const double last = trajectory.records.back().t;
  if (!(last < spec.last_record_time())) return false;
  if (at != nullptr) *at = last;
  return true;
}

// A finished run's extra in its slot (run_slot::finished): the stop rule and the evaluations.
std::string finished_theory_slot(const TheoryResult& r) {
  StateWriter extra;
  extra.put_bool(r.converged);
  extra.put_f64(r.converged_at);
  extra.put_u64(static_cast<uint64_t>(r.converged_by));
  extra.put_i64(r.evaluations);
  return run_slot::finished(r.trajectory, extra.take());
}

bool read_finished_theory(const std::string& bytes, TheoryResult& r) {
  if (bytes.empty()) return false;
  run_slot::Slot slot = run_slot::read(bytes);
  if (slot.kind != run_slot::Kind::Finished) return false;
  r.trajectory = std::move(slot.trajectory);
  StateReader in(slot.payload);
  r.converged = in.boolean();
  r.converged_at = in.f64();
  const uint64_t rule = in.u64();
  if (rule > static_cast<uint64_t>(StopRule::ErrorSettled)) return false;
  r.converged_by = static_cast<StopRule>(rule);
  r.evaluations = in.i64();
  in.expect_end();
  return true;
}

namespace {

namespace odeint = boost::numeric::odeint;
using theory_observers::all_finite;
using theory_observers::expect_in_progress;
using theory_observers::Recorder;
using theory_observers::SlotSaver;
using theory_observers::StopRules;

// What the observers of one run share: the system (whose evaluations they read), the
// recorder, the stop rules and the checkpoint slot.
struct TheoryRun {
  TheoryRun(const TheoryEngine& e, const IntegrationSpec& s, int run, const ProgressFn& progress, RunSlots* slots,
            const Checkpointing* checkpointing)
      : engine(e),
        spec(s),
        system(e),
        record(e, run, progress, result.trajectory),
        rules(s, result),
        saver(slots, checkpointing, run) {}
  bool resuming() const { return saver.active() && !saver.resumed_slot().empty(); }

  const TheoryEngine& engine;
  const IntegrationSpec& spec;
  TheoryResult result;
  TheorySystem system;
  Recorder record;
  StopRules rules;
  SlotSaver saver;
};

// The fixed-step methods' observer at the top of step k (x = x_k, t_k = k·dt, computed,
// never accumulated): checkpoint, then the evaluation at x_k — ε, the stop tests, and the
// step's first stage — then the record.
class FixedStepObserver {
 public:
  FixedStepObserver(TheoryRun& run, int64_t first_step)
      : run_(run), k_(first_step), clock_(run.saver.every(), 1.0 / run.spec.dt, first_step) {}

  void operator()(const OdeState& x, double /*odeint's t*/) {
    const int64_t k = k_++;
    const double t = static_cast<double>(k) * run_.spec.dt;
    run_.saver.at_step_boundary(run_.saver.active() && clock_.due(k), [&] { return slot(x, k); },
                                run_.result.trajectory);
    if (!all_finite(x)) run_.rules.diverge(t);
    run_.system.set_draw(static_cast<uint64_t>(k));  // --mc-resample: step k's samples
    const TheoryEvaluation& ev = run_.system.evaluate_at_step_start(x, t);
    if (!all_finite(ev.rate) || !std::isfinite(ev.error)) run_.rules.diverge(t);
    const bool at_record = k % run_.spec.steps_per_record() == 0;
    const bool derivatives = run_.rules.derivatives_settled(t, ev);
    if (at_record || derivatives) run_.record(x, t, ev.error);
    if (derivatives) run_.rules.stop(StopRule::Derivatives, t);
    if (at_record && run_.rules.error_settled(t)) run_.rules.stop(StopRule::ErrorSettled, t);
    if (at_record && run_.rules.specialised(run_.engine.model())) throw StopIntegration{};
  }

  // An in-progress slot: the records, and x at the top of step k, k, the evaluations so far.
  std::string slot(const OdeState& x, int64_t k) const {
    StateWriter w;
    w.put_doubles(x);
    w.put_i64(k);
    w.put_i64(run_.system.evaluations());
    return run_slot::in_progress(run_.result.trajectory.records, w.take());
  }

 private:
  TheoryRun& run_;
  int64_t k_;
  CheckpointClock clock_;
};

// Restores x and the records of a fixed-step run's slot; returns its step k.
int64_t resume_fixed_step(TheoryRun& run, OdeState& x, int64_t n_steps) {
  run_slot::Slot slot = expect_in_progress(run.saver.resumed_slot());
  run.result.trajectory.records = std::move(slot.trajectory.records);
  StateReader in(slot.payload);
  in.doubles_into(x.data(), x.size());
  const int64_t k = in.i64();
  run.system.set_evaluations(in.i64());
  in.expect_end();
  if (k < 0 || k > n_steps) throw ParameterError("resume", "the checkpoint holds an invalid run");
  return k;
}

// Euler, Heun or RK4 (odeint's steppers) in odeint's integrate_n_steps: the observer sees
// x_k before step k and after the last.
template <class Stepper>
void integrate_fixed_step(Stepper stepper, TheoryRun& run, OdeState& x) {
  const double dt = run.spec.dt;
  const int64_t n_steps = static_cast<int64_t>(std::floor(run.spec.T / dt + 1e-9));
  const int64_t k0 = run.resuming() ? resume_fixed_step(run, x, n_steps) : 0;
  FixedStepObserver observer(run, k0);
  run.system.snap_times_to(dt);
  try {
    odeint::integrate_n_steps(stepper, std::ref(run.system), x, static_cast<double>(k0) * dt, dt,
                              static_cast<std::size_t>(n_steps - k0), std::ref(observer));
  } catch (const StopIntegration&) {
  } catch (const DivergenceError& e) {  // an exploded state, at a step's start or one of its stages
    run.rules.diverged_by(e);
  }
}

// dopri5's observer at an observation time: the record and the stop tests.
void observe_dopri5(TheoryRun& run, const OdeState& x, double t) {
  if (!all_finite(x)) run.rules.diverge(t);
  const TheoryEvaluation& ev = run.system.evaluate(x, t);
  run.record(x, t, ev.error);
  if (run.rules.derivatives_settled(t, ev)) run.rules.stop(StopRule::Derivatives, t);
  if (run.rules.error_settled(t)) run.rules.stop(StopRule::ErrorSettled, t);
  if (run.rules.specialised(run.engine.model())) throw StopIntegration{};
}

// Whether observation time t_obs has been reached by a stepper at t (odeint's rule for a
// positive step: within one epsilon).
bool reached(double t_obs, double t) { return t_obs - t <= std::numeric_limits<double>::epsilon(); }

// dopri5 with dense output, observed at k·record_every. This is odeint's integrate_times
// loop written out for one reason: a checkpoint is taken at a step boundary where every
// observation up to the stepper's time has been made, so that the stepper's whole state is
// (x, t, dt) (its step-size control keeps no history, and the derivative at x, FSAL, is
// f(x) recomputed bit for bit) and a resumed run continues bit for bit. A resumed run's
// first step re-evaluates f(x); unless the uninterrupted run evaluated it there too (its
// stepper had just been started or restarted: at t = 0, after a retried step, before the
// last step), that evaluation is not counted, so the evaluation counts agree too.
class Dopri5Integration {
 public:
  Dopri5Integration(TheoryRun& run, OdeState& x)
      : run_(run),
        x_(x),
        stepper_(odeint::make_dense_output(run.spec.tolerance, run.spec.tolerance, ode::Dopri5())) {
    const int64_t n = static_cast<int64_t>(std::floor(run.spec.T / run.spec.record_every + 1e-9));
    for (int64_t k = 0; k <= n; ++k) times_.push_back(static_cast<double>(k) * run.spec.record_every);
  }

  void run() {
    if (run_.resuming()) resume();
    try {
      if (next_ == 0) {
        restart(x_, times_[0], run_.spec.dt);
        observe_dopri5(run_, x_, times_[next_++]);
      }
      while (observe_reached()) {
        checkpoint();
        if (!step()) return;
      }
    } catch (const StopIntegration&) {
    } catch (const DivergenceError& e) {  // an exploded state at an observation time
      run_.rules.diverged_by(e);
    }
  }

 private:
  // Observes every time the stepper has passed; false once the last was observed.
  bool observe_reached() {
    while (next_ < times_.size() && reached(times_[next_], stepper_.current_time())) {
      stepper_.calc_state(times_[next_], x_);
      observe_dopri5(run_, x_, times_[next_]);
      ++next_;
      steps_since_record_ = 0;
    }
    return next_ < times_.size();
  }

  void checkpoint() {
    const double every = run_.saver.every(), t = stepper_.current_time();
    const bool due = every > 0 && t >= next_save_;
    run_.saver.at_step_boundary(due, [&] { return slot(); }, run_.result.trajectory);
    if (due) next_save_ = every * (std::floor(t / every) + 1);
  }

  // One step, the last one ending exactly on the last observation time; false if the step
  // size underflowed (the state has blown up: diverged at the last record).
  bool step() {
    auto system = [this](const OdeState& s, OdeState& dsdt, double t) {
      if (!all_finite(s)) run_.rules.diverge(t);
      run_.system(s, dsdt, t);
    };
    const double last = times_.back(), t = stepper_.current_time(), dt = stepper_.current_time_step();
    const bool last_step = !reached(t + dt, last);
    try {
      if (last_step) restart(stepper_.current_state(), t, last - t);  // f(x) anew in any run
      stepper_.do_step(system);
      derivative_pending_ = false;
    } catch (const StopIntegration&) {
      throw;
    } catch (const DivergenceError&) {
      // A stage at an exploded state (TheoryEngine::check_evaluable): for an adaptive stepper,
      // a trial step far too long, rejected as its error control would reject it and retried
      // five times shorter (odeint's largest cut). The accepted state is untouched; a state
      // that keeps exploding shrinks the step below the cap below, a divergence.
      restart(stepper_.current_state(), t, dt / 5);
    } catch (const std::exception&) {
      const auto& records = run_.result.trajectory.records;
      run_.rules.diverge(records.empty() ? 0.0 : records.back().t);
    }
    if (uncounted_derivative_ && !last_step) run_.system.set_evaluations(run_.system.evaluations() - 1);
    uncounted_derivative_ = false;
    // Thousands of steps per unit of t (a healthy run takes a few) mean the dynamics has
    // become stiff or is blowing up (an η far too large): without a cap the integration
    // would creep on for hours. Reported as a divergence at the last record.
    if (++steps_since_record_ > std::max(kMaxStepsPerUnitT * run_.spec.record_every, 1000.0) ||
        stepper_.current_time_step() < kMinRelativeStep * run_.spec.record_every) {
      const auto& records = run_.result.trajectory.records;
      run_.rules.diverge(records.empty() ? 0.0 : records.back().t);
    }
    return true;
  }

  // Fig. 1's setting takes ~ 3 steps per unit of t at the default tolerance.
  static constexpr double kMaxStepsPerUnitT = 1000;
  static constexpr double kMinRelativeStep = 1e-9;

  // A (re)start of the stepper at (x, t, dt): its next step evaluates f(x) in any run.
  void restart(const OdeState& x, double t, double dt) {
    stepper_.initialize(x, t, dt);
    derivative_pending_ = true;
  }

  // An in-progress slot: the records, and the stepper's (x, t, dt), the next observation,
  // the evaluations so far, the steps since the last observation (the stiffness cap counts
  // them, so a resumed run stops where the uninterrupted one would), and whether the
  // stepper's next step evaluates f(x) in the uninterrupted run too.
  std::string slot() const {
    StateWriter w;
    w.put_doubles(stepper_.current_state());
    w.put_f64(stepper_.current_time());
    w.put_f64(stepper_.current_time_step());
    w.put_u64(next_);
    w.put_i64(run_.system.evaluations());
    w.put_i64(steps_since_record_);
    w.put_u64(derivative_pending_ ? 1 : 0);
    return run_slot::in_progress(run_.result.trajectory.records, w.take());
  }

  void resume() {
    run_slot::Slot slot = expect_in_progress(run_.saver.resumed_slot());
    run_.result.trajectory.records = std::move(slot.trajectory.records);
    StateReader in(slot.payload);
    in.doubles_into(x_.data(), x_.size());
    const double t = in.f64(), dt = in.f64();
    next_ = static_cast<std::size_t>(in.u64());
    run_.system.set_evaluations(in.i64());
    steps_since_record_ = in.at_end() ? 0 : in.i64();  // older checkpoints lack these two
    const bool pending = in.at_end() ? false : in.u64() != 0;
    in.expect_end();
    if (next_ == 0 || next_ >= times_.size()) throw ParameterError("resume", "the checkpoint holds an invalid run");
    restart(x_, t, dt);
    uncounted_derivative_ = !pending;
    const double every = run_.saver.every();
    next_save_ = every > 0 ? every * (std::floor(t / every) + 1) : 0;
  }

  TheoryRun& run_;
  OdeState& x_;
  odeint::result_of::make_dense_output<ode::Dopri5>::type stepper_;
  std::vector<double> times_;
  std::size_t next_ = 0;  // the next observation time
  bool derivative_pending_ = false;    // the stepper's next step evaluates f(x) (restarted)
  bool uncounted_derivative_ = false;  // that evaluation is a resume's own, not the run's
  double next_save_ = 0;
  int64_t steps_since_record_ = 0;
};

}  // namespace

TheoryResult integrate_theory(const TheoryEngine& engine, const OrderParameters& initial, const IntegrationSpec& spec,
                              int run_index, const ProgressFn& progress, RunSlots* slots,
                              const Checkpointing* checkpointing, uint32_t noise_seed) {
  TheoryRun run(engine, spec, run_index, progress, slots, checkpointing);
  run.system.correct_along(spec.reference.get());
  OdeState x(engine.layout().size());
  engine.layout().pack(initial, x.data());
  // The stochastic theory (spec.finite_D > 0): the fixed-step stepper with the Brownian increment added.
  std::optional<TheoryDiffusion> diffusion;
  if (spec.finite_D > 0)
    // laplace has no samples: Σ then takes --mc of them.
    diffusion.emplace(engine.model(),
                      spec.diffusion_samples > 0  ? spec.diffusion_samples
                      : engine.samples_used() > 0 ? engine.samples_used()
                                                  : engine.options().samples,
                      engine.options().seed, engine.options().channel, spec.finite_D);
  auto fixed_step = [&](auto drift) {
    if (diffusion)
      integrate_fixed_step(ode::StochasticStepper(std::move(drift), *diffusion, noise_seed, 0), run, x);
    else
      integrate_fixed_step(std::move(drift), run, x);
  };
  switch (spec.method) {
    case Integrator::Euler: fixed_step(ode::Euler()); break;
    case Integrator::Heun: fixed_step(ode::make_heun()); break;
    case Integrator::RK4: fixed_step(ode::RungeKutta4()); break;
    case Integrator::Dopri5:
      if (diffusion) throw ParameterError("integrator", "dopri5 is not a stepper of the stochastic theory");
      Dopri5Integration(run, x).run();
      break;
  }
  run.result.evaluations = run.system.evaluations();
  return std::move(run.result);
}

TheoryResult run_theory(const ModelSpec& model, const EngineFactory& initial_engine, TheoryOptions mc,
                        const IntegrationSpec& spec, uint32_t base_seed, int run, std::optional<uint32_t> mc_seed,
                        const ProgressFn& progress, RunSlots* slots, const Checkpointing* checkpointing) {
  const uint32_t seed = base_seed + static_cast<uint32_t>(run);
  OrderParameters initial = initial_engine(seed)->order_parameters();
  if (mc.channel == ValueChannel::Integrated) initial.R.setZero();  // R ≡ 0 from then on (docs/model.md §7)
  mc.seed = mc_seed.value_or(seed);
  const TheoryEngine engine(model, mc);
  return integrate_theory(engine, initial, spec, run, progress, slots, checkpointing, seed);
}

}  // namespace headspec

#include "headspec/theory_integrator.hpp"

#include <fmt/format.h>

#include <boost/numeric/odeint.hpp>
#include <boost/numeric/odeint/util/detail/less_with_sign.hpp>
#include <algorithm>
#include <cmath>
#include <vector>

#include "headspec/checkpoint.hpp"
#include "headspec/errors.hpp"

namespace headspec {

Integrator parse_integrator(const std::string& name) {
  if (name == "rk4") return Integrator::RK4;
  if (name == "dopri5") return Integrator::Dopri5;
  if (name == "euler") return Integrator::Euler;
  if (name == "heun") return Integrator::Heun;
  throw UsageError(fmt::format("--integrator: unknown integrator '{}' (available: rk4, dopri5, euler, heun)", name));
}

const char* to_string(StopRule rule) {
  switch (rule) {
    case StopRule::None: return "";
    case StopRule::Derivatives: return "derivatives";
    case StopRule::ErrorSettled: return "error";
  }
  return "?";
}

const char* to_string(Integrator i) {
  switch (i) {
    case Integrator::RK4: return "rk4";
    case Integrator::Dopri5: return "dopri5";
    case Integrator::Euler: return "euler";
    case Integrator::Heun: return "heun";
  }
  return "?";
}

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

void IntegrationSpec::validate(MonteCarloMode mode) const {
  if (!(std::isfinite(dt) && dt > 0)) throw UsageError(fmt::format("--dt: must be > 0, got {}", dt));
  if (!(std::isfinite(until_converged) && until_converged >= 0))
    throw UsageError(fmt::format("--until-converged: must be > 0, got {}", until_converged));
  if (!(std::isfinite(until_error_settled) && until_error_settled >= 0))
    throw UsageError(fmt::format("--until-error-settled: must be > 0, got {}", until_error_settled));
  if (!(std::isfinite(error_window) && error_window > 0))
    throw UsageError(fmt::format("--error-window: must be > 0, got {}", error_window));
  if (until_error_settled > 0) {
    const int64_t m = records_per_quarter_window();
    if (m < 1 || std::abs(static_cast<double>(4 * m) * record_every - error_window) > 1e-9 * error_window)
      throw UsageError(fmt::format(
          "--error-window: {} is not a whole multiple of 4 record intervals (--record-every {})", error_window,
          record_every));
  }
  if (mode == MonteCarloMode::Resample && (method == Integrator::RK4 || method == Integrator::Dopri5))
    throw UsageError(fmt::format(
        "--integrator: {} needs a smooth right-hand side; with --mc-resample use euler or heun", to_string(method)));
  if (method != Integrator::Dopri5) {
    const int64_t k = steps_per_record();
    if (k < 1 || std::abs(static_cast<double>(k) * dt - record_every) > 1e-9 * record_every)
      throw UsageError(fmt::format("--record-every: {} is not a whole number of steps --dt {}", record_every, dt));
    if (T / dt > 1e9) throw UsageError(fmt::format("--dt: more than 10^9 steps up to T = {}", T));
  }
}

namespace {

bool finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// Thrown inside odeint to stop integrate_times.
struct Stop {};

// A run's slot in a checkpoint (docs/checkpoints.md): in progress (the state x at the top of
// step k, k, the records, the evaluations so far) or finished.
enum class SlotKind : uint64_t { InProgress = 1, Finished = 2 };

}  // namespace

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

std::string finished_theory_slot(const TheoryResult& r) {
  StateWriter out;
  out.put_u64(static_cast<uint64_t>(SlotKind::Finished));
  out.put_records(r.trajectory.records);
  out.put_bool(r.trajectory.diverged);
  out.put_f64(r.trajectory.diverged_at);
  out.put_bool(r.converged);
  out.put_f64(r.converged_at);
  out.put_u64(static_cast<uint64_t>(r.converged_by));
  out.put_i64(r.evaluations);
  return out.take();
}

bool read_finished_theory(const std::string& slot, TheoryResult& r) {
  if (slot.empty()) return false;
  StateReader in(slot);
  if (in.u64() != static_cast<uint64_t>(SlotKind::Finished)) return false;
  r.trajectory.records = in.records();
  r.trajectory.diverged = in.boolean();
  r.trajectory.diverged_at = in.f64();
  r.converged = in.boolean();
  r.converged_at = in.f64();
  const uint64_t rule = in.u64();
  if (rule > static_cast<uint64_t>(StopRule::ErrorSettled)) return false;
  r.converged_by = static_cast<StopRule>(rule);
  r.evaluations = in.i64();
  in.expect_end();
  return true;
}

TheoryResult integrate_theory(const TheoryEngine& engine, const OrderParameters& initial, const IntegrationSpec& spec,
                              int run, const ProgressFn& progress, RunSlots* slots, const Checkpointing* checkpointing) {
  const StateLayout& layout = engine.layout();
  const std::size_t dim = layout.size();
  TheoryResult result;
  Trajectory& out = result.trajectory;
  std::vector<double> x(dim);
  layout.pack(initial, x.data());
  const double t0 = 0;

  auto record = [&](double t, const std::vector<double>& state, double error) {
    Record rec;
    rec.run = run;
    rec.t = t;
    rec.loss = error;
    rec.op = layout.unpack(state.data(), engine.fixed_readout());
    out.records.push_back(std::move(rec));
    if (progress) progress(run, t);
  };
  auto diverge = [&](double t) {
    out.diverged = true;
    out.diverged_at = t;
  };
  // The stop rules are tested before the last scheduled record only (stopped_by_rule).
  const double last_record = spec.last_record_time();
  auto converge = [&](StopRule rule, double t) {
    result.converged = true;
    result.converged_at = t;
    result.converged_by = rule;
  };

  if (spec.method == Integrator::Dopri5) {
    namespace odeint = boost::numeric::odeint;
    using State = std::vector<double>;
    TheoryEvaluation ev;
    auto system = [&](const State& s, State& dsdt, double t) {
      if (!finite(s)) {
        diverge(t);
        throw Stop{};
      }
      engine.evaluate(s.data(), 0, ev);
      ++result.evaluations;
      dsdt = ev.rate;
    };
    const int64_t n_records = static_cast<int64_t>(std::floor(spec.T / spec.record_every + 1e-9));
    std::vector<double> times(static_cast<std::size_t>(n_records + 1));
    for (int64_t k = 0; k <= n_records; ++k) times[k] = t0 + static_cast<double>(k) * spec.record_every;
    TheoryEvaluation at_record;
    auto observer = [&](const State& s, double t) {
      if (!finite(s)) {
        diverge(t);
        throw Stop{};
      }
      engine.evaluate(s.data(), 0, at_record);
      ++result.evaluations;
      record(t, s, at_record.error);
      if (t < last_record) {
        if (spec.until_converged > 0 && at_record.max_abs_rate() < spec.until_converged) {
          converge(StopRule::Derivatives, t);
          throw Stop{};
        }
        if (error_settled(out.records, spec)) {
          converge(StopRule::ErrorSettled, t);
          throw Stop{};
        }
      }
    };
    // odeint's integrate_times for a dense-output stepper, written out so that a run can be
    // checkpointed where every observation up to the stepper's time has been made: the
    // stepper's whole state is then (x, t, dt) (the step-size control keeps no history, and
    // the derivative at x, FSAL, is f(x) recomputed bit for bit); a resumed run's first step
    // re-evaluates it, which is not counted, so the evaluation counts agree too.
    auto stepper = odeint::make_dense_output(spec.tolerance, spec.tolerance, odeint::runge_kutta_dopri5<State>());
    std::size_t next = 0;  // the next observation time
    bool fresh_derivative = false;
    if (checkpointing != nullptr && !slots->slot(run).empty()) {
      StateReader in(slots->slot(run));
      if (in.u64() != static_cast<uint64_t>(SlotKind::InProgress)) throw UsageError("--resume: the checkpoint holds an invalid run");
      in.doubles_into(x.data(), dim);
      const double t = in.f64(), dt = in.f64();
      next = static_cast<std::size_t>(in.u64());
      out.records = in.records();
      result.evaluations = in.i64();
      in.expect_end();
      if (next == 0 || next >= times.size()) throw UsageError("--resume: the checkpoint holds an invalid run");
      stepper.initialize(x, t, dt);
      fresh_derivative = true;
    }
    auto in_progress = [&] {
      StateWriter w;
      w.put_u64(static_cast<uint64_t>(SlotKind::InProgress));
      w.put_doubles(stepper.current_state());
      w.put_f64(stepper.current_time());
      w.put_f64(stepper.current_time_step());
      w.put_u64(next);
      w.put_records(out.records);
      w.put_i64(result.evaluations);
      return w.take();
    };
    const double every = checkpointing ? checkpointing->every : 0;
    double next_save = every > 0 ? every * (std::floor(stepper.current_time() / every) + 1) : 0;
    bool saving = false;  // an error while saving is not a divergence
    using odeint::detail::less_eq_with_sign;
    try {
      if (next == 0) {
        stepper.initialize(x, times[0], spec.dt);
        observer(x, times[next++]);
      }
      const double last = times.back();
      while (next < times.size()) {
        while (next < times.size() &&
               less_eq_with_sign(times[next], stepper.current_time(), stepper.current_time_step())) {
          stepper.calc_state(times[next], x);
          observer(x, times[next]);
          ++next;
        }
        if (next == times.size()) break;
        if (checkpointing != nullptr) {
          saving = true;
          if (checkpointing->interrupted()) {
            slots->update(run, in_progress(), false);
            out.interrupted = true;
            break;
          }
          if (every > 0 && stepper.current_time() >= next_save) {
            slots->update(run, in_progress(), true);
            next_save = every * (std::floor(stepper.current_time() / every) + 1);
          }
          saving = false;
        }
        if (less_eq_with_sign(stepper.current_time() + stepper.current_time_step(), last,
                              stepper.current_time_step())) {
          stepper.do_step(system);
          if (fresh_derivative) --result.evaluations;
        } else {  // the last step, ending exactly on the last observation time
          stepper.initialize(stepper.current_state(), stepper.current_time(), last - stepper.current_time());
          stepper.do_step(system);
        }
        fresh_derivative = false;
      }
    } catch (const Stop&) {
    } catch (const std::exception&) {  // step-size underflow: the state has blown up
      if (saving) throw;
      diverge(out.records.empty() ? t0 : out.records.back().t);
    }
    return result;
  }

  // Fixed-step methods: the evaluation at x_k is the first stage of the step and gives ε
  // and the convergence test at t_k.
  const double dt = spec.dt;
  const int64_t per_record = spec.steps_per_record();
  const int64_t n_steps = static_cast<int64_t>(std::floor(spec.T / dt + 1e-9));
  TheoryEvaluation k1, k2, k3, k4;
  std::vector<double> tmp(dim);
  int64_t k0 = 0;
  if (checkpointing != nullptr && !slots->slot(run).empty()) {
    StateReader in(slots->slot(run));
    if (in.u64() != static_cast<uint64_t>(SlotKind::InProgress)) throw UsageError("--resume: the checkpoint holds an invalid run");
    in.doubles_into(x.data(), dim);
    k0 = in.i64();
    out.records = in.records();
    result.evaluations = in.i64();
    in.expect_end();
  }
  auto in_progress = [&](int64_t k) {
    StateWriter w;
    w.put_u64(static_cast<uint64_t>(SlotKind::InProgress));
    w.put_doubles(x);
    w.put_i64(k);
    w.put_records(out.records);
    w.put_i64(result.evaluations);
    return w.take();
  };
  CheckpointClock clock(checkpointing ? checkpointing->every : 0, 1.0 / dt, k0);
  for (int64_t k = k0;; ++k) {
    const double t = t0 + static_cast<double>(k) * dt;
    if (checkpointing != nullptr) {
      if (checkpointing->interrupted()) {
        slots->update(run, in_progress(k), false);
        out.interrupted = true;
        break;
      }
      if (clock.due(k)) slots->update(run, in_progress(k), true);
    }
    if (!finite(x)) {
      diverge(t);
      break;
    }
    const uint64_t draw = static_cast<uint64_t>(k);
    engine.evaluate(x.data(), draw, k1);
    ++result.evaluations;
    if (!finite(k1.rate) || !std::isfinite(k1.error)) {
      diverge(t);
      break;
    }
    const bool testing = t < last_record;
    const bool at_record = k % per_record == 0;
    StopRule rule = StopRule::None;
    if (testing && spec.until_converged > 0 && k1.max_abs_rate() < spec.until_converged) rule = StopRule::Derivatives;
    if (at_record || rule != StopRule::None) record(t, x, k1.error);
    if (testing && at_record && rule == StopRule::None && error_settled(out.records, spec)) rule = StopRule::ErrorSettled;
    if (rule != StopRule::None) {
      converge(rule, t);
      break;
    }
    if (k == n_steps) break;
    auto stage = [&](const TheoryEvaluation& from, double h, TheoryEvaluation& to) {
      for (std::size_t i = 0; i < dim; ++i) tmp[i] = x[i] + h * from.rate[i];
      engine.evaluate(tmp.data(), draw, to);
      ++result.evaluations;
    };
    switch (spec.method) {
      case Integrator::Euler:
        for (std::size_t i = 0; i < dim; ++i) x[i] += dt * k1.rate[i];
        break;
      case Integrator::Heun:
        stage(k1, dt, k2);
        for (std::size_t i = 0; i < dim; ++i) x[i] += 0.5 * dt * (k1.rate[i] + k2.rate[i]);
        break;
      case Integrator::RK4:
        stage(k1, 0.5 * dt, k2);
        stage(k2, 0.5 * dt, k3);
        stage(k3, dt, k4);
        for (std::size_t i = 0; i < dim; ++i)
          x[i] += dt / 6.0 * (k1.rate[i] + 2.0 * k2.rate[i] + 2.0 * k3.rate[i] + k4.rate[i]);
        break;
      case Integrator::Dopri5:
        break;
    }
  }
  return result;
}

TheoryResult run_theory(const ModelSpec& model, const EngineFactory& initial_engine, TheoryOptions mc,
                        const IntegrationSpec& spec, uint32_t base_seed, int run, const ProgressFn& progress,
                        RunSlots* slots, const Checkpointing* checkpointing) {
  const uint32_t seed = base_seed + static_cast<uint32_t>(run);
  OrderParameters initial = initial_engine(seed)->order_parameters();
  if (mc.channel == ValueChannel::Integrated) initial.R.setZero();  // R ≡ 0 from then on (MODEL.md §7)
  mc.seed = seed;
  const TheoryEngine engine(model, mc);
  return integrate_theory(engine, initial, spec, run, progress, slots, checkpointing);
}

}  // namespace headspec

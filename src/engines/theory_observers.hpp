#pragma once
// The observers of the theory integrator (include/headspec/theory_ode.hpp): what happens
// at an observation time besides stepping — recording, the stop rules, divergence and
// checkpoints. Each is small and knows one thing; an observer ends a run by throwing
// StopIntegration out of odeint's loop.
#include <string>

#include "headspec/checkpoint.hpp"
#include "headspec/errors.hpp"
#include "headspec/run_slot.hpp"
#include "headspec/theory_integrator.hpp"
#include "headspec/theory_ode.hpp"

namespace headspec::theory_observers {

/// Thrown by an observer to end the integration (a stop rule, a divergence, an interrupt).
struct StopIntegration {};

bool all_finite(const std::vector<double>& v);

/// Appends a Record (run, t, ε, the order parameters of x) to the trajectory and reports
/// progress: the columns of every engine's CSV.
class Recorder {
 public:
  Recorder(const TheoryEngine& engine, int run, const ProgressFn& progress, Trajectory& out)
      : engine_(engine), run_(run), progress_(progress), out_(out) {}
  void operator()(const OdeState& x, double t, double error);

 private:
  const TheoryEngine& engine_;
  int run_;
  const ProgressFn& progress_;
  Trajectory& out_;
};

/// IntegrationSpec's stop rules, tested before the last scheduled record only (so that
/// stopped_by_rule can tell from the trajectory alone), and the divergence of a run.
class StopRules {
 public:
  StopRules(const IntegrationSpec& spec, TheoryResult& result)
      : spec_(spec), result_(result), last_record_(spec.last_record_time()) {}
  /// Whether the rules are tested at time t.
  bool testing(double t) const { return t < last_record_; }
  /// --until-converged: every |rate| below the threshold.
  bool derivatives_settled(double t, const TheoryEvaluation& ev) const;
  /// --until-error-settled on the records so far.
  bool error_settled(double t) const;
  /// --stop-when-specialised at the newest record: every watched direction has split
  /// (the watched directions are found at the first test, from the records before it).
  bool specialised(const ModelSpec& model);
  /// Marks the run converged by `rule` at t and ends it.
  [[noreturn]] void stop(StopRule rule, double t);
  /// Marks the run diverged at t and ends it.
  [[noreturn]] void diverge(double t);
  /// Marks the run diverged at the time of an exploded state the engine refused
  /// (TheoryEngine::check_evaluable), keeping its reason for the message.
  void diverged_by(const DivergenceError& e);

 private:
  void mark_diverged(double t);

  const IntegrationSpec& spec_;
  TheoryResult& result_;
  double last_record_;
  bool watching_ = false;
  std::vector<int> watched_;
};

/// A run's checkpoint slot (docs/checkpoints.md): saved when the clock says so, and on an
/// interrupt, after which the run ends with trajectory.interrupted set.
class SlotSaver {
 public:
  SlotSaver(RunSlots* slots, const Checkpointing* checkpointing, int run)
      : slots_(slots), checkpointing_(checkpointing), run_(run) {}
  bool active() const { return checkpointing_ != nullptr; }
  const std::string& resumed_slot() const { return slots_->slot(run_); }
  double every() const { return checkpointing_ ? checkpointing_->every : 0; }
  /// On an interrupt: saves `slot()` and ends the run. Else saves it when `due`.
  template <class MakeSlot>
  void at_step_boundary(bool due, const MakeSlot& slot, Trajectory& out) {
    if (!active()) return;
    if (checkpointing_->interrupted()) {
      slots_->update(run_, slot(), false);
      out.interrupted = true;
      throw StopIntegration{};
    }
    if (due) slots_->update(run_, slot(), true);
  }

 private:
  RunSlots* slots_;
  const Checkpointing* checkpointing_;
  int run_;
};

/// Reads an in-progress slot (run_slot::in_progress); throws UsageError naming --resume otherwise.
run_slot::Slot expect_in_progress(const std::string& bytes);

}  // namespace headspec::theory_observers

#include "theory_observers.hpp"

#include <cmath>

#include "headspec/errors.hpp"
#include "headspec/specialisation.hpp"
#include "headspec/theory_reference.hpp"

namespace headspec {

void TheorySystem::operator()(const OdeState& x, OdeState& dxdt, double t) {
  if (half_step_ > 0) t = std::round(t / half_step_) * half_step_;
  if (start_pending_) {  // the first stage of a step whose start the observer evaluated
    start_pending_ = false;
    dxdt = start_.rate;
    return;
  }
  evaluate_into(x, t, stage_);
  dxdt = stage_.rate;
}

const TheoryEvaluation& TheorySystem::evaluate_at_step_start(const OdeState& x, double t) {
  evaluate_into(x, t, start_);
  start_pending_ = true;
  return start_;
}

const TheoryEvaluation& TheorySystem::evaluate(const OdeState& x, double t) {
  evaluate_into(x, t, observed_);
  return observed_;
}

void TheorySystem::evaluate_into(const OdeState& x, double t, TheoryEvaluation& out) {
  engine_->evaluate(x.data(), draw_, out, t);
  ++evaluations_;
  if (reference_ != nullptr) reference_->correct(x.data(), t, out);
}

namespace ode {
Heun make_heun() {
  const boost::array<double, 1> a21 = {{1.0}};
  const boost::array<double, 2> b = {{0.5, 0.5}};
  const boost::array<double, 2> c = {{0.0, 1.0}};
  return Heun(boost::fusion::make_vector(a21), b, c);
}
}  // namespace ode

namespace theory_observers {

bool all_finite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

void Recorder::operator()(const OdeState& x, double t, double error) {
  Record rec;
  rec.run = run_;
  rec.t = t;
  rec.loss = error;
  rec.op = engine_.layout().unpack(x.data(), engine_.fixed_readout());
  out_.records.push_back(std::move(rec));
  if (progress_) progress_(run_, t);
}

bool StopRules::derivatives_settled(double t, const TheoryEvaluation& ev) const {
  return testing(t) && spec_.until_converged > 0 && ev.max_abs_rate() < spec_.until_converged;
}

bool StopRules::error_settled(double t) const {
  return testing(t) && headspec::error_settled(result_.trajectory.records, spec_);
}

bool StopRules::specialised(const ModelSpec& model) {
  const double delta = spec_.stop_when_specialised;
  const std::vector<Record>& records = result_.trajectory.records;
  if (delta <= 0 || records.empty()) return false;
  if (!watching_) {
    watched_ = watched_directions(model, delta, std::span(records).first(records.size() - 1));
    watching_ = true;
  }
  return all_specialised(watched_, records.back().op.M, delta);
}

void StopRules::stop(StopRule rule, double t) {
  result_.converged = true;
  result_.converged_at = t;
  result_.converged_by = rule;
  throw StopIntegration{};
}

void StopRules::diverged_by(const DivergenceError& e) {
  mark_diverged(e.time);
  result_.trajectory.diverged_because = e.what();
}

void StopRules::diverge(double t) {
  mark_diverged(t);
  throw StopIntegration{};
}

void StopRules::mark_diverged(double t) {
  result_.trajectory.diverged = true;
  result_.trajectory.diverged_at = t;
}

run_slot::Slot expect_in_progress(const std::string& bytes) {
  run_slot::Slot slot = run_slot::read(bytes);
  if (slot.kind != run_slot::Kind::InProgress) throw ParameterError("resume", "the checkpoint holds an invalid run");
  return slot;
}

}  // namespace theory_observers
}  // namespace headspec

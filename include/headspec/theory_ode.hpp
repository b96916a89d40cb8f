#pragma once
// The theory's ODE (docs/model.md §6) in boost::odeint's roles: TheorySystem is the
// System, callable as sys(x, dxdt, t); the steppers are odeint's own (FixedStepper below,
// runge_kutta_dopri5 for dopri5); recording, stop rules and checkpoints are observers
// (src/engines/theory_observers.hpp). The system knows nothing of integration and the
// steppers nothing of attention.
#include <boost/numeric/odeint.hpp>
#include <cstdint>
#include <vector>

#include "headspec/theory_engine.hpp"

namespace headspec {

using OdeState = std::vector<double>;

/// dx/dt = the expected rates of TheoryEngine::evaluate at x for Monte Carlo draw `draw`
/// (autonomous: t is not used). Pass it to odeint as std::ref(system): odeint copies
/// systems, and this one counts its evaluations.
class TheorySystem {
 public:
  explicit TheorySystem(const TheoryEngine& engine) : engine_(&engine) {}

  void operator()(const OdeState& x, OdeState& dxdt, double /*t*/);

  /// Evaluates at x, the start of the next step: the observer needs ε and the rates there
  /// (records, stop rules), and the step's first stage reuses this evaluation bit for bit
  /// instead of computing it again.
  const TheoryEvaluation& evaluate_at_step_start(const OdeState& x);

  /// Evaluates at x for an observation only (dopri5's records).
  const TheoryEvaluation& evaluate(const OdeState& x);

  /// The Monte Carlo draw of the next evaluations (step k of --mc-resample uses draw k).
  void set_draw(uint64_t draw) { draw_ = draw; }
  int64_t evaluations() const { return evaluations_; }
  void set_evaluations(int64_t n) { evaluations_ = n; }

 private:
  const TheoryEngine* engine_;
  TheoryEvaluation start_, stage_, observed_;
  bool start_pending_ = false;
  uint64_t draw_ = 0;
  int64_t evaluations_ = 0;
};

namespace ode {
namespace odeint = boost::numeric::odeint;
using Euler = odeint::euler<OdeState>;
using RungeKutta4 = odeint::runge_kutta4<OdeState>;
/// Heun's method (explicit trapezoid, order 2) as odeint's generic explicit Runge–Kutta:
/// Butcher tableau c = (0, 1), a_21 = 1, b = (½, ½).
using Heun = odeint::explicit_generic_rk<2, 2, OdeState>;
Heun make_heun();
using Dopri5 = odeint::runge_kutta_dopri5<OdeState>;
}  // namespace ode

}  // namespace headspec

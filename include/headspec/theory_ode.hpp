#pragma once
// The theory's ODE (docs/model.md §6) in boost::odeint's roles: TheorySystem is the
// System, callable as sys(x, dxdt, t); the steppers are odeint's own (Euler, RungeKutta4, Heun below,
// runge_kutta_dopri5 for dopri5); recording, stop rules and checkpoints are observers
// (src/engines/theory_observers.hpp). The system knows nothing of integration and the
// steppers nothing of attention.
#include <boost/numeric/odeint.hpp>
#include <cmath>
#include <cstdint>
#include <vector>

#include "headspec/random.hpp"
#include "headspec/theory_diffusion.hpp"
#include "headspec/theory_engine.hpp"

namespace headspec {

using OdeState = std::vector<double>;

class ReferencePath;

/// dx/dt = the expected rates of TheoryEngine::evaluate at x for Monte Carlo draw `draw`
/// at time t (which only the learning-rate schedule reads, docs/model.md §4). Pass it to odeint as std::ref(system):
/// odeint copies systems, and this one counts its evaluations.
class TheorySystem {
 public:
  explicit TheorySystem(const TheoryEngine& engine) : engine_(&engine) {}

  void operator()(const OdeState& x, OdeState& dxdt, double t);

  /// Evaluates at x, the start of the next step: the observer needs ε and the rates there
  /// (records, stop rules), and the step's first stage reuses this evaluation bit for bit
  /// instead of computing it again.
  const TheoryEvaluation& evaluate_at_step_start(const OdeState& x, double t);

  /// Evaluates at x for an observation only (dopri5's records).
  const TheoryEvaluation& evaluate(const OdeState& x, double t);

  /// Fixed steps dt: the stages' times are taken as the nearest multiple of dt/2 (the stage
  /// times of Euler, Heun and RK4), so that g(t) has the same bits whether odeint counted
  /// the steps from 0 or from a resumed step k0 (k0·dt + j·dt and (k0 + j)·dt may differ).
  void snap_times_to(double dt) { half_step_ = dt / 2; }

  /// The Monte Carlo draw of the next evaluations (step k of --mc-resample uses draw k).
  void set_draw(uint64_t draw) { draw_ = draw; }
  /// Every evaluation from then on corrected along `path` (theory_reference.hpp); null: none.
  void correct_along(const ReferencePath* path) { reference_ = path; }
  int64_t evaluations() const { return evaluations_; }
  void set_evaluations(int64_t n) { evaluations_ = n; }

 private:
  void evaluate_into(const OdeState& x, double t, TheoryEvaluation& out);

  const TheoryEngine* engine_;
  const ReferencePath* reference_ = nullptr;
  TheoryEvaluation start_, stage_, observed_;
  bool start_pending_ = false;
  uint64_t draw_ = 0;
  int64_t evaluations_ = 0;
  double half_step_ = 0;
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

/// The stochastic theory's step (docs/model.md §12) as an odeint stepper: the step of the
/// deterministic stepper `Drift` (Euler, Heun, RK4) for F, plus the Brownian increment
/// √(dt/D) Σ(x_k)^{1/2} ξ_k taken at the step's start,
///     x_{k+1} = Φ_dt(x_k) + √(dt/D) Σ(x_k)^{1/2} ξ_k,
/// ξ_k the normals of stream (seed, Diffusion, lane, k), k = t/dt: step k's noise depends on
/// (seed, lane, k) and x_k alone, so a resumed run continues bit for bit. With Euler it is
/// Euler–Maruyama; the weak order is 1 whatever `Drift`, and at D → ∞ it is `Drift` exactly.
/// `Diffusion` is anything with increment(x, t, dt, stream, out) (TheoryDiffusion; the tests
/// also use an Ornstein–Uhlenbeck process whose moments are known).
template <class Drift, class Diffusion = TheoryDiffusion>
class StochasticStepper {
 public:
  using state_type = OdeState;
  using deriv_type = OdeState;
  using value_type = double;
  using time_type = double;
  using order_type = unsigned short;
  using stepper_category = odeint::stepper_tag;
  static constexpr order_type order() { return 1; }

  StochasticStepper(Drift drift, const Diffusion& diffusion, uint32_t seed, uint32_t lane)
      : drift_(std::move(drift)), diffusion_(&diffusion), seed_(seed), lane_(lane) {}

  template <class System>
  void do_step(System system, OdeState& x, double t, double dt) {
    const auto k = static_cast<uint64_t>(std::llround(t / dt));
    noise_.resize(x.size());
    // At t_k = k·dt, not odeint's t: the same bits whether the steps were counted from 0 or
    // from a resumed step (the schedule's factor, docs/model.md §4).
    diffusion_->increment(x.data(), static_cast<double>(k) * dt, dt, StreamId{seed_, Purpose::Diffusion, lane_, k},
                          noise_.data());
    drift_.do_step(system, x, t, dt);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += noise_[i];
  }

 private:
  Drift drift_;
  const Diffusion* diffusion_;
  uint32_t seed_, lane_;
  OdeState noise_;
};
}  // namespace ode

}  // namespace headspec

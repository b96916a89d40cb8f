#include "headspec/theory_reference.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "headspec/errors.hpp"
#include "headspec/theory_ode.hpp"

namespace headspec {

namespace {

// v made exactly invariant under the group (heads equal, sign-symmetric columns of M zero),
// copying head 1's numbers to the others: the engine's rates at a symmetric state are equal
// across heads only up to rounding (each head's orbit sum adds in its own order).
void make_invariant(const StateLayout& lay, const std::vector<int>& directions, double* v) {
  for (int h = 0; h < lay.H(); ++h) {
    for (int f = 0; f < lay.F(); ++f) v[lay.m_index(h, f)] = v[lay.m_index(0, f)];
    v[lay.r_index(h)] = v[lay.r_index(0)];
    for (int g = h; g < lay.H(); ++g) v[lay.q_index(h, g)] = v[lay.q_index(0, g == h ? 0 : 1)];
    if (lay.learned_readout()) v[lay.c_index(h)] = v[lay.c_index(0)];
  }
  for (int f : directions)
    for (int h = 0; h < lay.H(); ++h) v[lay.m_index(h, f)] = 0.0;
}

// The sum of column f of M, the same bits for any order of the heads (the values sorted; the
// scratch is the thread's own, so that an evaluation allocates nothing).
double column_sum(const StateLayout& lay, const double* x, int f) {
  thread_local std::vector<double> values;
  values.resize(static_cast<std::size_t>(lay.H()));
  for (int h = 0; h < lay.H(); ++h) values[static_cast<std::size_t>(h)] = x[lay.m_index(h, f)];
  std::sort(values.begin(), values.end());
  double s = 0;
  for (double v : values) s += v;
  return s;
}

// X°(t) stepped by odeint's `stepper` from t = 0 to ⌊T/dt⌋·dt; `at_step(x, t, ev)` sees each
// x_k with the reference's evaluation there, which the step's first stage then reuses. A path
// that blows up ends at its last finite state: the runs, corrected by its last point from
// then on, diverge by themselves and say so.
template <class Stepper, class AtStep>
void integrate_path(Stepper stepper, const TheoryEngine& reference, double dt, double T, std::vector<double>& x,
                    AtStep at_step) {
  const std::vector<int> directions = reference.model().prior.sign_symmetric_directions();
  TheorySystem system(reference);
  system.snap_times_to(dt);
  const auto n_steps = static_cast<int64_t>(std::floor(T / dt + 1e-9));
  for (int64_t k = 0;; ++k) {
    const double t = static_cast<double>(k) * dt;
    const TheoryEvaluation& ev = system.evaluate_at_step_start(x, t);
    at_step(x, t, ev);
    if (k == n_steps) break;
    stepper.do_step(std::ref(system), x, t, dt);
    make_invariant(reference.layout(), directions, x.data());
    if (!std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); })) return;
  }
}

// Linear interpolation at t on the grid j·step, j < count (clamped to the grid's ends).
struct Blend {
  std::size_t j0, j1;
  double w0, w1;
};

Blend blend(double t, double step, std::size_t count) {
  const double w = std::clamp(t / step, 0.0, static_cast<double>(count - 1));
  const auto j0 = std::min(static_cast<std::size_t>(w), count - 1);
  const double w1 = w - static_cast<double>(j0);
  return {j0, std::min(j0 + 1, count - 1), 1.0 - w1, w1};
}

}  // namespace

void check_reference_method(int64_t reference_samples, SamplingMethod method) {
  if (reference_samples > 0 && method == SamplingMethod::Plain)
    throw ParameterError("sde-reference-mc", "needs a symmetric --mc-method (sobol or symmetric)");
}

ReferencePath::ReferencePath(const TheoryEngine& drift, const TheoryEngine& reference, Integrator method, double dt,
                             double T, double fd_step)
    : layout_(drift.layout()),
      directions_(drift.model().prior.sign_symmetric_directions()),
      dt_(dt),
      slope_steps_(std::max<int64_t>(1, std::llround(kSlopeEvery / dt))) {
  check_reference_method(1, drift.options().method);
  check_reference_method(1, reference.options().method);
  std::vector<double> x(layout_.size());
  layout_.pack(unspecialised_state(drift.model()), x.data());
  auto at_step = [&](const std::vector<double>& xk, double t, const TheoryEvaluation& ref_at_xk) {
    tabulate(drift, reference, xk, t, ref_at_xk, fd_step);
    path_.push_back(xk);
  };
  switch (method) {
    case Integrator::Euler: integrate_path(ode::Euler(), reference, dt, T, x, at_step); break;
    case Integrator::Heun: integrate_path(ode::make_heun(), reference, dt, T, x, at_step); break;
    case Integrator::RK4: integrate_path(ode::RungeKutta4(), reference, dt, T, x, at_step); break;
    case Integrator::Dopri5: throw ParameterError("integrator", "dopri5 has no fixed grid for the reference path");
  }
}

// The differences at every step; the slopes every slope_steps_ steps, which change on the
// plateau's time scale, not the step's.
void ReferencePath::tabulate(const TheoryEngine& drift, const TheoryEngine& reference, const std::vector<double>& x,
                             double t, const TheoryEvaluation& ref_at_x, double fd_step) {
  TheoryEvaluation own;
  drift.evaluate(x.data(), 0, own, t);
  Point p;
  p.rate.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) p.rate[i] = ref_at_x.rate[i] - own.rate[i];
  p.error = ref_at_x.error - own.error;
  make_invariant(layout_, directions_, p.rate.data());
  if (static_cast<int64_t>(points_.size()) % slope_steps_ == 0) tabulate_slopes(drift, reference, x, t, fd_step);
  points_.push_back(std::move(p));
}

// At a symmetric state the rates of column M_{:,f} vanish and are odd in it, so the slopes
// are one evaluation at x + h e_{M_1f}: α_f = F_{M_1f}/h, β_f = F_{M_2f}/h (central
// differences, the other side being the sign flip's image).
void ReferencePath::tabulate_slopes(const TheoryEngine& drift, const TheoryEngine& reference,
                                    const std::vector<double>& x, double t, double fd_step) {
  TheoryEvaluation ref, own;
  Slopes s;
  for (int f : directions_) {
    std::vector<double> xp = x;
    xp[layout_.m_index(0, f)] += fd_step;
    reference.evaluate(xp.data(), 0, ref, t);
    drift.evaluate(xp.data(), 0, own, t);
    auto slope = [&](int h) {
      const std::size_t i = layout_.m_index(h, f);
      return (ref.rate[i] - own.rate[i]) / fd_step;
    };
    s.alpha.push_back(slope(0));
    s.beta.push_back(layout_.H() > 1 ? slope(1) : 0.0);
  }
  slopes_.push_back(std::move(s));
}

void ReferencePath::correct(const double* x, double t, TheoryEvaluation& ev) const {
  const Blend at = blend(t, dt_, points_.size());
  const Point &p = points_[at.j0], &q = points_[at.j1];
  for (std::size_t i = 0; i < ev.rate.size(); ++i) ev.rate[i] += at.w0 * p.rate[i] + at.w1 * q.rate[i];
  ev.error += at.w0 * p.error + at.w1 * q.error;
  const Blend sat = blend(t, dt_ * static_cast<double>(slope_steps_), slopes_.size());
  const Slopes &u = slopes_[sat.j0], &v = slopes_[sat.j1];
  for (std::size_t j = 0; j < directions_.size(); ++j) {
    const int f = directions_[j];
    const double alpha = sat.w0 * u.alpha[j] + sat.w1 * v.alpha[j], beta = sat.w0 * u.beta[j] + sat.w1 * v.beta[j];
    const double sum = column_sum(layout_, x, f);
    for (int h = 0; h < layout_.H(); ++h) {
      const double m = x[layout_.m_index(h, f)];
      ev.rate[layout_.m_index(h, f)] += alpha * m + beta * (sum - m);
    }
  }
}

std::shared_ptr<const ReferencePath> make_reference_path(const ModelSpec& model, const TheoryOptions& mc,
                                                         const IntegrationSpec& spec) {
  if (resolved_method(model, mc) == SamplingMethod::Laplace) return nullptr;
  TheoryOptions wide = mc;
  wide.samples = spec.reference_samples;
  const TheoryEngine drift(model, mc), reference(model, wide);
  return std::make_shared<const ReferencePath>(drift, reference, spec.method, spec.dt, spec.T);
}

}  // namespace headspec

#include "headspec/linearisation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "headspec/errors.hpp"
#include "headspec/specialisation.hpp"
#include "headspec/study_checks.hpp"
#include "headspec/symmetry_group.hpp"
#include "headspec/theory_diffusion.hpp"
#include "headspec/theory_ode.hpp"

namespace headspec {
namespace {

TheoryOptions integrated_options(const TheoryOptions& options) {
  TheoryOptions o = options;
  o.mode = MonteCarloMode::Fixed;          // a smooth right-hand side, needed for the Jacobian
  o.channel = ValueChannel::Integrated;    // docs/model.md §7: exact, R ≡ 0
  return o;
}

double max_abs_free(const std::vector<double>& v, const std::vector<std::size_t>& free) {
  double m = 0;
  for (std::size_t i : free) m = std::max(m, std::abs(v[i]));
  return m;
}

}  // namespace

int linearisation_direction(int direction, const ModelSpec& model) {
  if (direction < 0 || direction > model.F())
    throw ParameterError("direction", fmt::format("must be in 1 … F = {}, got {}", model.F(), direction));
  return direction - 1;
}

namespace {

// The whole symmetry group (every head permutation: its average is the projection on the
// symmetric subspace), refused (naming --H) beyond 1024 elements.
SymmetryGroup whole_group(const ModelSpec& model) {
  const double signs = std::ldexp(1.0, static_cast<int>(model.prior.sign_symmetric_directions().size()));
  if (signs * std::tgamma(model.H + 1.0) > 1024)
    throw ParameterError("H", fmt::format("the symmetry group ({} head permutations × {} sign flips) has more than 1024 "
                                          "elements; use fewer heads",
                                          std::tgamma(model.H + 1.0), signs));
  return SymmetryGroup(model, true);
}

}  // namespace

SymmetrisedTheory::SymmetrisedTheory(const ModelSpec& model, const TheoryOptions& options,
                                     const std::atomic<bool>* stop)
    : engine_(model, integrated_options(options)), flipped_(model.prior.sign_symmetric_directions()), stop_(stop) {
  const StateLayout& lay = engine_.layout();
  const SymmetryGroup group = whole_group(model);
  for (const std::vector<int>& perm : group.permutations()) {
    std::vector<int> inverse(perm.size());
    for (std::size_t h = 0; h < perm.size(); ++h) inverse[perm[h]] = static_cast<int>(h);
    for (int sigma = 0; sigma < group.sign_count(); ++sigma) {
      std::vector<double> s(lay.F());
      for (int f = 0; f < lay.F(); ++f) s[f] = group.sign(sigma, f);
      Action a = action_of(lay, perm, s);
      // g⁻¹ = (π⁻¹, s): the signs are their own inverse and commute with the permutation.
      a.inverse_source = action_of(lay, inverse, s).source;
      actions_.push_back(std::move(a));
    }
  }
  for (std::size_t i = 0; i < lay.size(); ++i) {
    bool is_r = false;
    for (int h = 0; h < lay.H(); ++h) is_r = is_r || i == lay.r_index(h);
    if (!is_r) free_.push_back(i);
  }
}

// (g x)_{M_hf} = s_f x_{M_π(h)f}, R_h ← R_π(h), Q_hg ← Q_π(h)π(g), c_h ← c_π(h).
SymmetrisedTheory::Action SymmetrisedTheory::action_of(const StateLayout& lay, const std::vector<int>& perm,
                                                       const std::vector<double>& sign) {
  Action a;
  a.source.resize(lay.size());
  a.sign.assign(lay.size(), 1.0);
  for (int h = 0; h < lay.H(); ++h) {
    for (int f = 0; f < lay.F(); ++f) {
      a.source[lay.m_index(h, f)] = lay.m_index(perm[h], f);
      a.sign[lay.m_index(h, f)] = sign[f];
    }
    a.source[lay.r_index(h)] = lay.r_index(perm[h]);
    for (int g = h; g < lay.H(); ++g) a.source[lay.q_index(h, g)] = lay.q_index(perm[h], perm[g]);
    if (lay.learned_readout()) a.source[lay.c_index(h)] = lay.c_index(perm[h]);
  }
  return a;
}

void SymmetrisedTheory::rate(const double* x, double* out, double* error) const {
  if (stop_ && stop_->load()) throw Interrupted();
  const std::size_t n = layout().size();
  if (engine_.options().method != SamplingMethod::Plain) {
    // The symmetric methods' right-hand side is exactly equivariant already (docs/model.md §6).
    TheoryEvaluation ev;
    engine_.evaluate(x, 0, ev);
    std::copy(ev.rate.begin(), ev.rate.end(), out);
    if (error) *error = ev.error;
    return;
  }
  std::vector<double> gx(n);
  TheoryEvaluation ev;
  std::fill(out, out + n, 0.0);
  double err = 0;
  for (const Action& a : actions_) {
    for (std::size_t i = 0; i < n; ++i) gx[i] = a.sign[i] * x[a.source[i]];
    engine_.evaluate(gx.data(), 0, ev);
    // g⁻¹ applied to the rate, which transforms like the state.
    for (std::size_t i = 0; i < n; ++i) out[i] += a.sign[i] * ev.rate[a.inverse_source[i]];
    err += ev.error;
  }
  const double w = 1.0 / static_cast<double>(actions_.size());
  for (std::size_t i = 0; i < n; ++i) out[i] *= w;
  if (error) *error = err * w;
}

void SymmetrisedTheory::symmetrise(double* x) const {
  const std::size_t n = layout().size();
  std::vector<double> sum(n, 0.0);
  for (const Action& a : actions_)
    for (std::size_t i = 0; i < n; ++i) sum[i] += a.sign[i] * x[a.source[i]];
  for (std::size_t i = 0; i < n; ++i) x[i] = sum[i] / static_cast<double>(actions_.size());
}

std::string SymmetrisedTheory::coordinate_name(std::size_t i) const {
  const StateLayout& lay = layout();
  for (int h = 0; h < lay.H(); ++h) {
    for (int f = 0; f < lay.F(); ++f)
      if (i == lay.m_index(h, f)) return fmt::format("M_{}_{}", h + 1, f + 1);
    if (i == lay.r_index(h)) return fmt::format("R_{}", h + 1);
    for (int g = h; g < lay.H(); ++g)
      if (i == lay.q_index(h, g)) return fmt::format("Q_{}_{}", h + 1, g + 1);
    if (lay.learned_readout() && i == lay.c_index(h)) return fmt::format("c_{}", h + 1);
  }
  return "?";
}

void LinearisationSpec::validate(const ModelSpec& model) const {
  model.validate();
  if (mc < 256) throw ParameterError("mc", fmt::format("must be at least 256, got {}", mc));
  if (!(std::isfinite(dt) && dt > 0)) throw ParameterError("dt", fmt::format("must be > 0, got {}", dt));
  if (!(std::isfinite(T_max) && T_max > 0)) throw ParameterError("T-max", fmt::format("must be > 0, got {}", T_max));
  if (T_max / dt > 1e8) throw ParameterError("dt", fmt::format("more than 10^8 steps up to --T-max {}", T_max));
  if (!(std::isfinite(settle) && settle > 0)) throw ParameterError("settle", fmt::format("must be > 0, got {}", settle));
  if (newton_iterations < 0)
    throw ParameterError("newton-iterations", fmt::format("must be ≥ 0, got {}", newton_iterations));
  if (approach_mc != 0 && approach_mc < 256)
    throw ParameterError("approach-mc", fmt::format("must be 0 (same as --mc) or at least 256, got {}", approach_mc));
  if (!(std::isfinite(fd_step) && fd_step > 0 && fd_step <= 0.1))
    throw ParameterError("fd-step", fmt::format("must be in (0, 0.1], got {}", fd_step));
  if (model.H < 2) throw ParameterError("H", "the spread of the heads needs at least 2 heads");
  const std::vector<int> sym = model.prior.sign_symmetric_directions();
  if (sym.empty())
    throw ParameterError("prior", "no direction whose sign the prior leaves invariant (use flip with F ≥ 2, gauss, or "
                                  "a mixture symmetric under θ_f → −θ_f)");
  if (direction >= 0 && std::find(sym.begin(), sym.end(), direction) == sym.end()) {
    std::vector<int> from_one(sym);
    for (int& f : from_one) ++f;
    throw ParameterError("direction", fmt::format("{} is not a symmetric direction of the prior (this prior's: {})",
                                                  direction + 1, fmt::join(from_one, ", ")));
  }
}

Eigen::MatrixXd symmetrised_jacobian(const SymmetrisedTheory& theory, const std::vector<double>& x, double h) {
  const std::vector<std::size_t>& free = theory.free_coordinates();
  const std::size_t n = theory.layout().size(), m = free.size();
  Eigen::MatrixXd J(m, m);
  std::vector<double> xp = x, xm = x, rp(n), rm(n);
  for (std::size_t j = 0; j < m; ++j) {
    xp = x;
    xm = x;
    xp[free[j]] += h;
    xm[free[j]] -= h;
    theory.rate(xp.data(), rp.data());
    theory.rate(xm.data(), rm.data());
    for (std::size_t i = 0; i < m; ++i) J(i, j) = (rp[free[i]] - rm[free[i]]) / (2 * h);
  }
  return J;
}

namespace {

// One step of odeint's classical RK4 of dx/dt = G(x), from the rate k1 at x.
void rk4_step(const SymmetrisedTheory& theory, std::vector<double>& x, double dt, const std::vector<double>& k1) {
  auto system = [&](const OdeState& y, OdeState& dydt, double /*t*/) { theory.rate(y.data(), dydt.data()); };
  ode::RungeKutta4().do_step(system, x, k1, 0.0, dt);
}

bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double a) { return std::isfinite(a); });
}

// The RK4 steps of dt in one record interval; refused (naming `flag`) unless a whole number.
int64_t steps_per_record(double record_every, double dt, const char* flag) {
  const int64_t per_record = std::llround(record_every / dt);
  if (per_record < 1 || std::abs(static_cast<double>(per_record) * dt - record_every) > 1e-9 * record_every)
    throw ParameterError(flag, fmt::format("{} is not a whole number of steps --dt {}", record_every, dt));
  return per_record;
}

// Eigenvalue of largest real part of the zero-sum modes of M_{:,f} (Helmert basis).
double spread_eigenvalue(const Eigen::MatrixXd& J, const std::vector<std::size_t>& block, Eigen::VectorXd* mode) {
  const int H = static_cast<int>(block.size());
  Eigen::MatrixXd B(H, H);
  for (int a = 0; a < H; ++a)
    for (int b = 0; b < H; ++b) B(a, b) = J(block[a], block[b]);
  Eigen::MatrixXd U = Eigen::MatrixXd::Zero(H, H - 1);
  for (int k = 1; k < H; ++k) {
    const double s = 1.0 / std::sqrt(static_cast<double>(k) * (k + 1));
    for (int a = 0; a < k; ++a) U(a, k - 1) = s;
    U(k, k - 1) = -k * s;
  }
  const Eigen::MatrixXd Bz = U.transpose() * B * U;
  Eigen::EigenSolver<Eigen::MatrixXd> es(Bz);
  int best = 0;
  for (int k = 1; k < Bz.rows(); ++k)
    if (es.eigenvalues()[k].real() > es.eigenvalues()[best].real()) best = k;
  if (mode) {
    const Eigen::VectorXd v = U * es.eigenvectors().col(best).real();
    *mode = Eigen::VectorXd::Zero(J.rows());
    for (int a = 0; a < H; ++a) (*mode)[block[a]] = v[a];
    mode->normalize();
  }
  return es.eigenvalues()[best].real();
}

}  // namespace

namespace {

// The D → ∞ limit of the initial state (docs/model.md §4): M = 0, R = 0, Q = q0 I, c = c(0).
std::vector<double> unspecialised_start(const ModelSpec& model, const StateLayout& lay) {
  OrderParameters op0 = unspecialised_state(model);
  std::vector<double> x(lay.size());
  lay.pack(op0, x.data());
  return x;
}

// Integrates from x with RK4 in the symmetric subspace until every free |rate| < settle or
// T_max, recording the approach every 5 time units (and at its end) into res.
void approach_fixed_point(const SymmetrisedTheory& approach, const LinearisationSpec& spec, std::vector<double>& x,
                          LinearisationResult& res) {
  const std::vector<std::size_t>& free = approach.free_coordinates();
  std::vector<double> k1(x.size());
  auto point = [&](double t, double loss) {
    ApproachPoint p;
    p.t = t;
    p.loss = loss;
    p.max_rate = max_abs_free(k1, free);
    p.op = approach.layout().unpack(x.data(), approach.engine().fixed_readout());
    res.approach.push_back(std::move(p));
  };
  const int64_t steps = static_cast<int64_t>(std::ceil(spec.T_max / spec.dt));
  const int64_t record_steps = std::max<int64_t>(1, std::llround(5.0 / spec.dt));
  for (int64_t k = 0;; ++k) {
    double loss = 0;
    approach.rate(x.data(), k1.data(), &loss);
    const double t = static_cast<double>(k) * spec.dt;
    if (!all_finite(x) || !all_finite(k1)) throw DivergenceError("the approach to the fixed point diverged", t);
    const bool done = max_abs_free(k1, free) < spec.settle || k == steps;
    if (k % record_steps == 0 || done) point(t, loss);
    if (done) {
      res.settled = max_abs_free(k1, free) < spec.settle;
      res.settled_at = t;
      return;
    }
    rk4_step(approach, x, spec.dt, k1);
    approach.symmetrise(x.data());  // removes the rounding that would leave the symmetric subspace
  }
}

// Whether packed state x is an admissible order-parameter state: Q⊥ = Q − MMᵀ − RRᵀ positive
// definite (docs/model.md §5). A full Newton step from a plateau that has not settled can land
// outside, where the rates are those of no network and may still be small.
bool admissible(const SymmetrisedTheory& theory, const std::vector<double>& x) {
  const OrderParameters op = theory.layout().unpack(x.data(), theory.engine().fixed_readout());
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(op.orthogonal(), Eigen::EigenvaluesOnly);
  return eig.info() == Eigen::Success && eig.eigenvalues().minCoeff() > 0;
}

// Newton's method on G(x) = 0 in the free coordinates, the step halved until the residual
// falls at an admissible state; sets res.newton_iterations and res.residual.
void newton_refine(const SymmetrisedTheory& theory, const LinearisationSpec& spec, std::vector<double>& x,
                   LinearisationResult& res) {
  const std::vector<std::size_t>& free = theory.free_coordinates();
  std::vector<double> k1(x.size()), y, ry(x.size());
  theory.rate(x.data(), k1.data());
  double residual = max_abs_free(k1, free);
  for (int it = 0; it < spec.newton_iterations && residual > 1e-14; ++it) {
    const Eigen::MatrixXd J = symmetrised_jacobian(theory, x, spec.fd_step);
    Eigen::VectorXd g(free.size());
    for (std::size_t i = 0; i < free.size(); ++i) g[i] = k1[free[i]];
    const Eigen::VectorXd step = J.colPivHouseholderQr().solve(-g);
    bool improved = false;
    for (double scale = 1; scale > 1.0 / 128 && !improved; scale *= 0.5) {
      y = x;
      for (std::size_t i = 0; i < free.size(); ++i) y[free[i]] += scale * step[i];
      theory.symmetrise(y.data());
      theory.rate(y.data(), ry.data());
      const double r = max_abs_free(ry, free);
      if (all_finite(y) && r < residual && admissible(theory, y)) {
        x = y;
        k1 = ry;
        residual = r;
        improved = true;
      }
    }
    if (!improved) break;
    res.newton_iterations = it + 1;
  }
  res.residual = residual;
}

// The Jacobian's eigenvalues in decreasing real part, each eigenvector normalised with a
// fixed phase (its largest component real and positive).
void sorted_spectrum(LinearisationResult& res) {
  Eigen::EigenSolver<Eigen::MatrixXd> es(res.jacobian);
  std::vector<int> order(res.jacobian.rows());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return es.eigenvalues()[a].real() > es.eigenvalues()[b].real(); });
  res.eigenvalues.resize(order.size());
  res.eigenvectors.resize(order.size(), order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    res.eigenvalues[k] = es.eigenvalues()[order[k]];
    Eigen::VectorXcd v = es.eigenvectors().col(order[k]);
    Eigen::Index imax = 0;
    v.cwiseAbs().maxCoeff(&imax);
    v *= std::abs(v[imax]) / v[imax];
    res.eigenvectors.col(k) = v.normalized();
  }
}

// The flip-odd block of direction f: the rows and columns of M_{:,f} among the free
// coordinates; and the largest coupling between it and the other coordinates.
std::vector<std::size_t> spread_block(const SymmetrisedTheory& theory, int H, LinearisationResult& res) {
  const std::vector<std::size_t>& free = theory.free_coordinates();
  std::vector<std::size_t> block;
  for (int h = 0; h < H; ++h)
    block.push_back(static_cast<std::size_t>(
        std::find(free.begin(), free.end(), theory.layout().m_index(h, res.direction)) - free.begin()));
  for (std::size_t i = 0; i < free.size(); ++i) {
    if (std::find(block.begin(), block.end(), i) != block.end()) continue;
    for (std::size_t b : block)
      res.odd_even_coupling =
          std::max({res.odd_even_coupling, std::abs(res.jacobian(i, b)), std::abs(res.jacobian(b, i))});
  }
  return block;
}

}  // namespace

LinearisationResult linearise(const ModelSpec& model, const LinearisationSpec& spec) {
  spec.validate(model);
  const TheoryOptions mc = spec.theory_options();
  const SymmetrisedTheory theory(model, mc, spec.stop);
  TheoryOptions mc_approach = mc;
  if (spec.approach_mc > 0) mc_approach.samples = spec.approach_mc;
  const SymmetrisedTheory approach(model, mc_approach, spec.stop);
  const StateLayout& lay = theory.layout();

  LinearisationResult res;
  res.group_size = theory.group_size();
  res.direction = spec.direction >= 0 ? spec.direction : theory.symmetric_directions().front();
  std::vector<double> x = unspecialised_start(model, lay);
  approach_fixed_point(approach, spec, x, res);
  newton_refine(theory, spec, x, res);
  std::vector<double> k1(x.size());
  theory.rate(x.data(), k1.data(), &res.loss);
  res.state = x;
  res.fixed_point = lay.unpack(x.data(), theory.engine().fixed_readout());
  for (std::size_t i : theory.free_coordinates()) res.coordinates.push_back(theory.coordinate_name(i));

  res.jacobian = symmetrised_jacobian(theory, x, spec.fd_step);
  sorted_spectrum(res);
  const std::vector<std::size_t> block = spread_block(theory, model.H, res);
  res.spread_rate = spread_eigenvalue(res.jacobian, block, &res.spread_mode);
  TheoryEvaluation raw;  // the unsymmetrised engine: its spread rate at the fixed point is sampling bias
  theory.engine().evaluate(x.data(), 0, raw);
  res.raw_spread_bias =
      (raw.rate[lay.m_index(0, res.direction)] - raw.rate[lay.m_index(1, res.direction)]) / std::sqrt(2.0);
  res.spread_rate_half_step = spread_eigenvalue(symmetrised_jacobian(theory, x, 0.5 * spec.fd_step), block, nullptr);
  return res;
}

namespace {

// Least-squares slope of ln y against t over records [from, to).
double log_slope(const std::vector<double>& t, const std::vector<double>& y, std::size_t from, std::size_t to) {
  double st = 0, sy = 0, stt = 0, sty = 0;
  const double n = static_cast<double>(to - from);
  for (std::size_t i = from; i < to; ++i) {
    const double ly = std::log(y[i]);
    st += t[i];
    sy += ly;
    stt += t[i] * t[i];
    sty += t[i] * ly;
  }
  return (n * sty - st * sy) / (n * stt - st * st);
}

}  // namespace

GrowthCheck growth_check(const ModelSpec& model, const LinearisationSpec& spec, const LinearisationResult& lin,
                         double epsilon, double T, double record_every) {
  if (!(std::isfinite(epsilon) && epsilon > 0 && epsilon < 0.1))
    throw ParameterError("growth-epsilon", fmt::format("must be in (0, 0.1), got {}", epsilon));
  if (!(std::isfinite(T) && T >= 4 * record_every))
    throw ParameterError("growth-T", fmt::format("must be at least 4 record intervals, got {}", T));
  const int64_t per_record = steps_per_record(record_every, spec.dt, "record-every");
  const TheoryOptions mc = spec.theory_options();
  const SymmetrisedTheory theory(model, mc, spec.stop);
  const StateLayout& lay = theory.layout();
  std::vector<double> x = lin.state, k1(x.size());
  // Spread ε along the zero-sum direction of heads 1 and 2 (any zero-sum direction has the
  // same eigenvalue by the permutation symmetry).
  x[lay.m_index(0, lin.direction)] += epsilon / std::sqrt(2.0);
  x[lay.m_index(1, lin.direction)] -= epsilon / std::sqrt(2.0);

  GrowthCheck out;
  out.epsilon = epsilon;
  const int64_t records = static_cast<int64_t>(std::floor(T / record_every + 1e-9));
  for (int64_t r = 0;; ++r) {
    const OrderParameters op = lay.unpack(x.data(), theory.engine().fixed_readout());
    out.t.push_back(static_cast<double>(r) * record_every);
    out.spread.push_back(head_spread(op.M, lin.direction));
    if (r == records) break;
    for (int64_t k = 0; k < per_record; ++k) {
      theory.rate(x.data(), k1.data());
      rk4_step(theory, x, spec.dt, k1);
    }
    if (!all_finite(x)) throw DivergenceError("the growth check diverged", out.t.back());
  }
  auto slope = [&](std::size_t from, std::size_t to) { return log_slope(out.t, out.spread, from, to); };
  const std::size_t m = out.t.size();
  out.fitted_rate = slope(0, m);
  const std::size_t q = std::max<std::size_t>(2, m / 4);
  out.first_rate = slope(0, q);
  out.last_rate = slope(m - q, m);
  return out;
}

SpreadGrowth spread_growth_along(const ModelSpec& model, const LinearisationSpec& spec, int direction, double T,
                                 double record_every) {
  const int64_t per_record = steps_per_record(record_every, spec.dt, "along-every");
  if (!(std::isfinite(T) && T >= record_every))
    throw ParameterError("along", fmt::format("must be at least one record interval, got {}", T));
  if (model.H != 2) throw ParameterError("along", "the one-dimensional spread sector needs --H 2");
  const TheoryOptions mc = spec.theory_options();
  const SymmetrisedTheory theory(model, mc, spec.stop);
  const StateLayout& lay = theory.layout();
  const std::size_t n = lay.size();
  OrderParameters op0 = unspecialised_state(model);
  std::vector<double> x(n), k1(n), xp(n), xm(n), rp(n), rm(n);
  lay.pack(op0, x.data());
  const std::size_t i1 = lay.m_index(0, direction), i2 = lay.m_index(1, direction);
  const double h = spec.fd_step / std::sqrt(2.0);
  const TheoryDiffusion diffusion(model, spec.mc, spec.seed, ValueChannel::Integrated, 1.0);
  SpreadGrowth out;
  const int64_t records = static_cast<int64_t>(std::floor(T / record_every + 1e-9));
  for (int64_t r = 0;; ++r) {
    xp = x;
    xm = x;
    xp[i1] += h, xp[i2] -= h, xm[i1] -= h, xm[i2] += h;  // x ± fd_step·v
    theory.rate(xp.data(), rp.data());
    theory.rate(xm.data(), rm.data());
    // vᵀ(G(x + εv) − G(x − εv))/(2ε) with v = (e_1 − e_2)/√2.
    const double a = ((rp[i1] - rp[i2]) - (rm[i1] - rm[i2])) / (2.0 * std::sqrt(2.0) * spec.fd_step);
    const double t = static_cast<double>(r) * record_every;
    out.log_growth.push_back(r == 0 ? 0.0 : out.log_growth.back() + 0.5 * (out.rate.back() + a) * record_every);
    out.t.push_back(t);
    out.rate.push_back(a);
    const Eigen::MatrixXd sigma = diffusion.covariance(x.data());  // vᵀ Σ v, v = (e_1 − e_2)/√2
    out.split_diffusion.push_back(0.5 * (sigma(i1, i1) + sigma(i2, i2) - 2 * sigma(i1, i2)));
    out.state.push_back(lay.unpack(x.data(), theory.engine().fixed_readout()));
    if (r == records) break;
    for (int64_t k = 0; k < per_record; ++k) {
      theory.rate(x.data(), k1.data());
      rk4_step(theory, x, spec.dt, k1);
      theory.symmetrise(x.data());
    }
    if (!all_finite(x)) throw DivergenceError("the unspecialised trajectory diverged", t);
  }
  return out;
}

double threshold_time(const ModelSpec& model, const LinearisationSpec& spec, int direction, double s0, double delta) {
  if (!(std::isfinite(s0) && s0 > 0 && s0 < delta))
    throw ParameterError("predict-s0", fmt::format("must be in (0, δ = {}), got {}", delta, s0));
  const TheoryOptions mc = spec.theory_options();
  const SymmetrisedTheory theory(model, mc, spec.stop);
  const StateLayout& lay = theory.layout();
  OrderParameters op0 = unspecialised_state(model);
  op0.M(0, direction) = s0 / std::sqrt(2.0);
  op0.M(1, direction) = -s0 / std::sqrt(2.0);
  std::vector<double> x(lay.size()), k1(lay.size());
  lay.pack(op0, x.data());
  double previous = std::log(s0);
  const int64_t steps = static_cast<int64_t>(std::ceil(spec.T_max / spec.dt));
  const double target = std::log(delta);
  for (int64_t k = 1; k <= steps; ++k) {
    theory.rate(x.data(), k1.data());
    rk4_step(theory, x, spec.dt, k1);
    if (!all_finite(x)) throw DivergenceError("the threshold run diverged", static_cast<double>(k) * spec.dt);
    const double now = std::log(head_spread(lay.unpack(x.data(), theory.engine().fixed_readout()).M, direction));
    if (now > target) return (static_cast<double>(k - 1) + (target - previous) / (now - previous)) * spec.dt;
    previous = now;
  }
  return NAN;
}

}  // namespace headspec

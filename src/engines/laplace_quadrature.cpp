#include "laplace_quadrature.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "symmetric_samples.hpp"

namespace headspec::laplace {

// One kind of position at the Gauss–Hermite nodes: scores s (H × nodes), E[λ | s] (F × nodes),
// and the rule's weights.
struct PositionKind {
  Eigen::MatrixXd s, lambda;
  Eigen::ArrayXd weight;
};

// The positions at a state: the background kind and the relevant position's kinds (with their
// weights, in groups of `group` to be summed as binary trees), and per head the variance and
// largest mean of the scores, which set the u grid.
struct Positions {
  PositionKind background;
  std::vector<PositionKind> relevant;
  std::vector<double> relevant_weight;
  int group = 1;
  Eigen::VectorXd variance, shift;
};

namespace {

using Grid = LaplaceQuadrature::Grid;

// Probabilists' Gauss–Hermite rule by Golub–Welsch: E f(ξ), ξ ~ N(0, 1), ≈ Σ_k w_k f(x_k), Σ w = 1.
// Kept per node count (an eigenproblem of that size at every evaluation otherwise).
struct GaussHermite {
  Eigen::VectorXd x, w;
};

const GaussHermite& gauss_hermite(int n) {
  static std::mutex mutex;
  static std::map<int, GaussHermite> rules;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto it = rules.find(n);
  if (it != rules.end()) return it->second;
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, n);
  for (int k = 1; k < n; ++k) J(k, k - 1) = J(k - 1, k) = std::sqrt(static_cast<double>(k));
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(J);
  GaussHermite rule{es.eigenvalues(), es.eigenvectors().row(0).transpose().array().square()};
  rule.w /= rule.w.sum();
  return rules.emplace(n, std::move(rule)).first->second;
}

// The prior's atoms as images in groups of 2^k (RelevantImages), each orbit under the sign flips
// once, in the order of its first atom: its distinct atoms counted by their |θ_f| pattern.
RelevantImages relevant_images(const Prior& prior) {
  RelevantImages out;
  const std::vector<int> dirs = prior.sign_symmetric_directions();
  out.group = 1 << dirs.size();
  const Eigen::MatrixXd& atoms = prior.atoms();
  auto base_of = [&](Eigen::Index a) {
    std::vector<double> base(static_cast<std::size_t>(atoms.cols()));
    for (Eigen::Index f = 0; f < atoms.cols(); ++f) base[f] = atoms(a, f);
    for (int f : dirs) base[f] = std::abs(base[f]);
    return base;
  };
  std::map<std::vector<double>, int> members;  // distinct atoms per orbit
  for (Eigen::Index a = 0; a < atoms.rows(); ++a) ++members[base_of(a)];
  for (Eigen::Index a = 0; a < atoms.rows(); ++a) {
    const auto it = members.find(base_of(a));
    if (it->second == 0) continue;  // its orbit is out already
    for (int sigma = 0; sigma < out.group; ++sigma) {
      Eigen::VectorXd theta = Eigen::Map<const Eigen::VectorXd>(it->first.data(), atoms.cols());
      for (std::size_t j = 0; j < dirs.size(); ++j)
        if ((sigma >> j) & 1) theta[dirs[j]] = -theta[dirs[j]];
      out.theta.push_back(theta);
      out.weight.push_back(prior.weights()[a] * it->second / out.group);
    }
    it->second = 0;
  }
  return out;
}

// The exponents k0 … k1 of u_grid's nodes, as doubles: their count is the grid's size, computed
// before anything is allocated (LaplaceQuadrature::cost), whatever the state.
// A variance below 0 (a stage of a step too large leaving the Gram matrices) counts as 0, as
// the scores' roots take it (symmetric_roots).
std::pair<double, double> u_exponents(double variance, double shift, int L, double step) {
  variance = std::max(variance, 0.0);
  const double sd = std::sqrt(variance);
  const double lo = -(std::log(static_cast<double>(L)) + 0.5 * variance + shift) - 16.0;
  const double hi = sd * std::sqrt(74.0 / std::max(1, L - 1)) + shift + 2.0;
  return {std::floor(lo / step), std::ceil(hi / step)};
}

// The grid of u for one head: u = 0 first, then e^{k·step} for k from the scale where u Z_h is
// negligible (the part below is left out, u_weights) to where e^{−u Z_h} is.
Eigen::ArrayXd u_grid(double variance, double shift, int L, double step) {
  const auto [lo, hi] = u_exponents(variance, shift, L, step);
  const int k0 = static_cast<int>(lo), k1 = static_cast<int>(hi);
  Eigen::ArrayXd u(k1 - k0 + 2);
  u[0] = 0.0;
  for (int k = k0; k <= k1; ++k) u[k - k0 + 1] = std::exp(k * step);
  return u;
}

// Weights of ∫_0^∞ u^{a−1}/Γ(a) f(u) du on a u grid: trapezoid rule in log u; for a = 0, f(0).
// The part below the first node is left out: a term's integrand there is its expectation over
// Z_h ≳ 1/u_1, 16 e-folds above the typical normaliser, and it is bounded (every term is a
// product of ratios like Σ_ℓ E_hℓ²/Z_h² ≤ 1, times polynomials in s). Taking it as f(0) u_1^a/a!
// instead would be wrong: f(0) holds moments E[E^a] = e^{a²Q_hh/2} that grow faster than u_1^a falls.
Eigen::ArrayXd u_weights(const Eigen::ArrayXd& u, int a, double step) {
  Eigen::ArrayXd w = Eigen::ArrayXd::Zero(u.size());
  if (a == 0 || u.size() == 1) {
    w[0] = 1.0;
    return w;
  }
  // u^a is in the ψ already (one_position: Σ_blocks k_h = a_h), so du u^{a−1} = u^a d(log u) leaves step.
  const double gamma = std::tgamma(a);
  for (Eigen::Index i = 1; i < u.size(); ++i) w[i] = step / gamma;
  w[1] *= 0.5;
  w[u.size() - 1] *= 0.5;
  return w;
}

double falling(int n, int k) {
  double r = 1;
  for (int i = 0; i < k; ++i) r *= n - i;
  return r;
}

// A kind's rule weights times m's polynomial part (its powers of s and λ) at its nodes; its
// powers of E_h are in the decay matrices (decay()).
Eigen::VectorXd weighted_polynomial(const PositionKind& kind, const Monomial& m) {
  Eigen::ArrayXd g = kind.weight;
  for (int h = 0; h < static_cast<int>(kind.s.rows()); ++h)
    for (int p = 0; p < m.score[h]; ++p) g *= kind.s.row(h).transpose().array();
  for (int f = 0; f < static_cast<int>(kind.lambda.rows()); ++f)
    for (int p = 0; p < m.lambda[f]; ++p) g *= kind.lambda.row(f).transpose().array();
  return g.matrix();
}

}  // namespace

bool LaplaceQuadrature::covers(const ModelSpec& model) {
  return (model.activation == Activation::Softmax || model.activation == Activation::Softmax1) && model.H <= kMaxHeads &&
         model.F() <= kMaxDirections;
}

LaplaceQuadrature::LaplaceQuadrature(const ModelSpec& model, int nodes, double step)
    : model_(model), nodes_(nodes), step_(step) {
  if (!covers(model)) throw std::logic_error("LaplaceQuadrature: a model it does not cover (check_laplace_options)");
  if (model.prior.kind() != PriorKind::Gauss) images_ = relevant_images(model.prior);
  monomial_id(Monomial{});  // id 0: the constant, whose ψ is E e^{−u·E}
  const RateIntegrands r = rate_integrands(model.H, model.F());
  add_integrand(r.squared_residual);
  for (const Expression& e : r.readout_drift) add_integrand(e);
  for (const Expression& e : r.key_drift) add_integrand(e);
  for (std::size_t p = 0; p < r.overlap_drift.size(); ++p) {
    add_integrand(r.overlap_drift[p]);
    add_integrand(r.jacobian_gram[p]);
    add_integrand(r.residual_gram[p]);
  }
}

int LaplaceQuadrature::monomial_id(const Monomial& m) {
  const auto it = std::find(monomials_.begin(), monomials_.end(), m);
  if (it != monomials_.end()) return static_cast<int>(it - monomials_.begin());
  monomials_.push_back(m);
  return static_cast<int>(monomials_.size() - 1);
}

namespace {

// Every partition of the items 0 … n−1 into blocks (n ≤ 4 here: at most 15).
void partitions(int n, int next, std::vector<std::vector<int>>& current, std::vector<std::vector<std::vector<int>>>& out) {
  if (next == n) {
    out.push_back(current);
    return;
  }
  for (std::size_t b = 0; b < current.size(); ++b) {
    current[b].push_back(next);
    partitions(n, next + 1, current, out);
    current[b].pop_back();
  }
  current.push_back({next});
  partitions(n, next + 1, current, out);
  current.pop_back();
}

}  // namespace

int LaplaceQuadrature::shape_id(const Term& t) {
  Term key = t;
  key.readout = {};
  const auto it = std::find(shape_terms_.begin(), shape_terms_.end(), key);
  if (it != shape_terms_.end()) return static_cast<int>(it - shape_terms_.begin());
  shape_terms_.push_back(key);
  Shape shape;
  shape.inverse_normaliser = t.inverse_normaliser;
  std::vector<std::vector<int>> current;
  std::vector<std::vector<std::vector<int>>> all;
  partitions(static_cast<int>(t.sums.size()), 0, current, all);
  for (const auto& blocks : all) {
    std::vector<int> ids;
    for (const auto& block : blocks) {
      Monomial m;
      for (int j : block) m = m * t.sums[j];
      ids.push_back(monomial_id(m));
    }
    shape.partitions.push_back(ids);
  }
  // The slices of ψ this shape reads: its integral over u_h is the value at u_h = 0 when a_h = 0.
  const int need = t.inverse_normaliser[0] == 0 ? kFirstZero : t.inverse_normaliser[1] == 0 ? kSecondZero : kWhole;
  need_.resize(monomials_.size(), 0);
  need_[0] |= need;  // ψ[1] enters every partition
  for (const std::vector<int>& ids : shape.partitions)
    for (int id : ids) need_[id] |= need;
  for (int h = 0; h < kMaxHeads; ++h) {  // u^{a_h} is carried by the blocks' E_h (decay())
    int power = 0;
    for (const Monomial& m : t.sums) power += m.exp_score[h];
    if (power != t.inverse_normaliser[h]) throw std::logic_error("laplace: a term whose Z_h^{-1} lack their E_h");
    for (const Monomial& m : monomials_) max_power_[h] = std::max<int>(max_power_[h], m.exp_score[h]);
  }
  shapes_.push_back(shape);
  return static_cast<int>(shapes_.size() - 1);
}

void LaplaceQuadrature::add_integrand(const Expression& e) {
  std::vector<Use> uses;
  for (const auto& [term, coefficient] : e)
    if (coefficient != 0.0) uses.push_back(Use{shape_id(term), coefficient, term.readout});
  integrands_.push_back(uses);
}

namespace {

// Whether the product rule keeps node (i, j): its weight reaches 10^-16 (product_rule).
bool keeps(const Eigen::VectorXd& w, int i, int j) { return w[i] * w[j] >= 1e-16; }

// Product Gauss–Hermite nodes ξ ∈ R^H (H × nodes) with their weights; for H = 2 the nodes whose
// weight is below 10^-16 are left out (a quarter of them at 24 per dimension): every term is a
// bounded ratio times a polynomial in s, so they could change it by about their weight.
void product_rule(int H, int per_dimension, Eigen::MatrixXd& xi, Eigen::ArrayXd& weight) {
  const GaussHermite& rule = gauss_hermite(per_dimension);
  const Eigen::VectorXd &x = rule.x, &w = rule.w;
  std::vector<int> kept;
  const int n = H == 1 ? per_dimension : per_dimension * per_dimension;
  for (int i = 0; i < n; ++i)
    if (H == 1 || keeps(w, i % per_dimension, i / per_dimension)) kept.push_back(i);
  xi.resize(H, static_cast<Eigen::Index>(kept.size()));
  weight.resize(static_cast<Eigen::Index>(kept.size()));
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const int i = kept[k];
    xi(0, k) = x[i % per_dimension];
    weight[k] = w[i % per_dimension];
    if (H == 2) xi(1, k) = x[i / per_dimension], weight[k] *= w[i / per_dimension];
  }
}

// The nodes product_rule keeps, counted without building them: for up to kCountedNodes per
// dimension from the rule's weights (its eigenproblem is cached and small), beyond as all of
// them (an upper bound: a state that wide is refused in any case, LaplaceQuadrature::cost).
double kept_positions(int H, double per_dimension) {
  constexpr double kCountedNodes = 512;
  if (H == 1) return per_dimension;
  if (!(per_dimension <= kCountedNodes)) return per_dimension * per_dimension;
  const int n = static_cast<int>(per_dimension);
  const Eigen::VectorXd& w = gauss_hermite(n).w;
  double kept = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) kept += keeps(w, i, j) ? 1 : 0;
  return kept;
}

// The nodes per dimension for scores of standard deviation up to sd: `base` up to sd = 2, then
// in proportion (even counts). The one-position integrands e^{k s − u e^s} change over a unit of
// s whatever u, so a fixed rule in ξ = s/sd resolves them only up to some sd: with 24 nodes the
// error was 10^-8 at Q_hh = 2.5 and 8.8, 5·10^-6 at 17 and 10^-3 at 65; scaled, 10^-7 throughout
// (docs/theory.md §2). The count steps with the state, by less than the rule's error. A double,
// so that LaplaceQuadrature::cost can read it at states too wide for an int.
double nodes_wanted(int base, double sd) {
  const double n = std::ceil(base * std::max(1.0, sd / 2.0));
  return n + std::fmod(n, 2.0);
}

// What sets the size of the rules at a state: the widest score variance (the nodes per
// dimension), and per head the variance and largest mean of the scores (the u grid).
struct RuleScales {
  double widest = 0;
  Eigen::VectorXd variance, shift;
};

RuleScales rule_scales(const ModelSpec& model, const RelevantImages& images, const OrderParameters& op) {
  RuleScales r;
  r.widest = op.Q.diagonal().maxCoeff();
  r.variance = op.Q.diagonal();
  r.shift = Eigen::VectorXd::Zero(model.H);
  if (model.prior.kind() == PriorKind::Gauss) {
    const Eigen::MatrixXd cov = op.Q + op.M * model.prior.nu().asDiagonal() * op.M.transpose();
    r.widest = std::max(r.widest, cov.diagonal().maxCoeff());
    r.variance = r.variance.cwiseMax(cov.diagonal());
    return r;
  }
  for (const Eigen::VectorXd& theta : images.theta) r.shift = r.shift.cwiseMax((op.M * theta).cwiseAbs());
  return r;
}

double per_dimension_at(const RuleScales& r, int base_nodes) {
  return nodes_wanted(base_nodes, std::sqrt(std::max(r.widest, 0.0)));
}

Positions positions_at(const ModelSpec& model, const RelevantImages& images, const OrderParameters& op,
                       int base_nodes) {
  const int H = model.H, F = model.F();
  Positions p;
  Eigen::MatrixXd root, inverse_root, xi;
  theory_rates::symmetric_roots(op.Q, root, inverse_root);
  const RuleScales scales = rule_scales(model, images, op);
  product_rule(H, static_cast<int>(per_dimension_at(scales, base_nodes)), xi, p.background.weight);
  const Eigen::MatrixXd B = op.M.transpose() * inverse_root;  // E[λ | s] = θ 1[ℓ = ℓ*] + B ξ (docs/model.md §6)
  p.background.s = root * xi;
  p.background.lambda = B * xi;
  p.variance = scales.variance;
  p.shift = scales.shift;
  if (model.prior.kind() == PriorKind::Gauss) {
    // λ = ζ + θ ~ N(0, Σ), Σ = I + diag ν: s ~ N(0, Q + M diag(ν) Mᵀ), E[λ | s] = Σ Mᵀ Cov(s)^{+1/2} ξ.
    const Eigen::VectorXd nu = model.prior.nu();
    const Eigen::MatrixXd cov = op.Q + op.M * nu.asDiagonal() * op.M.transpose();
    Eigen::MatrixXd r, ri;
    theory_rates::symmetric_roots(cov, r, ri);
    const Eigen::MatrixXd K = (Eigen::VectorXd::Ones(F) + nu).asDiagonal() * op.M.transpose() * ri;
    p.relevant.push_back(PositionKind{r * xi, K * xi, p.background.weight});
    p.relevant_weight.push_back(1.0);
    return p;
  }
  p.group = images.group;
  for (std::size_t i = 0; i < images.theta.size(); ++i) {
    const Eigen::VectorXd mean = op.M * images.theta[i];
    p.relevant.push_back(
        PositionKind{p.background.s.colwise() + mean, p.background.lambda.colwise() + images.theta[i], p.background.weight});
    p.relevant_weight.push_back(images.weight[i]);
  }
  return p;
}

// W[h][k] = (u_h E_h)^k e^{−u_h E_h} at every node of a kind (rows: the u grid), k = 0 … max_power[h];
// a row of ones for a missing head. With u^k inside, ψ stays within (k/e)^k whatever the
// spread of the scores (E_h^k alone overflows for wide ones), and a term's u^{a_h} is the
// product of its blocks' u^{k_h} (every Z_h^{−1} comes with one E_h).
using Decay = std::vector<std::vector<Eigen::MatrixXd>>;
Decay decay(const PositionKind& kind, const std::vector<Eigen::ArrayXd>& u, const std::array<int, kMaxHeads>& max_power) {
  Decay W(kMaxHeads);
  for (int h = 0; h < kMaxHeads; ++h) {
    if (h >= kind.s.rows()) {
      W[h].push_back(Eigen::MatrixXd::Ones(1, kind.s.cols()));
      continue;
    }
    const Eigen::ArrayXXd uE = (u[h].matrix() * kind.s.row(h).array().exp().matrix()).array();
    // Beyond uE = 700 every (uE)^k e^{−uE} is below 10^-280: set to 0 there, since Eigen's
    // vectorised exp clamps its argument (e^{−10^30} comes back as ≈ 10^-308, not 0) and the
    // powers of uE would then overflow.
    const auto small = uE < 700.0;
    const Eigen::ArrayXXd w0 = small.select((-uE).exp(), 0.0);
    W[h].push_back(w0.matrix());
    Eigen::ArrayXXd wk = w0;
    for (int k = 1; k <= max_power[h]; ++k) {
      wk = small.select(wk * uE, 0.0);
      W[h].push_back(wk.matrix());
    }
  }
  return W;
}

// A kind's ψ[m] on the u grid, whole or only the slices u_1 = 0 (row 0) and u_2 = 0 (column 0)
// that the terms using m read (need: LaplaceQuadrature's bits; the rest stays 0 and is never read).
Grid one_position(const PositionKind& kind, const Monomial& m, const Decay& W, int need) {
  const Eigen::VectorXd g = weighted_polynomial(kind, m);
  const Eigen::MatrixXd& W1 = W[0][m.exp_score[0]];
  const Eigen::MatrixXd& W2 = W[1][m.exp_score[1]];
  if (need & LaplaceQuadrature::kWhole) return ((W1 * g.asDiagonal()) * W2.transpose()).array();
  Grid psi = Grid::Zero(W1.rows(), W2.rows());
  // Row 0 is u_1 = 0, read only by terms without Z_1 (so m has no E_1: W1's row 0 is ones).
  if (need & LaplaceQuadrature::kFirstZero) psi.row(0) = (W2 * g).transpose().array();
  if (need & LaplaceQuadrature::kSecondZero) psi.col(0) = (W1 * g).array();
  return psi;
}

}  // namespace

void LaplaceQuadrature::one_position_integrals(const Positions& p, const std::vector<Eigen::ArrayXd>& u,
                                               std::vector<Grid>& psi_b, std::vector<Grid>& psi_r) const {
  std::vector<Decay> Wr(p.relevant.size() + 1);  // the relevant kinds', then the background's
  const int kinds = static_cast<int>(Wr.size());
#pragma omp parallel for schedule(static)
  for (int i = 0; i < kinds; ++i) Wr[i] = decay(i + 1 < kinds ? p.relevant[i] : p.background, u, max_power_);
  const Decay& Wb = Wr.back();
  const int nm = static_cast<int>(monomials_.size());
  psi_b.assign(nm, Grid());
  psi_r.assign(nm, Grid());
#pragma omp parallel for schedule(dynamic)
  for (int j = 0; j < nm; ++j) {
    const Monomial& m = monomials_[j];
    psi_b[j] = m.relevant_only ? Grid::Zero(u[0].size(), u[1].size()) : one_position(p.background, m, Wb, need_[j]);
    // The relevant kinds, each group of images summed as a binary tree, the groups in order.
    std::vector<Grid> part(p.relevant.size());
    for (std::size_t i = 0; i < part.size(); ++i)
      part[i] = p.relevant_weight[i] * one_position(p.relevant[i], m, Wr[i], need_[j]);
    for (int step = 1; step < p.group; step *= 2)
      for (std::size_t i = 0; i + step < part.size(); i += 2 * step) part[i] += part[i + step];
    psi_r[j] = part[0];
    for (std::size_t i = p.group; i < part.size(); i += p.group) psi_r[j] += part[i];
  }
}

namespace {

// ψ_bg[1]^k for k = 0 … L, by repeated products (the same bits at every call; Eigen's pow on
// arrays took three quarters of the time).
std::vector<LaplaceQuadrature::Grid> powers(const LaplaceQuadrature::Grid& phi, int L) {
  std::vector<LaplaceQuadrature::Grid> out(static_cast<std::size_t>(L) + 1);
  out[0] = LaplaceQuadrature::Grid::Ones(phi.rows(), phi.cols());
  for (int k = 1; k <= L; ++k) out[k] = out[k - 1] * phi;
  return out;
}

}  // namespace

double LaplaceQuadrature::shape_value(const Shape& shape, const std::vector<Grid>& psi_b, const std::vector<Grid>& psi_r,
                                      const std::vector<Grid>& phi_b_power, const std::vector<Eigen::ArrayXd>& u,
                                      const Grid& tail) const {
  const int L = model_.L;
  const Grid& phi_b = psi_b[0];
  const Grid& phi_r = psi_r[0];
  Grid total = Grid::Zero(phi_b.rows(), phi_b.cols());
  // The blocks of a partition on distinct positions: all on background ones, or block j0 on
  // the relevant one; the other background positions contribute ψ_bg[1] each.
  for (const std::vector<int>& blocks : shape.partitions) {
    const int p = static_cast<int>(blocks.size());
    Grid background_all = Grid::Ones(phi_b.rows(), phi_b.cols());
    for (int id : blocks) background_all *= psi_b[id];
    if (L - 1 - p >= 0) total += falling(L - 1, p) * background_all * phi_b_power[L - 1 - p] * phi_r;
    if (L - p < 0) continue;
    const Grid& rest = phi_b_power[L - p];
    for (int j0 = 0; j0 < p; ++j0) {
      Grid others = Grid::Ones(phi_b.rows(), phi_b.cols());
      for (int j = 0; j < p; ++j)
        if (j != j0) others *= psi_b[blocks[j]];
      total += falling(L - 1, p - 1) * psi_r[blocks[j0]] * others * rest;
    }
  }
  total *= tail;

  const Eigen::ArrayXd w0 = u_weights(u[0], shape.inverse_normaliser[0], step_);
  const Eigen::ArrayXd w1 = u_weights(u[1], shape.inverse_normaliser[1], step_);
  return w0.matrix().dot(total.matrix() * w1.matrix());
}

std::vector<double> LaplaceQuadrature::expectations(const OrderParameters& op) const {
  const int H = model_.H;
  const Positions p = positions_at(model_, images_, op, nodes_);
  std::vector<Eigen::ArrayXd> u(kMaxHeads, Eigen::ArrayXd::Zero(1));  // u = 0 alone for a missing head
  for (int h = 0; h < H; ++h) u[h] = u_grid(p.variance[h], p.shift[h], model_.L, step_);
  std::vector<Grid> psi_b, psi_r;
  one_position_integrals(p, u, psi_b, psi_r);
  Grid tail = Grid::Ones(u[0].size(), u[1].size());
  if (model_.activation == Activation::Softmax1)  // Z_h = 1 + Σ_ℓ E_hℓ: a factor e^{−u_h}
    for (Eigen::Index i = 0; i < tail.rows(); ++i)
      for (Eigen::Index k = 0; k < tail.cols(); ++k) tail(i, k) = std::exp(-u[0][i] - u[1][k]);
  const int ns = static_cast<int>(shapes_.size());
  std::vector<double> value(ns);
  const std::vector<Grid> phi_b_power = powers(psi_b[0], model_.L);
#pragma omp parallel for schedule(dynamic)
  for (int s = 0; s < ns; ++s) value[s] = shape_value(shapes_[s], psi_b, psi_r, phi_b_power, u, tail);
  std::vector<double> out;
  for (const std::vector<Use>& uses : integrands_) {
    double sum = 0;
    for (const Use& use : uses) {
      double c = use.coefficient;
      for (int h = 0; h < H; ++h)
        for (int k = 0; k < use.readout[h]; ++k) c *= op.c[h];
      sum += c * value[use.shape];
    }
    out.push_back(sum);
  }
  return out;
}

LaplaceQuadrature::Cost LaplaceQuadrature::cost(const OrderParameters& op) const {
  const RuleScales scales = rule_scales(model_, images_, op);
  const double positions = kept_positions(model_.H, per_dimension_at(scales, nodes_));
  const double kinds = static_cast<double>(std::max<std::size_t>(images_.theta.size(), 1)) + 1;
  std::array<double, kMaxHeads> n_u{1, 1};
  double decay_entries = 0;
  for (int h = 0; h < model_.H; ++h) {
    const auto [lo, hi] = u_exponents(scales.variance[h], scales.shift[h], model_.L, step_);
    n_u[h] = hi - lo + 2;
    decay_entries += kinds * (max_power_[h] + 1) * n_u[h] * positions;
  }
  const double grid = n_u[0] * n_u[1];
  double one_position = 0;  // per monomial and kind: a product through the positions
  for (int need : need_) one_position += kinds * (need & kWhole ? grid : n_u[0] + n_u[1]) * positions;
  double shape_terms = 0;  // shape_value: per partition, products and sums of ≤ 4 blocks' grids, ≈ 8 passes
  for (const Shape& shape : shapes_) shape_terms += static_cast<double>(shape.partitions.size()) * 8.0 * grid;
  const double monomials = static_cast<double>(monomials_.size());
  Cost c;
  const double threads = std::max(1, omp_get_max_threads());
  c.bytes = 8.0 * (decay_entries + (2.0 * monomials + threads * kinds + model_.L + 1.0) * grid + threads * n_u[0] * positions);
  c.terms = decay_entries + one_position + shape_terms;
  return c;
}

}  // namespace headspec::laplace

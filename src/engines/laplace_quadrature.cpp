#include "laplace_quadrature.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>

#include <stdexcept>

namespace headspec::laplace {

namespace {

using Grid = Eigen::ArrayXXd;  // a function of (u_1, u_2): rows u_1, columns u_2 (one column for H = 1)

// Probabilists' Gauss–Hermite rule by Golub–Welsch: E f(ξ), ξ ~ N(0, 1), ≈ Σ_k w_k f(x_k), Σ w = 1.
void gauss_hermite(int n, Eigen::VectorXd& x, Eigen::VectorXd& w) {
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, n);
  for (int k = 1; k < n; ++k) J(k, k - 1) = J(k - 1, k) = std::sqrt(static_cast<double>(k));
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(J);
  x = es.eigenvalues();
  w = es.eigenvectors().row(0).transpose().array().square();
  w /= w.sum();
}

// The symmetric square root of a positive semi-definite Q and of its pseudo-inverse.
void square_roots(const Eigen::MatrixXd& Q, Eigen::MatrixXd& root, Eigen::MatrixXd& inverse_root) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(Q);
  const Eigen::VectorXd ev = es.eigenvalues().cwiseMax(0.0);
  const double floor = 1e-14 * std::max(1.0, ev.maxCoeff());
  Eigen::VectorXd r = ev.cwiseSqrt(), ri(ev.size());
  for (Eigen::Index i = 0; i < ev.size(); ++i) ri[i] = ev[i] > floor ? 1.0 / r[i] : 0.0;
  root = es.eigenvectors() * r.asDiagonal() * es.eigenvectors().transpose();
  inverse_root = es.eigenvectors() * ri.asDiagonal() * es.eigenvectors().transpose();
}

// One kind of position at the Gauss–Hermite nodes: scores s (H × nodes), E[λ | s] (F × nodes),
// and the rule's weights.
struct PositionKind {
  Eigen::MatrixXd s, lambda;
  Eigen::ArrayXd weight;
};

// The relevant position's kinds: one per image θ of the prior's atoms (discrete priors), in
// groups of 2^k, k the sign-symmetric directions, image σ of a group with direction
// dirs[j] negated where bit j of σ is set — so that summing a group as a binary tree gives
// exactly 0 for a quantity odd in θ_f when nothing else depends on θ_f (M_{:,f} = 0); or one
// Gaussian kind for the gauss prior (λ_ℓ* = ζ + θ ~ N(0, I + diag ν)).
struct RelevantImages {
  std::vector<double> weight;
  std::vector<Eigen::VectorXd> theta;
  int group = 1;
};

RelevantImages relevant_images(const Prior& prior) {
  RelevantImages out;
  const std::vector<int> dirs = prior.sign_symmetric_directions();
  out.group = 1 << dirs.size();
  const Eigen::MatrixXd& atoms = prior.atoms();
  const Eigen::VectorXd& pi = prior.weights();
  std::vector<Eigen::VectorXd> seen;
  for (Eigen::Index a = 0; a < atoms.rows(); ++a) {
    Eigen::VectorXd base = atoms.row(a).transpose();
    for (int f : dirs) base[f] = std::abs(base[f]);
    if (std::find(seen.begin(), seen.end(), base) != seen.end()) continue;
    seen.push_back(base);
    int members = 0;  // the distinct atoms of this orbit
    for (Eigen::Index b = 0; b < atoms.rows(); ++b) {
      Eigen::VectorXd other = atoms.row(b).transpose();
      for (int f : dirs) other[f] = std::abs(other[f]);
      members += other == base;
    }
    for (int sigma = 0; sigma < out.group; ++sigma) {
      Eigen::VectorXd theta = base;
      for (std::size_t j = 0; j < dirs.size(); ++j)
        if ((sigma >> j) & 1) theta[dirs[j]] = -theta[dirs[j]];
      out.theta.push_back(theta);
      out.weight.push_back(pi[a] * members / out.group);
    }
  }
  return out;
}

// The grid of u for one head: u = 0 first, then e^{k·step} for k from the scale where u Z_h is
// negligible (the part below is taken as its u → 0 limit) to where e^{−u Z_h} is.
Eigen::ArrayXd u_grid(double variance, double shift, int L, double step) {
  const double sd = std::sqrt(variance);
  const double lo = -(std::log(static_cast<double>(L)) + 0.5 * variance + shift) - 16.0;
  const double hi = sd * std::sqrt(74.0 / std::max(1, L - 1)) + shift + 2.0;
  const int k0 = static_cast<int>(std::floor(lo / step)), k1 = static_cast<int>(std::ceil(hi / step));
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
  const double gamma = std::tgamma(a);
  for (Eigen::Index i = 1; i < u.size(); ++i) w[i] = step * std::pow(u[i], a) / gamma;
  w[1] *= 0.5;
  w[u.size() - 1] *= 0.5;
  return w;
}

double falling(int n, int k) {
  double r = 1;
  for (int i = 0; i < k; ++i) r *= n - i;
  return r;
}

// ψ[m](u) = Σ_nodes weight · m · e^{−Σ_h u_h E_h} for one kind: W_1 diag(weight · m) W_2ᵀ.
Grid one_position(const PositionKind& kind, const Monomial& m, const std::vector<Eigen::MatrixXd>& W) {
  const Eigen::Index n = kind.weight.size();
  Eigen::ArrayXd g = kind.weight;
  Eigen::ArrayXd exponent = Eigen::ArrayXd::Zero(n);
  for (int h = 0; h < static_cast<int>(kind.s.rows()); ++h) {
    if (m.exp_score[h]) exponent += m.exp_score[h] * kind.s.row(h).transpose().array();
    for (int p = 0; p < m.score[h]; ++p) g *= kind.s.row(h).transpose().array();
  }
  for (int f = 0; f < static_cast<int>(kind.lambda.rows()); ++f)
    for (int p = 0; p < m.lambda[f]; ++p) g *= kind.lambda.row(f).transpose().array();
  g *= exponent.exp();
  const Eigen::MatrixXd left = W[0] * g.matrix().asDiagonal();
  return (left * W[1].transpose()).array();
}

}  // namespace

bool LaplaceQuadrature::covers(const ModelSpec& model) {
  return (model.activation == Activation::Softmax || model.activation == Activation::Softmax1) && model.H <= kMaxHeads &&
         model.F() <= kMaxDirections;
}

LaplaceQuadrature::LaplaceQuadrature(const ModelSpec& model, int nodes, double step)
    : model_(model), nodes_(nodes), step_(step) {
  if (!covers(model)) throw std::logic_error("LaplaceQuadrature: a model it does not cover (check_laplace_options)");
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

int LaplaceQuadrature::nodes() const { return model_.H == 1 ? nodes_ : nodes_ * nodes_; }

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
  shapes_.push_back(shape);
  return static_cast<int>(shapes_.size() - 1);
}

void LaplaceQuadrature::add_integrand(const Expression& e) {
  std::vector<Use> uses;
  for (const auto& [term, coefficient] : e)
    if (coefficient != 0.0) uses.push_back(Use{shape_id(term), coefficient, term.readout});
  integrands_.push_back(uses);
}

std::vector<double> LaplaceQuadrature::expectations(const OrderParameters& op) const {
  const int H = model_.H, L = model_.L, F = model_.F();
  Eigen::MatrixXd root, inverse_root;
  square_roots(op.Q, root, inverse_root);
  const Eigen::MatrixXd B = op.M.transpose() * inverse_root;  // E[λ | s] = θ 1[ℓ = ℓ*] + B ξ (docs/model.md §6)

  // Nodes ξ ∈ R^H of the product Gauss–Hermite rule.
  Eigen::VectorXd x, w;
  gauss_hermite(nodes_, x, w);
  const int n = nodes();
  Eigen::MatrixXd xi(H, n);
  PositionKind background;
  background.weight.resize(n);
  for (int i = 0; i < n; ++i) {
    xi(0, i) = x[i % nodes_];
    background.weight[i] = w[i % nodes_];
    if (H == 2) xi(1, i) = x[i / nodes_], background.weight[i] *= w[i / nodes_];
  }
  background.s = root * xi;
  background.lambda = B * xi;

  // The relevant position's kinds.
  std::vector<PositionKind> relevant;
  std::vector<double> relevant_weight;
  int group = 1;
  Eigen::VectorXd variance = op.Q.diagonal(), shift = Eigen::VectorXd::Zero(H);
  if (model_.prior.kind() == PriorKind::Gauss) {
    // λ = ζ + θ ~ N(0, Σ), Σ = I + diag ν: s ~ N(0, Q + M diag(ν) Mᵀ), E[λ | s] = Σ Mᵀ Cov(s)^{+1/2} ξ.
    const Eigen::VectorXd nu = model_.prior.nu();
    const Eigen::MatrixXd cov = op.Q + op.M * nu.asDiagonal() * op.M.transpose();
    Eigen::MatrixXd r, ri;
    square_roots(cov, r, ri);
    PositionKind k{r * xi, (Eigen::VectorXd::Ones(F) + nu).asDiagonal() * op.M.transpose() * ri * xi, background.weight};
    relevant.push_back(k);
    relevant_weight.push_back(1.0);
    variance = variance.cwiseMax(cov.diagonal());
  } else {
    const RelevantImages images = relevant_images(model_.prior);
    group = images.group;
    for (std::size_t i = 0; i < images.theta.size(); ++i) {
      const Eigen::VectorXd mean = op.M * images.theta[i];
      PositionKind k{background.s.colwise() + mean, background.lambda.colwise() + images.theta[i], background.weight};
      relevant.push_back(k);
      relevant_weight.push_back(images.weight[i]);
      shift = shift.cwiseMax(mean.cwiseAbs());
    }
  }

  // Grids of u per head (one point, u = 0, for a missing second head) and e^{−u_h E_h} per kind.
  std::vector<Eigen::ArrayXd> u(kMaxHeads, Eigen::ArrayXd::Zero(1));
  for (int h = 0; h < H; ++h) u[h] = u_grid(variance[h], shift[h], L, step_);
  auto weights_of = [&](const PositionKind& k) {
    std::vector<Eigen::MatrixXd> W(kMaxHeads);
    for (int h = 0; h < kMaxHeads; ++h) {
      if (h < H)
        W[h] = (-(u[h].matrix() * k.s.row(h).array().exp().matrix())).array().exp().matrix();
      else
        W[h] = Eigen::MatrixXd::Ones(1, n);
    }
    return W;
  };
  const std::vector<Eigen::MatrixXd> Wb = weights_of(background);
  std::vector<std::vector<Eigen::MatrixXd>> Wr;
  for (const PositionKind& k : relevant) Wr.push_back(weights_of(k));

  // ψ of every monomial at the background and (summed over the relevant kinds, each group of
  // images as a binary tree) at the relevant position.
  const int nm = static_cast<int>(monomials_.size());
  std::vector<Grid> psi_b(nm), psi_r(nm);
#pragma omp parallel for schedule(dynamic)
  for (int j = 0; j < nm; ++j) {
    const Monomial& m = monomials_[j];
    psi_b[j] = m.relevant_only ? Grid::Zero(u[0].size(), u[1].size()) : one_position(background, m, Wb);
    std::vector<Grid> part(relevant.size());
    for (std::size_t i = 0; i < relevant.size(); ++i) part[i] = relevant_weight[i] * one_position(relevant[i], m, Wr[i]);
    for (int step = 1; step < group; step *= 2)
      for (std::size_t i = 0; i + step < part.size(); i += 2 * step)
        part[i] += part[i + step];
    psi_r[j] = part[0];
    for (std::size_t i = group; i < part.size(); i += group) psi_r[j] += part[i];
  }

  // Every shape's expectation: Σ over its partitions of the ways of putting the blocks on
  // distinct positions (the relevant one at most once), then the integrals over u.
  const Grid& phi_b = psi_b[0];
  const Grid& phi_r = psi_r[0];
  Grid tail = Grid::Ones(u[0].size(), u[1].size());
  if (model_.activation == Activation::Softmax1)  // Z_h = 1 + Σ_ℓ E_hℓ: a factor e^{−u_h}
    for (Eigen::Index i = 0; i < tail.rows(); ++i)
      for (Eigen::Index k = 0; k < tail.cols(); ++k) tail(i, k) = std::exp(-u[0][i] - u[1][k]);
  const int ns = static_cast<int>(shapes_.size());
  std::vector<double> value(ns);
#pragma omp parallel for schedule(dynamic)
  for (int s = 0; s < ns; ++s) {
    Grid total = Grid::Zero(phi_b.rows(), phi_b.cols());
    for (const std::vector<int>& blocks : shapes_[s].partitions) {
      const int p = static_cast<int>(blocks.size());
      Grid background_all = Grid::Ones(phi_b.rows(), phi_b.cols());
      for (int id : blocks) background_all *= psi_b[id];
      if (L - 1 - p >= 0) total += falling(L - 1, p) * background_all * phi_b.pow(L - 1 - p) * phi_r;
      if (L - p < 0) continue;
      const Grid rest = phi_b.pow(L - p);
      for (int j0 = 0; j0 < p; ++j0) {
        Grid others = Grid::Ones(phi_b.rows(), phi_b.cols());
        for (int j = 0; j < p; ++j)
          if (j != j0) others *= psi_b[blocks[j]];
        total += falling(L - 1, p - 1) * psi_r[blocks[j0]] * others * rest;
      }
    }
    total *= tail;
    const Eigen::ArrayXd w0 = u_weights(u[0], shapes_[s].inverse_normaliser[0], step_);
    const Eigen::ArrayXd w1 = u_weights(u[1], shapes_[s].inverse_normaliser[1], step_);
    value[s] = w0.matrix().dot(total.matrix() * w1.matrix());
  }

  std::vector<double> out;
  out.reserve(integrands_.size());
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

}  // namespace headspec::laplace

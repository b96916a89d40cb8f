#include "headspec/prior.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "headspec/errors.hpp"
#include "headspec/input_file.hpp"
#include "headspec/sobol_points.hpp"

namespace headspec {
namespace {

void check_nu(const Eigen::VectorXd& nu) {
  if (nu.size() < 1) throw ParameterError("nu", "at least one signal strength is needed");
  for (Eigen::Index f = 0; f < nu.size(); ++f)
    if (!(nu[f] >= 0) || !std::isfinite(nu[f]))
      throw ParameterError("nu", fmt::format("signal strength {} must be finite and >= 0", nu[f]));
}

// log cosh x without overflow.
double log_cosh(double x) {
  const double a = std::abs(x);
  return a + std::log1p(std::exp(-2.0 * a)) - M_LN2;
}

}  // namespace

Prior Prior::flip(const Eigen::VectorXd& nu) {
  check_nu(nu);
  Prior p;
  p.kind_ = PriorKind::Flip;
  p.name_ = "flip";
  p.nu_ = nu;
  // Atoms: every sign pattern of the flipping directions (2^(F-1) of them); they
  // make the Bayes-softmax identity of docs/model.md §3 testable. Small F only.
  const int F = static_cast<int>(nu.size());
  if (F <= 16) {
    const int n = 1 << (F - 1);
    p.atoms_.resize(n, F);
    for (int a = 0; a < n; ++a) {
      p.atoms_(a, 0) = std::sqrt(nu[0]);
      for (int f = 1; f < F; ++f) p.atoms_(a, f) = ((a >> (f - 1)) & 1 ? -1.0 : 1.0) * std::sqrt(nu[f]);
    }
    p.weights_ = Eigen::VectorXd::Constant(n, 1.0 / n);
  }
  return p;
}

Prior Prior::gauss(const Eigen::VectorXd& nu) {
  check_nu(nu);
  Prior p;
  p.kind_ = PriorKind::Gauss;
  p.name_ = "gauss";
  p.nu_ = nu;
  return p;
}

Prior Prior::spike(const Eigen::VectorXd& nu) {
  check_nu(nu);
  if (!std::isfinite(nu.sum())) throw ParameterError("nu", "the sum of the signal strengths |θ|² overflows");
  Prior p = mixture(nu.array().sqrt().matrix().transpose(), Eigen::VectorXd::Ones(1));
  p.kind_ = PriorKind::Spike;
  p.name_ = "spike";
  p.nu_ = nu;  // exactly as given (the atoms hold √ν)
  return p;
}

Prior Prior::mixture(const Eigen::MatrixXd& atoms, const Eigen::VectorXd& weights) {
  if (atoms.rows() < 1 || atoms.cols() < 1 || weights.size() != atoms.rows())
    throw ParameterError("prior", "mixture: at least one atom with at least one component is needed");
  if (!atoms.allFinite() || !weights.allFinite() || (weights.array() <= 0).any())
    throw ParameterError("prior", "mixture: weights must be positive and atoms finite");
  // Finite entries can still overflow the weights' sum, θ_f² in ν_f = Σ_a π_a θ_af²
  // (docs/model.md §2) or |θ^a|² in log w(λ) (docs/model.md §8); each would turn into NaN later.
  if (!std::isfinite(weights.sum())) throw ParameterError("prior", "mixture: the sum of the weights overflows");
  Prior p;
  p.kind_ = PriorKind::Mixture;
  p.name_ = "mixture";
  p.atoms_ = atoms;
  p.weights_ = weights / weights.sum();
  p.nu_ = (p.atoms_.array().square().colwise() * p.weights_.array()).colwise().sum().transpose();
  p.log_weights_ = p.weights_.array().log();
  p.half_norm2_ = 0.5 * p.atoms_.rowwise().squaredNorm();
  if (!p.nu_.allFinite() || !p.half_norm2_.allFinite())
    throw ParameterError("prior", "mixture: an atom's |θ|² overflows");
  p.cumulative_.resize(p.weights_.size());
  double acc = 0;
  for (Eigen::Index a = 0; a < p.weights_.size(); ++a) p.cumulative_[a] = acc += p.weights_[a];
  p.cumulative_.back() = 1.0;
  return p;
}

Prior Prior::mixture_file(const std::string& path) {
  // A mixture of 10^6 atoms in a few dimensions is ~ 50 MB of text.
  std::istringstream in(read_input_file(path, "prior", std::size_t(1) << 26, "mixture"));
  Prior p = mixture_stream(in, path);
  p.name_ = "mixture:" + path;
  return p;
}

Prior Prior::mixture_stream(std::istream& in, const std::string& source) {
  std::vector<std::vector<double>> rows;
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream fields(line);
    std::vector<double> row;
    std::string token;
    while (fields >> token) {
      std::size_t used = 0;
      double v = 0;
      try {
        v = std::stod(token, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != token.size() || !std::isfinite(v))
        throw ParameterError("prior", fmt::format("mixture: {}:{}: '{}' is not a finite number", source, lineno, token));
      row.push_back(v);
    }
    if (row.size() < 2)
      throw ParameterError("prior", fmt::format("mixture: {}:{}: expected a weight then θ_1 … θ_F", source, lineno));
    if (!rows.empty() && row.size() != rows.front().size())
      throw ParameterError("prior", fmt::format("mixture: {}:{}: {} components, earlier lines have {}", source, lineno,
                                   row.size() - 1, rows.front().size() - 1));
    if (!(row[0] > 0))
      throw ParameterError("prior", fmt::format("mixture: {}:{}: weight {} must be positive", source, lineno, row[0]));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw ParameterError("prior", fmt::format("mixture: {}: no atoms", source));
  Eigen::MatrixXd atoms(rows.size(), rows.front().size() - 1);
  Eigen::VectorXd weights(rows.size());
  for (std::size_t a = 0; a < rows.size(); ++a) {
    weights[a] = rows[a][0];
    for (std::size_t f = 1; f < rows[a].size(); ++f) atoms(a, f - 1) = rows[a][f];
  }
  return mixture(atoms, weights);
}

Prior Prior::parse(const std::string& spec, const Eigen::VectorXd& nu) {
  if (spec == "flip") return flip(nu);
  if (spec == "gauss") return gauss(nu);
  if (spec == "spike") return spike(nu);
  if (spec.rfind("mixture:", 0) == 0 && spec.size() > 8) return mixture_file(spec.substr(8));
  throw ParameterError("prior", fmt::format("unknown prior '{}' (flip, gauss, spike, mixture:FILE)", spec));
}

Eigen::VectorXd Prior::mean() const {
  switch (kind_) {
    case PriorKind::Flip: {
      Eigen::VectorXd m = Eigen::VectorXd::Zero(F());
      m[0] = std::sqrt(nu_[0]);
      return m;
    }
    case PriorKind::Gauss:
      return Eigen::VectorXd::Zero(F());
    default:
      return atoms_.transpose() * weights_;
  }
}

namespace {

// Whether the atoms, with their weights, are the same set after θ_f → −θ_f (exact
// comparison: a mirror atom written in the file is the exact negative).
bool mirror_symmetric(const Eigen::MatrixXd& atoms, const Eigen::VectorXd& weights, int f) {
  for (Eigen::Index a = 0; a < atoms.rows(); ++a) {
    bool found = false;
    for (Eigen::Index b = 0; b < atoms.rows() && !found; ++b) {
      bool same = weights[b] == weights[a] && atoms(b, f) == -atoms(a, f);
      for (Eigen::Index g = 0; g < atoms.cols() && same; ++g) same = g == f || atoms(b, g) == atoms(a, g);
      found = same;
    }
    if (!found) return false;
  }
  return true;
}

}  // namespace

std::vector<int> Prior::sign_symmetric_directions() const {
  std::vector<int> out;
  for (int f = 0; f < F(); ++f) {
    const bool symmetric = kind_ == PriorKind::Gauss || (kind_ == PriorKind::Flip && f >= 1) ||
                           (kind_ == PriorKind::Mixture && mirror_symmetric(atoms_, weights_, f));
    if (symmetric) out.push_back(f);
  }
  return out;
}

std::size_t Prior::atom_at(double u) const {
  const std::size_t a = std::upper_bound(cumulative_.begin(), cumulative_.end(), u) - cumulative_.begin();
  return std::min(a, cumulative_.size() - 1);
}

int Prior::uniforms_per_draw() const {
  if (kind_ == PriorKind::Gauss) return F();
  return kind_ == PriorKind::Mixture && weights_.size() > 1 ? 1 : 0;
}

void Prior::from_uniforms(const double* u, double* theta) const {
  const int F = this->F();
  if (kind_ == PriorKind::Gauss) {
    for (int f = 0; f < F; ++f) theta[f] = std::sqrt(nu_[f]) * inverse_normal_cdf(u[f]);
    return;
  }
  if (kind_ == PriorKind::Flip) {
    for (int f = 0; f < F; ++f) theta[f] = std::sqrt(nu_[f]);
    return;
  }
  const std::size_t a = cumulative_.size() > 1 ? atom_at(u[0]) : 0;
  for (int f = 0; f < F; ++f) theta[f] = atoms_(static_cast<Eigen::Index>(a), f);
}

void Prior::sample(RandomStream& rng, double* theta) const {
  const int F = this->F();
  switch (kind_) {
    case PriorKind::Flip:
      theta[0] = std::sqrt(nu_[0]);
      for (int f = 1; f < F; ++f) theta[f] = (rng.coin() ? 1.0 : -1.0) * std::sqrt(nu_[f]);
      return;
    case PriorKind::Gauss:
      for (int f = 0; f < F; ++f) theta[f] = std::sqrt(nu_[f]) * rng.normal();
      return;
    case PriorKind::Spike:
    case PriorKind::Mixture: {
      const std::size_t a = cumulative_.size() > 1 ? atom_at(rng.uniform()) : 0;
      for (int f = 0; f < F; ++f) theta[f] = atoms_(a, f);
      return;
    }
  }
}

double Prior::log_likelihood(const double* lambda) const {
  const int F = this->F();
  double out = 0;
  switch (kind_) {
    case PriorKind::Flip:  // docs/model.md §8: exp(√ν_1 λ_1 − ν_1/2) Π_{f≥2} cosh(√ν_f λ_f) e^{−ν_f/2}
      out = std::sqrt(nu_[0]) * lambda[0] - 0.5 * nu_[0];
      for (int f = 1; f < F; ++f) out += log_cosh(std::sqrt(nu_[f]) * lambda[f]) - 0.5 * nu_[f];
      return out;
    case PriorKind::Gauss:  // Π_f (1+ν_f)^{-1/2} exp(ν_f λ_f² / (2(1+ν_f)))
      for (int f = 0; f < F; ++f)
        out += -0.5 * std::log1p(nu_[f]) + nu_[f] * lambda[f] * lambda[f] / (2.0 * (1.0 + nu_[f]));
      return out;
    default: {  // log Σ_a π_a exp(θ^a·λ − |θ^a|²/2), by log-sum-exp (two passes, no allocation)
      const Eigen::Index n = atoms_.rows();
      auto term = [&](Eigen::Index a) {
        double dot = 0;
        for (int f = 0; f < F; ++f) dot += atoms_(a, f) * lambda[f];
        return log_weights_[a] + dot - half_norm2_[a];
      };
      double best = -INFINITY;
      for (Eigen::Index a = 0; a < n; ++a) best = std::max(best, term(a));
      double sum = 0;
      for (Eigen::Index a = 0; a < n; ++a) sum += std::exp(term(a) - best);
      return best + std::log(sum);
    }
  }
}

}  // namespace headspec

// Σ(x) and the Brownian increments of the stochastic theory (docs/model.md §12).
#include "headspec/theory_diffusion.hpp"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "headspec/errors.hpp"

namespace headspec {

namespace {

TheoryOptions covariance_samples(int64_t samples, uint32_t seed) {
  TheoryOptions o;
  o.samples = samples;
  o.mode = MonteCarloMode::Fixed;
  o.method = SamplingMethod::Plain;
  o.channel = ValueChannel::Sampled;  // every random quantity of a sample drawn, none averaged out
  o.seed = seed;
  return o;
}

}  // namespace

TheoryDiffusion::TheoryDiffusion(const ModelSpec& model, int64_t samples, uint32_t seed, ValueChannel drift_channel,
                                 double D)
    : engine_(model, covariance_samples(samples, seed)), drift_channel_(drift_channel), D_(D) {
  if (!(std::isfinite(D) && D > 0)) throw ParameterError("init-D", fmt::format("the stochastic theory needs D > 0, got {}", D));
}

Eigen::MatrixXd TheoryDiffusion::covariance(const double* x, double t) const {
  const StateLayout& layout = engine_.layout();
  OrderParameters op = layout.unpack(x, engine_.fixed_readout());
  if (drift_channel_ == ValueChannel::Integrated) op.R.setZero();
  Eigen::MatrixXd cov;
  engine_.rate_covariance(op, cov, t);
  if (drift_channel_ == ValueChannel::Integrated)
    for (int h = 0; h < layout.H(); ++h) {
      const auto r = static_cast<Eigen::Index>(layout.r_index(h));
      cov.row(r).setZero();
      cov.col(r).setZero();
    }
  return cov;
}

void TheoryDiffusion::increment(const double* x, double t, double dt, const StreamId& noise, double* out) const {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(covariance(x, t));
  const Eigen::VectorXd root_values = eigen.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  const auto n = static_cast<Eigen::Index>(engine_.layout().size());
  Eigen::VectorXd xi(n);
  RandomStream rng(noise);
  rng.normals(xi.data(), static_cast<int>(n));
  // Σ^{1/2} ξ = V diag(√λ) Vᵀ ξ: the symmetric root, so a permutation of the heads permutes
  // the increment's law with the state's.
  const Eigen::MatrixXd& V = eigen.eigenvectors();
  Eigen::Map<Eigen::VectorXd>(out, n) = std::sqrt(dt / D_) * (V * (root_values.asDiagonal() * (V.transpose() * xi)));
  if (drift_channel_ == ValueChannel::Integrated)  // exactly 0, not the root's rounding
    for (int h = 0; h < engine_.layout().H(); ++h) out[engine_.layout().r_index(h)] = 0.0;
}

}  // namespace headspec

#pragma once
// The exact law of one sample's projections given the order parameters (docs/model.md §5):
//   λ_ℓ = ζ_ℓ + 1[ℓ = ℓ*] θ,  g_ℓ ~ N(0, 1),  s_ℓ = M λ_ℓ + R g_ℓ + w_ℓ,  w_ℓ ~ N(0, Q⊥).
// For fixed keys and Gaussian tokens this is exact at any D, so the population error of
// every engine (dense, gram, theory) is computed by this one sampler and the kernel.
#include <cstdint>

#include "headspec/kernel.hpp"
#include "headspec/model.hpp"
#include "headspec/order_parameters.hpp"
#include "headspec/parallel_mean.hpp"
#include "headspec/random.hpp"

namespace headspec {

struct ProjectedSample {
  RowMatrix S;             ///< H×L scores
  RowMatrix lambda;        ///< L×F latent projections
  Eigen::VectorXd g;       ///< L value projections
  Eigen::VectorXd theta;   ///< F, the sample's spike
  int lstar = 0;           ///< relevant position
  double y = 0;            ///< target g_ℓ* + √Δ ξ
};

class ProjectionSampler {
 public:
  ProjectionSampler(const ModelSpec& spec, const OrderParameters& op);
  /// Draws one sample's projections from rng.
  void draw(RandomStream& rng, ProjectedSample& out) const;
  /// A symmetric square root of Q⊥ (negative eigenvalues from rounding clamped to 0).
  const Eigen::MatrixXd& orthogonal_sqrt() const { return C_; }

 private:
  const ModelSpec& spec_;
  Eigen::MatrixXd M_;
  Eigen::VectorXd R_;
  Eigen::MatrixXd C_;
};

/// ε = E[(ŷ − y)²] (docs/model.md §4) over `samples` fresh samples. Sample n is drawn from the
/// stream (seed, Test, lane n): the same test samples at every call with the same seed.
MeanEstimate population_error(const ModelSpec& spec, const OrderParameters& op, uint32_t seed, int samples);

}  // namespace headspec

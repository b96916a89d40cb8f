#pragma once
// Exact draws for the reduced engine (docs/model.md §9): Gamma and χ² variates of any shape
// (degrees of freedom up to 10^12 and beyond) and the Bartlett factor of a Wishart matrix.
// No normal approximation anywhere: every draw is an exact rejection sampler driven by the
// project's counter-based normals and uniforms.
#include <vector>

#include "headspec/kernel.hpp"
#include "headspec/random.hpp"

namespace headspec {

/// Gamma(shape, 1) by Marsaglia & Tsang (ACM TOMS 26, 2000): exact for every shape ≥ 1;
/// for shape < 1, Gamma(a) = Gamma(a + 1)·U^{1/a} (their §6). The acceptance test is
/// written with log1p so that it keeps full precision when the shape is huge. The
/// constants of the method are computed once per shape: the reduced engine draws the same
/// shapes at every step.
class GammaSampler {
 public:
  explicit GammaSampler(double shape);
  double operator()(RandomStream& rng) const;

 private:
  double shape_;
  bool boosted_;  // shape < 1: draw Gamma(shape + 1), then scale
  double d_, c_;  // d = a − 1/3, c = 1/√(9d) for the shape a actually drawn
};

/// Gamma(shape, 1): GammaSampler(shape)(rng).
double sample_gamma(RandomStream& rng, double shape);

/// χ²(dof) = 2·Gamma(dof/2), dof > 0.
double sample_chi_squared(RandomStream& rng, double dof);

/// Bartlett factor of Wishart_p(dof, I): for Z a p×dof matrix of i.i.d. N(0,1) and its LQ
/// decomposition Z = T N (N with orthonormal rows), T is p×m lower-trapezoidal,
/// m = min(p, dof), with T_jj² ~ χ²(dof − j + 1) (j from 1), T_ij ~ N(0,1) for i > j, all
/// independent, and N independent of T and uniform. dof must be a positive integer
/// (a double, so that 10^12 is representable). Draws, in this order, for each column j:
/// the χ², then the normals below the diagonal.
class BartlettSampler {
 public:
  BartlettSampler(int p, double dof);
  /// Writes T (resized to p × m only if it has another shape).
  void operator()(RandomStream& rng, RowMatrix& T) const;
  int rows() const { return p_; }
  int cols() const { return static_cast<int>(diagonal_.size()); }

 private:
  int p_;
  std::vector<GammaSampler> diagonal_;  // Gamma((dof − j)/2): T_jj² = 2·Gamma
};

/// One Bartlett factor: BartlettSampler(p, dof)(rng, T).
void sample_bartlett(RandomStream& rng, int p, double dof, RowMatrix& T);

}  // namespace headspec

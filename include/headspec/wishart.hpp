#pragma once
// Exact draws for the reduced engine (MODEL.md §9): Gamma and χ² variates of any shape
// (degrees of freedom up to 10^12 and beyond) and the Bartlett factor of a Wishart matrix.
// No normal approximation anywhere: every draw is an exact rejection sampler driven by the
// project's counter-based normals and uniforms.
#include "headspec/kernel.hpp"
#include "headspec/random.hpp"

namespace headspec {

/// Gamma(shape, 1) by Marsaglia & Tsang (ACM TOMS 26, 2000): exact for every shape ≥ 1;
/// for shape < 1, Gamma(a) = Gamma(a + 1)·U^{1/a} (their §6). The acceptance test is
/// written with log1p so that it keeps full precision when the shape is huge.
double sample_gamma(RandomStream& rng, double shape);

/// χ²(dof) = 2·Gamma(dof/2), dof > 0.
double sample_chi_squared(RandomStream& rng, double dof);

/// Bartlett factor of Wishart_p(dof, I): for Z a p×dof matrix of i.i.d. N(0,1) and its LQ
/// decomposition Z = T N (N with orthonormal rows), T is p×m lower-trapezoidal,
/// m = min(p, dof), with T_jj² ~ χ²(dof − j + 1) (j from 1), T_ij ~ N(0,1) for i > j, all
/// independent, and N independent of T and uniform. dof must be a positive integer
/// (a double, so that 10^12 is representable).
void sample_bartlett(RandomStream& rng, int p, double dof, RowMatrix& T);

}  // namespace headspec

#include "headspec/wishart.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace headspec {

double sample_gamma(RandomStream& rng, double shape) {
  if (!(shape > 0) || !std::isfinite(shape)) throw std::invalid_argument("sample_gamma: shape must be finite and > 0");
  if (shape < 1) {
    // Boost the shape by one and scale by U^{1/a} (exact).
    const double g = sample_gamma(rng, shape + 1);
    return g * std::exp(std::log(rng.uniform()) / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, y;
    do {
      x = rng.normal();
      y = c * x;
    } while (y <= -1.0);
    const double v = (1 + y) * (1 + y) * (1 + y);
    const double u = rng.uniform();
    // Squeeze: accepts most proposals without a logarithm.
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return d * v;
    // Full test log u < x²/2 + d(1 − v + log v). With v = (1 + y)³, 1 − v + log v =
    // 3 log1p(y) − y(3 + 3y + y²): no cancellation against a rounded v, so the test stays
    // exact to double precision when d is 10^12 (y ~ 10^-6).
    const double t = 3.0 * std::log1p(y) - y * (3.0 + y * (3.0 + y));
    if (std::log(u) < 0.5 * x * x + d * t) return d * v;
  }
}

double sample_chi_squared(RandomStream& rng, double dof) { return 2.0 * sample_gamma(rng, 0.5 * dof); }

void sample_bartlett(RandomStream& rng, int p, double dof, RowMatrix& T) {
  if (!(dof >= 1) || dof != std::floor(dof)) throw std::invalid_argument("sample_bartlett: dof must be a positive integer");
  const int m = static_cast<int>(std::min<double>(p, dof));
  T.setZero(p, m);
  for (int j = 0; j < m; ++j) {
    T(j, j) = std::sqrt(sample_chi_squared(rng, dof - j));
    for (int i = j + 1; i < p; ++i) T(i, j) = rng.normal();
  }
}

}  // namespace headspec

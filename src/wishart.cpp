#include "headspec/wishart.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace headspec {

GammaSampler::GammaSampler(double shape) : shape_(shape), boosted_(shape < 1) {
  if (!(shape > 0) || !std::isfinite(shape)) throw std::invalid_argument("sample_gamma: shape must be finite and > 0");
  d_ = (boosted_ ? shape + 1 : shape) - 1.0 / 3.0;
  c_ = 1.0 / std::sqrt(9.0 * d_);
}

double GammaSampler::operator()(RandomStream& rng) const {
  double g;
  for (;;) {
    double x, y;
    do {
      x = rng.normal();
      y = c_ * x;
    } while (y <= -1.0);
    const double v = (1 + y) * (1 + y) * (1 + y);
    const double u = rng.uniform();
    // Squeeze: accepts most proposals without a logarithm.
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) {
      g = d_ * v;
      break;
    }
    // Full test log u < x²/2 + d(1 − v + log v). With v = (1 + y)³, 1 − v + log v =
    // 3 log1p(y) − y(3 + 3y + y²): no cancellation against a rounded v, so the test stays
    // exact to double precision when d is 10^12 (y ~ 10^-6).
    const double t = 3.0 * std::log1p(y) - y * (3.0 + y * (3.0 + y));
    if (std::log(u) < 0.5 * x * x + d_ * t) {
      g = d_ * v;
      break;
    }
  }
  // Shape < 1: Gamma(a) = Gamma(a + 1)·U^{1/a}, the uniform drawn after Gamma(a + 1).
  return boosted_ ? g * std::exp(std::log(rng.uniform()) / shape_) : g;
}

double sample_gamma(RandomStream& rng, double shape) { return GammaSampler(shape)(rng); }

double sample_chi_squared(RandomStream& rng, double dof) { return 2.0 * sample_gamma(rng, 0.5 * dof); }

BartlettSampler::BartlettSampler(int p, double dof) : p_(p) {
  if (!(dof >= 1) || dof != std::floor(dof)) throw std::invalid_argument("sample_bartlett: dof must be a positive integer");
  const int m = static_cast<int>(std::min<double>(p, dof));
  diagonal_.reserve(m);
  for (int j = 0; j < m; ++j) diagonal_.emplace_back(0.5 * (dof - j));
}

void BartlettSampler::operator()(RandomStream& rng, RowMatrix& T) const {
  const int m = cols();
  if (T.rows() != p_ || T.cols() != m) T.resize(p_, m);
  for (int j = 0; j < m; ++j) {
    for (int i = 0; i < j; ++i) T(i, j) = 0.0;
    T(j, j) = std::sqrt(2.0 * diagonal_[j](rng));
    for (int i = j + 1; i < p_; ++i) T(i, j) = rng.normal();
  }
}

void sample_bartlett(RandomStream& rng, int p, double dof, RowMatrix& T) { BartlettSampler(p, dof)(rng, T); }

}  // namespace headspec

// Exact χ² draws of the reduced engine (docs/model.md §9 step 2): the law against its
// closed-form CDF (Kolmogorov–Smirnov) for small degrees of freedom, and its mean, variance
// and third central moment (k, 2k, 8k) up to k = 10^12.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "headspec/wishart.hpp"

using namespace headspec;

namespace {

// Closed-form χ² CDFs (Abramowitz & Stegun 26.4.4–26.4.5 for k = 1, 2, 3).
double chi2_cdf(int k, double x) {
  switch (k) {
    case 1:
      return std::erf(std::sqrt(x / 2));
    case 2:
      return 1 - std::exp(-x / 2);
    case 3:
      return std::erf(std::sqrt(x / 2)) - std::sqrt(2 * x / M_PI) * std::exp(-x / 2);
  }
  return NAN;
}

}  // namespace

// KS distance of 20 000 draws; the 0.1% critical value is 1.949/√n (asymptotic Kolmogorov).
TEST(ChiSquared, MatchesClosedFormCdfForSmallDegreesOfFreedom) {
  const int n = 20000;
  for (int k : {1, 2, 3}) {
    RandomStream rng(StreamId{7, Purpose::MonteCarlo, static_cast<uint32_t>(k), 0});
    std::vector<double> x(n);
    for (double& v : x) v = sample_chi_squared(rng, k);
    std::sort(x.begin(), x.end());
    double ks = 0;
    for (int i = 0; i < n; ++i) {
      const double F = chi2_cdf(k, x[i]);
      ks = std::max({ks, std::abs(F - double(i) / n), std::abs(F - double(i + 1) / n)});
    }
    EXPECT_LT(ks, 1.949 / std::sqrt(n)) << "k = " << k;
  }
}

// z-scores of the sample mean, variance and third central moment against k, 2k, 8k, with
// standard errors from the exact higher moments of χ²(k); |z| < 4 for each (18 tests,
// family level about 10^-3 under the normal approximation).
TEST(ChiSquared, MomentsUpToHugeDegreesOfFreedom) {
  const int n = 200000;
  for (double k : {0.5, 7.0, 1e3, 1e6, 1e9, 1e12}) {
    RandomStream rng(StreamId{11, Purpose::MonteCarlo, static_cast<uint32_t>(std::log10(k) + 10), 0});
    // Centred at k before squaring keeps all digits at k = 10^12.
    double s1 = 0, s2 = 0, s3 = 0;
    for (int i = 0; i < n; ++i) {
      const double d = sample_chi_squared(rng, k) - k;
      s1 += d;
      s2 += d * d;
      s3 += d * d * d;
    }
    const double m1 = s1 / n, m2 = s2 / n, m3 = s3 / n;
    const double var = m2 - m1 * m1;
    const double mu3 = m3 - 3 * m1 * m2 + 2 * m1 * m1 * m1;
    const double sd_mean = std::sqrt(2 * k / n);
    const double sd_var = std::sqrt((8 * k * k + 48 * k) / n);  // (μ4 − μ2²)/n
    // Central moments from the cumulants κ_j = 2^{j−1}(j−1)! k; the sample third central
    // moment has asymptotic variance (μ6 − μ3² − 6μ4μ2 + 9μ2³)/n.
    const double k2 = 2 * k, k3 = 8 * k, k4 = 48 * k, k6 = 3840 * k;
    const double mu4 = k4 + 3 * k2 * k2, mu6 = k6 + 15 * k4 * k2 + 10 * k3 * k3 + 15 * k2 * k2 * k2;
    const double sd_mu3 = std::sqrt((mu6 - k3 * k3 - 6 * mu4 * k2 + 9 * k2 * k2 * k2) / n);
    EXPECT_LT(std::abs(m1 / sd_mean), 4) << "mean, k = " << k;
    EXPECT_LT(std::abs((var - 2 * k) / sd_var), 4) << "variance, k = " << k;
    EXPECT_LT(std::abs((mu3 - 8 * k) / sd_mu3), 4) << "third moment, k = " << k;
  }
}

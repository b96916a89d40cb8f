#pragma once
// Two-sample tests for the engine comparisons: Welch's t-test on means and the
// Brown–Forsythe test on spreads (Welch's t-test on absolute deviations from each group's
// median), with Student-t p-values (Welch–Satterthwaite degrees of freedom), and the
// two-sample Kolmogorov–Smirnov test of equal laws.
#include <algorithm>
#include <cmath>
#include <vector>

namespace headspec::testing {

/// Regularised incomplete beta I_x(a, b) (continued fraction, Numerical Recipes §6.4).
inline double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  auto cf = [](double a, double b, double x) {
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (std::abs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m < 500; ++m) {
      const double m2 = 2.0 * m;
      double aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
      d = 1 + aa * d;
      if (std::abs(d) < tiny) d = tiny;
      c = 1 + aa / c;
      if (std::abs(c) < tiny) c = tiny;
      d = 1 / d;
      h *= d * c;
      aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
      d = 1 + aa * d;
      if (std::abs(d) < tiny) d = tiny;
      c = 1 + aa / c;
      if (std::abs(c) < tiny) c = tiny;
      d = 1 / d;
      const double del = d * c;
      h *= del;
      if (std::abs(del - 1) < 1e-15) break;
    }
    return h;
  };
  const double lbeta = std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b);
  const double front = std::exp(lbeta + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * cf(a, b, x) / a;
  return 1 - front * cf(b, a, 1 - x) / b;
}

/// Two-sided p-value of Student's t with df degrees of freedom.
inline double student_two_sided_p(double t, double df) {
  return incomplete_beta(0.5 * df, 0.5, df / (df + t * t));
}

struct TestResult {
  double statistic = 0;
  double p = 1;
};

/// Welch's two-sample t-test of equal means.
inline TestResult welch(const std::vector<double>& x, const std::vector<double>& y) {
  auto moments = [](const std::vector<double>& v, double& mean, double& var) {
    mean = 0;
    for (double a : v) mean += a;
    mean /= v.size();
    var = 0;
    for (double a : v) var += (a - mean) * (a - mean);
    var /= (v.size() - 1);
  };
  double mx, vx, my, vy;
  moments(x, mx, vx);
  moments(y, my, vy);
  const double sx = vx / x.size(), sy = vy / y.size();
  TestResult r;
  if (sx + sy == 0) return r;  // both constant: nothing to test
  r.statistic = (mx - my) / std::sqrt(sx + sy);
  const double df = (sx + sy) * (sx + sy) / (sx * sx / (x.size() - 1) + sy * sy / (y.size() - 1));
  r.p = student_two_sided_p(r.statistic, df);
  return r;
}

/// Brown–Forsythe test of equal spreads: Welch's test on |x − median(x)|.
inline TestResult brown_forsythe(const std::vector<double>& x, const std::vector<double>& y) {
  auto deviations = [](std::vector<double> v) {
    std::vector<double> s = v;
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    const double med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    for (double& a : v) a = std::abs(a - med);
    return v;
  };
  return welch(deviations(x), deviations(y));
}

/// Two-sample Kolmogorov–Smirnov test: the largest distance between the two empirical
/// distribution functions, and its asymptotic p-value (Kolmogorov's series at
/// λ = (√n + 0.12 + 0.11/√n)·D, n = n_x n_y/(n_x + n_y), Numerical Recipes §14.3). With ties
/// (values on a grid) the test is conservative.
inline TestResult kolmogorov_smirnov(std::vector<double> x, std::vector<double> y) {
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  std::size_t i = 0, j = 0;
  double distance = 0;
  while (i < x.size() && j < y.size()) {
    const double v = std::min(x[i], y[j]);
    while (i < x.size() && x[i] == v) ++i;
    while (j < y.size() && y[j] == v) ++j;
    distance = std::max(distance, std::abs(double(i) / x.size() - double(j) / y.size()));
  }
  const double n = double(x.size()) * y.size() / (x.size() + y.size());
  const double lambda = (std::sqrt(n) + 0.12 + 0.11 / std::sqrt(n)) * distance;
  double p = 0, sign = 1;
  for (int k = 1; k <= 100; ++k, sign = -sign) p += 2 * sign * std::exp(-2.0 * k * k * lambda * lambda);
  TestResult r;
  r.statistic = distance;
  r.p = lambda < 0.3 ? 1.0 : std::clamp(p, 0.0, 1.0);  // the series converges slowly near 0, where p ≈ 1
  return r;
}

}  // namespace headspec::testing

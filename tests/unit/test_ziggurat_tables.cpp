// The ziggurat's tables (src/random/ziggurat_tables.cpp, written by scripts/ziggurat-tables
// with 60-digit arithmetic). References: an independent computation here in long double (the
// same equations, libm's extended-precision exp, log and erfc, bisection for r), and the
// defining property that every layer has the same area.
#include <gtest/gtest.h>

#include <cmath>

#include "../../src/random/ziggurat.hpp"

using headspec::detail::kZigLayers;
using headspec::detail::ziggurat_tables;

namespace {

using Real = long double;

Real f(Real x) { return std::exp(-x * x / 2); }
Real tail_area(Real r) { return std::sqrt(std::acos(Real(-1)) / 2) * std::erfc(r / std::sqrt(Real(2))); }

// X[1..1023] from the base r; the top layer's area minus v, or −1 if the layers reach the top early.
Real layers_from(Real r, Real* x) {
  const Real v = r * f(r) + tail_area(r);
  x[0] = v / f(r);
  x[1] = r;
  for (int i = 1; i < kZigLayers - 1; ++i) {
    const Real y = v / x[i] + f(x[i]);
    if (y >= 1) return -1;
    x[i + 1] = std::sqrt(-2 * std::log(y));
  }
  x[kZigLayers] = 0;
  return x[kZigLayers - 1] * (1 - f(x[kZigLayers - 1])) - v;
}

// Units in the last place of double between a and b.
double ulps(double a, double b) { return std::fabs(a - b) / (std::nextafter(std::fabs(b), INFINITY) - std::fabs(b)); }

}  // namespace

TEST(ZigguratTables, AgreeWithALongDoubleComputation) {
  Real x[kZigLayers + 1], lo = 3, hi = 5;
  while ((lo + hi) / 2 != lo && (lo + hi) / 2 != hi) {
    const Real mid = (lo + hi) / 2;
    (layers_from(mid, x) > 0 ? hi : lo) = mid;
  }
  layers_from(hi, x);
  const auto& t = ziggurat_tables();
  EXPECT_EQ(t.r, t.x[1]);
  double worst_x = 0, worst_f = 0;
  for (int i = 0; i < kZigLayers; ++i) {
    worst_x = std::max(worst_x, ulps(t.x[i], static_cast<double>(x[i])));
    worst_f = std::max(worst_f, ulps(t.f[i], static_cast<double>(f(x[i]))));
  }
  // Both round the same real numbers once; extended precision leaves at most one unit between them.
  EXPECT_LE(worst_x, 1.0);
  EXPECT_LE(worst_f, 1.0);
  EXPECT_EQ(t.x[kZigLayers], 0.0);
  EXPECT_EQ(t.f[kZigLayers], 1.0);
}

TEST(ZigguratTables, LayersHaveEqualArea) {
  const auto& t = ziggurat_tables();
  const Real r = t.r, v = r * f(r) + tail_area(r);
  EXPECT_NEAR(static_cast<double>(t.x[0] * f(r) / v), 1.0, 1e-15);  // the base with its tail
  for (int i = 1; i < kZigLayers; ++i) {
    ASSERT_LT(t.x[i + 1], t.x[i]) << "layer " << i;
    // X[i]·(f(X[i+1]) − f(X[i])); the difference of f loses digits near the top, where
    // f(X[1023]) ≈ 0.99, so the bound is that of a relative error 10^-13 in it.
    const Real area = Real(t.x[i]) * (f(Real(t.x[i + 1])) - f(Real(t.x[i])));
    EXPECT_NEAR(static_cast<double>(area / v), 1.0, 1e-12) << "layer " << i;
  }
}

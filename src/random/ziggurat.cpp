// Tables of the 1024-layer ziggurat (ziggurat.hpp). The layers have equal area v: the base
// layer is the rectangle [0, r] × [0, f(r)] with the tail beyond r, so
// v = r f(r) + √(π/2) erfc(r/√2), and X[i+1] = f⁻¹(v/X[i] + f(X[i])). r is found by
// bisection, in extended precision, such that the top layer [0, X[1023]] × [f(X[1023]), 1]
// has area v too; only then are the tables rounded to double.
#include "ziggurat.hpp"

#include <cmath>

namespace headspec::detail {
namespace {

using Real = long double;

Real f(Real x) { return std::exp(-x * x / 2); }
Real tail_area(Real r) { return std::sqrt(std::acos(Real(-1)) / 2) * std::erfc(r / std::sqrt(Real(2))); }

// Fills x[1..1023] from r; returns the top layer's area minus v, or −1 if the layers reach
// the top before the 1023rd (r too small).
Real build(Real r, Real* x, Real* v_out) {
  const Real v = r * f(r) + tail_area(r);
  x[0] = v / f(r);
  x[1] = r;
  for (int i = 1; i < kZigLayers - 1; ++i) {
    const Real y = v / x[i] + f(x[i]);
    if (y >= 1) return -1;
    x[i + 1] = std::sqrt(-2 * std::log(y));
  }
  x[kZigLayers] = 0;
  *v_out = v;
  return x[kZigLayers - 1] * (1 - f(x[kZigLayers - 1])) - v;
}

ZigguratTables make_tables() {
  Real x[kZigLayers + 1], v = 0;
  Real lo = 3, hi = 5;
  for (int it = 0; it < 200; ++it) {
    const Real mid = (lo + hi) / 2;
    if (mid == lo || mid == hi) break;
    // Larger r: smaller v, thinner layers, a larger top layer.
    if (build(mid, x, &v) > 0) hi = mid; else lo = mid;
  }
  build(hi, x, &v);
  ZigguratTables t{};
  for (int i = 0; i <= kZigLayers; ++i) {
    t.x[i] = static_cast<double>(x[i]);
    t.f[i] = i == kZigLayers ? 1.0 : static_cast<double>(f(x[i]));
  }
  t.r = t.x[1];
  return t;
}

}  // namespace

const ZigguratTables& ziggurat_tables() {
  static const ZigguratTables tables = make_tables();
  return tables;
}

}  // namespace headspec::detail

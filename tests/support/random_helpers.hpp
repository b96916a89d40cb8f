#pragma once
// Draws of the counter-based generator (include/headspec/random.hpp) as vectors, their bits,
// and the χ² quantile the statistical checks of the generator use.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "headspec/random.hpp"

namespace headspec::testing {

inline std::vector<double> normals(const StreamId& id, uint64_t first, std::size_t n) {
  std::vector<double> x(n);
  fill_normal(id, first, x.data(), n);
  return x;
}

inline std::vector<double> uniforms(const StreamId& id, uint64_t first, std::size_t n) {
  std::vector<double> x(n);
  fill_uniform(id, first, x.data(), n);
  return x;
}

inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}


// The q-quantile of χ²(k) by Wilson–Hilferty (relative error below 10^-3 for k ≥ 5).
inline double chi2_quantile(double k, double z_q) {
  const double a = 2.0 / (9.0 * k);
  return k * std::pow(1.0 - a + z_q * std::sqrt(a), 3);
}
inline constexpr double kZ999 = 3.090232;  // standard normal 0.999 quantile

}  // namespace headspec::testing

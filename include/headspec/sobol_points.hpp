#pragma once
// Randomised quasi-Monte Carlo points (docs/model.md §6, "Randomised quasi-Monte Carlo"): the
// Sobol sequence of Boost.Random (Joe–Kuo direction numbers) with every coordinate
// scrambled by a nested uniform (Owen) scrambling drawn from a seed — the hash-based form of
// Burley, "Practical hash-based Owen scrambling", JCGT 9(4), 2020 — and mapped to standard
// normals by the inverse normal distribution function. Each scrambled point set is uniform
// on the unit cube point by point (so every estimate from it is unbiased), and independent
// seeds give independent randomisations whose spread estimates the error.
#include <cstdint>
#include <vector>

namespace headspec {

class ScrambledSobol {
 public:
  /// Up to kMaxDimension coordinates; `seed` selects the scrambling.
  static constexpr int kMaxDimension = 3667;
  ScrambledSobol(int dimension, uint64_t seed);

  int dimension() const { return dimension_; }
  /// Points begin … begin + count − 1 (each `dimension()` uniforms in (0, 1), point-major) into out.
  void uniforms(uint32_t begin, int count, double* out) const;
  /// The scrambled coordinate of a 32-bit Sobol coordinate x in dimension d, as a uniform in (0, 1).
  double scrambled_uniform(uint32_t x, int d) const;

 private:
  int dimension_;
  uint64_t seed_;
  std::vector<uint32_t> dimension_seeds_;  // each coordinate's scrambling
};

/// Φ⁻¹(u) for u in (0, 1).
double inverse_normal_cdf(double u);

}  // namespace headspec

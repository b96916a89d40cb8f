#include "headspec/sobol_points.hpp"

#include <fmt/format.h>

#include <boost/math/special_functions/erf.hpp>
#include <boost/random/sobol.hpp>
#include <cmath>

#include "headspec/errors.hpp"

namespace headspec {

namespace {

// A 64-bit mix (SplitMix64's finaliser): the per-dimension scrambling seeds.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint32_t reverse_bits(uint32_t x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}

// Burley (2020), §3: on the bit-reversed coordinate, a hash in which each bit depends only on
// the bits below it is a nested uniform scrambling of the original's bits from the top.
uint32_t owen_scramble(uint32_t x, uint32_t seed) {
  x = reverse_bits(x);
  x ^= x * 0x3d20adeau;
  x += seed;
  x *= (seed >> 16) | 1u;
  x ^= x * 0x05526c56u;
  x ^= x * 0x53a22864u;
  return reverse_bits(x);
}

}  // namespace

ScrambledSobol::ScrambledSobol(int dimension, uint64_t seed) : dimension_(dimension), seed_(seed) {
  if (dimension < 1 || dimension > kMaxDimension)
    throw ParameterError("mc-method", fmt::format("sobol: {} dimensions per sample, past Boost's {}", dimension, kMaxDimension));
  for (int d = 0; d < dimension; ++d)
    dimension_seeds_.push_back(static_cast<uint32_t>(mix(seed_ ^ mix(static_cast<uint64_t>(d) + 1))));
}

double ScrambledSobol::scrambled_uniform(uint32_t x, int d) const {
  const uint32_t s = dimension_seeds_[static_cast<std::size_t>(d)];
  // The scrambled 32 bits, then a uniform offset below the last bit (a hash of the seed, the
  // coordinate and the dimension): uniform in (0, 1), never 0 or 1.
  const uint32_t y = owen_scramble(x, s);
  const uint64_t key = seed_ + x + (static_cast<uint64_t>(d) << 32);
  const double below = (static_cast<double>(static_cast<uint32_t>(mix(key) >> 40)) + 0.5) * 0x1p-24;
  return (static_cast<double>(y) + below) * 0x1p-32;
}

void ScrambledSobol::uniforms(uint32_t begin, int count, double* out) const {
  // Boost's engine leaves out the sequence's point 0 (the origin) and gives point k + 1 after
  // seed(k): the first 2^m points, a (t, m, s)-net, are the origin and its first 2^m − 1.
  boost::random::sobol_engine<uint32_t, 32> sobol(static_cast<std::size_t>(dimension_));
  if (begin > 0) sobol.seed(begin - 1);
  for (int i = 0; i < count; ++i)
    for (int d = 0; d < dimension_; ++d) *out++ = scrambled_uniform(begin + i == 0 ? 0u : sobol(), d);
}

// In double precision throughout: Boost's default promotes to long double, 4× slower for a
// relative difference below 5e-16.
double inverse_normal_cdf(double u) {
  using Double = boost::math::policies::policy<boost::math::policies::promote_double<false>>;
  return -std::sqrt(2.0) * boost::math::erfc_inv(2.0 * u, Double());
}

}  // namespace headspec

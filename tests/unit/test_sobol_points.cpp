// Scrambled Sobol points (include/headspec/sobol_points.hpp, docs/model.md §6).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "headspec/sobol_points.hpp"

using namespace headspec;

// A nested uniform scrambling keeps the net: the first 2^m points of any one coordinate put
// exactly one point in each interval [k/2^m, (k+1)/2^m), and any two coordinates (the first
// ones here) one point in each of the 2^m elementary boxes of sides 2^-a × 2^-(m-a)... checked
// for the 1-D property in every coordinate and the 2-D one for a = m/2 in the first two.
TEST(SobolPoints, ScrambledPointsKeepTheNetStratification) {
  const int m = 10, n = 1 << m, dim = 20;
  for (uint64_t seed : {1u, 77u}) {
    const ScrambledSobol sobol(dim, seed);
    std::vector<double> u(static_cast<std::size_t>(n * dim));
    sobol.uniforms(0, n, u.data());
    for (int d = 0; d < dim; ++d) {
      std::vector<int> count(n, 0);
      for (int i = 0; i < n; ++i) {
        const double x = u[i * dim + d];
        ASSERT_GT(x, 0.0);
        ASSERT_LT(x, 1.0);
        ++count[static_cast<int>(x * n)];
      }
      EXPECT_EQ(*std::max_element(count.begin(), count.end()), 1) << "coordinate " << d;
    }
    std::vector<int> box(n, 0);
    const int side = 1 << (m / 2);
    for (int i = 0; i < n; ++i)
      ++box[static_cast<int>(u[i * dim] * side) * side + static_cast<int>(u[i * dim + 1] * side)];
    EXPECT_EQ(*std::max_element(box.begin(), box.end()), 1);
  }
}

TEST(SobolPoints, SeedsGiveDifferentScramblingsAndRangesContinue) {
  const int dim = 3;
  std::vector<double> a(8 * dim), b(8 * dim), tail(4 * dim);
  ScrambledSobol(dim, 1).uniforms(0, 8, a.data());
  ScrambledSobol(dim, 2).uniforms(0, 8, b.data());
  EXPECT_NE(a, b);
  ScrambledSobol(dim, 1).uniforms(4, 4, tail.data());  // points 4 … 7 on their own
  EXPECT_EQ(std::vector<double>(a.begin() + 4 * dim, a.end()), tail);
}

// Over many scramblings each point is uniform: the mean of a coordinate is 1/2 and its
// variance 1/12, within 4 standard errors.
TEST(SobolPoints, EachPointIsUniformOverScramblings) {
  const int seeds = 4000;
  double sum = 0, sum_sq = 0;
  for (int s = 0; s < seeds; ++s) {
    std::vector<double> u(4);
    ScrambledSobol(2, static_cast<uint64_t>(s) * 7919u).uniforms(3, 2, u.data());
    sum += u[3];
    sum_sq += u[3] * u[3];
  }
  const double mean = sum / seeds, var = sum_sq / seeds - mean * mean;
  EXPECT_LT(std::abs(mean - 0.5), 4 * std::sqrt(1.0 / 12 / seeds));
  EXPECT_LT(std::abs(var - 1.0 / 12), 4 * std::sqrt(1.0 / 180 / seeds));  // Var(U²)-scale bound
}

TEST(SobolPoints, InverseNormal) {
  EXPECT_EQ(inverse_normal_cdf(0.5), 0.0);
  EXPECT_NEAR(inverse_normal_cdf(0.975), 1.959963984540054, 1e-14);
  EXPECT_NEAR(inverse_normal_cdf(1e-10), -6.361340902404056, 1e-12);
}

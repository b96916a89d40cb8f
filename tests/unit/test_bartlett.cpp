// The Bartlett factor of the reduced engine (docs/model.md §9 step 2): its Wishart moments
// E W = n I, Var W_ij = n(1 + δ_ij), full rank or not.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "headspec/wishart.hpp"

using namespace headspec;

TEST(Bartlett, WishartMomentsFullAndLowRank) {
  const int reps = 100000;
  struct Case {
    int p;
    double n;
  };
  for (const Case& c : {Case{3, 5}, Case{4, 2}, Case{2, 1e9}}) {
    RandomStream rng(StreamId{13, Purpose::MonteCarlo, static_cast<uint32_t>(c.p * 100 + std::min(c.n, 99.0)), 0});
    const int m = static_cast<int>(std::min<double>(c.p, c.n));
    Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(c.p, c.p), sum2 = sum;
    RowMatrix T;
    for (int r = 0; r < reps; ++r) {
      sample_bartlett(rng, c.p, c.n, T);
      ASSERT_EQ(T.cols(), m);
      // Lower trapezoidal with a positive diagonal.
      for (int j = 0; j < m; ++j) {
        ASSERT_GT(T(j, j), 0);
        for (int i = 0; i < j; ++i) ASSERT_EQ(T(i, j), 0);
      }
      const Eigen::MatrixXd W = T * T.transpose();
      const Eigen::MatrixXd dev = W - c.n * Eigen::MatrixXd::Identity(c.p, c.p);
      sum += dev;
      sum2 += dev.cwiseProduct(dev);
    }
    for (int i = 0; i < c.p; ++i)
      for (int j = 0; j <= i; ++j) {
        const double var = c.n * (1 + (i == j));
        const double mean_dev = sum(i, j) / reps;
        EXPECT_LT(std::abs(mean_dev) / std::sqrt(var / reps), 4) << "E W, p=" << c.p << " n=" << c.n;
        // Var of (W_ij − E W_ij)²: E dev⁴ − var² ≤ 3var² + O(n) for these; 4 sd.
        const double var_hat = sum2(i, j) / reps - mean_dev * mean_dev;
        const double sd = std::sqrt((2 * var * var + 60 * c.n) / reps);
        EXPECT_LT(std::abs(var_hat - var) / sd, 4) << "Var W, p=" << c.p << " n=" << c.n << " i=" << i << " j=" << j;
      }
  }
}

// Priors (docs/model.md §2) and their position likelihoods w(λ) (docs/model.md §8).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "cli_helpers.hpp"
#include "headspec/errors.hpp"
#include "headspec/prior.hpp"

using namespace headspec;

namespace {

// E θ_f² = ν_f and E θ_f = mean() for every prior, within 5 standard errors.
TEST(Prior, SampleMomentsMatchNuAndMean) {
  Eigen::MatrixXd atoms(3, 2);
  atoms << 1, 2, -1, 0.5, 0, -3;
  const std::vector<Prior> priors{Prior::flip(Eigen::Vector3d(2, 3, 0.5)), Prior::gauss(Eigen::Vector3d(8, 2, 1)),
                                  Prior::spike(Eigen::Vector2d(4, 1)), Prior::mixture(atoms, Eigen::Vector3d(1, 2, 3))};
  for (const auto& p : priors) {
    RandomStream rng(StreamId{3, Purpose::Data, 0, 0});
    const int n = 100000, F = p.F();
    Eigen::ArrayXd s1 = Eigen::ArrayXd::Zero(F), s2 = s1, s4 = s1;
    std::vector<double> th(F);
    for (int i = 0; i < n; ++i) {
      p.sample(rng, th.data());
      for (int f = 0; f < F; ++f) {
        s1[f] += th[f];
        s2[f] += th[f] * th[f];
        s4[f] += std::pow(th[f], 4);
      }
    }
    const Eigen::ArrayXd m1 = s1 / n, m2 = s2 / n, m4 = s4 / n;
    for (int f = 0; f < F; ++f) {
      const double se1 = std::sqrt(std::max(m2[f] - m1[f] * m1[f], 0.0) / n);
      const double se2 = std::sqrt(std::max(m4[f] - m2[f] * m2[f], 0.0) / n);
      EXPECT_NEAR(m2[f], p.nu()[f], 5 * se2 + 1e-12) << p.name() << " f=" << f;
      EXPECT_NEAR(m1[f], p.mean()[f], 5 * se1 + 1e-12) << p.name() << " f=" << f;
    }
  }
}

// log w(λ) of flip (closed form) equals the finite sum over its atoms (mixture form).
TEST(Prior, FlipLikelihoodEqualsItsAtomSum) {
  const Prior flip = Prior::flip(Eigen::Vector3d(2, 3, 0.7));
  const Prior mix = Prior::mixture(flip.atoms(), flip.weights());
  std::mt19937_64 gen(1);
  std::normal_distribution<double> n(0, 3);
  for (int i = 0; i < 200; ++i) {
    const double lambda[3] = {n(gen), n(gen), 50 * n(gen)};
    EXPECT_NEAR(flip.log_likelihood(lambda), mix.log_likelihood(lambda), 1e-10 * (1 + std::abs(mix.log_likelihood(lambda))));
  }
}

// Gauss: w(λ) = E_θ exp(θλ − θ²/2) by quadrature in one dimension per direction.
TEST(Prior, GaussLikelihoodMatchesQuadrature) {
  const Eigen::Vector2d nu(8, 0.5);
  const Prior p = Prior::gauss(nu);
  for (double l1 : {-2.0, 0.3, 4.0})
    for (double l2 : {-1.0, 2.5}) {
      const double lambda[2] = {l1, l2};
      double logw = 0;
      for (int f = 0; f < 2; ++f) {
        double sum = 0;
        const double sd = std::sqrt(nu[f]), h = 1e-3;
        for (double x = -12; x <= 12; x += h) {  // θ = sd·x, x ~ N(0,1)
          const double th = sd * x;
          sum += std::exp(-0.5 * x * x + th * lambda[f] - 0.5 * th * th) * h / std::sqrt(2 * M_PI);
        }
        logw += std::log(sum);
      }
      EXPECT_NEAR(p.log_likelihood(lambda), logw, 1e-8);
    }
}

TEST(Prior, MixtureFileRoundTrip) {
  const auto dir = headspec::testing::fresh_dir("prior");
  const auto file = dir / "atoms.txt";
  std::ofstream(file) << "# weight theta1 theta2\n2 1.5 -1\n\n6 0 2\n";
  const Prior p = Prior::parse("mixture:" + file.string(), Eigen::Vector2d(1, 1));
  EXPECT_EQ(p.F(), 2);
  EXPECT_NEAR(p.weights()[0], 0.25, 1e-15);
  EXPECT_NEAR(p.nu()[0], 0.25 * 2.25, 1e-15);
  EXPECT_NEAR(p.nu()[1], 0.25 * 1 + 0.75 * 4, 1e-15);
  EXPECT_THROW(Prior::parse("mixture:", Eigen::Vector2d(1, 1)), UsageError);
  EXPECT_THROW(Prior::flip(Eigen::Vector2d(1, -1)), UsageError);
}

}  // namespace

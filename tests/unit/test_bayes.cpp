// The Bayes-optimal error (docs/model.md §8): limits, quadrature against Monte Carlo, and a
// mixture with the atoms of flip against flip.
#include <gtest/gtest.h>

#include <cmath>

#include "headspec/bayes.hpp"

using namespace headspec;

namespace {

TEST(Bayes, NoSignalGivesOneMinusOneOverL) {
  for (int L : {2, 5, 10}) {
    // ν = 0: every position is equally likely, P_ℓ = 1/L exactly in every sample.
    const auto e = bayes_error_mc(Prior::flip(Eigen::Vector2d(0, 0)), L, 0.0, 1000, 1);
    EXPECT_NEAR(e.mean, 1.0 - 1.0 / L, 1e-12);
    EXPECT_NEAR(bayes_error_quadrature(Prior::spike(Eigen::VectorXd::Constant(1, 0.0)), L, 0.0), 1.0 - 1.0 / L, 1e-6);
    // Small ν: close to it, and below it (information can only help).
    const auto small = bayes_error_mc(Prior::gauss(Eigen::Vector2d(1e-3, 1e-3)), L, 0.0, 20000, 2);
    EXPECT_LT(small.mean, 1.0 - 1.0 / L + 4 * small.stderr_);
    EXPECT_NEAR(small.mean, 1.0 - 1.0 / L, 1e-3);
  }
}

TEST(Bayes, LargeSignalGoesToZero) {
  double previous = 1.0;
  for (double nu : {1.0, 10.0, 40.0, 200.0}) {
    const auto e = bayes_error_mc(Prior::flip(Eigen::Vector2d(nu, nu)), 5, 0.0, 20000, 3);
    EXPECT_LT(e.mean, previous);
    previous = e.mean;
  }
  EXPECT_LT(previous, 1e-3);
}

TEST(Bayes, LabelNoiseAddsDelta) {
  const auto a = bayes_error_mc(Prior::flip(Eigen::Vector2d(2, 2)), 5, 0.0, 5000, 4);
  const auto b = bayes_error_mc(Prior::flip(Eigen::Vector2d(2, 2)), 5, 0.3, 5000, 4);
  EXPECT_NEAR(b.mean - a.mean, 0.3, 1e-12);
}

// F = 1: the quadrature and the Monte Carlo agree within 4 standard errors.
TEST(Bayes, QuadratureMatchesMonteCarloForF1) {
  Eigen::MatrixXd atoms(2, 1);
  atoms << 2.0, -0.5;
  const std::vector<Prior> priors{Prior::spike(Eigen::VectorXd::Constant(1, 2.0)),
                                  Prior::spike(Eigen::VectorXd::Constant(1, 9.0)),
                                  Prior::gauss(Eigen::VectorXd::Constant(1, 3.0)),
                                  Prior::mixture(atoms, Eigen::Vector2d(0.3, 0.7))};
  for (const auto& p : priors)
    for (int L : {2, 5, 10}) {
      const double q = bayes_error_quadrature(p, L, 0.0);
      const auto mc = bayes_error_mc(p, L, 0.0, 200000, 5);
      EXPECT_NEAR(q, mc.mean, 4 * mc.stderr_) << p.name() << " ν=" << p.nu()[0] << " L=" << L;
    }
}

// mixture with the atoms of flip is flip (different draws, same law).
TEST(Bayes, MixtureWithFlipAtomsEqualsFlip) {
  const Prior flip = Prior::flip(Eigen::Vector3d(2, 2, 1));
  const Prior mix = Prior::mixture(flip.atoms(), flip.weights());
  const auto a = bayes_error_mc(flip, 6, 0.0, 200000, 6);
  const auto b = bayes_error_mc(mix, 6, 0.0, 200000, 7);
  EXPECT_NEAR(a.mean, b.mean, 4 * std::hypot(a.stderr_, b.stderr_));
}

// A strong signal: far out φ h underflows to 0 where w² e^{−uw} u overflows; the weights in
// log space keep ε finite (it was NaN from ν ≈ 400 on) and equal to the Monte Carlo's.
TEST(Bayes, QuadratureStaysFiniteForAStrongSignal) {
  const Prior p = Prior::spike(Eigen::VectorXd::Constant(1, 420.0));
  const double q = bayes_error_quadrature(p, 2, 0.0);
  const auto mc = bayes_error_mc(p, 2, 0.0, 200000, 8);
  ASSERT_TRUE(std::isfinite(q));
  EXPECT_GE(q, -1e-12);  // 1 − ∫ at rounding level: ε is ≈ 0 here
  EXPECT_NEAR(q, mc.mean, 4 * mc.stderr_ + 1e-12);
}

TEST(Bayes, QuadratureRefusesFGreaterThanOne) {
  EXPECT_ANY_THROW(bayes_error_quadrature(Prior::flip(Eigen::Vector2d(2, 2)), 5, 0.0));
}

}  // namespace

// The specialisation detector (docs/model.md §10) on hand-made trajectories.
#include <gtest/gtest.h>

#include <cmath>

#include "headspec/specialisation.hpp"

using namespace headspec;

namespace {

// A trajectory at t = 0, 0.5, 1, … whose M (H × F) is given by m(t).
template <class Fn>
std::vector<Record> trajectory(int H, int F, int points, Fn m) {
  std::vector<Record> out;
  for (int k = 0; k < points; ++k) {
    Record r;
    r.t = 0.5 * k;
    r.op.M = Eigen::MatrixXd::Zero(H, F);
    m(r.t, r.op.M);
    out.push_back(r);
  }
  return out;
}

}  // namespace

// ‖M_{:,f} − mean‖₂ by hand: column (1, −1, 3) has mean 1 and deviations (0, −2, 2).
TEST(Specialisation, SpreadIsTheNormOfTheDeviationFromTheHeadMean) {
  Eigen::MatrixXd M(3, 2);
  M << 1, 5, -1, 5, 3, 5;
  EXPECT_NEAR(head_spread(M, 0), std::sqrt(8.0), 1e-15);
  EXPECT_EQ(head_spread(M, 1), 0.0) << "heads moving together are not specialised";
}

TEST(Specialisation, NeverSpecialisedIsNaN) {
  // All heads grow together along both directions: large M, no spread.
  const auto rec = trajectory(4, 2, 20, [](double t, Eigen::MatrixXd& M) { M.setConstant(3 * t); });
  const auto tau = specialisation_times(rec, 0.2);
  ASSERT_EQ(tau.size(), 2u);
  EXPECT_TRUE(std::isnan(tau[0]));
  EXPECT_TRUE(std::isnan(tau[1]));
}

TEST(Specialisation, OnceAtTheFirstRecordAboveTheThreshold) {
  // Two heads split symmetrically along direction 1: spread = √2 · 0.1 t, which exceeds
  // δ = 0.2 first at t = 1.5 (at t = √2 ≈ 1.414 between records); it later shrinks again.
  const auto rec = trajectory(2, 2, 12, [](double t, Eigen::MatrixXd& M) {
    const double a = t < 4 ? 0.1 * t : 0.0;
    M(0, 1) = a;
    M(1, 1) = -a;
    M(0, 0) = M(1, 0) = 1;
  });
  const auto tau = specialisation_times(rec, 0.2);
  EXPECT_TRUE(std::isnan(tau[0]));
  EXPECT_EQ(tau[1], 1.5);
  // Strictly above δ: a spread exactly δ does not count.
  const auto at = trajectory(2, 1, 3, [](double t, Eigen::MatrixXd& M) { M(0, 0) = t >= 0.5 ? 1.0 : 0.0; });
  EXPECT_TRUE(std::isnan(specialisation_times(at, std::sqrt(0.5))[0]));
  EXPECT_EQ(specialisation_times(at, 0.7)[0], 0.5);
}

TEST(Specialisation, TwoDirectionsInTurn) {
  // Three heads: head 0 leaves the others along direction 2 at t = 2, then head 1 along
  // direction 0 at t = 4.5; direction 1 stays shared.
  const auto rec = trajectory(3, 3, 16, [](double t, Eigen::MatrixXd& M) {
    M.col(1).setConstant(2.0);
    if (t >= 2) M(0, 2) = 1.5;
    if (t >= 4.5) M(1, 0) = 1.5;
  });
  const auto tau = specialisation_times(rec, 1.0);
  EXPECT_EQ(tau[2], 2.0);
  EXPECT_EQ(tau[0], 4.5);
  EXPECT_TRUE(std::isnan(tau[1]));
  EXPECT_TRUE(specialisation_times({}, 1.0).empty());
}

// The reduced engine's fixed-size step against its general-size step from the same seed:
// the same numbers to rounding.
#include <gtest/gtest.h>

#include <cmath>

#include "headspec/gram_engine.hpp"

using namespace headspec;

namespace {

ModelSpec flip_model(int L) {
  ModelSpec m;
  m.prior = Prior::flip(Eigen::Vector2d(2.0, 2.0));
  m.activation = Activation::Softmax;
  m.readout = Readout::Learned;
  m.L = L;
  m.H = 2;
  return m;
}

}  // namespace

// The fixed-size step draws the same numbers in the same order as the general one and does
// the same arithmetic up to the order of a few sums, so trajectories from one seed agree to
// rounding.
TEST(GramFixedStep, SameTrajectoryAsGeneralStep) {
  for (const int L : {4, 5, 10})
    for (const Activation a : {Activation::Softmax, Activation::Softmax1})
      for (const int64_t D : {int64_t{20}, int64_t{1'000'000}}) {
        ModelSpec m = flip_model(L);
        m.activation = a;
        m.noise = 0.1;
        // ε = η/D of 0.05 and 0.002: visible moves in the steps run. (At D = 10^6 the keys
        // then grow to |κ| ~ 15 within 3000 steps, where the saturated softmax amplifies any
        // rounding difference; 300 steps stay in the regime of order-one keys.)
        m.lr = D == 20 ? 1.0 : 2e3;
        const uint64_t steps = D == 20 ? 3000 : 300;
        GramEngine fixed(m, D, 5), general(m, D, 5);
        general.use_general_step();
        ASSERT_TRUE(fixed.fixed_size_step());
        ASSERT_FALSE(general.fixed_size_step());
        const RowMatrix start = fixed.coordinates();
        for (uint64_t n = 0; n < steps; ++n) {
          fixed.step(n);
          general.step(n);
        }
        const RowMatrix& kf = fixed.coordinates();
        const RowMatrix& kg = general.coordinates();
        EXPECT_GT((kg - start).cwiseAbs().maxCoeff(), 1e-2) << "the keys moved";
        EXPECT_LT((kf - kg).cwiseAbs().maxCoeff(), 1e-11 * (1 + kg.cwiseAbs().maxCoeff())) << "L " << L << " D " << D;
        const OrderParameters of = fixed.order_parameters(), og = general.order_parameters();
        EXPECT_LT((of.c - og.c).cwiseAbs().maxCoeff(), 1e-11);
        EXPECT_FALSE(fixed.diverged());
      }
}

// Only the sizes and settings it was written for take the fixed-size step.
TEST(GramFixedStep, GeneralStepElsewhere) {
  EXPECT_TRUE(GramEngine(flip_model(5), 1000, 1).fixed_size_step());
  EXPECT_FALSE(GramEngine(flip_model(6), 1000, 1).fixed_size_step());   // no instance for L = 6
  EXPECT_FALSE(GramEngine(flip_model(5), 6, 1).fixed_size_step());      // D − r = 1 < H
  ModelSpec batch = flip_model(5);
  batch.batch = 2;
  EXPECT_FALSE(GramEngine(batch, 1000, 1).fixed_size_step());
  ModelSpec bayes = flip_model(5);
  bayes.activation = Activation::BayesSoftmax;
  EXPECT_FALSE(GramEngine(bayes, 1000, 1).fixed_size_step());
}

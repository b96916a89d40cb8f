// The attention kernel at fixed sizes (include/headspec/kernel_fixed.hpp) against the same
// kernel at run-time sizes (AttentionKernel): one code, the same numbers to rounding; and the reduced
// engine's fixed-size step against its general-size step from the same seed: the same
// numbers to rounding.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "headspec/gram_engine.hpp"
#include "headspec/kernel.hpp"
#include "headspec/kernel_fixed.hpp"

using namespace headspec;

namespace {

template <int H, int L>
void compare_kernels(Activation activation, double score_scale) {
  std::mt19937 gen(17 + H * 100 + L);
  std::normal_distribution<double> normal;
  AttentionKernel reference(activation, H, L);
  AttentionKernelFixed<H, L> fixed(activation);
  RowMatrix S(H, L), J_ref(H, L);
  Eigen::VectorXd g(L), c(H);
  double J[H * L];
  for (int trial = 0; trial < 200; ++trial) {
    for (int h = 0; h < H; ++h)
      for (int l = 0; l < L; ++l) S(h, l) = score_scale * normal(gen);
    for (int l = 0; l < L; ++l) g[l] = normal(gen);
    for (int h = 0; h < H; ++h) c[h] = normal(gen);
    reference.forward(S, g, c);
    reference.apply_jacobian(g, J_ref);
    fixed.forward(S.data(), g.data(), c.data());
    fixed.apply_jacobian(g.data(), J);
    // One code at both sizes; the compiler may still contract a product and a sum into one
    // multiply-add in one instance and not in the other, so the agreement is to rounding.
    // Relative to the size of the value (linear attention at scores of ±800 gives outputs
    // in the thousands); weights far below 1 must agree too.
    const double tol = 1e-14;
    auto close = [&](double b) { return tol * 10 * std::max(1.0, std::abs(b)); };
    for (int h = 0; h < H; ++h) {
      EXPECT_NEAR(fixed.head_outputs()[h], reference.head_outputs()[h], close(reference.head_outputs()[h]));
      for (int l = 0; l < L; ++l) {
        const double a = reference.attention()(h, l);
        EXPECT_NEAR(fixed.attention()[h * L + l], a, tol * std::max(std::abs(a), 1e-300) + 1e-300) << h << " " << l;
        EXPECT_NEAR(J[h * L + l], J_ref(h, l), close(J_ref(h, l)));
      }
    }
    EXPECT_NEAR(fixed.output(), reference.output(), close(reference.output()));
  }
}

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

TEST(KernelFixed, MatchesAttentionKernel) {
  for (const Activation a : all_activations())
    for (const double scale : {1.0, 30.0, 800.0}) {
      compare_kernels<2, 4>(a, scale);
      compare_kernels<2, 5>(a, scale);
      compare_kernels<2, 10>(a, scale);
      compare_kernels<3, 7>(a, scale);
    }
}

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

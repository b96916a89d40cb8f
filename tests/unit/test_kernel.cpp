// The per-sample kernel (docs/model.md §3): huge scores, the sigmoid, and the Bayes-softmax
// identity with the Bayes posterior over positions (docs/model.md §3, §8).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "headspec/kernel.hpp"
#include "headspec/prior.hpp"

using namespace headspec;

TEST(Kernel, HugeScoresGiveCorrectWeights) {
  // Scores of ±1000: softmax puts all weight on the largest; softmax-1 with all scores
  // −1000 attends to nothing; Bayes-softmax normalises over heads and positions.
  RowMatrix S(2, 3);
  S << 1000, -1000, 999, -1000, -1000, -1000;
  Eigen::VectorXd g(3), c = Eigen::VectorXd::Ones(2);
  g << 1, 2, 3;
  AttentionKernel soft(Activation::Softmax, 2, 3);
  soft.forward(S, g, c);
  EXPECT_NEAR(soft.attention()(0, 0), 1 / (1 + std::exp(-1.0)), 1e-15);
  EXPECT_NEAR(soft.attention()(1, 0), 1.0 / 3, 1e-15);
  AttentionKernel one(Activation::Softmax1, 2, 3);
  one.forward(S, g, c);
  EXPECT_NEAR(one.attention()(0, 0), 1 / (1 + std::exp(-1.0)), 1e-15);
  // e^{−1000} is taken as e^{−708} ≈ 3.3·10^-308, the exponential's floor (exp_nonpositive.hpp).
  EXPECT_LE(one.attention()(1, 0), 1e-307);
  EXPECT_NEAR(one.attention().row(1).sum(), 0.0, 1e-300);
  // Sigmoid, entry by entry: 1 at +1000, (almost) 0 at −1000, no normalisation, so a head
  // attends to two positions with weight ≈ 1 each (row sum 2) or to none.
  AttentionKernel sig(Activation::Sigmoid, 2, 3);
  sig.forward(S, g, c);
  EXPECT_EQ(sig.attention()(0, 0), 1.0);
  EXPECT_EQ(sig.attention()(0, 2), 1.0);
  EXPECT_LE(sig.attention()(0, 1), 1e-307);
  EXPECT_NEAR(sig.attention().row(0).sum(), 2.0, 1e-15);
  EXPECT_LE(sig.attention().row(1).sum(), 1e-306);
  EXPECT_TRUE(sig.attention().allFinite());
  AttentionKernel bayes(Activation::BayesSoftmax, 2, 3);
  bayes.forward(S, g, c);
  EXPECT_NEAR(bayes.attention().sum(), 1.0, 1e-15);
  EXPECT_NEAR(bayes.attention()(0, 2), std::exp(-1.0) / (1 + std::exp(-1.0)), 1e-15);
}

// Sigmoid against its definition 1/(1 + e^{−s}) (docs/model.md §3) at moderate scores.
TEST(Kernel, SigmoidIsTheLogisticFunction) {
  RowMatrix S(2, 4);
  S << -30, -2.5, 0, 0.7, 3, 12, -0.1, 40;
  Eigen::VectorXd g = Eigen::VectorXd::LinSpaced(4, -1, 2), c(2);
  c << 0.3, -1.2;
  AttentionKernel sig(Activation::Sigmoid, 2, 4);
  sig.forward(S, g, c);
  double yhat = 0;
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 4; ++l) {
      const double a = 1 / (1 + std::exp(-S(h, l)));
      EXPECT_NEAR(sig.attention()(h, l), a, 2e-16 * a) << h << " " << l;
      yhat += c[h] * a * g[l];
    }
  EXPECT_NEAR(sig.output(), yhat, 1e-15);
}

// docs/model.md §3/§8: Bayes-softmax with c_h = 1, one head per atom of `flip`, M_h = θ^a and
// Q⊥ = 0 (scores s_hℓ = θ^a·λ_ℓ) puts on position ℓ exactly the posterior P(ℓ* = ℓ | x).
TEST(Kernel, BayesSoftmaxIsTheBayesPosteriorForFlip) {
  for (int F : {1, 2, 3}) {
    Eigen::VectorXd nu(F);
    for (int f = 0; f < F; ++f) nu[f] = 0.7 + 1.3 * f;
    const Prior prior = Prior::flip(nu);
    const int H = static_cast<int>(prior.atoms().rows()), L = 6;
    ASSERT_EQ(H, 1 << (F - 1));
    std::mt19937_64 gen(7 + F);
    std::normal_distribution<double> n(0.0, 1.0);
    for (int trial = 0; trial < 50; ++trial) {
      RowMatrix lambda(L, F);
      for (int l = 0; l < L; ++l)
        for (int f = 0; f < F; ++f) lambda(l, f) = n(gen) * (1 + trial % 4);
      const RowMatrix S = prior.atoms() * lambda.transpose();
      Eigen::VectorXd g = Eigen::VectorXd::Zero(L);
      AttentionKernel k(Activation::BayesSoftmax, H, L);
      k.forward(S, g, Eigen::VectorXd::Ones(H));
      Eigen::VectorXd logw(L);
      for (int l = 0; l < L; ++l) logw[l] = prior.log_likelihood(lambda.row(l).data());
      const Eigen::VectorXd post = (logw.array() - logw.maxCoeff()).exp() / (logw.array() - logw.maxCoeff()).exp().sum();
      for (int l = 0; l < L; ++l) EXPECT_NEAR(k.position_weights()[l], post[l], 1e-13) << "F=" << F << " l=" << l;
    }
  }
}

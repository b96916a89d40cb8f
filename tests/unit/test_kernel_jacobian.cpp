// The per-sample kernel's ∂ŷ/∂s (docs/model.md §3) against central finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>

#include "headspec/kernel.hpp"

using namespace headspec;

namespace {

struct Case {
  Activation activation;
  Eigen::VectorXd c;
};

RowMatrix random_scores(std::mt19937_64& gen, int H, int L, double scale) {
  std::normal_distribution<double> n(0.0, 1.0);
  RowMatrix S(H, L);
  for (int h = 0; h < H; ++h)
    for (int l = 0; l < L; ++l) S(h, l) = scale * n(gen);
  return S;
}

}  // namespace

class KernelJacobian : public ::testing::TestWithParam<std::tuple<Activation, int>> {};

// Every activation × readout (sum c = 1, mean c = 1/H, a learned-like random c), at scores
// of order 1 and of order 1000 (log-sum-exp must keep everything finite).
TEST_P(KernelJacobian, MatchesCentralFiniteDifferences) {
  const auto [activation, readout_kind] = GetParam();
  const int H = 3, L = 5;
  std::mt19937_64 gen(42);
  std::normal_distribution<double> n(0.0, 1.0);
  for (double scale : {1.0, 30.0, 1000.0}) {
    for (int trial = 0; trial < 20; ++trial) {
      RowMatrix S = random_scores(gen, H, L, scale);
      Eigen::VectorXd g(L), c(H);
      for (int l = 0; l < L; ++l) g[l] = n(gen);
      for (int h = 0; h < H; ++h) c[h] = readout_kind == 0 ? 1.0 : readout_kind == 1 ? 1.0 / H : n(gen);
      AttentionKernel k(activation, H, L);
      k.forward(S, g, c);
      ASSERT_TRUE(std::isfinite(k.output()));
      ASSERT_TRUE(k.attention().allFinite());
      RowMatrix J;
      k.apply_jacobian(g, J);
      const double eps = 1e-6;
      for (int h = 0; h < H; ++h)
        for (int l = 0; l < L; ++l) {
          RowMatrix Sp = S, Sm = S;
          Sp(h, l) += eps;
          Sm(h, l) -= eps;
          AttentionKernel kp(activation, H, L), km(activation, H, L);
          kp.forward(Sp, g, c);
          km.forward(Sm, g, c);
          const double fd = (kp.output() - km.output()) / (2 * eps);
          EXPECT_NEAR(J(h, l), fd, 1e-6 * (1 + std::abs(fd))) << "h=" << h << " l=" << l << " scale=" << scale;
          // phi() is the same linear map entry by entry.
          double via_phi = 0;
          for (int lp = 0; lp < L; ++lp) via_phi += k.phi(h, l, lp) * g[lp];
          EXPECT_NEAR(J(h, l), via_phi, 1e-12 * (1 + std::abs(via_phi)));
        }
      // ∂ŷ/∂c_h = o_h
      for (int h = 0; h < H; ++h) {
        Eigen::VectorXd cp = c, cm = c;
        cp[h] += 1e-6;
        cm[h] -= 1e-6;
        AttentionKernel kp(activation, H, L), km(activation, H, L);
        kp.forward(S, g, cp);
        km.forward(S, g, cm);
        EXPECT_NEAR(k.head_outputs()[h], (kp.output() - km.output()) / 2e-6, 1e-6);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllActivationsAndReadouts, KernelJacobian,
                         ::testing::Combine(::testing::ValuesIn(all_activations()),
                                            ::testing::Values(0, 1, 2)));

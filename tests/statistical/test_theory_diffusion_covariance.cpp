// The stochastic theory's diffusion Σ (docs/model.md §12) against the covariance of the
// dense engine's one-step changes from the same state.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "dense_one_step.hpp"
#include "headspec/theory_diffusion.hpp"
#include "theory_states.hpp"

using namespace headspec;
using namespace headspec::testing;

namespace {

class TheoryDiffusionCovariance : public ::testing::TestWithParam<OneStepCase> {};

}  // namespace

// One step of B samples changes the state by (B/D)·(mean of B per-sample rates) (§4, §6), so
// the covariance of the change × D/B is Σ/B. The dense engine's change differs from that by
// O(D^{-1/2}) only in the cross terms x_ℓ·x_ℓ'/D of the SGD-noise term, far below the
// errors here. The error of each empirical covariance entry is the standard deviation of
// its products over √steps; Σ's own Monte Carlo error is that over √N of the same products
// (the theory's samples have the law of the dense engine's), hence the factor √(1 + steps/N).
TEST_P(TheoryDiffusionCovariance, SigmaEqualsTheCovarianceOfDenseStepsTimesD) {
  const auto p = GetParam();
  const ModelSpec m = model_of(p);
  const OrderParameters op = test_state(m, p.with_R);
  const int steps = 12000;
  const int64_t N = 200000;
  const Eigen::MatrixXd changes = dense_one_step_changes(m, op, 2000, steps);
  const TheoryDiffusion diffusion(m, N, 11, ValueChannel::Sampled, 2000.0);
  std::vector<double> x(diffusion.layout().size());
  diffusion.layout().pack(op, x.data());
  const Eigen::MatrixXd sigma = diffusion.covariance(x.data()) / p.batch;

  const Eigen::MatrixXd centred = changes.rowwise() - changes.colwise().mean();
  int sizeable = 0;
  for (Eigen::Index i = 0; i < sigma.rows(); ++i)
    for (Eigen::Index j = i; j < sigma.cols(); ++j) {
      const Eigen::ArrayXd products = centred.col(i).array() * centred.col(j).array();
      const double cov = products.sum() / (steps - 1);
      const double sd = std::sqrt((products - products.mean()).square().sum() / (steps - 1));
      const double se = sd / std::sqrt(static_cast<double>(steps)) * std::sqrt(1.0 + double(steps) / double(N));
      EXPECT_NEAR(sigma(i, j), cov, 4 * se) << "entry (" << i << ", " << j << ")";
      if (std::abs(cov) > 8 * se) ++sizeable;
    }
  // The comparison has power: the variances and the largest covariances are resolved.
  EXPECT_GE(sizeable, static_cast<int>(sigma.rows()));
}

INSTANTIATE_TEST_SUITE_P(Activations, TheoryDiffusionCovariance,
                         ::testing::Values(OneStepCase{Activation::Softmax, false, 1, 0.0},
                                           OneStepCase{Activation::Softmax, true, 1, 0.0},
                                           OneStepCase{Activation::BayesSoftmax, false, 1, 0.0},
                                           OneStepCase{Activation::Sigmoid, true, 2, 0.3},
                                           OneStepCase{Activation::Softmax1, false, 4, 0.5},
                                           OneStepCase{Activation::Softmax, false, 1, 0.0, true}),
                         [](const auto& info) { return name_of(info.param); });

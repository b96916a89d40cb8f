// The asymptotic theory's rates (docs/model.md §6) against the dense engine's mean one-step
// change from the same state.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "headspec/theory_integrator.hpp"
#include "dense_one_step.hpp"
#include "theory_states.hpp"

using namespace headspec;
using namespace headspec::testing;

namespace {

struct MeanAndError {
  std::vector<double> mean, stderr_;
};

// The mean one-step change × D/B of the dense engine from state op, over `steps` independent
// steps, in StateLayout order.
MeanAndError dense_one_step(const ModelSpec& m, const OrderParameters& op, int64_t D, int steps) {
  const Eigen::MatrixXd changes = dense_one_step_changes(m, op, D, steps);
  MeanAndError out;
  for (Eigen::Index i = 0; i < changes.cols(); ++i) {
    const double mean = changes.col(i).mean();
    out.mean.push_back(mean);
    out.stderr_.push_back(std::sqrt((changes.col(i).squaredNorm() / steps - mean * mean) / (steps - 1)));
  }
  return out;
}

}  // namespace

// docs/model.md §6: the rates are the mean change of one SGD step × D/B. At finite D the law of
// one sample's projections given the keys is exact (§5), so the only difference is
// O(1/D) in the SGD-noise term; the tolerance is 4 standard errors of the difference.
class TheoryOneStep : public ::testing::TestWithParam<OneStepCase> {};

TEST_P(TheoryOneStep, RateEqualsMeanDenseStepTimesD) {
  const auto p = GetParam();
  const ModelSpec m = model_of(p);
  const OrderParameters op = test_state(m, p.with_R);
  const MeanAndError dense = dense_one_step(m, op, 2000, 12000 / p.batch);
  TheoryOptions o;
  o.samples = 200000;
  o.seed = 11;
  o.channel = p.with_R ? ValueChannel::Sampled : ValueChannel::Integrated;
  const TheoryEngine theory(m, o);
  TheoryEvaluation ev;
  theory.evaluate(op, 0, ev);
  int sizeable = 0;
  for (std::size_t i = 0; i < ev.rate.size(); ++i) {
    const double se = std::hypot(dense.stderr_[i], ev.rate_stderr[i]);
    EXPECT_NEAR(ev.rate[i], dense.mean[i], 4 * se) << "state entry " << i;
    if (std::abs(ev.rate[i]) > 8 * se) ++sizeable;
  }
  // The comparison has power: at least the drift of M is resolved far beyond its errors.
  EXPECT_GE(sizeable, 3);
}

INSTANTIATE_TEST_SUITE_P(Activations, TheoryOneStep,
                         ::testing::Values(OneStepCase{Activation::Softmax, false, 1, 0.0},
                                           OneStepCase{Activation::Softmax1, false, 1, 0.0},
                                           OneStepCase{Activation::BayesSoftmax, false, 1, 0.0},
                                           OneStepCase{Activation::Linear, false, 1, 0.0},
                                           OneStepCase{Activation::Sigmoid, false, 1, 0.0},
                                           OneStepCase{Activation::Sigmoid, true, 2, 0.3},
                                           OneStepCase{Activation::Softmax, true, 1, 0.0},
                                           OneStepCase{Activation::Softmax1, false, 4, 0.5},
                                           OneStepCase{Activation::Softmax, false, 1, 0.0, true}),
                         [](const auto& info) { return name_of(info.param); });

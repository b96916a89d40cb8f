// The theory's value channel (docs/model.md §7): the general path (g sampled) against the
// integrated-out one.
#include <gtest/gtest.h>

#include <cmath>

#include "headspec/theory_integrator.hpp"
#include "theory_states.hpp"

using namespace headspec;
using namespace headspec::testing;

// docs/model.md §7: integrating g out exactly changes the estimator, not its mean.
TEST(TheoryValueChannel, IntegratedAndSampledPathsAgree) {
  for (Activation a : {Activation::Softmax, Activation::Softmax1, Activation::BayesSoftmax}) {
    ModelSpec m = model_with(a);
    m.noise = 0.3;
    const OrderParameters op = test_state(m, false);
    TheoryOptions o;
    o.samples = 100000;
    o.seed = 5;
    TheoryEvaluation integrated, sampled;
    TheoryEngine(m, o).evaluate(op, 0, integrated);
    o.channel = ValueChannel::Sampled;
    o.seed = 6;
    TheoryEngine(m, o).evaluate(op, 0, sampled);
    for (std::size_t i = 0; i < integrated.rate.size(); ++i) {
      const double se = std::hypot(integrated.rate_stderr[i], sampled.rate_stderr[i]);
      EXPECT_NEAR(integrated.rate[i], sampled.rate[i], 4 * se) << to_string(a) << " entry " << i;
    }
    EXPECT_NEAR(integrated.error, sampled.error, 4 * std::hypot(integrated.error_stderr, sampled.error_stderr));
    // Integrating out g removes variance.
    const std::size_t q11 = TheoryEngine(m, o).layout().q_index(0, 0);
    EXPECT_LT(integrated.rate_stderr[q11], sampled.rate_stderr[q11]);
  }
}

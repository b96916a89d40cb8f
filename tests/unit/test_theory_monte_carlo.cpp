// The theory's Monte Carlo samples: the same bits whatever the thread count, fixed or
// resampled per draw.
#include <gtest/gtest.h>
#include <omp.h>

#include "headspec/theory_integrator.hpp"
#include "theory_states.hpp"

using namespace headspec;
using namespace headspec::testing;

TEST(TheoryMonteCarlo, SameBitsWhateverTheThreadCount) {
  const ModelSpec m = model_with(Activation::Softmax);
  for (ValueChannel channel : {ValueChannel::Integrated, ValueChannel::Sampled})
    for (MonteCarloMode mode : {MonteCarloMode::Fixed, MonteCarloMode::Resample}) {
      const OrderParameters op = test_state(m, channel == ValueChannel::Sampled);
      TheoryOptions o;
      o.samples = 3000;
      o.mode = mode;
      o.channel = channel;
      const TheoryEngine engine(m, o);
      TheoryEvaluation one, two, other_draw;
      const int saved = omp_get_max_threads();
      omp_set_num_threads(1);
      engine.evaluate(op, 3, one);
      omp_set_num_threads(2);
      engine.evaluate(op, 3, two);
      engine.evaluate(op, 4, other_draw);
      omp_set_num_threads(saved);
      EXPECT_EQ(one.rate, two.rate);
      EXPECT_EQ(one.error, two.error);
      // Fixed samples ignore the draw index; fresh samples depend on it.
      if (mode == MonteCarloMode::Fixed)
        EXPECT_EQ(one.rate, other_draw.rate);
      else
        EXPECT_NE(one.rate, other_draw.rate);
    }
}

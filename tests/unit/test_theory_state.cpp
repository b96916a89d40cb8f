// The theory's state vector (StateLayout): packing and unpacking the order parameters.
#include <gtest/gtest.h>

#include <vector>

#include "headspec/theory_integrator.hpp"
#include "theory_states.hpp"

using namespace headspec;
using namespace headspec::testing;

TEST(TheoryState, PackUnpackRoundTrip) {
  const ModelSpec m = model_with(Activation::Softmax);
  const OrderParameters op = test_state(m, true);
  const StateLayout layout(2, 2, true);
  std::vector<double> x(layout.size());
  layout.pack(op, x.data());
  EXPECT_EQ(layout.size(), 4u + 2u + 3u + 2u);
  const OrderParameters back = layout.unpack(x.data(), Eigen::VectorXd());
  EXPECT_EQ(back.M, op.M);
  EXPECT_EQ(back.R, op.R);
  EXPECT_EQ(back.Q, op.Q);
  EXPECT_EQ(back.c, op.c);
}

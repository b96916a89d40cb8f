// The theory's integrators (include/headspec/theory_integrator.hpp): their orders of convergence.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "headspec/theory_integrator.hpp"
#include "theory_states.hpp"

using namespace headspec;
using namespace headspec::testing;

// Fixed samples make the right-hand side smooth: the global error of a method of order p
// falls by 2^p when dt is halved (odeint's own test pattern).
TEST(TheoryIntegrators, ConvergenceOrders) {
  const ModelSpec m = model_with(Activation::Softmax);
  TheoryOptions o;
  o.samples = 2000;
  const TheoryEngine engine(m, o);
  // Small N: one thread avoids a thread team per evaluation.
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  OrderParameters init = test_state(m, false);
  init.M *= 0.3;
  init.Q = init.M * init.M.transpose() + Eigen::Matrix2d::Identity();
  auto final_state = [&](Integrator method, double dt) {
    IntegrationSpec s;
    s.method = method;
    s.dt = dt;
    s.T = 3.2;
    s.record_every = 3.2;
    const TheoryResult r = integrate_theory(engine, init, s, 0);
    std::vector<double> x(engine.layout().size());
    engine.layout().pack(r.trajectory.records.back().op, x.data());
    EXPECT_DOUBLE_EQ(r.trajectory.records.back().t, 3.2);
    return x;
  };
  auto distance = [](const std::vector<double>& a, const std::vector<double>& b) {
    double d = 0;
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
    return d;
  };
  const std::vector<double> reference = final_state(Integrator::RK4, 0.4 / 16);
  struct Expect {
    Integrator method;
    double order;
  };
  for (Expect e : {Expect{Integrator::RK4, 4}, Expect{Integrator::Heun, 2}, Expect{Integrator::Euler, 1}}) {
    const double e1 = distance(final_state(e.method, 0.4), reference);
    const double e2 = distance(final_state(e.method, 0.2), reference);
    const double e3 = distance(final_state(e.method, 0.1), reference);
    const double expected = std::pow(2.0, e.order);
    EXPECT_NEAR(e1 / e2, expected, 0.25 * expected) << to_string(e.method) << " " << e1 << " " << e2;
    EXPECT_NEAR(e2 / e3, expected, 0.25 * expected) << to_string(e.method) << " " << e2 << " " << e3;
  }
  // dopri5 with error control lands on the reference.
  IntegrationSpec s;
  s.method = Integrator::Dopri5;
  s.T = 3.2;
  s.record_every = 1.6;
  s.dt = 0.1;
  s.tolerance = 1e-10;
  const TheoryResult r = integrate_theory(engine, init, s, 0);
  ASSERT_EQ(r.trajectory.records.size(), 3u);
  std::vector<double> x(engine.layout().size());
  engine.layout().pack(r.trajectory.records.back().op, x.data());
  EXPECT_LT(distance(x, reference), 1e-7);
  omp_set_num_threads(saved);
}

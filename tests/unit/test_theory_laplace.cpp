// The laplace method (docs/model.md §6, "Laplace quadrature"): exact invariance of a zero-mean
// direction's empty column, exact equivariance under its sign flip and under head
// permutations, the same bits whatever the thread count, the quadrature converged at its
// default resolution, and the models it refuses, naming the flag.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "headspec/errors.hpp"
#include "headspec/symmetry_group.hpp"
#include "headspec/theory_engine.hpp"
#include "theory_states.hpp"

using namespace headspec;
using headspec::testing::generic_state;

namespace {

TheoryOptions laplace_options() {
  TheoryOptions o;
  o.method = SamplingMethod::Laplace;
  return o;
}

// Softmax and softmax-1, fixed and learned readout, B = 4 with label noise, and the
// sign-symmetric priors: flip with one and with two flipping directions, gauss, a mixture.
std::vector<std::pair<std::string, ModelSpec>> models() {
  std::vector<std::pair<std::string, ModelSpec>> out;
  for (Activation a : {Activation::Softmax, Activation::Softmax1}) {
    ModelSpec m;  // flip ν = (2, 2), L = 10, H = 2, learned readout
    m.activation = a;
    out.emplace_back(std::string(to_string(a)), m);
    m.readout = Readout::Sum;
    m.batch = 4;
    m.noise = 0.3;
    out.emplace_back(std::string(to_string(a)) + " sum B4 noise", m);
  }
  ModelSpec f3;
  f3.prior = Prior::flip(Eigen::Vector3d(2.0, 1.0, 1.5));
  f3.L = 6;
  out.emplace_back("flip F3", f3);
  ModelSpec g;
  g.prior = Prior::gauss(Eigen::Vector2d(3.0, 1.5));
  g.L = 5;
  out.emplace_back("gauss", g);
  Eigen::MatrixXd atoms(4, 2);
  atoms << 1.0, 1.5, 1.0, -1.5, -0.5, 0.7, -0.5, -0.7;
  ModelSpec x;
  x.prior = Prior::mixture(atoms, Eigen::Vector4d(0.3, 0.3, 0.2, 0.2));
  x.L = 4;
  out.emplace_back("mixture", x);
  return out;
}

}  // namespace

TEST(TheoryLaplace, EmptyZeroMeanColumnHasExactlyZeroRates) {
  for (const auto& [name, m] : models()) {
    OrderParameters op = generic_state(m, false);
    const int f = 1;  // sign-symmetric in every model above
    op.M.col(f).setZero();
    op.Q = op.M * op.M.transpose() + 0.5 * Eigen::MatrixXd::Identity(m.H, m.H);
    const TheoryEngine engine(m, laplace_options());
    TheoryEvaluation ev;
    engine.evaluate(op, 0, ev);
    for (int h = 0; h < m.H; ++h) EXPECT_EQ(ev.rate[engine.layout().m_index(h, f)], 0.0) << name << " head " << h;
    EXPECT_NE(ev.rate[engine.layout().m_index(0, 0)], 0.0) << name;
  }
}

TEST(TheoryLaplace, SignFlipOfAColumnNegatesItsRatesExactly) {
  for (const auto& [name, m] : models()) {
    const OrderParameters op = generic_state(m, false);
    OrderParameters flipped = op;
    flipped.M.col(1) *= -1.0;
    const TheoryEngine engine(m, laplace_options());
    TheoryEvaluation a, b;
    engine.evaluate(op, 0, a);
    engine.evaluate(flipped, 0, b);
    for (std::size_t i = 0; i < a.rate.size(); ++i) {
      const bool in_column = i < engine.layout().r_index(0) && i % m.F() == 1;
      EXPECT_EQ(b.rate[i], in_column ? -a.rate[i] : a.rate[i]) << name << " entry " << i;
    }
    EXPECT_EQ(a.error, b.error) << name;
  }
}

TEST(TheoryLaplace, HeadSwapSwapsTheRightHandSideExactly) {
  for (const auto& [name, m] : models()) {
    const OrderParameters op = generic_state(m, false);
    const TheoryEngine engine(m, laplace_options());
    const StateLayout& lay = engine.layout();
    const std::vector<int> swap{1, 0};
    TheoryEvaluation base, moved;
    engine.evaluate(op, 0, base);
    engine.evaluate(SymmetryGroup::permute(op, swap), 0, moved);
    for (int h = 0; h < 2; ++h) {
      for (int f = 0; f < m.F(); ++f) EXPECT_EQ(moved.rate[lay.m_index(h, f)], base.rate[lay.m_index(swap[h], f)]);
      for (int g = 0; g < 2; ++g) EXPECT_EQ(moved.rate[lay.q_index(h, g)], base.rate[lay.q_index(swap[h], swap[g])]);
      if (lay.learned_readout()) {
        EXPECT_EQ(moved.rate[lay.c_index(h)], base.rate[lay.c_index(swap[h])]);
      }
    }
    EXPECT_EQ(moved.error, base.error) << name;
  }
}

TEST(TheoryLaplace, SameBitsWhateverTheThreadCount) {
  const ModelSpec m;
  const OrderParameters op = generic_state(m, false);
  TheoryEvaluation one, two;
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  TheoryEngine(m, laplace_options()).evaluate(op, 0, one);
  omp_set_num_threads(2);
  TheoryEngine(m, laplace_options()).evaluate(op, 0, two);
  omp_set_num_threads(threads);
  EXPECT_EQ(one.rate, two.rate);
  EXPECT_EQ(one.error, two.error);
}

// The default rule against a finer one (32 nodes, step 0.35 in log u): every rate and ε within
// 10^-7, at the generic state of each model and at one head alone.
TEST(TheoryLaplace, DefaultRuleIsConverged) {
  std::vector<std::pair<std::string, ModelSpec>> cases = models();
  ModelSpec one_head;
  one_head.H = 1;
  cases.emplace_back("H = 1", one_head);
  for (const auto& [name, m] : cases) {
    const OrderParameters op = generic_state(m, false);
    TheoryOptions fine = laplace_options();
    fine.quadrature_nodes = 32;
    fine.quadrature_step = 0.35;
    TheoryEvaluation a, b;
    TheoryEngine(m, laplace_options()).evaluate(op, 0, a);
    TheoryEngine(m, fine).evaluate(op, 0, b);
    for (std::size_t i = 0; i < a.rate.size(); ++i) EXPECT_NEAR(a.rate[i], b.rate[i], 1e-7) << name << " entry " << i;
    EXPECT_NEAR(a.error, b.error, 1e-7) << name;
  }
}

// --mc-error's estimate: the coarser rule's difference from the default is at least the
// default's own difference from a finer rule (32 nodes, step 0.35), for every rate and ε at the
// generic state of each model, so the reported error does not understate the rule's error.
TEST(TheoryLaplace, CoarserRuleBoundsTheRulesError) {
  for (const auto& [name, m] : models()) {
    const OrderParameters op = generic_state(m, false);
    TheoryOptions fine = laplace_options();
    fine.quadrature_nodes = 32;
    fine.quadrature_step = 0.35;
    TheoryEvaluation rule, coarse, finer;
    TheoryEngine(m, laplace_options()).evaluate(op, 0, rule);
    TheoryEngine(m, coarser_rule(laplace_options())).evaluate(op, 0, coarse);
    TheoryEngine(m, fine).evaluate(op, 0, finer);
    double estimate = std::abs(rule.error - coarse.error), error = std::abs(rule.error - finer.error);
    for (std::size_t i = 0; i < rule.rate.size(); ++i) {
      estimate = std::max(estimate, std::abs(rule.rate[i] - coarse.rate[i]));
      error = std::max(error, std::abs(rule.rate[i] - finer.rate[i]));
    }
    EXPECT_GE(estimate, error) << name;
    EXPECT_LT(estimate, 1e-4) << name;  // and still small: a coarser rule, not a different one
  }
}

// auto: laplace where its conditions hold, sobol otherwise; a named method stays itself.
TEST(TheoryLaplace, AutoResolvesToLaplaceWhereItApplies) {
  TheoryOptions automatic;
  automatic.method = SamplingMethod::Auto;
  EXPECT_EQ(resolved_method(ModelSpec{}, automatic), SamplingMethod::Laplace);
  ModelSpec one_head;
  one_head.H = 1;
  one_head.activation = Activation::Softmax1;
  EXPECT_EQ(resolved_method(one_head, automatic), SamplingMethod::Laplace);
  ModelSpec sigmoid, three;
  sigmoid.activation = Activation::Sigmoid;
  three.H = 3;
  EXPECT_EQ(resolved_method(sigmoid, automatic), SamplingMethod::Sobol);
  EXPECT_EQ(resolved_method(three, automatic), SamplingMethod::Sobol);
  TheoryOptions sampled = automatic, fresh = automatic;
  sampled.channel = ValueChannel::Sampled;
  fresh.mode = MonteCarloMode::Resample;
  EXPECT_EQ(resolved_method(ModelSpec{}, sampled), SamplingMethod::Sobol);
  EXPECT_EQ(resolved_method(ModelSpec{}, fresh), SamplingMethod::Sobol);
  for (SamplingMethod named : {SamplingMethod::Plain, SamplingMethod::Symmetric, SamplingMethod::Sobol}) {
    TheoryOptions o;
    o.method = named;
    EXPECT_EQ(resolved_method(ModelSpec{}, o), named);
  }
  EXPECT_EQ(TheoryEngine(ModelSpec{}, automatic).options().method, SamplingMethod::Laplace);
}

TEST(TheoryLaplace, RefusesWhatItDoesNotCoverNamingTheFlag) {
  auto refused = [](const ModelSpec& m, const TheoryOptions& o) {
    try {
      TheoryEngine engine(m, o);
    } catch (const ParameterError& e) {
      return std::string(e.what()).find("laplace") != std::string::npos && e.name() == "mc-method";
    }
    return false;
  };
  ModelSpec sigmoid;
  sigmoid.activation = Activation::Sigmoid;
  EXPECT_TRUE(refused(sigmoid, laplace_options()));
  ModelSpec three;
  three.H = 3;
  EXPECT_TRUE(refused(three, laplace_options()));
  TheoryOptions sampled = laplace_options();
  sampled.channel = ValueChannel::Sampled;
  EXPECT_TRUE(refused(ModelSpec{}, sampled));
  TheoryOptions fresh = laplace_options();
  fresh.mode = MonteCarloMode::Resample;
  EXPECT_TRUE(refused(ModelSpec{}, fresh));
}

// Wide scores (Q_hh = 65, L = 2: normalisers spanning e^{±60}): every value finite and the
// default rule within 10^-5 of a finer one (the node count grows with the scores' spread;
// e^{−uE} is set to 0 where it underflows, whose powers of uE overflowed before).
TEST(TheoryLaplace, WideScoresStayAccurate) {
  ModelSpec m;
  m.L = 2;
  OrderParameters op;
  op.M.resize(2, 2);
  op.M << 7.6, 2.0, 7.2, -2.0;
  op.R = Eigen::VectorXd::Zero(2);
  Eigen::Matrix2d ortho;
  ortho << 3.2, 0.4, 0.4, 2.8;
  op.Q = op.M * op.M.transpose() + ortho;
  op.c = Eigen::Vector2d(0.45, 0.44);
  TheoryOptions fine = laplace_options();
  fine.quadrature_nodes = 40;
  fine.quadrature_step = 0.3;
  TheoryEvaluation a, b;
  TheoryEngine(m, laplace_options()).evaluate(op, 0, a);
  TheoryEngine(m, fine).evaluate(op, 0, b);
  for (std::size_t i = 0; i < a.rate.size(); ++i) {
    EXPECT_TRUE(std::isfinite(a.rate[i])) << "entry " << i;
    EXPECT_NEAR(a.rate[i], b.rate[i], 1e-5) << "entry " << i;
  }
  EXPECT_NEAR(a.error, b.error, 1e-5);
}

// docs/model.md §6, "Divergence": laplace's rules grow with the scores' spread, so the engine
// refuses a state whose rules would pass its per-evaluation limits before allocating anything
// (at Q_hh = 10^4 an evaluation would want tens of GiB: the test would crash without the
// check), and every method refuses an order parameter past kExplodedScale · scale and a
// non-finite one. The states of a converging run pass.
TEST(TheoryLaplace, RefusesExplodedStatesBeforeAllocating) {
  ModelSpec m;  // flip ν = (2, 2), L = 10, H = 2
  const TheoryEngine laplace(m, laplace_options());
  TheoryOptions sobol_options;
  sobol_options.method = SamplingMethod::Sobol;
  sobol_options.samples = 256;
  const TheoryEngine sobol(m, sobol_options);
  OrderParameters op = generic_state(m, false);
  TheoryEvaluation ev;
  EXPECT_NO_THROW(laplace.evaluate(op, 0, ev, 1.0));
  EXPECT_NO_THROW(sobol.evaluate(op, 0, ev, 1.0));

  OrderParameters wide = op;
  wide.Q.diagonal().array() += 1e4;
  try {
    laplace.evaluate(wide, 0, ev, 2.5);
    ADD_FAILURE() << "laplace evaluated at Q_hh = 10^4";
  } catch (const DivergenceError& e) {
    EXPECT_EQ(e.time, 2.5);
    EXPECT_NE(std::string(e.what()).find("laplace's rules"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(sobol.evaluate(wide, 0, ev, 2.5)) << "a sampled method's cost does not grow with the state";

  OrderParameters exploded = op;
  exploded.c[1] = 2.1 * TheoryEngine::kExplodedScale * 2.0;  // past 10^6 · max(1, q0, ν) = 2·10^6
  for (const TheoryEngine* engine : {&laplace, &sobol}) {
    try {
      engine->evaluate(exploded, 0, ev, 3.0);
      ADD_FAILURE() << "evaluated at c_2 = 4.2e6";
    } catch (const DivergenceError& e) {
      EXPECT_NE(std::string(e.what()).find("c_2 = 4.2e+06"), std::string::npos) << e.what();
    }
  }
  OrderParameters not_finite = op;
  not_finite.M(0, 1) = std::nan("");
  EXPECT_THROW(sobol.evaluate(not_finite, 0, ev, 3.0), DivergenceError);
}


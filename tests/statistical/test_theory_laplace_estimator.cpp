// The laplace method (docs/model.md §6, "Laplace quadrature") takes the same expectations as
// the Monte Carlo methods: against the plain method with 4·10^5 samples, every rate and ε
// within 4 of plain's standard errors, over the activations, readouts, priors and sizes the
// method covers.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "headspec/theory_engine.hpp"

using namespace headspec;

namespace {

OrderParameters state_of(const ModelSpec& m) {
  const int H = m.H, F = m.F();
  OrderParameters op;
  op.M.resize(H, F);
  for (int h = 0; h < H; ++h)
    for (int f = 0; f < F; ++f) op.M(h, f) = 0.5 + 0.3 * h - 0.25 * f + 0.1 * h * f;
  op.R = Eigen::VectorXd::Zero(H);
  Eigen::MatrixXd ortho = 0.6 * Eigen::MatrixXd::Identity(H, H);
  if (H == 2) ortho(0, 1) = ortho(1, 0) = 0.2;
  op.Q = op.M * op.M.transpose() + ortho;
  op.c = m.initial_readout();
  if (m.readout == Readout::Learned)
    for (int h = 0; h < H; ++h) op.c[h] = 0.55 - 0.1 * h;
  return op;
}

std::vector<std::pair<std::string, ModelSpec>> models() {
  std::vector<std::pair<std::string, ModelSpec>> out;
  ModelSpec fig1;  // flip ν = (2, 2), L = 10, H = 2, softmax, learned readout
  out.emplace_back("softmax", fig1);
  ModelSpec one = fig1;
  one.activation = Activation::Softmax1;
  one.readout = Readout::Sum;
  one.batch = 4;
  one.noise = 0.3;
  out.emplace_back("softmax-1 sum B4 noise", one);
  ModelSpec single = fig1;
  single.H = 1;
  single.L = 5;
  out.emplace_back("H = 1", single);
  ModelSpec f3 = fig1;
  f3.prior = Prior::flip(Eigen::Vector3d(2.0, 1.0, 1.5));
  f3.L = 6;
  out.emplace_back("flip F3", f3);
  ModelSpec g = fig1;
  g.prior = Prior::gauss(Eigen::Vector2d(3.0, 1.5));
  g.L = 5;
  out.emplace_back("gauss", g);
  ModelSpec s = fig1;
  s.prior = Prior::spike(Eigen::Vector2d(1.0, 0.5));
  s.readout = Readout::Mean;
  out.emplace_back("spike mean", s);
  Eigen::MatrixXd atoms(3, 2);
  atoms << 1.0, 1.5, 1.0, -1.5, -0.5, 0.0;
  ModelSpec x = fig1;
  x.prior = Prior::mixture(atoms, Eigen::Vector3d(0.35, 0.35, 0.3));
  x.L = 4;
  out.emplace_back("mixture", x);
  return out;
}

}  // namespace

TEST(TheoryLaplaceEstimator, AgreesWithPlainMonteCarloWithinFourStandardErrors) {
  for (const auto& [name, m] : models()) {
    const OrderParameters op = state_of(m);
    TheoryOptions plain;
    plain.samples = 400000;
    plain.seed = 11;
    TheoryOptions laplace;
    laplace.method = SamplingMethod::Laplace;
    TheoryEvaluation mc, q;
    TheoryEngine(m, plain).evaluate(op, 0, mc);
    TheoryEngine(m, laplace).evaluate(op, 0, q);
    for (std::size_t i = 0; i < q.rate.size(); ++i) {
      if (mc.rate_stderr[i] == 0) {  // dR/dt: 0 on both
        EXPECT_EQ(q.rate[i], 0.0) << name << " entry " << i;
        continue;
      }
      EXPECT_LE(std::abs(q.rate[i] - mc.rate[i]), 4 * mc.rate_stderr[i])
          << name << " entry " << i << ": laplace " << q.rate[i] << ", plain " << mc.rate[i] << " ± "
          << mc.rate_stderr[i];
    }
    EXPECT_LE(std::abs(q.error - mc.error), 4 * mc.error_stderr) << name << ": laplace " << q.error << ", plain "
                                                                 << mc.error << " ± " << mc.error_stderr;
  }
}

// The stochastic theory's drift corrected along the unspecialised path (theory_reference.hpp,
// docs/model.md §12 "Reference path"): on the path it is the reference's drift, with the
// reference's spread slopes; it keeps the exact symmetry of the rates it corrects.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "headspec/errors.hpp"
#include "headspec/symmetry_group.hpp"
#include "headspec/theory_reference.hpp"

using namespace headspec;

namespace {

ModelSpec fig6_model(int H = 2) {
  ModelSpec m;  // flip ν = (2, 2): direction 2 is sign-symmetric
  m.prior = Prior::flip(Eigen::Vector2d(2.0, 2.0));
  m.L = 5;
  m.H = H;
  return m;
}

TheoryOptions sobol(int64_t samples, uint32_t seed = 3) {
  TheoryOptions o;
  o.samples = samples;
  o.method = SamplingMethod::Sobol;
  o.seed = seed;
  return o;
}

IntegrationSpec heun(double dt, double T, int64_t reference) {
  IntegrationSpec s;
  s.method = Integrator::Heun;
  s.dt = dt;
  s.T = T;
  s.reference_samples = reference;
  return s;
}

}  // namespace

// At every grid time the corrected drift of N samples is the drift of N° samples (rates and ε),
// and between grid times the linear blend of the two neighbours' corrections.
TEST(ReferencePath, OnThePathTheCorrectedDriftIsTheReferences) {
  const ModelSpec m = fig6_model();
  const TheoryEngine drift(m, sobol(512)), reference(m, sobol(8192));
  const ReferencePath path(drift, reference, Integrator::Heun, 0.5, 20);
  ASSERT_EQ(path.points(), 41u);
  for (std::size_t k : {std::size_t{0}, std::size_t{7}, std::size_t{40}}) {
    const double t = 0.5 * static_cast<double>(k);
    const std::vector<double>& x = path.state(k);
    TheoryEvaluation own, ref;
    drift.evaluate(x.data(), 0, own, t);
    reference.evaluate(x.data(), 0, ref, t);
    double largest_difference = 0;
    for (std::size_t i = 0; i < x.size(); ++i) largest_difference = std::max(largest_difference, std::abs(own.rate[i] - ref.rate[i]));
    ASSERT_GT(largest_difference, 1e-5) << "the two sample sizes must differ for the test to mean anything";
    path.correct(x.data(), t, own);
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(own.rate[i], ref.rate[i], 1e-14) << "k " << k << " i " << i;
    EXPECT_NEAR(own.error, ref.error, 1e-14);
  }
  // The path is the reference's own Heun trajectory from the symmetric start.
  std::vector<double> x = path.state(0), k1(x.size()), y(x.size());
  TheoryEvaluation e1, e2;
  reference.evaluate(x.data(), 0, e1, 0.0);
  for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] + 0.5 * e1.rate[i];
  reference.evaluate(y.data(), 0, e2, 0.5);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(path.state(1)[i], x[i] + 0.25 * (e1.rate[i] + e2.rate[i]), 1e-14);
}

// Off the path along the spread M_{:,2} the correction is first order: the corrected drift's
// slope there is the reference's (central differences), not the drift's own.
TEST(ReferencePath, TheSpreadsSlopeIsTheReferences) {
  const ModelSpec m = fig6_model();
  const TheoryEngine drift(m, sobol(512)), reference(m, sobol(8192));
  const ReferencePath path(drift, reference, Integrator::Euler, 1.0, 30);
  const StateLayout& lay = drift.layout();
  const std::size_t k = 30;
  const double t = 30.0, h = 1e-4;
  std::vector<double> x = path.state(k);
  x[lay.m_index(0, 1)] += h / std::sqrt(2.0);
  x[lay.m_index(1, 1)] -= h / std::sqrt(2.0);
  TheoryEvaluation own, ref;
  drift.evaluate(x.data(), 0, own, t);
  reference.evaluate(x.data(), 0, ref, t);
  const double own_slope = (own.rate[lay.m_index(0, 1)] - own.rate[lay.m_index(1, 1)]) / (std::sqrt(2.0) * h);
  path.correct(x.data(), t, own);
  const double ref_slope = (ref.rate[lay.m_index(0, 1)] - ref.rate[lay.m_index(1, 1)]) / (std::sqrt(2.0) * h);
  const double corrected = (own.rate[lay.m_index(0, 1)] - own.rate[lay.m_index(1, 1)]) / (std::sqrt(2.0) * h);
  ASSERT_GT(std::abs(own_slope - ref_slope), 1e-4) << "the sample sizes' growth rates must differ";
  EXPECT_NEAR(corrected, ref_slope, 1e-6);
}

// With the column M_{:,2} empty the corrected rates of that column are exactly 0; permuting
// the heads of any state permutes the corrected rates bit for bit (H = 3, every permutation).
TEST(ReferencePath, KeepsTheExactSymmetry) {
  const ModelSpec m = fig6_model(3);
  const TheoryEngine drift(m, sobol(256)), reference(m, sobol(2048));
  const ReferencePath path(drift, reference, Integrator::RK4, 1.0, 10);
  const StateLayout& lay = drift.layout();
  OrderParameters op;
  op.M = Eigen::MatrixXd(3, 2);
  op.M << 0.7, 0.0, 0.5, 0.0, 0.2, 0.0;
  op.R = Eigen::VectorXd::Zero(3);
  op.Q = op.M * op.M.transpose() + 0.6 * Eigen::MatrixXd::Identity(3, 3);
  op.c = Eigen::Vector3d(0.5, 0.4, 0.3);
  std::vector<double> x(lay.size());
  lay.pack(op, x.data());
  TheoryEvaluation ev;
  drift.evaluate(x.data(), 0, ev, 3.25);
  path.correct(x.data(), 3.25, ev);
  for (int h = 0; h < 3; ++h) EXPECT_EQ(ev.rate[lay.m_index(h, 1)], 0.0) << h;

  op.M << 0.7, 0.13, 0.5, -0.41, 0.2, 0.05;
  op.Q = op.M * op.M.transpose() + 0.6 * Eigen::MatrixXd::Identity(3, 3);
  lay.pack(op, x.data());
  drift.evaluate(x.data(), 0, ev, 3.25);
  path.correct(x.data(), 3.25, ev);
  const SymmetryGroup group(m);
  for (const std::vector<int>& perm : group.permutations()) {
    std::vector<double> px(lay.size());
    lay.pack(SymmetryGroup::permute(op, perm), px.data());
    TheoryEvaluation pev;
    drift.evaluate(px.data(), 0, pev, 3.25);
    path.correct(px.data(), 3.25, pev);
    for (int h = 0; h < 3; ++h) {
      for (int f = 0; f < 2; ++f) EXPECT_EQ(pev.rate[lay.m_index(h, f)], ev.rate[lay.m_index(perm[h], f)]);
      for (int g = 0; g < 3; ++g) EXPECT_EQ(pev.rate[lay.q_index(h, g)], ev.rate[lay.q_index(perm[h], perm[g])]);
      EXPECT_EQ(pev.rate[lay.c_index(h)], ev.rate[lay.c_index(perm[h])]);
    }
    EXPECT_EQ(pev.error, ev.error);
  }
}

TEST(ReferencePath, RefusesThePlainMethodNamingTheFlag) {
  const ModelSpec m = fig6_model();
  TheoryOptions plain = sobol(512);
  plain.method = SamplingMethod::Plain;
  const TheoryEngine drift(m, plain), reference(m, sobol(1024));
  try {
    ReferencePath(drift, reference, Integrator::Euler, 1.0, 2);
    FAIL() << "not refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--sde-reference-mc"), std::string::npos) << e.what();
  }
}

// make_reference_path integrates with the spec's stepper, step and horizon.
TEST(ReferencePath, MadeFromTheIntegrationSpec) {
  const auto path = make_reference_path(fig6_model(), sobol(512), heun(0.25, 5, 4096));
  EXPECT_EQ(path->points(), 21u);
  EXPECT_EQ(path->dt(), 0.25);
}

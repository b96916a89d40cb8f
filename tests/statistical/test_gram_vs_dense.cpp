// The reduced engine has the law of the dense engine (docs/model.md §9): 64 independent runs of
// each (dense seeds 1…64, gram seeds 100001…100064, so the two samples are independent)
// with the same flags, compared at every recorded time on every order parameter, the
// readout and the population error: Welch's test on the means and the Brown–Forsythe test
// on the spreads. Per configuration the family of N tests is held at level 10^-3
// (Bonferroni: each test at 10^-3/N, Student-t p-values), so a correct engine fails one of
// the seven configurations with probability below 7·10^-3 (up to the normal approximation
// behind the t-tests at 64 runs).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "headspec/dense_engine.hpp"
#include "headspec/gram_engine.hpp"
#include "stat_helpers.hpp"

using namespace headspec;
using namespace headspec::testing;

namespace {

struct Comparison {
  std::string name;
  ModelSpec model;
  int64_t D;
  double T;
  double record_every = 1;
};

// The values compared at one record: loss, M, R, Q (upper triangle), c if learned.
std::vector<std::pair<std::string, double>> quantities(const Record& r, bool learned) {
  std::vector<std::pair<std::string, double>> out{{"loss", r.loss}};
  const auto& op = r.op;
  for (int h = 0; h < op.H(); ++h)
    for (int f = 0; f < op.F(); ++f) out.emplace_back("M_" + std::to_string(h) + std::to_string(f), op.M(h, f));
  for (int h = 0; h < op.H(); ++h) out.emplace_back("R_" + std::to_string(h), op.R[h]);
  for (int h = 0; h < op.H(); ++h)
    for (int g = h; g < op.H(); ++g) out.emplace_back("Q_" + std::to_string(h) + std::to_string(g), op.Q(h, g));
  if (learned)
    for (int h = 0; h < op.H(); ++h) out.emplace_back("c_" + std::to_string(h), op.c[h]);
  return out;
}

void compare(const Comparison& c) {
  const int runs = 64;
  SimulationSpec sim;
  sim.D = c.D;
  sim.T = c.T;
  sim.record_every = c.record_every;
  sim.test_samples = 400;
  sim.runs = runs;
  sim.seed = 1;
  const auto dense = run_sgd_runs(DenseEngine::factory(c.model, c.D), c.model, sim);
  sim.seed = 100001;
  const auto gram = run_sgd_runs(GramEngine::factory(c.model, c.D), c.model, sim);
  const bool learned = c.model.readout == Readout::Learned;
  const int records = static_cast<int>(sim.records());
  const int per_record = static_cast<int>(quantities(dense[0].records[0], learned).size());
  const int tests = 2 * per_record * records;
  const double alpha = 1e-3 / tests;
  double min_p = 1;
  std::string worst;
  for (int k = 1; k <= records; ++k) {
    std::vector<std::vector<double>> xd(per_record), xg(per_record);
    std::vector<std::string> names;
    for (int run = 0; run < runs; ++run) {
      ASSERT_FALSE(dense[run].diverged);
      ASSERT_FALSE(gram[run].diverged);
      const auto qd = quantities(dense[run].records[k], learned);
      const auto qg = quantities(gram[run].records[k], learned);
      for (int i = 0; i < per_record; ++i) {
        xd[i].push_back(qd[i].second);
        xg[i].push_back(qg[i].second);
      }
      if (run == 0)
        for (const auto& q : qd) names.push_back(q.first);
    }
    for (int i = 0; i < per_record; ++i) {
      const TestResult mean = welch(xd[i], xg[i]);
      const TestResult spread = brown_forsythe(xd[i], xg[i]);
      const std::string where = c.name + " t=" + std::to_string(dense[0].records[k].t) + " " + names[i];
      EXPECT_GT(mean.p, alpha) << where << " means differ: t = " << mean.statistic;
      EXPECT_GT(spread.p, alpha) << where << " spreads differ: t = " << spread.statistic;
      if (mean.p < min_p) min_p = mean.p, worst = where + " (mean)";
      if (spread.p < min_p) min_p = spread.p, worst = where + " (spread)";
    }
  }
  std::printf("  %s: %d tests, smallest p = %.3g at %s (Bonferroni threshold %.2g)\n", c.name.c_str(), tests, min_p,
              worst.c_str(), alpha);
}

ModelSpec base_model(Activation activation, Readout readout) {
  ModelSpec m;
  m.prior = Prior::flip(Eigen::Vector2d(2.0, 2.0));
  m.activation = activation;
  m.readout = readout;
  m.L = 4;
  m.H = 2;
  return m;
}

}  // namespace

TEST(GramVsDense, SoftmaxLearnedReadoutAtD200AndD2000) {
  const ModelSpec model = base_model(Activation::Softmax, Readout::Learned);
  compare({"softmax/learned D=200", model, 200, 4});
  compare({"softmax/learned D=2000", model, 2000, 2});
}

TEST(GramVsDense, BayesSoftmaxAtD200AndD2000) {
  const ModelSpec model = base_model(Activation::BayesSoftmax, Readout::Sum);
  compare({"bsoftmax/sum D=200", model, 200, 4});
  compare({"bsoftmax/sum D=2000", model, 2000, 2});
}

// D = 12 with r = 4: two thirds of the SGD noise of |k|² comes from outside the frame, so
// an engine without it (or with its scale wrong) fails here at 64 runs; sum readout and a
// spike prior make the gradients large.
TEST(GramVsDense, SmallDimensionWhereTheOutsideNoiseDominates) {
  ModelSpec m;
  m.prior = Prior::spike(Eigen::VectorXd::Constant(1, 2.0));
  m.activation = Activation::Softmax;
  m.readout = Readout::Sum;
  m.L = 4;
  m.H = 2;
  compare({"softmax/sum/spike D=12", m, 12, 6, 2});
}

// Dimensions just above the frame (r = 5, so D − r = 4 < B·L = 8): the Bartlett factor is
// degenerate and every degree of freedom shows. Also covers a Gaussian prior, softmax-1,
// a mini-batch, label noise, three heads and the mean readout.
TEST(GramVsDense, TinyDimensionWithBatchNoiseAndThreeHeads) {
  ModelSpec m;
  m.prior = Prior::gauss(Eigen::VectorXd::Constant(1, 3.0));
  m.activation = Activation::Softmax1;
  m.readout = Readout::Mean;
  m.L = 4;
  m.H = 3;
  m.batch = 2;
  m.noise = 0.2;
  compare({"softmax1/mean/gauss/B=2/H=3 D=9", m, 9, 60, 15});
}

// Fewer token vectors than heads (B·L = 2 < H = 3): the out-of-frame update has rank 2, so
// the frame block is padded every step; D − r = 2.
TEST(GramVsDense, FewerTokensThanHeads) {
  ModelSpec m = base_model(Activation::Softmax, Readout::Sum);
  m.L = 2;
  m.H = 3;
  compare({"softmax/sum/L=2/H=3 D=8", m, 8, 8, 2});
}

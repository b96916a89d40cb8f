// The asymptotic theory (docs/model.md §6–7) against independent computations: the dense
// engine's mean one-step change, the general (g sampled) against the integrated-out value
// channel, whole trajectories against dense SGD at D = 2000, and the integrators' orders.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "cli_helpers.hpp"
#include "headspec/dense_engine.hpp"
#include "headspec/theory_integrator.hpp"

using namespace headspec;

namespace {

ModelSpec model_with(Activation a) {
  ModelSpec m;  // flip ν = (2, 2), L = 10, H = 2, learned readout, η = 1
  m.activation = a;
  return m;
}

// A state away from the symmetric start, where every rate is sizeable.
OrderParameters test_state(const ModelSpec& m, bool with_R) {
  OrderParameters op;
  op.M.resize(2, 2);
  op.M << 0.9, 0.4, 0.6, -0.5;
  op.R = Eigen::VectorXd::Zero(2);
  if (with_R) op.R << 0.3, -0.2;
  Eigen::Matrix2d ortho;
  ortho << 0.8, 0.2, 0.2, 0.6;
  op.Q = op.M * op.M.transpose() + op.R * op.R.transpose() + ortho;
  op.c = m.initial_readout();
  if (m.readout == Readout::Learned) op.c << 0.7, 0.4;
  return op;
}

// Keys in R^D with exactly the order parameters op (u_f = √D e_f, v* = √D e_{F+1}, the
// orthogonal parts on the next H coordinates).
void set_keys(DenseEngine& engine, const OrderParameters& op) {
  const int64_t D = engine.D();
  const int H = op.H(), F = op.F();
  const double sd = std::sqrt(static_cast<double>(D));
  const Eigen::MatrixXd chol = Eigen::LLT<Eigen::MatrixXd>(op.orthogonal()).matrixL();
  auto& k = engine.keys();
  std::fill(k.begin(), k.end(), 0.0);
  for (int h = 0; h < H; ++h) {
    for (int f = 0; f < F; ++f) k[h * D + f] = sd * op.M(h, f);
    k[h * D + F] = sd * op.R[h];
    for (int j = 0; j < H; ++j) k[h * D + F + 1 + j] = sd * chol(h, j);
  }
  engine.readout() = op.c;
}

struct MeanAndError {
  std::vector<double> mean, stderr_;
};

// The mean one-step change × D/B of the dense engine from state op, over `steps` independent
// steps (step n draws from stream n), in StateLayout order.
MeanAndError dense_one_step(const ModelSpec& m, const OrderParameters& op, int64_t D, int steps) {
  const StateLayout layout(m.H, m.F(), m.readout == Readout::Learned);
  DenseEngine engine(m, D, 7);
  std::vector<double> before(layout.size()), after(layout.size());
  set_keys(engine, op);
  layout.pack(engine.order_parameters(), before.data());
  const std::vector<double> keys = engine.keys();
  // Steps at D = 2000 are too short to gain from threads.
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  std::vector<double> sum(layout.size(), 0.0), sum2(layout.size(), 0.0);
  const double scale = static_cast<double>(D) / m.batch;  // t advances by B/D per step
  for (int n = 0; n < steps; ++n) {
    engine.keys() = keys;
    engine.readout() = op.c;
    engine.step(static_cast<uint64_t>(n));
    layout.pack(engine.order_parameters(), after.data());
    for (std::size_t i = 0; i < after.size(); ++i) {
      const double d = (after[i] - before[i]) * scale;
      sum[i] += d;
      sum2[i] += d * d;
    }
  }
  omp_set_num_threads(saved);
  MeanAndError out;
  for (std::size_t i = 0; i < sum.size(); ++i) {
    const double mean = sum[i] / steps;
    out.mean.push_back(mean);
    out.stderr_.push_back(std::sqrt((sum2[i] / steps - mean * mean) / (steps - 1)));
  }
  return out;
}

}  // namespace

TEST(KernelJacobianGram, EqualsSumOfPhiProducts) {
  std::mt19937_64 gen(3);
  std::normal_distribution<double> n(0.0, 1.0);
  for (Activation a : all_activations()) {
    const int H = 3, L = 6;
    AttentionKernel k(a, H, L);
    RowMatrix S(H, L);
    Eigen::VectorXd g(L), c(H);
    for (int h = 0; h < H; ++h)
      for (int l = 0; l < L; ++l) S(h, l) = 2 * n(gen);
    for (int l = 0; l < L; ++l) g[l] = n(gen);
    for (int h = 0; h < H; ++h) c[h] = n(gen);
    k.forward(S, g, c);
    Eigen::MatrixXd gram;
    k.jacobian_gram(gram);
    for (int h = 0; h < H; ++h)
      for (int hp = 0; hp < H; ++hp) {
        double ref = 0;
        for (int l = 0; l < L; ++l)
          for (int lp = 0; lp < L; ++lp) ref += k.phi(h, l, lp) * k.phi(hp, l, lp);
        EXPECT_NEAR(gram(h, hp), ref, 1e-12 * (1 + std::abs(ref))) << to_string(a) << " " << h << "," << hp;
      }
  }
}

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

// docs/model.md §6: the rates are the mean change of one SGD step × D/B. At finite D the law of
// one sample's projections given the keys is exact (§5), so the only difference is
// O(1/D) in the SGD-noise term; the tolerance is 4 standard errors of the difference.
struct OneStepCase {
  Activation activation;
  bool with_R;  // R ≠ 0: the general path (g sampled)
  int batch;
  double noise;
  bool gauss_sum = false;  // gauss prior ν = (8, 2) with a fixed readout c_h = 1
};

class TheoryOneStep : public ::testing::TestWithParam<OneStepCase> {};

TEST_P(TheoryOneStep, RateEqualsMeanDenseStepTimesD) {
  const auto p = GetParam();
  ModelSpec m = model_with(p.activation);
  m.batch = p.batch;
  m.noise = p.noise;
  if (p.gauss_sum) {
    m.prior = Prior::gauss(Eigen::Vector2d(8.0, 2.0));
    m.readout = Readout::Sum;
  }
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
                         [](const auto& info) {
                           return std::string(to_string(info.param.activation)) + (info.param.with_R ? "_R" : "") +
                                  "_B" + std::to_string(info.param.batch) +
                                  (info.param.noise > 0 ? "_noise" : "") + (info.param.gauss_sum ? "_gauss_sum" : "");
                         });

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

// Seed Fig. 1 / 9 setting at D = 2000: theory from each run's own initial draw against
// dense online SGD. For each run k the difference d_k = dense_k − theory_k (the theory
// with its own Monte Carlo seed) is O(1/√D) noise around an O(1/D) bias; its mean over the
// runs must lie within 4 standard errors of the mean, at every recorded time.
class TheoryAgainstDense : public ::testing::TestWithParam<Activation> {};

TEST_P(TheoryAgainstDense, TrajectoriesAgreeWithinTheRunsBand) {
  const ModelSpec m = model_with(GetParam());
  const int runs = 8;
  const int64_t D = 2000;
  SimulationSpec sim;
  sim.D = D;
  sim.T = 12;
  sim.record_every = 2;
  sim.test_samples = 4000;
  sim.seed = 100;
  sim.runs = runs;
  const auto dense = run_sgd_runs(DenseEngine::factory(m, D), m, sim);

  IntegrationSpec spec;
  spec.dt = 0.2;
  spec.T = sim.T;
  spec.record_every = sim.record_every;
  std::vector<TheoryResult> theory;
  for (int k = 0; k < runs; ++k) {
    OrderParameters init = DenseEngine(m, D, sim.seed + k).order_parameters();
    init.R.setZero();
    TheoryOptions o;
    o.samples = 5000;
    o.seed = sim.seed + k;
    theory.push_back(integrate_theory(TheoryEngine(m, o), init, spec, k));
  }
  const std::size_t n_records = dense[0].records.size();
  ASSERT_EQ(n_records, 7u);
  int resolved = 0;
  for (std::size_t i = 1; i < n_records; ++i) {
    // Quantities: loss, M_h1, Q_hh for each head.
    for (int q = 0; q < 1 + 2 * m.H; ++q) {
      double sum = 0, sum2 = 0, change = 0;
      for (int k = 0; k < runs; ++k) {
        ASSERT_EQ(theory[k].trajectory.records.size(), n_records);
        const Record& a = dense[k].records[i];
        const Record& b = theory[k].trajectory.records[i];
        ASSERT_DOUBLE_EQ(a.t, b.t);
        auto value = [&](const Record& r) {
          if (q == 0) return r.loss;
          const int h = (q - 1) % m.H;
          return q <= m.H ? r.op.M(h, 0) : r.op.Q(h, h);
        };
        const double d = value(a) - value(b);
        sum += d;
        sum2 += d * d;
        change += (value(b) - value(theory[k].trajectory.records[0])) / runs;
      }
      const double mean = sum / runs;
      const double se = std::sqrt((sum2 / runs - mean * mean) / (runs - 1));
      EXPECT_NEAR(mean, 0.0, 4 * se) << "t = " << dense[0].records[i].t << " quantity " << q;
      if (std::abs(change) > 20 * se) ++resolved;
    }
  }
  // The band is narrow compared with how far the quantities move.
  EXPECT_GE(resolved, 10);
}

INSTANTIATE_TEST_SUITE_P(Fig1Setting, TheoryAgainstDense,
                         ::testing::Values(Activation::Softmax, Activation::Softmax1, Activation::BayesSoftmax,
                                           Activation::Sigmoid),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// The CLI (docs/cli.md `theory`): columns of `simulate`, initial state of `simulate --engine
// dense` at --init-D with the same seed, R(0) = 0 unless --keep-R, errors before output.
namespace {
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}
std::vector<std::vector<std::string>> rows_of(const std::string& csv) {
  std::vector<std::vector<std::string>> out;
  std::stringstream ss(csv);
  std::string line;
  while (std::getline(ss, line))
    if (!line.empty()) out.push_back(split(line));
  return out;
}
}  // namespace

TEST(TheoryCli, StartsFromTheDenseInitialStateWithTheSameColumns) {
  using headspec::testing::run_cli;
  const std::string common = "--L 4 --H 2 --T 1 --record-every 0.5 --seed 9";
  // One thread: steps at D = 500 are too short to share.
  const auto sim = run_cli("simulate --engine dense --D 500 --test-samples 10 " + common, "OMP_NUM_THREADS=1");
  ASSERT_EQ(sim.status, 0) << sim.err;
  const auto th = run_cli("theory --init-D 500 --mc 500 --dt 0.1 " + common);
  ASSERT_EQ(th.status, 0) << th.err;
  const auto keep = run_cli("theory --init-D 500 --mc 500 --dt 0.1 --keep-R " + common);
  ASSERT_EQ(keep.status, 0) << keep.err;
  const auto s = rows_of(sim.out), t = rows_of(th.out), k = rows_of(keep.out);
  ASSERT_EQ(s[0], t[0]);
  ASSERT_EQ(t.size(), 4u);  // header and t = 0, 0.5, 1
  EXPECT_EQ(t[1][1], "0");
  EXPECT_EQ(t[2][1], "0.5");
  EXPECT_EQ(t[3][1], "1");
  for (std::size_t col = 0; col < s[0].size(); ++col) {
    const std::string& name = s[0][col];
    if (name.rfind("M_", 0) == 0 || name.rfind("Q_", 0) == 0 || name.rfind("c_", 0) == 0) {
      EXPECT_EQ(s[1][col], t[1][col]) << name;
      EXPECT_EQ(s[1][col], k[1][col]) << name;
    }
    if (name.rfind("R_", 0) == 0) {
      EXPECT_EQ(t[1][col], "0");
      EXPECT_EQ(t[3][col], "0");  // R ≡ 0 stays 0
      EXPECT_EQ(k[1][col], s[1][col]);
      EXPECT_NE(k[1][col], "0");
    }
  }
}

TEST(TheoryCli, SidecarConvergenceAndBadInput) {
  using headspec::testing::run_cli;
  const auto dir = headspec::testing::fresh_dir("theory_cli");
  const std::string out = (dir / "th.csv").string();
  const auto r = run_cli("theory --L 4 --H 1 --nu 4 --prior spike --mc 300 --dt 0.5 --T 1000 --record-every 10 "
                         "--until-converged 2e-2 --init-D 200 --out " + out);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto meta = nlohmann::json::parse(headspec::testing::read_file(out + ".json"));
  EXPECT_EQ(meta["theory"]["mc"], 300);
  EXPECT_EQ(meta["theory"]["integrator"], "rk4");
  ASSERT_TRUE(meta["runs_summary"][0]["converged"].get<bool>());
  const double at = meta["runs_summary"][0]["converged_at"].get<double>();
  EXPECT_LT(at, 1000);
  const auto rows = rows_of(headspec::testing::read_file(out));
  EXPECT_EQ(std::stod(rows.back()[1]), at);  // the last row is the converged state

  for (const char* bad : {"--mc-resample --integrator rk4", "--dt 0.3", "--mc 1", "--integrator foo", "--init-D 3",
                          "--until-converged -1", "--runs 0"}) {
    const std::string path = (dir / "bad.csv").string();
    const auto b = run_cli(std::string("theory --T 1 ") + bad + " --out " + path);
    EXPECT_EQ(b.status, 2) << bad;
    EXPECT_FALSE(std::filesystem::exists(path)) << bad;
    EXPECT_EQ(std::count(b.err.begin(), b.err.end(), '\n'), 1) << b.err;
  }
}

TEST(TheoryCli, DivergenceKeepsRowsAndSuggestsSmallerLr) {
  const auto r = headspec::testing::run_cli("theory --L 4 --mc 500 --lr 2000 --dt 0.5 --T 50 --record-every 0.5 --init-D 200");
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(r.err.find("--lr"), std::string::npos) << r.err;
  EXPECT_GE(rows_of(r.out).size(), 2u);
}

// The symmetric Monte Carlo method (docs/model.md §6, "Symmetric Monte Carlo"): exact
// invariance of a zero-mean direction's empty column, exact equivariance under its sign flip
// and under head permutations, and the same bits whatever the thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include <string>
#include <vector>

#include "headspec/activation.hpp"
#include "headspec/symmetry_group.hpp"
#include "headspec/theory_engine.hpp"
#include "theory_states.hpp"
#include "headspec/theory_runs.hpp"

using namespace headspec;
using headspec::testing::generic_state;

namespace {

TheoryOptions symmetric_options(ValueChannel channel, int64_t samples = 600,
                                SamplingMethod method = SamplingMethod::Symmetric) {
  TheoryOptions o;
  o.samples = samples;
  o.method = method;
  o.channel = channel;
  o.seed = 5;
  return o;
}

// The models the exactness tests run over: every activation, fixed and learned readout,
// B = 1 and 4 with label noise, and the three sign-symmetric priors.
std::vector<std::pair<std::string, ModelSpec>> models() {
  std::vector<std::pair<std::string, ModelSpec>> out;
  for (Activation a : all_activations()) {
    ModelSpec m;  // flip ν = (2, 2), L = 10, H = 2, learned readout
    m.activation = a;
    out.emplace_back(std::string(to_string(a)), m);
    m.readout = Readout::Sum;
    m.batch = 4;
    m.noise = 0.3;
    out.emplace_back(std::string(to_string(a)) + " sum B4 noise", m);
  }
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

const SamplingMethod kMethods[] = {SamplingMethod::Symmetric, SamplingMethod::Sobol};

TEST(TheorySymmetric, EmptyZeroMeanColumnHasExactlyZeroRates) {
  for (SamplingMethod method : kMethods)
  for (const auto& [name, m] : models())
    for (ValueChannel channel : {ValueChannel::Integrated, ValueChannel::Sampled}) {
      OrderParameters op = generic_state(m, channel == ValueChannel::Sampled);
      const int f = 1;  // sign-symmetric in every model above
      op.M.col(f).setZero();
      op.Q = op.M * op.M.transpose() + op.R * op.R.transpose() + 0.5 * Eigen::MatrixXd::Identity(m.H, m.H);
      const TheoryEngine engine(m, symmetric_options(channel, 600, method));
      TheoryEvaluation ev;
      engine.evaluate(op, 0, ev);
      for (int h = 0; h < m.H; ++h) EXPECT_EQ(ev.rate[engine.layout().m_index(h, f)], 0.0) << name << " head " << h;
      EXPECT_NE(ev.rate[engine.layout().m_index(0, 0)], 0.0) << name;
    }
}

TEST(TheorySymmetric, SignFlipOfAColumnNegatesItsRatesExactly) {
  for (SamplingMethod method : kMethods)
  for (const auto& [name, m] : models())
    for (ValueChannel channel : {ValueChannel::Integrated, ValueChannel::Sampled}) {
      const OrderParameters op = generic_state(m, channel == ValueChannel::Sampled);
      OrderParameters flipped = op;
      flipped.M.col(1) *= -1.0;
      const TheoryEngine engine(m, symmetric_options(channel, 600, method));
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

// With the value channel sampled, the orbits hold the value sign (g, ξ) → (−g, −ξ), the image
// of R → −R (docs/theory.md §1): at R = 0 the rates of R are exactly 0 (so R = 0 stays
// invariant, as with the value channel integrated out), and negating R negates them bit for bit
// and leaves every other rate as it is.
TEST(TheorySymmetric, ValueSignKeepsRZeroAndNegatesItsRatesExactly) {
  for (SamplingMethod method : kMethods)
    for (const auto& [name, m] : models()) {
      const TheoryEngine engine(m, symmetric_options(ValueChannel::Sampled, 600, method));
      OrderParameters op = generic_state(m, true);
      OrderParameters negated = op;
      negated.R *= -1.0;
      TheoryEvaluation a, b, zero;
      engine.evaluate(op, 0, a);
      engine.evaluate(negated, 0, b);
      for (std::size_t i = 0; i < a.rate.size(); ++i) {
        const bool of_R = i >= engine.layout().r_index(0) && i <= engine.layout().r_index(m.H - 1);
        EXPECT_EQ(b.rate[i], of_R ? -a.rate[i] : a.rate[i]) << name << " entry " << i;
      }
      EXPECT_EQ(a.error, b.error) << name;
      op.R.setZero();
      op.Q = op.M * op.M.transpose() + 0.5 * Eigen::MatrixXd::Identity(m.H, m.H);
      engine.evaluate(op, 0, zero);
      for (int h = 0; h < m.H; ++h) EXPECT_EQ(zero.rate[engine.layout().r_index(h)], 0.0) << name << " head " << h;
      EXPECT_NE(a.rate[engine.layout().r_index(0)], 0.0) << name;
    }
}

TEST(TheorySymmetric, HeadPermutationPermutesTheRightHandSideExactly) {
  for (SamplingMethod method : kMethods)
  for (int H : {2, 3, 4, 5})
    for (ValueChannel channel : {ValueChannel::Integrated, ValueChannel::Sampled}) {
      ModelSpec m;
      m.H = H;
      m.L = 4;
      const OrderParameters op = generic_state(m, channel == ValueChannel::Sampled);
      const TheoryEngine engine(m, symmetric_options(channel, 480, method));
      const SymmetryGroup group(m);
      const StateLayout& lay = engine.layout();
      TheoryEvaluation base;
      engine.evaluate(op, 0, base);
      // H = 5 keeps the cyclic shifts only (SymmetryGroup::kMaxFullHeads).
      for (const std::vector<int>& perm : group.permutations()) {
        TheoryEvaluation moved;
        engine.evaluate(SymmetryGroup::permute(op, perm), 0, moved);
        for (int h = 0; h < H; ++h) {
          for (int f = 0; f < m.F(); ++f) EXPECT_EQ(moved.rate[lay.m_index(h, f)], base.rate[lay.m_index(perm[h], f)]);
          for (int g = 0; g < H; ++g) EXPECT_EQ(moved.rate[lay.q_index(h, g)], base.rate[lay.q_index(perm[h], perm[g])]);
          EXPECT_EQ(moved.rate[lay.c_index(h)], base.rate[lay.c_index(perm[h])]);
          EXPECT_EQ(moved.rate[lay.r_index(h)], base.rate[lay.r_index(perm[h])]);
        }
        EXPECT_EQ(moved.error, base.error);
      }
    }
}

TEST(TheorySymmetric, SameBitsWhateverTheThreadCount) {
  // Default model (orbits of 8): symmetric 9 blocks of 64 orbits, sobol 8 randomisations of
  // 288 orbits in 48 blocks. Gauss F = 4, H = 8 (orbits of 16 signs × 8 shifts = 128): one
  // group of 8 orbits (1024 samples) per block, 8 blocks for 8192 samples, threaded by their
  // sample count.
  ModelSpec wide;
  wide.prior = Prior::gauss(Eigen::Vector4d(10.0, 10.0, 10.0, 10.0));
  wide.L = 5;
  wide.H = 8;
  for (const auto& [m, samples] : {std::pair{ModelSpec{}, int64_t{9000}}, std::pair{wide, int64_t{8192}}})
  for (SamplingMethod method : kMethods)
  for (MonteCarloMode mode : {MonteCarloMode::Fixed, MonteCarloMode::Resample}) {
    TheoryOptions o = symmetric_options(ValueChannel::Integrated, samples, method);
    o.mode = mode;
    const OrderParameters op = generic_state(m, false);
    TheoryEvaluation one, two;
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    TheoryEngine(m, o).evaluate(op, 3, one);
    omp_set_num_threads(2);
    TheoryEngine(m, o).evaluate(op, 3, two);
    omp_set_num_threads(threads);
    EXPECT_EQ(one.rate, two.rate);
    EXPECT_EQ(one.rate_stderr, two.rate_stderr);
    EXPECT_EQ(one.error, two.error);
  }
}

TEST(TheorySymmetric, SamplesAreWholeOrbits) {
  const ModelSpec m;
  const TheoryEngine engine(m, symmetric_options(ValueChannel::Integrated, 1001));
  EXPECT_EQ(engine.orbit_size(), 4);
  EXPECT_EQ(engine.samples_used(), 1004);
  // Sobol: 8 randomisations of a multiple of 8 orbits: 1001 / (4 · 8) → 32; 4000 / 32 → 128.
  const TheoryEngine sobol(m, symmetric_options(ValueChannel::Integrated, 1001, SamplingMethod::Sobol));
  EXPECT_EQ(sobol.samples_used(), 8 * 32 * 4);
  const TheoryEngine sobol_net(m, symmetric_options(ValueChannel::Integrated, 4000, SamplingMethod::Sobol));
  EXPECT_EQ(sobol_net.samples_used(), 8 * 128 * 4);
  // The count without an engine, for every method and a larger group (H = 3, gauss F = 2: 24).
  ModelSpec g;
  g.H = 3;
  g.prior = Prior::gauss(Eigen::Vector2d(2.0, 1.0));
  for (SamplingMethod method : {SamplingMethod::Plain, SamplingMethod::Symmetric, SamplingMethod::Sobol})
    for (int64_t N : {5, 1001, 30000}) {
      const TheoryOptions o = symmetric_options(ValueChannel::Integrated, N, method);
      EXPECT_EQ(TheoryEngine::samples_used(g, o), TheoryEngine(g, o).samples_used()) << to_string(method) << " " << N;
    }
  // The count the sidecar reports (TheoryRuns) has the value sign's images with --keep-R:
  // orbits of 8, 1002 → 1008 (without them 1004).
  TheoryRunsSpec runs;
  runs.mc = 1002;
  runs.mc_method = "symmetric";
  runs.keep_R = true;
  EXPECT_EQ(TheoryRuns(m, runs).samples_used(), 1008);
  EXPECT_EQ(TheoryRuns(m, runs).samples_used(), TheoryEngine(m, symmetric_options(ValueChannel::Sampled, 1002)).samples_used());
}

// The stochastic theory (docs/model.md §12): its stepper's weak order, its D → ∞ limit, and
// that its runs are reproducible, stop when specialised and keep R ≡ 0 when it is integrated.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <vector>

#include "headspec/specialisation.hpp"
#include "headspec/theory_ode.hpp"
#include "headspec/theory_runs.hpp"

using namespace headspec;

namespace {

// dx = a x dt + s dW in one dimension: the scheme's variance after n steps is known exactly.
struct OrnsteinUhlenbeck {
  double a = -1, s = 1;
  void operator()(const OdeState& x, OdeState& dxdt, double /*t*/) const { dxdt[0] = a * x[0]; }
  void increment(const double* /*x*/, double /*t*/, double dt, const StreamId& noise, double* out) const {
    RandomStream rng(noise);
    out[0] = s * std::sqrt(dt) * rng.normal();
  }
};

// Mean and variance of x(T) over `paths` paths of StochasticStepper<Drift> (path p: lane p).
template <class Drift>
std::pair<double, double> moments_at(const OrnsteinUhlenbeck& ou, double T, double dt, int paths) {
  const int n = static_cast<int>(std::lround(T / dt));
  double sum = 0, sum2 = 0;
  for (int p = 0; p < paths; ++p) {
    ode::StochasticStepper<Drift, OrnsteinUhlenbeck> stepper(Drift(), ou, 5, static_cast<uint32_t>(p));
    OdeState x{1.0};
    for (int k = 0; k < n; ++k) stepper.do_step(std::cref(ou), x, k * dt, dt);
    sum += x[0];
    sum2 += x[0] * x[0];
  }
  const double mean = sum / paths;
  return {mean, (sum2 - paths * mean * mean) / (paths - 1)};
}

// The scheme's variance after T/dt steps, x_{k+1} = φ x_k + s √dt ξ_k with φ the drift
// stepper's factor: s² dt Σ_k φ^{2k}.
double scheme_variance(double phi, double s, double T, double dt) {
  const int n = static_cast<int>(std::lround(T / dt));
  return s * s * dt * (1 - std::pow(phi, 2 * n)) / (1 - phi * phi);
}

template <class Drift>
void check_weak_order_one(double (*phi_of)(double a, double dt)) {
  const OrnsteinUhlenbeck ou;
  const double T = 2, exact = ou.s * ou.s * (1 - std::exp(2 * ou.a * T)) / (-2 * ou.a);
  const int paths = 200000;
  std::vector<double> error;
  for (const double dt : {0.4, 0.2, 0.1}) {
    const auto [mean, var] = moments_at<Drift>(ou, T, dt, paths);
    const double se = var * std::sqrt(2.0 / paths);  // of a Gaussian sample's variance
    // The stepper adds the increment at the step's start to the drift's step, and nothing else.
    EXPECT_NEAR(var, scheme_variance(phi_of(ou.a, dt), ou.s, T, dt), 4 * se) << "dt = " << dt;
    EXPECT_NEAR(mean, std::pow(phi_of(ou.a, dt), std::lround(T / dt)), 4 * std::sqrt(var / paths));
    error.push_back(var - exact);
  }
  // Weak order 1: halving dt halves the variance's error, log2 of the ratio → 1 (for these
  // steps 1.08 and 1.04 with RK4's drift, 1.20 and 1.10 with Euler's; its s.e. is ≈ 0.03).
  for (std::size_t i = 0; i + 1 < error.size(); ++i) EXPECT_NEAR(std::log2(error[i] / error[i + 1]), 1.0, 0.25) << i;
}

ModelSpec fig6_model() {
  ModelSpec m;  // flip ν = (2, 2), H = 2, softmax, learned readout, η = 1
  m.L = 5;
  return m;
}

TheoryRunsSpec sde_spec(int64_t D) {
  TheoryRunsSpec spec;
  spec.mc = 2048;
  spec.mc_method = "sobol";
  spec.dt = 0.25;
  spec.T = 10;
  spec.record_every = 0.5;
  spec.init_D = D;
  spec.init_engine = "gram";
  spec.sde = true;
  return spec;
}

std::vector<double> final_state(const TheoryResult& r) {
  std::vector<double> v;
  append_csv_values(r.trajectory.records.back(), true, v);
  return v;
}

}  // namespace

TEST(TheorySde, StepperHasWeakOrderOneWithRk4Drift) {
  check_weak_order_one<ode::RungeKutta4>([](double a, double dt) {
    const double z = a * dt;
    return 1 + z + z * z / 2 + z * z * z / 6 + z * z * z * z / 24;
  });
}

TEST(TheorySde, StepperHasWeakOrderOneWithEulerDrift) {
  check_weak_order_one<ode::Euler>([](double a, double dt) { return 1 + a * dt; });
}

// docs/model.md §12: the increments have covariance Σ dt / D, so at D = 10^12 the SDE is the
// ODE from the same initial state up to ~10^-6.
TEST(TheorySde, AtDTenToTheTwelveItIsTheOde) {
  const ModelSpec m = fig6_model();
  TheoryRunsSpec spec = sde_spec(1000);
  const TheoryResult sde_run = TheoryRuns(m, spec).run().front();
  spec.sde = false;
  const TheoryResult ode_run = TheoryRuns(m, spec).run().front();
  ASSERT_EQ(sde_run.trajectory.records.size(), ode_run.trajectory.records.size());
  // At D = 1000 the noise is visible; at 10^12 (same initial state, drawn at 1000) it is not.
  const auto a = final_state(sde_run), b = final_state(ode_run);
  double largest = 0;
  for (std::size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::abs(a[i] - b[i]));
  EXPECT_GT(largest, 1e-3);

  spec.sde = true;
  const EngineFactory start = initial_state_factory("gram", m, 1000);
  TheoryOptions mc;
  mc.samples = spec.mc;
  mc.method = parse_sampling_method(spec.mc_method);
  IntegrationSpec integration = TheoryRuns(m, spec).integration();
  integration.finite_D = 1e12;
  const auto far = final_state(run_theory(m, start, mc, integration, spec.seed, 0));
  for (std::size_t i = 0; i < far.size(); ++i) EXPECT_NEAR(far[i], b[i], 1e-5) << "column " << i;
}

TEST(TheorySde, SameBitsWhateverTheThreadCount) {
  const ModelSpec m = fig6_model();
  TheoryRunsSpec spec = sde_spec(1000);
  spec.mc = 8192;  // 32 blocks: evaluations take both threads
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = final_state(TheoryRuns(m, spec).run().front());
  omp_set_num_threads(2);
  const auto two = final_state(TheoryRuns(m, spec).run().front());
  omp_set_num_threads(saved);
  EXPECT_EQ(one, two);
}

// Runs whose evaluations are too small for threads run in parallel (TheoryRuns::run): the
// same numbers, run by run, on one thread or two, with and without the SGD noise.
TEST(TheorySde, ParallelRunsSameBitsWhateverTheThreadCount) {
  const ModelSpec m = fig6_model();
  for (const bool sde : {true, false}) {
    TheoryRunsSpec spec = sde_spec(1000);
    spec.sde = sde;
    spec.runs = 3;
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    const auto one = TheoryRuns(m, spec).run();
    omp_set_num_threads(2);
    const auto two = TheoryRuns(m, spec).run();
    omp_set_num_threads(saved);
    for (int k = 0; k < spec.runs; ++k) EXPECT_EQ(final_state(one[k]), final_state(two[k])) << "run " << k;
    EXPECT_NE(final_state(two[0]), final_state(two[2]));
  }
}

// Run k's noise, like its initial state, is that of seed + k; its samples those of --mc-seed.
TEST(TheorySde, RunKIsRunZeroOfSeedPlusK) {
  const ModelSpec m = fig6_model();
  TheoryRunsSpec spec = sde_spec(1000);
  spec.runs = 2;
  spec.mc_seed = 7;
  const auto both = TheoryRuns(m, spec).run();
  spec.runs = 1;
  spec.seed = 2;
  const auto second = TheoryRuns(m, spec).run();
  EXPECT_NE(final_state(both[0]), final_state(both[1]));
  EXPECT_EQ(final_state(both[1]), final_state(second[0]));
}

// Without --mc-seed every run of the stochastic theory takes the samples of --seed: one drift
// and one Σ, so that their Monte Carlo error is not a spread over runs (docs/model.md §12).
TEST(TheorySde, RunsShareTheSamplesOfSeed) {
  const ModelSpec m = fig6_model();
  TheoryRunsSpec spec = sde_spec(1000);
  spec.runs = 2;
  spec.seed = 3;
  const auto shared = TheoryRuns(m, spec).run();
  spec.mc_seed = 3;
  const auto named = TheoryRuns(m, spec).run();
  EXPECT_EQ(final_state(shared[1]), final_state(named[1]));
  spec.mc_seed = 4;  // run 1's own seed: other samples, other numbers
  EXPECT_NE(final_state(TheoryRuns(m, spec).run()[1]), final_state(shared[1]));
}

// With the value channel integrated out (R ≡ 0, docs/model.md §7) Σ has no R rows: R stays 0.
TEST(TheorySde, IntegratedValueChannelKeepsRExactlyZero) {
  const TheoryResult r = TheoryRuns(fig6_model(), sde_spec(300)).run().front();
  for (const Record& rec : r.trajectory.records) EXPECT_EQ(rec.op.R.cwiseAbs().maxCoeff(), 0.0) << rec.t;
}

TEST(TheorySde, StopsAtTheFirstRecordWhereEveryZeroMeanDirectionSplit) {
  TheoryRunsSpec spec = sde_spec(100);
  spec.T = 200;
  spec.stop_when_specialised = true;
  spec.delta = 0.2;
  const TheoryResult r = TheoryRuns(fig6_model(), spec).run().front();
  const auto& records = r.trajectory.records;
  ASSERT_GE(records.size(), 2u);
  ASSERT_LT(records.back().t, 200.0) << "did not specialise by T";
  EXPECT_GT(head_spread(records.back().op.M, 1), 0.2);
  EXPECT_LE(head_spread(records[records.size() - 2].op.M, 1), 0.2);
}

TEST(TheorySde, RefusesWhatItCannotDo) {
  const ModelSpec m = fig6_model();
  TheoryRunsSpec spec = sde_spec(1000);
  spec.integrator = "dopri5";
  EXPECT_THROW(TheoryRuns(m, spec), UsageError);
  spec = sde_spec(1000);
  spec.mc_resample = true;
  spec.integrator = "euler";
  EXPECT_THROW(TheoryRuns(m, spec), UsageError);
  spec = sde_spec(1000);
  spec.mc_error = true;
  EXPECT_THROW(TheoryRuns(m, spec), UsageError);
}

// --init-seed: every run starts from the one draw of that seed; with --sde the runs then
// differ by their noise alone (and their samples, seed + k).
TEST(TheorySde, InitSeedGivesEveryRunTheSameInitialState) {
  TheoryRunsSpec spec = sde_spec(1000);
  spec.runs = 3;
  spec.seed = 50;
  spec.init_seed = 4;
  const auto runs = TheoryRuns(fig6_model(), spec).run();
  spec.runs = 1;
  spec.seed = 4;
  spec.init_seed.reset();
  const auto own = TheoryRuns(fig6_model(), spec).run();
  for (const auto& r : runs) {
    EXPECT_EQ(r.trajectory.records.front().op.M, own[0].trajectory.records.front().op.M);
    EXPECT_EQ(r.trajectory.records.front().op.Q, own[0].trajectory.records.front().op.Q);
  }
  EXPECT_NE(final_state(runs[0]), final_state(runs[1]));
  EXPECT_NE(final_state(runs[1]), final_state(runs[2]));
}

// Run budgets of the subcommands (include/headspec/command_budgets.hpp).
#include "headspec/command_budgets.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "headspec/bayes.hpp"
#include "headspec/order_parameters.hpp"
#include "headspec/theory_config.hpp"
#include "headspec/theory_engine.hpp"
#include "headspec/theory_runs.hpp"

namespace headspec {
namespace {

double record_count(double T, double record_every) { return std::floor(T / record_every) + 1; }

int columns(const ModelSpec& m, int F) {
  return static_cast<int>(csv_columns(m.H, F, m.readout == Readout::Learned).size());
}

// Runs in memory at once: one per thread.
double parallel_runs(double runs) { return std::min(runs, static_cast<double>(std::max(1, omp_get_max_threads()))); }

// SGD runs of `D` dimensions: the records, and for dense tokens each thread's current L
// tokens, H keys and (B > 1) the batch's H gradients in R^D (the latent directions are the
// first F coordinates, not stored). One step per sample, t = n/D.
RunBudget sgd_budget(double runs, double T, double record_every, double D, bool dense, const ModelSpec& m, int F) {
  RunBudget b;
  const double rows = runs * record_count(T, record_every);
  b.bytes = records_bytes(rows, columns(m, F));
  if (dense) b.bytes += parallel_runs(runs) * D * (m.L + m.H + (m.batch > 1 ? m.H : 0)) * 8.0;
  b.steps = runs * T * D;
  b.what = fmt::format("{:.3g} runs × {:.3g} records, {:.3g} steps each at D = {:.3g}", runs,
                       record_count(T, record_every), T * D, D);
  return b;
}

// The Monte Carlo options of linearise from its flags.
TheoryOptions theory_options(int64_t mc, const std::string& method) {
  TheoryOptions options;
  options.samples = mc;
  options.method = parse_sampling_method(method);
  return options;
}

// The samples an evaluation uses: --mc itself for plain sampling, rounded up to whole
// orbits of the symmetry group (and Sobol sets) otherwise.
double samples_evaluated(const ModelSpec& m, int64_t mc, const std::string& method) {
  return static_cast<double>(TheoryEngine::samples_used(m, theory_options(mc, method)));
}

// The work of one evaluation counted in samples: those evaluated, or for laplace, which has
// none, the plain samples of the same CPU time (as TheoryConfig::evaluation_work).
double evaluation_work(const ModelSpec& m, int64_t mc, const std::string& method) {
  if (resolved_method(m, theory_options(mc, method)) == SamplingMethod::Laplace) return kLaplaceEvaluationWork;
  return samples_evaluated(m, mc, method);
}

// `tasks` (point, run) pairs, each of the size of the plan's largest point (`model`, `D`).
RunBudget tasks_budget(const SweepPlan& plan, const ModelSpec& model, double D, int tasks) {
  const SweepSettings& o = plan.settings();
  if (plan.theory()) {
    RunBudget b;
    const double N = plan.theory_config().evaluation_work(model);
    b.bytes = records_bytes(tasks * record_count(o.T, o.record_every), columns(model, model.F()));
    b.steps = tasks * (o.T / o.dt) * 4.0 * N;
    b.what = fmt::format("{} tasks × {:.3g} steps of {:.3g} samples", tasks, o.T / o.dt, N);
    return b;
  }
  return sgd_budget(tasks, o.T, o.record_every, D, o.engine == "dense", model, model.F());
}

}  // namespace

RunBudget simulate_budget(const SimulateSettings& o, const ModelSpec& model) {
  return sgd_budget(o.runs, o.T, o.record_every, static_cast<double>(o.D), o.engine == "dense", model, model.F());
}

RunBudget mnist_budget(const MnistSettings& o, const ModelSpec& model) {
  return sgd_budget(o.runs, o.T, o.record_every, 784.0, true, model, 10);
}

RunBudget theory_budget(const TheoryRuns& runs, const ModelSpec& model) {
  const TheoryRunsSpec& o = runs.spec();
  RunBudget b;
  const double rows = o.runs * record_count(o.T, o.record_every);
  const double work = runs.config().evaluation_work(model);
  b.bytes = records_bytes(rows, columns(model, model.F()) * 2) + parallel_runs(o.runs) * runs.config().stored_bytes(model);
  // Four evaluations of N samples per step of rk4 (dopri5: about six per step, of fewer steps).
  b.steps = o.runs * (o.T / o.dt) * 4.0 * work;
  b.what = fmt::format("{:.3g} runs × {:.3g} steps of {:.3g} samples", static_cast<double>(o.runs), o.T / o.dt, work);
  return b;
}

RunBudget bayes_budget(const BayesSettings& o, const ModelSpec& model) {
  RunBudget b;
  if (o.method == "quadrature") {
    const BayesQuadratureSize q = bayes_quadrature_size(model.prior);
    b.bytes = (q.nodes * 2.0 + q.terms) * 8.0;
    b.steps = q.nodes * q.terms;
    b.what = fmt::format("{:.3g} nodes × {:.3g} terms", q.nodes, q.terms);
    return b;
  }
  const double n = static_cast<double>(o.samples);
  b.bytes = n / 256.0 * 16.0;  // two partial sums per block of 256 samples (parallel_mean)
  b.steps = n * model.L;
  b.what = fmt::format("{:.3g} samples of L = {}", n, model.L);
  return b;
}

RunBudget linearise_budget(const LineariseSettings& o, const ModelSpec& model) {
  RunBudget b;
  const double H = model.H, F = model.F();
  const double state = H * F + H + H * (H + 1) / 2 + H;  // M, R, Q, c (docs/model.md §6)
  const double N = evaluation_work(model, o.mc, o.mc_method);
  const double approach = o.approach_mc > 0 ? evaluation_work(model, o.approach_mc, o.mc_method) : N;
  // Four evaluations of the samples per RK4 step of the approach, of the growth check and of
  // --along; two per state component for each Jacobian (every Newton step and the last one).
  // The prediction runs (--predict-delta) stop at the threshold: not counted.
  const double rk4 = 4.0 * (approach * o.T_max + N * ((o.growth ? o.growth_T : 0.0) + o.along)) / o.dt;
  const double jacobians = (o.newton_iterations + 1.0) * 2.0 * state * N;
  b.steps = o.mc_seeds * (rk4 + jacobians);
  const double stored = std::max(samples_evaluated(model, o.mc, o.mc_method),
                                 o.approach_mc > 0 ? samples_evaluated(model, o.approach_mc, o.mc_method) : 0.0);
  b.bytes = stored * model.L * (H + F + 2.0) * 8.0;  // the fixed samples, as theory's
  b.what = fmt::format("{} sample sets × ({:.3g} RK4 steps + {} Jacobians) of {:.3g} samples", o.mc_seeds,
                       o.T_max / o.dt, o.newton_iterations + 1, N);
  return b;
}

RunBudget sweep_budget(const SweepPlan& plan) {
  const SweepPoint* largest = &plan.points().front();
  for (const auto& p : plan.points())
    if (std::tie(p.D, p.model.H, p.model.L) > std::tie(largest->D, largest->model.H, largest->model.L)) largest = &p;
  return tasks_budget(plan, largest->model, static_cast<double>(largest->D), plan.tasks());
}

}  // namespace headspec

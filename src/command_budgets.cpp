// Run budgets of the subcommands (include/headspec/command_budgets.hpp).
#include "headspec/command_budgets.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "headspec/bayes.hpp"
#include "headspec/order_parameters.hpp"

namespace headspec {
namespace {

double record_count(double T, double record_every) { return std::floor(T / record_every) + 1; }

int columns(const ModelSpec& m, int F) {
  return static_cast<int>(csv_columns(m.H, F, m.readout == Readout::Learned).size());
}

// Runs in memory at once: one per thread.
double parallel_runs(double runs) { return std::min(runs, static_cast<double>(std::max(1, omp_get_max_threads()))); }

// SGD runs of `D` dimensions: the records, and for dense tokens each thread's batch of L
// tokens and its keys and gradients in R^D. One step per sample, t = n/D.
RunBudget sgd_budget(double runs, double T, double record_every, double D, bool dense, const ModelSpec& m, int F) {
  RunBudget b;
  const double rows = runs * record_count(T, record_every);
  b.bytes = records_bytes(rows, columns(m, F));
  if (dense) b.bytes += parallel_runs(runs) * D * (m.L * m.batch + 3.0 * m.H + F) * 8.0;
  b.steps = runs * T * D;
  b.what = fmt::format("{:.3g} runs × {:.3g} records, {:.3g} steps each at D = {:.3g}", runs,
                       record_count(T, record_every), T * D, D);
  return b;
}

}  // namespace

RunBudget simulate_budget(const SimulateSettings& o, const ModelSpec& model) {
  return sgd_budget(o.runs, o.T, o.record_every, static_cast<double>(o.D), o.engine == "dense", model, model.F());
}

RunBudget mnist_budget(const MnistSettings& o, const ModelSpec& model) {
  return sgd_budget(o.runs, o.T, o.record_every, 784.0, true, model, 10);
}

RunBudget theory_budget(const TheorySettings& o, const ModelSpec& model) {
  RunBudget b;
  const double rows = o.runs * record_count(o.T, o.record_every);
  // Each engine holds its N samples: L scores per head and L latent fields per direction,
  // and per-sample weights; the stochastic theory adds its rates per sample.
  const double per_sample = model.L * (model.H + model.F() + 2.0) + (o.sde ? 4.0 * model.H * (model.F() + model.H) : 0);
  const double N = static_cast<double>(o.mc);
  b.bytes = records_bytes(rows, columns(model, model.F()) * 2) + parallel_runs(o.runs) * N * per_sample * 8.0;
  // Four evaluations of N samples per step of rk4 (dopri5: about six per step, of fewer steps).
  b.steps = o.runs * (o.T / o.dt) * 4.0 * N;
  b.what = fmt::format("{:.3g} runs × {:.3g} steps of {:.3g} samples", static_cast<double>(o.runs), o.T / o.dt, N);
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
  const double N = static_cast<double>(o.mc);
  const double approach = o.approach_mc > 0 ? static_cast<double>(o.approach_mc) : N;
  // Four evaluations of the samples per RK4 step of the approach, of the growth check and of
  // --along; two per state component for each Jacobian (every Newton step and the last one).
  // The prediction runs (--predict-delta) stop at the threshold: not counted.
  const double rk4 = 4.0 * (approach * o.T_max + N * ((o.growth ? o.growth_T : 0.0) + o.along)) / o.dt;
  const double jacobians = (o.newton_iterations + 1.0) * 2.0 * state * N;
  b.steps = o.mc_seeds * (rk4 + jacobians);
  b.bytes = std::max(N, approach) * model.L * (H + F + 2.0) * 8.0;  // the fixed samples, as theory's
  b.what = fmt::format("{} sample sets × ({:.3g} RK4 steps + {} Jacobians) of {:.3g} samples", o.mc_seeds,
                       o.T_max / o.dt, o.newton_iterations + 1, N);
  return b;
}

RunBudget sweep_budget(const SweepCommandSettings& o, const ModelSpec& model, double D, int tasks) {
  if (o.engine == "theory" || o.engine == "sde") {
    RunBudget b;
    b.bytes = records_bytes(tasks * record_count(o.T, o.record_every), columns(model, model.F()));
    b.steps = tasks * (o.T / o.dt) * 4.0 * static_cast<double>(o.mc);
    b.what = fmt::format("{} tasks × {:.3g} steps of {:.3g} samples", tasks, o.T / o.dt, static_cast<double>(o.mc));
    return b;
  }
  return sgd_budget(tasks, o.T, o.record_every, D, o.engine == "dense", model, model.F());
}

RunBudget sweep_budget(const SweepCommandSettings& o, const SweepPlan& plan) {
  const SweepPoint* largest = &plan.points().front();
  for (const auto& p : plan.points())
    if (std::tie(p.D, p.model.H, p.model.L) > std::tie(largest->D, largest->model.H, largest->model.L)) largest = &p;
  return sweep_budget(o, largest->model, static_cast<double>(largest->D), plan.tasks());
}

}  // namespace headspec

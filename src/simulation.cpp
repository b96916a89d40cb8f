#include "headspec/simulation.hpp"

#include <fmt/format.h>

#include <cmath>

#include "headspec/errors.hpp"
#include "headspec/projection.hpp"
#include "headspec/settings.hpp"
#include "headspec/specialisation.hpp"

namespace headspec {

void SimulationSpec::validate() const {
  check_horizon(T, record_every);
  check_runs(seed, runs);
  if (test_samples < 1) throw UsageError(fmt::format("--test-samples: must be at least 1, got {}", test_samples));
  if (!(std::isfinite(stop_when_specialised) && stop_when_specialised >= 0))
    throw UsageError(fmt::format("--delta: must be > 0, got {}", stop_when_specialised));
}

int64_t SimulationSpec::records() const { return static_cast<int64_t>(std::floor(T / record_every + 1e-9)); }

int64_t SimulationSpec::steps_at(int64_t k, int batch) const {
  return std::llround(static_cast<double>(k) * record_every * static_cast<double>(D) / batch);
}

Trajectory run_sgd(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim, int run,
                   const ProgressFn& progress) {
  const uint32_t seed = sim.seed + static_cast<uint32_t>(run);
  auto engine = make(seed);
  Trajectory out;
  // The stop rule watches the directions the heads must split along: those whose prior
  // mean is zero (along the others they all align together, MODEL.md §10).
  std::vector<int> watched;
  if (sim.stop_when_specialised > 0) {
    const Eigen::VectorXd mean = model.prior.mean();
    for (int f = 0; f < model.F(); ++f)
      if (mean[f] == 0) watched.push_back(f);
  }
  int64_t done = 0;
  for (int64_t k = 0; k <= sim.records(); ++k) {
    const int64_t target = sim.steps_at(k, model.batch);
    for (; done < target; ++done) {
      engine->step(static_cast<uint64_t>(done));
      if (engine->diverged()) {
        out.diverged = true;
        out.diverged_at = static_cast<double>(done + 1) * model.batch / static_cast<double>(sim.D);
        return out;
      }
    }
    Record rec;
    rec.run = run;
    rec.t = static_cast<double>(done) * model.batch / static_cast<double>(sim.D);
    rec.op = engine->order_parameters();
    if (!rec.op.all_finite()) {
      out.diverged = true;
      out.diverged_at = rec.t;
      break;
    }
    rec.loss = population_error(model, rec.op, seed, sim.test_samples).mean;
    out.records.push_back(std::move(rec));
    if (progress) progress(run, out.records.back().t);
    if (!watched.empty()) {
      std::erase_if(watched, [&](int f) { return head_spread(out.records.back().op.M, f) > sim.stop_when_specialised; });
      if (watched.empty()) break;
    }
  }
  return out;
}

std::vector<Trajectory> run_sgd_runs(const EngineFactory& make, const ModelSpec& model, const SimulationSpec& sim,
                                     const ProgressFn& progress) {
  std::vector<Trajectory> out(sim.runs);
  // Runs in parallel; inside a run the engine's own parallel loops then run on one thread
  // (nested parallelism is off), with the same results by construction.
#pragma omp parallel for schedule(dynamic, 1) if (sim.runs > 1)
  for (int run = 0; run < sim.runs; ++run) out[run] = run_sgd(make, model, sim, run, progress);
  return out;
}

}  // namespace headspec

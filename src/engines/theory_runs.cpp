#include "headspec/theory_runs.hpp"

#include <fmt/format.h>

#include <cmath>

#include "headspec/engines.hpp"
#include "headspec/errors.hpp"

namespace headspec {

TheoryRuns::TheoryRuns(const ModelSpec& model, const TheoryRunsSpec& spec) : model_(model), spec_(spec) {
  if (!(std::isfinite(spec.T) && spec.T >= 0)) throw UsageError(fmt::format("--T: horizon must be >= 0, got {}", spec.T));
  if (!(std::isfinite(spec.record_every) && spec.record_every > 0))
    throw UsageError(fmt::format("--record-every: must be > 0, got {}", spec.record_every));
  if (spec.T / spec.record_every > 1e7)
    throw UsageError("--record-every: more than 10^7 records; choose a larger interval");
  if (spec.runs < 1) throw UsageError(fmt::format("--runs: must be at least 1, got {}", spec.runs));
  if (static_cast<int64_t>(spec.seed) + spec.runs - 1 > 0xFFFFFFFFLL)
    throw UsageError("--runs: seed + runs - 1 must stay below 2^32");
  if (spec.mc < 2 || spec.mc > 0xFFFFFFFFLL) throw UsageError(fmt::format("--mc: must be in [2, 2^32), got {}", spec.mc));
  initial_engine_ = initial_state_factory(spec.init_engine, model, spec.init_D);
  integration_.method =
      parse_integrator(spec.integrator.empty() ? (spec.mc_resample ? "euler" : "rk4") : spec.integrator);
  integration_.dt = spec.dt;
  integration_.T = spec.T;
  integration_.record_every = spec.record_every;
  integration_.until_converged = spec.until_converged;
  mode_ = spec.mc_resample ? MonteCarloMode::Resample : MonteCarloMode::Fixed;
  integration_.validate(mode_);
}

std::vector<TheoryResult> TheoryRuns::run(const ProgressFn& progress) const {
  TheoryOptions mc;
  mc.samples = spec_.mc;
  mc.mode = mode_;
  mc.channel = spec_.keep_R ? ValueChannel::Sampled : ValueChannel::Integrated;
  std::vector<TheoryResult> results;
  for (int k = 0; k < spec_.runs; ++k)
    results.push_back(run_theory(model_, initial_engine_, mc, integration_, spec_.seed, k, progress));
  return results;
}

EngineFactory initial_state_factory(const std::string& engine, const ModelSpec& model, int64_t D) {
  // The engine's messages name --engine and --D: renamed to the theory's flags.
  try {
    return sgd_engine_factory(engine, model, D);
  } catch (const UsageError& e) {
    std::string what = e.what();
    for (const std::string flag : {"--engine", "--D"})
      if (what.rfind(flag + ":", 0) == 0) what = (flag == "--D" ? "--init-D" : "--init-engine") + what.substr(flag.size());
    throw UsageError(what);
  }
}

}  // namespace headspec

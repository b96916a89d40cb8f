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
  // The initial state is that of `simulate --engine <init-engine> --D <init-D>` with the
  // same seed (the factory checks D against the engine's limits; its messages name
  // --engine and --D, renamed here to this command's flags).
  try {
    initial_engine_ = sgd_engine_factory(spec.init_engine, model, spec.init_D);
  } catch (const UsageError& e) {
    std::string what = e.what();
    for (const std::string flag : {"--engine", "--D"})
      if (what.rfind(flag + ":", 0) == 0) what = (flag == "--D" ? "--init-D" : "--init-engine") + what.substr(flag.size());
    throw UsageError(what);
  }
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
  std::vector<TheoryResult> results;
  for (int k = 0; k < spec_.runs; ++k) {
    const uint32_t seed = spec_.seed + static_cast<uint32_t>(k);
    OrderParameters initial = initial_engine_(seed)->order_parameters();
    if (!spec_.keep_R) initial.R.setZero();  // R ≡ 0 from then on (MODEL.md §7)
    TheoryOptions mc;
    mc.samples = spec_.mc;
    mc.mode = mode_;
    mc.channel = spec_.keep_R ? ValueChannel::Sampled : ValueChannel::Integrated;
    mc.seed = seed;
    const TheoryEngine engine(model_, mc);
    results.push_back(integrate_theory(engine, initial, integration_, k, progress));
  }
  return results;
}

}  // namespace headspec

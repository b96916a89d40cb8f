#include "headspec/theory_runs.hpp"

#include <fmt/format.h>

#include <cmath>

#include "headspec/checkpoint.hpp"
#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/settings.hpp"

namespace headspec {

TheoryRuns::TheoryRuns(const ModelSpec& model, const TheoryRunsSpec& spec) : model_(model), spec_(spec) {
  check_horizon(spec.T, spec.record_every);
  check_runs(spec.seed, spec.runs);
  check_mc_samples(spec.mc);
  initial_engine_ = initial_state_factory(spec.init_engine, model, spec.init_D);
  integration_ = theory_integration(spec);
  mode_ = monte_carlo_mode(spec.mc_resample);
}

std::vector<TheoryResult> TheoryRuns::run(const ProgressFn& progress, const Checkpointing* checkpointing) const {
  TheoryOptions mc;
  mc.samples = spec_.mc;
  mc.mode = mode_;
  mc.method = spec_.mc_method;
  mc.channel = spec_.keep_R ? ValueChannel::Sampled : ValueChannel::Integrated;
  RunSlots slots(checkpointing, "theory", spec_.runs);
  std::vector<TheoryResult> results(static_cast<std::size_t>(spec_.runs));
  bool interrupted = false;
  for (int k = 0; k < spec_.runs; ++k) {
    TheoryResult& r = results[static_cast<std::size_t>(k)];
    if (checkpointing != nullptr) {
      if (read_finished_theory(slots.slot(k), r)) continue;
      if (interrupted || (slots.slot(k).empty() && checkpointing->interrupted())) {
        r.trajectory.interrupted = interrupted = true;  // not started: its slot stays as it was
        continue;
      }
    }
    r = run_theory(model_, initial_engine_, mc, integration_, spec_.seed, k, spec_.mc_seed, progress, &slots,
                   checkpointing);
    if (checkpointing == nullptr) continue;
    if (r.trajectory.interrupted)
      interrupted = true;
    else
      slots.update(k, finished_theory_slot(r), false);
  }
  if (interrupted) slots.save();
  return results;
}

EngineFactory initial_state_factory(const std::string& engine, const ModelSpec& model, int64_t D) {
  return sgd_engine_factory(engine, model, D, EngineParameterNames{"init-engine", "init-D"});
}

}  // namespace headspec

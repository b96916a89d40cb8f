#include "headspec/theory_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "headspec/checkpoint.hpp"
#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/settings.hpp"
#include "headspec/theory_reference.hpp"

namespace headspec {

TheoryRuns::TheoryRuns(const ModelSpec& model, const TheoryRunsSpec& spec) : model_(model), spec_(spec) {
  check_horizon(spec.T, spec.record_every);
  check_runs(spec.seed, spec.runs);
  check_sample_count("mc", spec.mc);
  initial_engine_ = initial_state_factory(spec.init_engine, model, spec.init_D);
  if (spec.init_seed) {  // every run from the one draw of --init-seed (its noise and samples still seed + k)
    initial_engine_ = [draw = initial_engine_, seed = *spec.init_seed](uint32_t) { return draw(seed); };
  }
  integration_ = theory_integration(spec, spec.sde ? static_cast<double>(spec.init_D) : 0.0);
  check_flow(model, spec.flow);
  mode_ = monte_carlo_mode(spec.mc_resample);
  check_reference_method(spec.sde_reference_mc, spec.mc_method);
  if (spec.mc_error && spec.sde)
    throw ParameterError("mc-error", "not with --sde (its spread would mix the Monte Carlo error with the SGD noise)");
  if (spec.mc_error && spec.mc_method != SamplingMethod::Sobol)
    throw ParameterError("mc-error", "needs --mc-method sobol (the spread of its randomisations)");
}

namespace {

// The standard errors of TheoryResult::mc_error from the trajectories of the randomisations
// integrated alone: one per CSV value of every record of the pooled run, NaN where a set's
// trajectory has no such record (it stopped or diverged earlier).
std::vector<std::vector<double>> spread_of(const std::vector<TheoryResult>& sets, const Trajectory& pooled,
                                           bool with_readout) {
  const double n = static_cast<double>(sets.size());
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < pooled.records.size(); ++i) {
    std::vector<double> pooled_values;
    append_csv_values(pooled.records[i], with_readout, pooled_values);
    std::vector<double> se(pooled_values.size(), std::numeric_limits<double>::quiet_NaN());
    std::vector<std::vector<double>> values;  // loss, then the order parameters' columns, per set
    for (const TheoryResult& s : sets) {
      if (i >= s.trajectory.records.size()) break;
      values.emplace_back();
      append_csv_values(s.trajectory.records[i], with_readout, values.back());
    }
    for (std::size_t c = 0; values.size() == sets.size() && c < se.size(); ++c) {
      double mean = 0, var = 0;
      for (const auto& v : values) mean += v[c] / n;
      for (const auto& v : values) var += (v[c] - mean) * (v[c] - mean) / (n - 1);
      se[c] = std::sqrt(var / n);
    }
    out.push_back(std::move(se));
  }
  return out;
}

}  // namespace

std::vector<std::vector<double>> TheoryRuns::randomisation_errors(const TheoryOptions& mc, int k,
                                                                  const TheoryResult& pooled) const {
  std::vector<TheoryResult> sets;
  for (int set = 0; set < mc.randomisations; ++set) {
    TheoryOptions alone = mc;
    alone.only_randomisation = set;
    sets.push_back(run_theory(model_, initial_engine_, alone, integration_, spec_.seed, k, spec_.mc_seed));
  }
  return spread_of(sets, pooled.trajectory, model_.readout == Readout::Learned);
}

TheoryOptions TheoryRuns::monte_carlo_options() const {
  TheoryOptions mc;
  mc.samples = spec_.mc;
  mc.mode = mode_;
  mc.method = spec_.mc_method;
  mc.channel = spec_.keep_R ? ValueChannel::Sampled : ValueChannel::Integrated;
  mc.flow = spec_.flow;
  return mc;
}

namespace {

// Run k needs no integrating now: finished in the checkpoint (r read from it), or not started
// because the runs are being interrupted (r marked so; its slot stays as it was, and so do
// those of the runs after it).
bool settled_by_checkpoint(const Checkpointing* checkpointing, const RunSlots& slots, int k, bool& interrupted,
                           TheoryResult& r) {
  if (checkpointing == nullptr) return false;
  if (read_finished_theory(slots.slot(k), r)) return true;
  if (interrupted || (slots.slot(k).empty() && checkpointing->interrupted())) {
    r.trajectory.interrupted = interrupted = true;
    return true;
  }
  return false;
}

}  // namespace

std::vector<TheoryResult> TheoryRuns::run(const ProgressFn& progress, const Checkpointing* checkpointing) const {
  const TheoryOptions mc = monte_carlo_options();
  const std::optional<uint32_t> samples_seed = runs_samples_seed(spec_.mc_seed, spec_.sde, spec_.seed);
  IntegrationSpec integration = integration_;
  RunSlots slots(checkpointing, "theory", spec_.runs);
  std::vector<TheoryResult> results(static_cast<std::size_t>(spec_.runs));
  bool interrupted = false;
  for (int k = 0; k < spec_.runs; ++k) {
    TheoryResult& r = results[static_cast<std::size_t>(k)];
    if (settled_by_checkpoint(checkpointing, slots, k, interrupted, r)) continue;
    // With --sde-reference-mc: one path for all runs, which share their samples, made when the
    // first run that the checkpoint has not settled needs it.
    if (integration.reference_samples > 0 && !integration.reference) {
      TheoryOptions shared = mc;
      shared.seed = samples_seed.value_or(spec_.seed);
      integration.reference = make_reference_path(model_, shared, integration);
    }
    r = run_theory(model_, initial_engine_, mc, integration, spec_.seed, k, samples_seed, progress, &slots,
                   checkpointing);
    if (spec_.mc_error && !r.trajectory.interrupted) r.mc_error = randomisation_errors(mc, k, r);
    if (checkpointing == nullptr) continue;
    if (r.trajectory.interrupted)
      interrupted = true;
    else
      slots.update(k, finished_theory_slot(r), false);
  }
  if (interrupted) slots.save();
  return results;
}

int64_t TheoryRuns::samples_used() const { return TheoryEngine::samples_used(model_, monte_carlo_options()); }

EngineFactory initial_state_factory(const std::string& engine, const ModelSpec& model, int64_t D) {
  return sgd_engine_factory(engine, model, D, EngineParameterNames{"init-engine", "init-D"});
}

}  // namespace headspec

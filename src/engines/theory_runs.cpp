#include "headspec/theory_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

#include "headspec/checkpoint.hpp"
#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/settings.hpp"
#include "headspec/theory_reference.hpp"

namespace headspec {

namespace {

// The runs' own checks, then the theory's configuration (the stochastic theory at D = init_D).
TheoryConfig checked_config(const TheoryRunsSpec& spec) {
  check_horizon(spec.T, spec.record_every);
  check_runs(spec.seed, spec.runs);
  return TheoryConfig(spec, spec.horizon(), spec.seed, spec.sde ? static_cast<double>(spec.init_D) : 0.0);
}

}  // namespace

TheoryRuns::TheoryRuns(const ModelSpec& model, const TheoryRunsSpec& spec)
    : model_(model), spec_(spec), config_(checked_config(spec)) {
  initial_engine_ = initial_state_factory(spec.init_engine, model, spec.init_D);
  if (spec.init_seed) {  // every run from the one draw of --init-seed (its noise and samples still seed + k)
    initial_engine_ = [draw = initial_engine_, seed = *spec.init_seed](uint32_t) { return draw(seed); };
  }
  config_.check_model(model);
  const SamplingMethod method = sampling_method();
  if (spec.mc_error && spec.sde)
    throw ParameterError("mc-error", "not with --sde (its spread would mix the Monte Carlo error with the SGD noise)");
  if (spec.mc_error && method != SamplingMethod::Sobol && method != SamplingMethod::Laplace)
    throw ParameterError("mc-error", "needs --mc-method sobol or laplace (the spread of sobol's randomisations; "
                                     "laplace's difference from a coarser rule)");
}

namespace {

// One vector per record of the pooled run: error(i, its CSV values) (append_csv_values order).
template <class Error>
std::vector<std::vector<double>> per_record(const Trajectory& pooled, bool with_readout, Error error) {
  std::vector<std::vector<double>> out;
  for (std::size_t i = 0; i < pooled.records.size(); ++i) {
    std::vector<double> pooled_values;
    append_csv_values(pooled.records[i], with_readout, pooled_values);
    out.push_back(error(i, pooled_values));
  }
  return out;
}

// The standard errors of TheoryResult::mc_error from the trajectories of the randomisations
// integrated alone: one per CSV value of every record of the pooled run, NaN where a set's
// trajectory has no such record (it stopped or diverged earlier).
std::vector<std::vector<double>> spread_of(const std::vector<TheoryResult>& sets, const Trajectory& pooled,
                                           bool with_readout) {
  const double n = static_cast<double>(sets.size());
  return per_record(pooled, with_readout, [&](std::size_t i, const std::vector<double>& pooled_values) {
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
    return se;
  });
}

// laplace's error estimate: |pooled − the run with the coarser rule| per CSV value of every
// record, NaN where the coarse run has no such record.
std::vector<std::vector<double>> difference_from(const TheoryResult& coarse, const Trajectory& pooled,
                                                 bool with_readout) {
  return per_record(pooled, with_readout, [&](std::size_t i, const std::vector<double>& pooled_values) {
    std::vector<double> diff(pooled_values.size(), std::numeric_limits<double>::quiet_NaN());
    if (i < coarse.trajectory.records.size()) {
      std::vector<double> coarse_values;
      append_csv_values(coarse.trajectory.records[i], with_readout, coarse_values);
      for (std::size_t c = 0; c < diff.size(); ++c) diff[c] = std::abs(pooled_values[c] - coarse_values[c]);
    }
    return diff;
  });
}

}  // namespace

std::vector<std::vector<double>> TheoryRuns::randomisation_errors(const TheoryOptions& mc, int k,
                                                                  const TheoryResult& pooled) const {
  const bool with_readout = model_.readout == Readout::Learned;
  if (mc.method == SamplingMethod::Laplace) {
    const TheoryResult coarse = run_theory(model_, initial_engine_, coarser_rule(mc), integration(), spec_.seed, k,
                                           config_.samples_seed());
    return difference_from(coarse, pooled.trajectory, with_readout);
  }
  std::vector<TheoryResult> sets;
  for (int set = 0; set < mc.randomisations; ++set) {
    TheoryOptions alone = mc;
    alone.only_randomisation = set;
    sets.push_back(run_theory(model_, initial_engine_, alone, integration(), spec_.seed, k, config_.samples_seed()));
  }
  return spread_of(sets, pooled.trajectory, with_readout);
}

SamplingMethod TheoryRuns::sampling_method() const { return monte_carlo_options().method; }

namespace {

// Run k needs no integrating now: finished in the checkpoint (r read from it), or not started
// because the runs are being interrupted (r marked so; its slot stays as it was). Run one
// after another, `interrupted` (set here or by an interrupted run) leaves every later run
// unstarted; run in parallel, each run has its own, and the interrupt flag does that.
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

bool every_run_finished(const RunSlots& slots, int runs) {
  TheoryResult r;
  for (int k = 0; k < runs; ++k)
    if (!read_finished_theory(slots.slot(k), r)) return false;
  return true;
}

}  // namespace

IntegrationSpec TheoryRuns::integration_of_runs(const TheoryOptions& mc, std::optional<uint32_t> samples_seed,
                                                const RunSlots& slots) const {
  IntegrationSpec integration = config_.integration();
  // With --sde-reference-mc: one path for all runs, which share their samples (not made when
  // every run comes finished from the checkpoint).
  if (integration.reference_samples > 0 && !every_run_finished(slots, spec_.runs)) {
    TheoryOptions shared = mc;
    shared.seed = samples_seed.value_or(spec_.seed);
    integration.reference = make_reference_path(model_, shared, integration);
  }
  return integration;
}

bool TheoryRuns::runs_in_parallel() const {
  const int64_t threaded = TheoryEngine::kParallelBlocks * TheoryEngine::kBlock;
  return spec_.runs > 1 && samples_used() < threaded && integration().diffusion_samples < threaded;
}

void TheoryRuns::run_one(int k, const RunContext& c, bool& interrupted, TheoryResult& r) const {
  if (settled_by_checkpoint(c.checkpointing, c.slots, k, interrupted, r)) return;
  r = run_theory(model_, initial_engine_, c.mc, c.integration, spec_.seed, k, c.samples_seed, c.progress, &c.slots,
                 c.checkpointing);
  if (spec_.mc_error && !r.trajectory.interrupted) r.mc_error = randomisation_errors(c.mc, k, r);
  if (c.checkpointing == nullptr) return;
  if (r.trajectory.interrupted)
    interrupted = true;
  else
    c.slots.update(k, finished_theory_slot(r), false);
}

std::vector<TheoryResult> TheoryRuns::run(const ProgressFn& progress, const Checkpointing* checkpointing) const {
  const TheoryOptions mc = monte_carlo_options();
  const std::optional<uint32_t> samples_seed = config_.samples_seed();
  RunSlots slots(checkpointing, "theory", spec_.runs);
  const IntegrationSpec integration = integration_of_runs(mc, samples_seed, slots);
  const RunContext context{mc, integration, samples_seed, progress, slots, checkpointing};
  std::vector<TheoryResult> results(static_cast<std::size_t>(spec_.runs));
  if (runs_in_parallel()) {
    // Evaluations this small run on one thread each (TheoryEngine::kParallelBlocks): the runs
    // take the threads instead, each with the numbers it has alone.
    std::vector<std::exception_ptr> failed(results.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < spec_.runs; ++k) {
      try {
        bool interrupted = false;
        run_one(k, context, interrupted, results[static_cast<std::size_t>(k)]);
      } catch (...) {  // an exception must not leave a parallel region
        failed[static_cast<std::size_t>(k)] = std::current_exception();
      }
    }
    for (const auto& e : failed)
      if (e) std::rethrow_exception(e);
  } else {
    bool interrupted = false;
    for (int k = 0; k < spec_.runs; ++k) run_one(k, context, interrupted, results[static_cast<std::size_t>(k)]);
  }
  if (std::any_of(results.begin(), results.end(), [](const TheoryResult& r) { return r.trajectory.interrupted; }))
    slots.save();
  return results;
}

int64_t TheoryRuns::samples_used() const { return config_.samples_used(model_); }

EngineFactory initial_state_factory(const std::string& engine, const ModelSpec& model, int64_t D) {
  return sgd_engine_factory(engine, model, D, EngineParameterNames{"init-engine", "init-D"});
}

}  // namespace headspec

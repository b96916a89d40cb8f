#pragma once
// Each subcommand's run budget, for the command line and the Python calls alike (include/headspec/budget.hpp) from its flags: the dominant
// terms of its memory and work, so that a run that cannot finish is refused before it starts.
#include "headspec/budget.hpp"
#include "headspec/command_settings.hpp"
#include "headspec/model.hpp"
#include "headspec/sweep_plan.hpp"
#include "headspec/theory_runs.hpp"

namespace headspec {

RunBudget simulate_budget(const SimulateSettings& o, const ModelSpec& model);
/// The runs of `runs` (its model): records, each run's stored samples, evaluations.
RunBudget theory_budget(const TheoryRuns& runs, const ModelSpec& model);
RunBudget mnist_budget(const MnistSettings& o, const ModelSpec& model);
RunBudget bayes_budget(const BayesSettings& o, const ModelSpec& model);
RunBudget linearise_budget(const LineariseSettings& o, const ModelSpec& model);
/// Every task of `plan` counted as its largest point (the largest D, then the most heads).
RunBudget sweep_budget(const SweepPlan& plan);

}  // namespace headspec

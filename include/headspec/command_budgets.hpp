#pragma once
// Each subcommand's run budget, for the command line and the Python calls alike (include/headspec/budget.hpp) from its flags: the dominant
// terms of its memory and work, so that a run that cannot finish is refused before it starts.
#include "headspec/budget.hpp"
#include "headspec/command_settings.hpp"
#include "headspec/model.hpp"
#include "headspec/sweep_plan.hpp"

namespace headspec {

RunBudget simulate_budget(const SimulateSettings& o, const ModelSpec& model);
RunBudget theory_budget(const TheorySettings& o, const ModelSpec& model);
RunBudget mnist_budget(const MnistSettings& o, const ModelSpec& model);
RunBudget bayes_budget(const BayesSettings& o, const ModelSpec& model);
RunBudget linearise_budget(const LineariseSettings& o, const ModelSpec& model);
/// `tasks` (point, run) pairs, each of the size of the plan's largest point (`model`, `D`).
RunBudget sweep_budget(const SweepCommandSettings& o, const ModelSpec& model, double D, int tasks);
/// Every task of `plan` counted as its largest point (the largest D, then the most heads).
RunBudget sweep_budget(const SweepCommandSettings& o, const SweepPlan& plan);

}  // namespace headspec

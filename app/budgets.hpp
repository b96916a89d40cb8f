#pragma once
// Each subcommand's run budget (include/headspec/budget.hpp) from its flags: the dominant
// terms of its memory and work, so that a run that cannot finish is refused before it starts.
#include "headspec/budget.hpp"
#include "headspec/command_settings.hpp"
#include "headspec/model.hpp"

namespace headspec::app {

RunBudget simulate_budget(const SimulateSettings& o, const ModelSpec& model);
RunBudget theory_budget(const TheorySettings& o, const ModelSpec& model);
RunBudget mnist_budget(const MnistSettings& o, const ModelSpec& model);
RunBudget bayes_budget(const BayesSettings& o, const ModelSpec& model);
RunBudget linearise_budget(const LineariseSettings& o, const ModelSpec& model);
/// `tasks` (point, run) pairs, each of the size of the plan's largest point (`model`, `D`).
RunBudget sweep_budget(const SweepCommandSettings& o, const ModelSpec& model, double D, int tasks);

}  // namespace headspec::app

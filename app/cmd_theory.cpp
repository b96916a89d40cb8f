// `headspec theory`: the asymptotic ODE of docs/model.md §6 (docs/cli.md).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "checkpointing.hpp"
#include "commands.hpp"
#include "headspec/command_budgets.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/settings.hpp"
#include "headspec/theory_runs.hpp"
#include "headspec/thread_limit.hpp"
#include "options.hpp"

namespace headspec::app {
namespace {

// The parameters that decide the numbers: the sidecar's, and a checkpoint's identity.
nlohmann::json theory_params(const TheorySettings& o, const ModelSpec& model, const TheoryRuns& runs) {
  nlohmann::json params = sidecar_parameters(theory_parameters(), o);
  params["command"] = "theory";
  model.to_json(params["model"]);
  params["theory"].update(runs.config().identity_for(model));  // as sweep's and Python's
  return params;
}

bool has_stop_rule(const TheorySettings& o) { return o.until_converged > 0 || o.until_error_settled > 0; }

// The sidecar: the parameters, and per run its evaluations, convergence and divergence.
nlohmann::json theory_sidecar(const TheorySettings& o, const nlohmann::json& params, const std::vector<std::string>& argv,
                              const CliCheckpointing& checkpointing, const ModelSpec& model,
                              const std::vector<TheoryResult>& results) {
  nlohmann::json meta = provenance();
  meta["command"] = "theory";
  meta["argv"] = argv;
  meta["model"] = params["model"];
  meta["theory"] = params["theory"];
  checkpointing.annotate(meta);
  const bool learned = model.readout == Readout::Learned;
  meta["columns"] = csv_columns(model.H, model.F(), learned, o.mc_error ? CsvErrors::all : CsvErrors::none);
  for (std::size_t k = 0; k < results.size(); ++k) {
    const auto& r = results[k];
    nlohmann::json run = {{"run", k}, {"evaluations", r.evaluations}};
    if (has_stop_rule(o)) {
      run["converged"] = r.converged;
      if (r.converged) {
        run["converged_at"] = r.converged_at;
        run["converged_by"] = to_string(r.converged_by);
      }
    }
    if (r.trajectory.diverged) run["diverged_at"] = r.trajectory.diverged_at;
    meta["runs_summary"].push_back(run);
  }
  return meta;
}

// One line on stderr per run that diverged or did not converge.
void report_runs(const TheorySettings& o, const ModelSpec& model, const IntegrationSpec& integration,
                 const std::vector<TheoryResult>& results) {
  for (std::size_t k = 0; k < results.size(); ++k) {
    const auto& r = results[k];
    if (r.trajectory.diverged && !r.trajectory.diverged_because.empty())
      std::cerr << fmt::format("headspec: run {} diverged at t = {}: {}; the rows before it are kept; {}\n", k,
                               r.trajectory.diverged_at, r.trajectory.diverged_because, smaller_step_advice(model));
    else if (r.trajectory.diverged && integration.method == Integrator::Dopri5)
      std::cerr << fmt::format(
          "headspec: run {} diverged (NaN, overflow, or dopri5's step size collapsed: over 1000 steps per unit of t) "
          "at t = {}; the rows before it are kept; {}\n",
          k, r.trajectory.diverged_at, smaller_step_advice(model));
    else if (r.trajectory.diverged)
      std::cerr << fmt::format(
          "headspec: run {} diverged (NaN or overflow) at t = {}; the rows before it are kept; {} or a smaller --dt "
          "(now {})\n",
          k, r.trajectory.diverged_at, smaller_step_advice(model), integration.dt);
    else if (has_stop_rule(o) && !r.converged) {
      std::vector<std::string> rules;
      if (o.until_converged > 0) rules.push_back(fmt::format("every |derivative| < {}", o.until_converged));
      if (o.until_error_settled > 0)
        rules.push_back(fmt::format("error settled to a relative {} over a window {}", o.until_error_settled,
                                    o.error_window));
      std::cerr << fmt::format("headspec: run {} did not converge ({}) by T = {}\n", k, fmt::join(rules, " or "),
                               integration.last_record_time());
    }
  }
}

int run_theory(const TheorySettings& o, const std::vector<std::string>& argv, bool check_only) {
  // Everything is checked before anything runs or is written.
  const ModelSpec model = o.to_spec();
  RunFiles files = run_files(o.out, o);
  const TheoryRuns theory(model, o.runs_spec());
  check_budget(theory_budget(theory, model), o);
  const ThreadLimit thread_limit(o.threads);  // --threads, for the rest of the command
  const ProgressMode progress_shown = progress_mode(o.progress);
  const IntegrationSpec& integration = theory.integration();
  const nlohmann::json params = theory_params(o, model, theory);
  const CliCheckpointing checkpointing(o, params);
  checkpointing.declare(files);
  files.check();
  if (check_only) return 0;

  Progress progress("theory", static_cast<double>(o.runs) * o.T, progress_shown);
  std::mutex reached_mutex;  // small runs go in parallel (TheoryRuns::run): the sum of their times
  std::vector<double> reached(static_cast<std::size_t>(o.runs), 0.0);
  double reached_sum = 0;
  const std::vector<TheoryResult> results = theory.run(
      [&](int run, double t) {
        const std::lock_guard lock(reached_mutex);
        reached_sum += t - std::exchange(reached[static_cast<std::size_t>(run)], t);
        progress.update(fmt::format("run {} t = {:.4g} / {}", run, t, o.T), reached_sum);
      },
      checkpointing.driver());
  progress.finish();
  std::vector<const Trajectory*> runs;
  std::vector<const std::vector<double>*> errors;  // per row, with --mc-error
  for (const auto& r : results) {
    if (r.trajectory.interrupted) return checkpointing.interrupted();
    runs.push_back(&r.trajectory);
    for (const auto& e : r.mc_error) errors.push_back(&e);
  }
  const nlohmann::json meta = theory_sidecar(o, params, argv, checkpointing, model, results);
  write_output(o.out,
               format_csv(record_rows(runs), model.H, model.F(), model.readout == Readout::Learned,
                          o.mc_error ? CsvErrors::all : CsvErrors::none, &errors),
               meta);
  checkpointing.completed();
  report_runs(o, model, integration, results);
  for (const auto* r : runs)
    if (r->diverged) return 3;
  return 0;
}

}  // namespace

Command add_theory_command(CLI::App& app) {
  auto opts = std::make_shared<TheorySettings>();
  CLI::App* sub = app.add_subcommand("theory", "the asymptotic ODE of the order parameters (D → ∞, t = n/D)");
  add_parameters(sub, theory_parameters(), *opts);
  return {sub, [opts](const std::vector<std::string>& argv, bool check_only) { return run_theory(*opts, argv, check_only); }};
}

}  // namespace headspec::app

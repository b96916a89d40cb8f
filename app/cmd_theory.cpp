// `headspec theory`: the asymptotic ODE of docs/model.md §6 (docs/cli.md).
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "checkpointing.hpp"
#include "commands.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/settings.hpp"
#include "headspec/theory_runs.hpp"
#include "options.hpp"

namespace headspec::app {
namespace {

struct TheoryCliOptions {
  ModelOptions model;
  RunOptions run;
  CheckpointOptions checkpoint;
  int64_t mc = 10000;
  bool mc_resample = false;
  std::string integrator;  // empty: rk4, or euler with --mc-resample
  double dt = 0.05;
  int64_t init_D = 10000;
  std::string init_engine = "dense";
  int runs = 1;
  bool keep_R = false;
  double until_converged = 0;
  double until_error_settled = 0;
  double error_window = 20;
};

int run_theory(const TheoryCliOptions& o, const std::vector<std::string>& argv, bool check_only) {
  // Everything is checked before anything runs or is written.
  const ModelSpec model = make_model(o.model);
  validate_run(o.run);
  TheoryRunsSpec spec;
  spec.mc = o.mc;
  spec.mc_resample = o.mc_resample;
  spec.integrator = o.integrator;
  spec.dt = o.dt;
  spec.T = o.run.T;
  spec.record_every = o.run.record_every;
  spec.until_converged = o.until_converged;
  spec.until_error_settled = o.until_error_settled;
  spec.error_window = o.error_window;
  spec.init_D = o.init_D;
  spec.init_engine = o.init_engine;
  spec.runs = o.runs;
  spec.seed = checked_seed(o.run.seed);
  spec.keep_R = o.keep_R;
  const TheoryRuns theory(model, spec);
  const IntegrationSpec& integration = theory.integration();
  // The parameters that decide the numbers: the sidecar's, and a checkpoint's identity.
  nlohmann::json params = {{"command", "theory"}};
  model.to_json(params["model"]);
  params["theory"] = {{"mc", o.mc},
                      {"mc_mode", o.mc_resample ? "resample" : "fixed"},
                      {"value_channel", o.keep_R ? "sampled" : "integrated"},
                      {"integrator", to_string(integration.method)},
                      {"dt", integration.dt},
                      {"dopri5_tolerance", integration.tolerance},
                      {"init_D", o.init_D},
                      {"init_engine", o.init_engine},
                      {"keep_R", o.keep_R},
                      {"until_converged", o.until_converged},
                      {"until_error_settled", o.until_error_settled},
                      {"error_window", o.error_window},
                      {"T", o.run.T},
                      {"record_every", o.run.record_every},
                      {"seed", o.run.seed},
                      {"runs", o.runs},
                      {"time", "t = samples seen / D, as for simulate"}};
  const CliCheckpointing checkpointing(o.checkpoint, params);

  if (check_only) return 0;

  Progress progress("theory", static_cast<double>(o.runs) * (o.run.T + o.run.record_every));
  const std::vector<TheoryResult> results = theory.run(
      [&](int run, double t) {
        progress.update(fmt::format("run {} t = {:.4g} / {}", run, t, o.run.T),
                        run * (o.run.T + o.run.record_every) + t);
      },
      checkpointing.driver());
  progress.finish();
  for (const auto& r : results)
    if (r.trajectory.interrupted) return checkpointing.interrupted();

  std::vector<const Record*> rows;
  for (const auto& r : results)
    for (const auto& rec : r.trajectory.records) rows.push_back(&rec);
  const bool learned = model.readout == Readout::Learned;
  nlohmann::json meta = provenance();
  meta["command"] = "theory";
  meta["argv"] = argv;
  meta["model"] = params["model"];
  meta["theory"] = params["theory"];
  checkpointing.annotate(meta);
  meta["columns"] = csv_columns(model.H, model.F(), learned);
  int status = 0;
  for (std::size_t k = 0; k < results.size(); ++k) {
    const auto& r = results[k];
    nlohmann::json run = {{"run", k}, {"evaluations", r.evaluations}};
    if (o.until_converged > 0 || o.until_error_settled > 0) {
      run["converged"] = r.converged;
      if (r.converged) {
        run["converged_at"] = r.converged_at;
        run["converged_by"] = to_string(r.converged_by);
      }
    }
    if (r.trajectory.diverged) {
      run["diverged_at"] = r.trajectory.diverged_at;
      status = 3;
    }
    meta["runs_summary"].push_back(run);
  }
  write_output(o.run, format_csv(rows, model.H, model.F(), learned), meta);
  checkpointing.completed();
  for (std::size_t k = 0; k < results.size(); ++k) {
    const auto& r = results[k];
    if (r.trajectory.diverged)
      std::cerr << fmt::format(
          "headspec: run {} diverged (NaN or overflow) at t = {}; the rows before it are kept; try a smaller --lr "
          "(now {}) or a smaller --dt (now {})\n",
          k, r.trajectory.diverged_at, model.lr, integration.dt);
    else if ((o.until_converged > 0 || o.until_error_settled > 0) && !r.converged) {
      std::vector<std::string> rules;
      if (o.until_converged > 0) rules.push_back(fmt::format("every |derivative| < {}", o.until_converged));
      if (o.until_error_settled > 0)
        rules.push_back(fmt::format("error settled to a relative {} over a window {}", o.until_error_settled,
                                    o.error_window));
      std::cerr << fmt::format("headspec: run {} did not converge ({}) by T = {}\n", k, fmt::join(rules, " or "),
                               integration.last_record_time());
    }
  }
  return status;
}

}  // namespace

Command add_theory_command(CLI::App& app) {
  auto opts = std::make_shared<TheoryCliOptions>();
  CLI::App* sub = app.add_subcommand("theory", "the asymptotic ODE of the order parameters (D → ∞, t = n/D)");
  add_model_options(sub, opts->model);
  add_run_options(sub, opts->run);
  add_checkpoint_options(sub, opts->checkpoint);
  sub->add_option("--mc", opts->mc, "Monte Carlo samples N per evaluation of the right-hand side")
      ->capture_default_str();
  sub->add_flag("--mc-resample", opts->mc_resample,
                "fresh samples at every step (default: one fixed set reused at every evaluation)");
  sub->add_option("--integrator", opts->integrator,
                  "rk4 | dopri5 | euler | heun (default rk4; euler with --mc-resample)");
  sub->add_option("--dt", opts->dt, "time step (initial step for dopri5)")->capture_default_str();
  sub->add_option("--init-D", opts->init_D, "D of the finite-D initialisation drawn for M(0), Q(0)")
      ->capture_default_str();
  sub->add_option("--init-engine", opts->init_engine,
                  "engine whose initial state (same seed, D = --init-D) starts the ODE: dense | gram")
      ->capture_default_str();
  sub->add_option("--runs", opts->runs, "independent runs (run k uses seed + k)")->capture_default_str();
  sub->add_flag("--keep-R", opts->keep_R, "keep R(0) from the draw and sample the value channel (general path)");
  sub->add_option("--until-converged", opts->until_converged,
                  "stop once every |derivative| is below this (--T is then the longest time)");
  sub->add_option("--until-error-settled", opts->until_error_settled,
                  "stop once the recorded error's means over the four quarters of the last --error-window differ by "
                  "less than this fraction of the last one (--T is then the longest time)");
  sub->add_option("--error-window", opts->error_window,
                  "window W of --until-error-settled: a whole multiple of 4 --record-every intervals")
      ->capture_default_str();
  return {sub, [opts](const std::vector<std::string>& argv, bool check_only) { return run_theory(*opts, argv, check_only); }};
}

}  // namespace headspec::app

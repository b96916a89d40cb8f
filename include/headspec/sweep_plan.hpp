#pragma once
// `headspec sweep` without its command line: the flags checked into a plan of (grid point,
// run) tasks, the tasks run, and their results as the tidy table and the summary
// (docs/cli.md). The CLI and the Python module both call these; only the CLI writes files.
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "headspec/engines.hpp"
#include "headspec/settings.hpp"
#include "headspec/simulation.hpp"
#include "headspec/sweep.hpp"
#include "headspec/theory_config.hpp"
#include "headspec/theory_engine.hpp"
#include "headspec/theory_flags.hpp"
#include "headspec/theory_integrator.hpp"

namespace headspec {

/// The flags of `headspec sweep` that decide its numbers (not where they are written).
/// The theory's flags (TheoryFlags) apply with --engine theory or sde.
struct SweepSettings : TheoryFlags {
  ModelSettings model;
  std::string grid;
  std::string engine = "gram";
  int64_t D = 10000;
  double T = 20;
  double record_every = 1;
  int64_t seed = 1;
  int runs = 1;
  int test_samples = 2000;
  // specialisation (docs/model.md §10)
  double delta = 0.2;
  bool stop_when_specialised = false;
};

/// One grid point, ready to run.
struct SweepPoint {
  ModelSpec model;
  EngineFactory engine;  ///< finite-D engine, or the engine of the theory's initial state
  int64_t D = 0;
  std::vector<std::string> labels;  ///< one value per grid axis, as written in --grid
};

/// Everything a sweep runs, checked before anything runs. Task k is run k % runs of point
/// k / runs; run r of every point uses seed + r, so a task's result depends neither on the
/// thread or process that runs it nor on the grid's order.
class SweepPlan {
 public:
  /// Checks every flag and grid point; throws UsageError naming the flag at fault.
  explicit SweepPlan(const SweepSettings& settings);
  // Copyable and movable: every point's engine factory holds its own copy of the model.

  const SweepSettings& settings() const { return settings_; }
  /// --engine theory or sde: runs of the theory (sde: the stochastic theory at each point's D).
  bool theory() const { return theory_; }
  bool sde() const { return sde_; }
  const ModelSpec& base_model() const { return base_model_; }
  const SimulationSpec& simulation() const { return sim_; }
  /// The theory's configuration (theory() only): checked at the base model and D.
  const TheoryConfig& theory_config() const { return *theory_config_; }
  const IntegrationSpec& integration() const { return theory_config().integration(); }
  const std::vector<GridAxis>& axes() const { return axes_; }
  const std::vector<SweepPoint>& points() const { return points_; }
  /// The files the grid points' model flags name (a grid value mixture:FILE or table:FILE, and
  /// the base flags' files, which every point inherits), as inputs of --grid.
  const std::vector<NamedFile>& grid_input_files() const { return grid_input_files_; }
  int tasks() const { return tasks_; }
  const SweepPoint& point_of(int task) const { return points_[static_cast<std::size_t>(task / settings_.runs)]; }
  /// The method a theory point's expectations take (--mc-method auto resolved for its model).
  SamplingMethod sampling_method(const SweepPoint& p) const;
  /// Whether a theory run may stop before T (--until-converged, --until-error-settled).
  bool stop_rule() const;

  /// Runs one task (any thread).
  /// With `stop` set (docs/cli.md "Signals"), the task stops at its next step, interrupted.
  Trajectory run_task(int task, const std::atomic<bool>* stop = nullptr) const;
  /// The key of a task in a work folder (SweepWorkDir): every parameter its result depends
  /// on, and the program's version and revision (another build may compute other numbers).
  std::string task_key(int task) const;

 private:
  // The constructor's steps, in order (src/studies/sweep_plan.cpp).
  void check_engine() const;
  void check_theory_only_flags() const;
  void plan_runs(uint32_t seed);
  void plan_theory(uint32_t seed);
  void make_points();
  void add_grid_input(const std::string& path);
  void make_engine_factories();
  // The reference path of a point's model (--sde-reference-mc), made by the first task that
  // needs it and shared by every point with the same model (it does not depend on D).
  std::shared_ptr<const ReferencePath> reference_path(const SweepPoint& p) const;
  nlohmann::json theory_key() const;  // the theory's part of task_key

  SweepSettings settings_;
  bool theory_ = false, sde_ = false;
  ModelSpec base_model_;
  SimulationSpec sim_;
  std::optional<TheoryConfig> theory_config_;  // theory() only
  std::vector<GridAxis> axes_;
  std::vector<SweepPoint> points_;
  std::vector<NamedFile> grid_input_files_;
  int tasks_ = 0;
  struct ReferencePaths {  // shared by the plan's copies, which make the same paths
    std::mutex mutex;
    std::vector<std::pair<std::string, std::shared_ptr<const ReferencePath>>> paths;  // by model
  };
  std::shared_ptr<ReferencePaths> references_ = std::make_shared<ReferencePaths>();
};

/// A task's work, and the receipt of its result (called once per task, from any thread,
/// concurrently for different tasks; `by_rank` is the process that computed it).
using SweepRunTask = std::function<Trajectory(int task)>;
using SweepTaskDone = std::function<void(int task, Trajectory&& result, int by_rank)>;

/// The first failure of tasks run on several threads (the others stop taking tasks).
class FirstTaskError {
 public:
  void set(const std::string& what);
  bool failed() const { return failed_; }
  /// Throws std::runtime_error with the first message, if any.
  void throw_if_set() const;

 private:
  std::mutex mutex_;
  std::string what_;
  std::atomic<bool> failed_{false};
};

/// Runs the tasks `todo` on this process's threads, taken one at a time in the order given.
/// Throws std::runtime_error with the first failure's message once the others stopped.
void run_tasks_locally(const std::vector<int>& todo, const SweepRunTask& run, const SweepTaskDone& done);

/// The tasks of a plan before they run: results already in the work folder, and the rest.
struct SweepTasks {
  std::vector<Trajectory> results;  ///< one per task; filled for the reused ones
  std::vector<std::string> keys;    ///< one per task when there is a work folder
  std::vector<int> todo;            ///< the tasks to compute, in order
  std::vector<std::string> problems;  ///< work-folder files not read back (computed again)
};
/// Reads back what `work` (nullptr: no work folder) holds of `plan`'s tasks.
SweepTasks sweep_tasks(const SweepPlan& plan, const SweepWorkDir* work);

/// Runs every task of `plan` on this process's threads (no work folder): one trajectory per task.
/// Once `stop` is set, the running tasks stop at their next step and no further one starts
/// (those are empty); every such trajectory has `interrupted` set. `task_done` (if set) is
/// called after each task, from the thread that ran it.
std::vector<Trajectory> run_sweep(const SweepPlan& plan, const std::atomic<bool>* stop = nullptr,
                                  const std::function<void()>& task_done = {});

/// The results of a sweep as tables. A cell that a point lacks (its H, F or readout has
/// fewer columns than the union of every point's) is nullopt: empty in the CSV.
struct SweepTable {
  std::vector<std::string> grid_columns;   ///< the grid keys
  std::vector<std::string> value_columns;  ///< the union of docs/cli.md columns after run, t
  struct Row {
    int point = 0;
    int run = 0;
    double t = 0;
    std::vector<std::optional<double>> values;  ///< one per value column
  };
  std::vector<Row> rows;  ///< every record of every task, task by task
  struct Summary {
    int point = 0;
    int run = 0;
    std::optional<double> t;  ///< of the last record (none: no record)
    std::vector<std::optional<double>> values;  ///< the last record's
    bool diverged = false;
    double diverged_at = 0;
    bool converged = false;  ///< stopped by the stop rule (stop_rule() only)
    double converged_at = 0;
    std::vector<std::optional<double>> tau;        ///< tau_f, docs/model.md §10 (NaN: not specialised)
    std::vector<std::optional<double>> tau_tilde;  ///< tau_f / ln D (finite-D engines only)
  };
  std::vector<Summary> summary;  ///< one per task
  int F = 1;                     ///< the largest F of the grid (tau columns)
  bool stop_rule = false;        ///< converged, converged_at columns
  bool tau_tilde = false;        ///< tau_tilde columns
};
SweepTable sweep_table(const SweepPlan& plan, const std::vector<Trajectory>& results);

/// The tidy CSV and the summary CSV (docs/cli.md), byte for byte what `headspec sweep` writes.
std::string sweep_csv(const SweepPlan& plan, const SweepTable& table);
std::string sweep_summary_csv(const SweepPlan& plan, const SweepTable& table);
/// The sidecar of the tidy CSV: the same for every way of running the same command (it says
/// neither how many processes ran nor what was reused).
nlohmann::json sweep_sidecar(const SweepPlan& plan, const SweepTable& table, const std::vector<std::string>& argv);

}  // namespace headspec

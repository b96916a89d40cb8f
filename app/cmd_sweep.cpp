// `headspec sweep`: a grid over model flags × runs on any engine (INTERFACE.md), one tidy
// CSV of every record and a summary CSV of final values and specialisation times.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "headspec/engines.hpp"
#include "headspec/errors.hpp"
#include "headspec/io.hpp"
#include "headspec/specialisation.hpp"
#include "headspec/sweep.hpp"
#include "headspec/theory_integrator.hpp"
#include "headspec/theory_runs.hpp"
#include "options.hpp"
#include "sweep_ranks.hpp"

namespace headspec::app {
namespace {

struct SweepOptions {
  ModelOptions model;
  RunOptions run;
  std::string grid;
  std::string engine = "gram";
  int64_t D = 10000;
  int runs = 1;
  int test_samples = 2000;
  // theory
  int64_t mc = 10000;
  bool mc_resample = false;
  std::string integrator;
  double dt = 0.05;
  int64_t init_D = 10000;
  std::string init_engine = "dense";
  double until_converged = 0;      // stop rules (docs/theory.md §3)
  double until_error_settled = 0;
  double error_window = 20;
  // specialisation
  double delta = 0.2;
  bool stop_when_specialised = false;
  std::string summary;
  std::string work_dir;  // one file per finished (point, run): a killed sweep resumes
};

// One grid point, ready to run.
struct Point {
  ModelSpec model;
  EngineFactory engine;  // finite-D engine, or the engine of the theory's initial state
  int64_t D = 0;
  std::vector<std::string> labels;  // one value per grid axis
};

// A CSV field, quoted when it holds a comma or a quote (vector values such as nu = 1,1).
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

// Writes the INTERFACE.md values of `r` into the columns `index` (positions in the union of
// every point's columns); the other cells stay empty.
void union_row(const Record& r, bool learned, const std::vector<std::size_t>& index, std::vector<std::string>& cells) {
  std::vector<double> values;
  append_csv_values(r, learned, values);
  for (std::size_t k = 0; k < values.size(); ++k) cells[index[k]] = fmt::format("{}", values[k]);
}

// The line of a usage error as main() prints it (INTERFACE.md "Errors").
std::string usage_line(std::string message) {
  for (char& ch : message)
    if (ch == '\n') ch = ' ';
  return "headspec: error: " + message + "\n";
}

// Everything a sweep runs, checked before anything runs or is written.
struct Plan {
  bool theory = false;
  ModelSpec base_model;
  SimulationSpec sim;
  IntegrationSpec integration;
  TheoryOptions mc;
  std::vector<GridAxis> axes;
  std::vector<Point> points;  // the engine factories refer to their point: filled in place, never moved
  int tasks = 0;
};

// Fills `plan` from the options; throws UsageError naming the flag at fault. Only rank 0
// (`writes`) checks and creates what it alone writes: --out, --summary and --work-dir.
void prepare(const SweepOptions& o, bool writes, Plan& plan) {
  plan.theory = o.engine == "theory";
  const bool theory = plan.theory;
  if (!theory) {
    const auto names = sgd_engine_names();
    if (std::find(names.begin(), names.end(), o.engine) == names.end())
      throw UsageError(fmt::format("--engine: unknown engine '{}' (available: theory, {})", o.engine, fmt::join(names, ", ")));
  }
  plan.base_model = make_model(o.model);
  RunOptions run = o.run;
  if (!writes) run.out.clear();
  validate_run(run);
  if (writes && !o.summary.empty()) check_output_path(o.summary, "--summary");
  if (!(std::isfinite(o.delta) && o.delta > 0)) throw UsageError(fmt::format("--delta: must be > 0, got {}", o.delta));
  if (theory && o.stop_when_specialised)
    throw UsageError("--stop-when-specialised: only for the finite-D engines (gram, dense)");
  if (!theory && o.until_converged != 0) throw UsageError("--until-converged: only for --engine theory");
  if (!theory && o.until_error_settled != 0) throw UsageError("--until-error-settled: only for --engine theory");
  SimulationSpec& sim = plan.sim;
  sim.D = o.D;
  sim.T = o.run.T;
  sim.record_every = o.run.record_every;
  sim.test_samples = o.test_samples;
  sim.seed = static_cast<uint32_t>(o.run.seed);
  sim.runs = o.runs;
  sim.stop_when_specialised = o.stop_when_specialised ? o.delta : 0;
  sim.validate();

  if (theory) {
    if (o.mc < 2 || o.mc > 0xFFFFFFFFLL) throw UsageError(fmt::format("--mc: must be in [2, 2^32), got {}", o.mc));
    plan.integration.method = parse_integrator(o.integrator.empty() ? (o.mc_resample ? "euler" : "rk4") : o.integrator);
    plan.integration.dt = o.dt;
    plan.integration.T = o.run.T;
    plan.integration.record_every = o.run.record_every;
    plan.integration.until_converged = o.until_converged;
    plan.integration.until_error_settled = o.until_error_settled;
    plan.integration.error_window = o.error_window;
    plan.mc.samples = o.mc;
    plan.mc.mode = o.mc_resample ? MonteCarloMode::Resample : MonteCarloMode::Fixed;
    plan.integration.validate(plan.mc.mode);
  }

  plan.axes = parse_grid(o.grid, !theory);
  const auto& axes = plan.axes;
  auto& points = plan.points;
  for (const GridPoint& g : grid_points(axes, o.model, o.D)) {
    Point p;
    p.model = g.model.to_spec();
    p.D = g.D;
    for (std::size_t a = 0; a < axes.size(); ++a) p.labels.push_back(axes[a].values[g.index[a]]);
    points.push_back(std::move(p));
  }
  // The factories keep a reference to their model: made once `points` no longer moves.
  for (Point& p : points) {
    try {
      p.engine = theory ? initial_state_factory(o.init_engine, p.model, o.init_D)
                        : sgd_engine_factory(o.engine, p.model, p.D);
    } catch (const UsageError& e) {
      std::string where;
      for (std::size_t a = 0; a < axes.size(); ++a) where += (a ? ";" : "") + axes[a].key + "=" + p.labels[a];
      throw UsageError(fmt::format("--grid: at {}: {}", where.empty() ? "the only point" : where, e.what()));
    }
  }
  if (points.size() * static_cast<std::size_t>(o.runs) > static_cast<std::size_t>(INT32_MAX))
    throw UsageError("--runs: more than 2^31 runs in all");
  plan.tasks = static_cast<int>(points.size()) * o.runs;

  // Last, as it creates the folder: nothing is made when another flag is wrong.
  if (writes && !o.work_dir.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path dir(o.work_dir);
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
      throw UsageError(fmt::format("--work-dir: '{}' is not a folder", o.work_dir));
    if (!fs::exists(dir, ec)) {
      const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
      if (!fs::is_directory(parent, ec))
        throw UsageError(fmt::format("--work-dir: folder '{}' does not exist", parent.string()));
      if (!fs::create_directory(dir, ec))
        throw UsageError(fmt::format("--work-dir: cannot create '{}': {}", o.work_dir, ec.message()));
    }
    if (::access(dir.c_str(), W_OK) != 0) throw UsageError(fmt::format("--work-dir: folder '{}' is not writable", o.work_dir));
  }
}

// The key of one (grid point, run) in the work folder: every parameter its result depends
// on, and the program's version and revision (another build may compute other numbers).
std::string task_key(const SweepOptions& o, const Plan& plan, const Point& p, int run) {
  nlohmann::json key = provenance();
  nlohmann::json model;
  p.model.to_json(model);
  const Eigen::MatrixXd& atoms = p.model.prior.atoms();
  const Eigen::VectorXd& weights = p.model.prior.weights();
  // A mixture read from a file: its atoms, not the file's name, decide the result.
  nlohmann::json rows = nlohmann::json::array();
  for (Eigen::Index a = 0; a < atoms.rows(); ++a) {
    std::vector<double> row(static_cast<std::size_t>(atoms.cols()));
    for (Eigen::Index f = 0; f < atoms.cols(); ++f) row[static_cast<std::size_t>(f)] = atoms(a, f);
    rows.push_back(row);
  }
  model["atoms"] = rows;
  model["weights"] = std::vector<double>(weights.data(), weights.data() + weights.size());
  key["model"] = model;
  key["engine"] = o.engine;
  key["T"] = plan.sim.T;
  key["record_every"] = plan.sim.record_every;
  key["seed"] = plan.sim.seed;
  key["run"] = run;
  if (plan.theory) {
    key["theory"] = {{"mc", plan.mc.samples}, {"mc_mode", o.mc_resample ? "resample" : "fixed"},
                     {"integrator", to_string(plan.integration.method)}, {"dt", plan.integration.dt},
                     {"init_D", o.init_D}, {"init_engine", o.init_engine}};
    // Only when set, so that the work folders of sweeps without a stop rule stay valid.
    if (o.until_converged > 0) key["theory"]["until_converged"] = o.until_converged;
    if (o.until_error_settled > 0)
      key["theory"]["until_error_settled"] = {o.until_error_settled, o.error_window};
  } else {
    key["D"] = p.D;
    key["test_samples"] = plan.sim.test_samples;
    key["stop_when_specialised"] = plan.sim.stop_when_specialised;
  }
  return key.dump();
}

// The tidy CSV, the summary and the sidecar of the finished tasks (rank 0); the status.
int write_results(const SweepOptions& o, const std::vector<std::string>& argv, const Plan& plan,
                  const std::vector<Trajectory>& results) {
  const bool theory = plan.theory;
  const auto& points = plan.points;
  const auto& axes = plan.axes;
  const int tasks = plan.tasks;
  // Columns: the grid keys, then the union of every point's INTERFACE.md columns (they
  // differ when H, F or the readout vary); a point leaves the columns it lacks empty.
  int H = 1, F = 1;
  bool learned = false;
  for (const Point& p : points) {
    H = std::max(H, p.model.H);
    F = std::max(F, p.model.F());
    learned = learned || p.model.readout == Readout::Learned;
  }
  const auto columns = csv_columns(H, F, learned);  // run, t, loss, …
  std::map<std::string, std::size_t> position;
  for (std::size_t k = 2; k < columns.size(); ++k) position[columns[k]] = k - 2;
  std::vector<std::string> head;
  for (const auto& a : axes) head.push_back(a.key);

  std::vector<std::string> header = head;
  header.insert(header.end(), columns.begin(), columns.end());
  std::string csv = fmt::format("{}\n", fmt::join(header, ","));
  std::string summary = fmt::format("{}", fmt::join(header, ","));
  summary += ",diverged";
  // A theory run with a stop rule: whether it stopped before T (stopped_by_rule), and when.
  const bool stop_rule = theory && (o.until_converged > 0 || o.until_error_settled > 0);
  if (stop_rule) summary += ",converged,converged_at";
  for (int f = 1; f <= F; ++f) summary += fmt::format(",tau_{}", f);
  if (!theory)
    for (int f = 1; f <= F; ++f) summary += fmt::format(",tau_tilde_{}", f);
  summary += "\n";

  int status = 0;
  nlohmann::json diverged = nlohmann::json::array();
  for (int task = 0; task < tasks; ++task) {
    const Point& p = points[static_cast<std::size_t>(task / o.runs)];
    const int run = task % o.runs;
    const Trajectory& tr = results[task];
    const bool point_learned = p.model.readout == Readout::Learned;
    const auto own = csv_columns(p.model.H, p.model.F(), point_learned);
    std::vector<std::size_t> index;
    for (std::size_t k = 2; k < own.size(); ++k) index.push_back(position.at(own[k]));
    std::string prefix;
    for (const auto& l : p.labels) prefix += csv_field(l) + ",";
    std::vector<std::string> cells(columns.size() - 2);
    for (const Record& r : tr.records) {
      union_row(r, point_learned, index, cells);
      csv += fmt::format("{}{},{},{}\n", prefix, run, r.t, fmt::join(cells, ","));
    }
    if (tr.diverged) {
      status = 3;
      diverged.push_back({{"point", task / o.runs}, {"run", run}, {"t", tr.diverged_at}});
    }
    std::fill(cells.begin(), cells.end(), "");
    std::string t_final = "";
    if (!tr.records.empty()) {
      union_row(tr.records.back(), point_learned, index, cells);
      t_final = fmt::format("{}", tr.records.back().t);
    }
    summary += fmt::format("{}{},{},{},{}", prefix, run, t_final, fmt::join(cells, ","), tr.diverged ? 1 : 0);
    if (stop_rule) {
      double at = 0;
      const bool converged = stopped_by_rule(tr, plan.integration, &at);
      summary += converged ? fmt::format(",1,{}", at) : std::string(",0,");
    }
    auto tau = specialisation_times(tr.records, o.delta);
    tau.resize(static_cast<std::size_t>(p.model.F()), std::nan(""));
    for (int f = 0; f < F; ++f) summary += f < p.model.F() ? fmt::format(",{}", tau[f]) : std::string(",");
    if (!theory)
      for (int f = 0; f < F; ++f)
        summary += f < p.model.F() ? fmt::format(",{}", tau[f] / std::log(static_cast<double>(p.D))) : std::string(",");
    summary += "\n";
  }

  // The sidecar does not say how many ranks ran, nor what was reused: it is the same for
  // every way of running the same command.
  nlohmann::json meta = provenance();
  meta["command"] = "sweep";
  meta["argv"] = argv;
  nlohmann::json jm;
  plan.base_model.to_json(jm);
  meta["base_model"] = jm;
  nlohmann::json grid = nlohmann::json::array();
  for (const auto& a : axes) grid.push_back({{"key", a.key}, {"values", a.values}});
  meta["grid"] = grid;
  meta["grid_order"] = "row-major: the first key varies slowest";
  meta["points"] = points.size();
  meta["sweep"] = {{"engine", o.engine},       {"D", o.D},           {"T", plan.sim.T},
                   {"record_every", plan.sim.record_every}, {"seed", plan.sim.seed}, {"runs", o.runs},
                   {"delta", o.delta},          {"stop_when_specialised", o.stop_when_specialised}};
  if (theory)
    meta["theory"] = {{"mc", o.mc}, {"mc_mode", o.mc_resample ? "resample" : "fixed"},
                      {"integrator", to_string(plan.integration.method)}, {"dt", o.dt},
                      {"init_D", o.init_D}, {"init_engine", o.init_engine},
                      {"until_converged", o.until_converged}, {"until_error_settled", o.until_error_settled},
                      {"error_window", o.error_window}};
  else
    meta["sweep"]["test_samples"] = o.test_samples;
  meta["diverged"] = diverged;
  if (!o.summary.empty()) write_file_atomic(o.summary, summary);
  write_output(o.run, csv, meta);
  for (const auto& d : diverged)
    std::cerr << fmt::format("headspec: point {} run {} diverged (NaN or overflow) at t = {}; the rows before it are "
                             "kept; try a smaller --lr\n",
                             d["point"].get<int>(), d["run"].get<int>(), d["t"].get<double>());
  return status;
}

int run_sweep(const SweepOptions& o, const std::vector<std::string>& argv, bool check_only) {
  if (check_only) {
    // Checks the flags and the grid only: no ranks, and --work-dir is not created.
    Plan plan;
    prepare(o, false, plan);
    return 0;
  }
  SweepRanks ranks;
  const bool master = ranks.rank() == 0;
  // Every rank checks the flags; one line from the lowest rank that found a fault, and
  // status 2 on every rank, before anything runs or is written.
  Plan plan;
  std::string fault;
  try {
    prepare(o, master, plan);
  } catch (const UsageError& e) {
    fault = e.what();
  }
  const int first_fault = ranks.first_failure(!fault.empty());
  if (first_fault < ranks.size()) {
    if (ranks.size() == 1) throw UsageError(fault);
    // Printed here, before the ranks stop together: the launcher ends the job as soon as
    // one rank has exited with an error, which could swallow a line printed later.
    if (first_fault == ranks.rank()) std::cerr << usage_line(fault) << std::flush;
    ranks.barrier();
    return 2;
  }

  // Every (point, run) pair is one task; run k of every point uses seed + k, so a task's
  // result depends neither on the thread or rank that runs it nor on the grid's order.
  const int tasks = plan.tasks;
  std::vector<Trajectory> results(master ? static_cast<std::size_t>(tasks) : 0);
  std::vector<std::string> keys;
  std::vector<int> todo;
  std::optional<SweepWorkDir> work;
  if (master) {
    if (!o.work_dir.empty()) work.emplace(o.work_dir);
    for (int task = 0; task < tasks; ++task) {
      if (work) {
        keys.push_back(task_key(o, plan, plan.points[static_cast<std::size_t>(task / o.runs)], task % o.runs));
        std::string problem;
        if (auto stored = work->load(keys.back(), &problem)) {
          results[static_cast<std::size_t>(task)] = std::move(*stored);
          continue;
        }
        if (!problem.empty()) std::cerr << "headspec: warning: " << problem << "; computing it again\n";
      }
      todo.push_back(task);
    }
  }
  const int reused = tasks - static_cast<int>(todo.size());
  std::vector<std::atomic<int>> computed_by(static_cast<std::size_t>(ranks.size()));
  Progress progress("sweep", static_cast<double>(todo.size()));
  std::atomic<long long> done{0};
  auto run_task = [&](int task) {
    const Point& p = plan.points[static_cast<std::size_t>(task / o.runs)];
    const int run = task % o.runs;
    if (plan.theory) return run_theory(p.model, p.engine, plan.mc, plan.integration, plan.sim.seed, run).trajectory;
    SimulationSpec point_sim = plan.sim;
    point_sim.D = p.D;
    return run_sgd(p.engine, p.model, point_sim, run);
  };
  auto task_done = [&](int task, Trajectory&& result, int by_rank) {
    if (task < 0 || task >= tasks) throw std::runtime_error(fmt::format("sweep: task {} out of range", task));
    // Stored before it counts as done: a sweep killed after this line finds the run on disk.
    if (work) work->store(keys[static_cast<std::size_t>(task)], result);
    results[static_cast<std::size_t>(task)] = std::move(result);
    ++computed_by[static_cast<std::size_t>(by_rank)];
    progress.update(fmt::format("{} of {} runs", done + 1, todo.size()), static_cast<double>(++done));
  };

  std::exception_ptr failure;
  int status = 0;
  try {
    ranks.run_tasks(todo, run_task, task_done);
    if (master) {
      progress.finish();
      if (work || ranks.size() > 1) {
        std::string line = fmt::format("headspec: sweep: {} runs: {} computed", tasks, done.load());
        if (ranks.size() > 1) {
          std::vector<std::string> by;
          for (int r = 0; r < ranks.size(); ++r) by.push_back(fmt::format("rank {}: {}", r, computed_by[r].load()));
          line += fmt::format(" ({})", fmt::join(by, ", "));
        }
        if (work) {
          line += fmt::format(", {} reused from {}", reused, work->folder());
          if (const auto other = work->count_other_files(keys))
            line += fmt::format(" ({} other files there, of other parameters, left alone)", other);
        }
        std::cerr << line << "\n";
      }
      status = write_results(o, argv, plan, results);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  // Every rank ends with rank 0's status (a failure on rank 0 ends the others with 1).
  status = ranks.broadcast(master && failure ? 1 : status);
  if (failure && ranks.size() > 1) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      std::cerr << "headspec: " << e.what() << "\n" << std::flush;
    }
    ranks.barrier();
    return 1;
  }
  if (failure) std::rethrow_exception(failure);
  return status;
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto opts = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand("sweep", "a grid over model flags × runs on any engine: tidy CSV and summary");
  add_model_options(sub, opts->model);
  add_run_options(sub, opts->run);
  sub->add_option("--grid", opts->grid,
                  "axes 'key=v1,v2;key=a:b;nu=1,1|5,5': model flag names without dashes (and D for gram, dense); "
                  "a:b an integer range, '|' separates vector values")
      ->required();
  sub->add_option("--engine", opts->engine, "theory | gram | dense")->capture_default_str();
  sub->add_option("--D", opts->D, "token dimension (gram, dense)")->capture_default_str();
  sub->add_option("--runs", opts->runs, "runs per grid point (run k uses seed + k)")->capture_default_str();
  sub->add_option("--test-samples", opts->test_samples, "fresh samples per error estimate (gram, dense)")
      ->capture_default_str();
  sub->add_option("--mc", opts->mc, "theory: Monte Carlo samples per evaluation")->capture_default_str();
  sub->add_flag("--mc-resample", opts->mc_resample, "theory: fresh samples at every step");
  sub->add_option("--integrator", opts->integrator, "theory: rk4 | dopri5 | euler | heun");
  sub->add_option("--dt", opts->dt, "theory: time step")->capture_default_str();
  sub->add_option("--init-D", opts->init_D, "theory: D of the initial state")->capture_default_str();
  sub->add_option("--init-engine", opts->init_engine, "theory: engine of the initial state (dense | gram)")
      ->capture_default_str();
  sub->add_option("--until-converged", opts->until_converged,
                  "theory: stop a run once every |derivative| is below this");
  sub->add_option("--until-error-settled", opts->until_error_settled,
                  "theory: stop a run once the recorded error's means over the four quarters of the last "
                  "--error-window differ by less than this fraction of the last one");
  sub->add_option("--error-window", opts->error_window,
                  "theory: window W of --until-error-settled, a whole multiple of 4 --record-every intervals")
      ->capture_default_str();
  sub->add_option("--delta", opts->delta, "specialisation threshold δ (MODEL.md §10)")->capture_default_str();
  sub->add_flag("--stop-when-specialised", opts->stop_when_specialised,
                "gram, dense: stop a run once every direction of prior mean zero has specialised");
  sub->add_option("--summary", opts->summary,
                  "CSV of final values per (point, run) with tau_f (and tau_tilde_f = tau_f / ln D)");
  sub->add_option("--work-dir", opts->work_dir,
                  "folder keeping each finished (point, run), written atomically: the same command run again "
                  "(after a kill) computes only the runs not there");
  return {sub, [opts](const std::vector<std::string>& argv, bool check_only) { return run_sweep(*opts, argv, check_only); }};
}

}  // namespace headspec::app
